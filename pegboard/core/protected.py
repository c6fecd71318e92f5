"""The concrete protected paths under a set of roots, for whoever enforces them outside the engine.

The permission engine asks before any write to a protected path (``permissions.paths``:
``PROTECTED_DIRS``, ``PROTECTED_FILES``, ``.config/git``). An OS sandbox cannot ask; it binds
those paths read-only, and needs them as paths, not rules. ``protected_paths`` turns the one
list into paths: every protected name at the top of each root, whether it exists or not (a
missing one must not be creatable either), the existing ones found deeper in the tree, and
the files and directories configuration is read from (user and managed config directories,
the files of every loaded layer), since rewriting those switches the protection off.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pegboard.core.config import LoadedConfig, managed_config_dir, user_config_dir
from pegboard.core.permissions.paths import PROTECTED_DIR_EXCEPTIONS, PROTECTED_DIRS, PROTECTED_FILES

DEFAULT_LIMIT = 10_000


@dataclass(frozen=True)
class ProtectedPath:
    """One protected path; ``directory`` is what it is, or what it must be when it is missing."""

    path: Path
    directory: bool


@dataclass(frozen=True)
class ProtectedPaths:
    """What :func:`protected_paths` found.

    ``unprotected`` are existing sub-directories of protected directories that stay writable
    (``.pegboard/worktrees``); ``complete`` is false when the walk below the roots stopped at
    ``limit`` entries, so deeper existing protected paths may be missing from ``paths``.
    """

    paths: tuple[ProtectedPath, ...]
    unprotected: tuple[Path, ...] = ()
    complete: bool = True


def _exceptions(directory: Path) -> list[Path]:
    name = directory.name.lower()
    return [directory / sub for parent, sub in sorted(PROTECTED_DIR_EXCEPTIONS) if parent == name]


def _config_paths(config: LoadedConfig | None, env: Mapping[str, str] | None) -> list[ProtectedPath]:
    envs = [None] if env is None else [env, None]
    found = [ProtectedPath(where(e), True) for e in envs for where in (user_config_dir, managed_config_dir)]
    for layer in config.layers if config is not None else ():
        if layer.path is not None:
            found.append(ProtectedPath(Path(layer.path), False))
    return found


def protected_paths(
    roots: Iterable[Path],
    *,
    config: LoadedConfig | None = None,
    env: Mapping[str, str] | None = None,
    limit: int = DEFAULT_LIMIT,
) -> ProtectedPaths:
    """The protected paths under ``roots`` and the config files and directories.

    At the top of each root: every protected directory and file name, existing or not, and
    ``.config/git`` when ``.config`` exists. Below it: existing protected entries, breadth
    first, visiting at most ``limit`` entries in all (protected directories are not entered,
    except their unprotected sub-directories). Then the user and managed config directories
    (as ``env`` and this process's environment locate them) and the file of every layer of
    ``config``. Paths are absolute as given: symbolic links are not resolved.
    """
    found: dict[Path, ProtectedPath] = {}
    unprotected: list[Path] = []
    queue: deque[Path] = deque()
    budget, complete = limit, True

    def add(path: Path, directory: bool) -> None:
        found.setdefault(path, ProtectedPath(path, directory))

    for root in dict.fromkeys(Path(r) for r in roots):
        queue.append(root)
        for name in sorted(PROTECTED_DIRS):
            if not os.path.lexists(root / name):
                add(root / name, True)
        for name in sorted(PROTECTED_FILES):
            if not os.path.lexists(root / name):
                add(root / name, False)
        if (root / ".config").is_dir() and not os.path.lexists(root / ".config" / "git"):
            add(root / ".config" / "git", True)
    while queue and complete:
        directory = queue.popleft()
        in_config = directory.name.lower() == ".config"
        try:
            with os.scandir(directory) as listing:
                entries = list(listing)
        except OSError:
            continue
        if len(entries) > budget:
            complete, entries = False, sorted(entries, key=lambda e: e.name)[:budget]
        budget -= len(entries)
        for entry in entries:
            name = entry.name.lower()
            try:
                walkable = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if name in PROTECTED_DIRS or (in_config and name == "git"):
                path = Path(entry.path)
                add(path, True)
                for sub in _exceptions(path) if walkable else ():
                    if sub.is_dir() and not sub.is_symlink():
                        unprotected.append(sub)
                        queue.append(sub)
            elif name in PROTECTED_FILES:
                add(Path(entry.path), walkable)
            elif walkable:
                queue.append(Path(entry.path))
    for item in _config_paths(config, env):
        add(item.path, item.directory)
    return ProtectedPaths(tuple(found.values()), tuple(dict.fromkeys(unprotected)), complete)


__all__ = ["DEFAULT_LIMIT", "ProtectedPath", "ProtectedPaths", "protected_paths"]
