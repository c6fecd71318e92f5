"""What the namespace looks like: writable directories, masked and read-only paths.

``Read(...)`` deny rules become masks (``/dev/null`` on a ``nodev`` bind over a file, so
opening it fails; an empty read-only tmpfs over a directory) and ``Edit(...)`` deny rules
read-only binds, even inside a writable directory. bubblewrap binds paths, not patterns, so
a pattern rule (``Read(.env)``, ``Read(**/*.pem)``) is expanded against the working
directories when the sandbox starts; past ``maxExpandedPaths`` the sandbox refuses to start
and names the rule. Names match as the engine matches them (case-folded, NFKC), and a
denied file's hard links are masked with it (``masks``).

Protected paths (``pegboard.protected_paths``: what the permission engine asks before
writing, and the config files of every scope) are bound read-only too, so a command cannot
rewrite the settings that sandbox it. One that does not exist yet gets a placeholder to bind
over (see ``placeholders``), so it cannot be created either.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pegboard import LoadedConfig, ProtectedPath, protected_paths
from pegboard_sandbox.masks import MaskRefused, every_name, name_matches, spellings
from pegboard_sandbox.placeholders import Spot

_GLOB = set("*?[")
#: Entries searched, breadth first, for protected paths below the top of the working dirs.
PROTECTED_SEARCH = 10_000


class SandboxRefused(Exception):
    """The sandbox cannot be set up as the rules ask; the message names the rule."""


@dataclass(frozen=True)
class Layout:
    """Paths as the namespace sees them; every path is absolute."""

    writable: tuple[Path, ...]
    masked: tuple[Path, ...] = ()
    read_only: tuple[Path, ...] = ()
    temp_dir: Path | None = None
    notes: tuple[str, ...] = field(default=())
    #: bound read-only over themselves; a missing one gets a placeholder first
    protected: tuple[Spot, ...] = ()
    #: writable again below a protected directory (``.pegboard/worktrees``)
    unprotected: tuple[Path, ...] = ()


def _rule_parts(rule: str) -> tuple[str, str] | None:
    rule = rule.strip()
    if not rule.endswith(")") or "(" not in rule:
        return None
    family, spec = rule[:-1].split("(", 1)
    if family not in ("Read", "Edit") or not spec.strip():
        return None
    return family, spec.strip()


def _anchor(spec: str, cwd: Path, project: Path) -> tuple[Path | None, str]:
    """``(base, pattern)``: ``base`` None means the pattern matches anywhere below the roots."""
    if spec.startswith("//"):
        return Path("/"), spec[2:]
    if spec.startswith("~/"):
        return Path.home(), spec[2:]
    if spec.startswith("/"):
        return project, spec[1:]
    if spec.startswith("./"):
        return cwd, spec[2:]
    if "/" not in spec.rstrip("/"):
        return None, spec
    return cwd, spec


def _has_glob(text: str) -> bool:
    return any(c in _GLOB for c in text)


def _walk(roots: Iterable[Path], budget: list[int], rule: str, limit: int) -> Iterable[Path]:
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d != ".git"]
            for name in (*dirnames, *filenames):
                budget[0] += 1
                if budget[0] > limit:
                    raise SandboxRefused(
                        f"the sandbox cannot start: expanding deny rule {rule!r} visits more than {limit} "
                        f"paths (sandbox.maxExpandedPaths); write the rule as a plain path or raise the bound"
                    )
                yield Path(dirpath, name)


def expand_rule(rule: str, spec: str, *, cwd: Path, project: Path, roots: Sequence[Path], limit: int) -> list[Path]:
    """The existing paths ``spec`` names."""
    base, pattern = _anchor(spec, cwd, project)
    pattern = pattern.rstrip("/")
    if pattern.endswith("/**"):
        pattern = pattern[:-3]
    if not pattern:
        return [base] if base is not None else []
    if base is not None and not _has_glob(pattern):
        return spellings(base, pattern)
    budget = [0]
    found: list[Path] = []
    if base is None:
        for path in _walk(roots, budget, rule, limit):
            if name_matches(path.name, pattern):
                found.append(path)
        return found
    for path in _walk([base], budget, rule, limit):
        rel = path.relative_to(base).as_posix()
        if name_matches(rel, pattern) or name_matches(rel, pattern.replace("**/", "")):
            found.append(path)
    return found


def build_layout(
    *,
    cwd: Path,
    project: Path,
    working_dirs: Sequence[Path],
    deny_rules: Sequence[str],
    temp_dir: Path | None,
    extra_writable: Sequence[Path] = (),
    limit: int = 10_000,
    config: LoadedConfig | None = None,
    env: Mapping[str, str] | None = None,
    extra_protected: Sequence[Path] = (),
) -> Layout:
    """The layout for these working dirs and deny rules; raises :class:`SandboxRefused`.

    ``config`` and ``env`` say which config files and directories are protected besides the
    protected names under the working dirs; ``extra_protected`` adds directories of the caller's.
    """
    roots = [Path(os.path.realpath(d)) for d in working_dirs if Path(d).is_dir()]
    writable = list(dict.fromkeys([*roots, *(Path(os.path.realpath(p)) for p in extra_writable if Path(p).is_dir())]))
    if temp_dir is not None:
        writable.append(temp_dir)
    masked: list[Path] = []
    read_only: list[Path] = []
    for rule in deny_rules:
        parts = _rule_parts(rule)
        if parts is None:
            continue
        family, spec = parts
        paths = expand_rule(rule, spec, cwd=cwd, project=project, roots=roots, limit=limit)
        target = masked if family == "Read" else read_only
        for path in paths:
            real = Path(os.path.realpath(path))
            if real not in target:
                target.append(real)
    try:
        masked = every_name(masked, roots, limit)
        read_only = every_name(read_only, writable, limit, strict=False)
    except MaskRefused as exc:
        raise SandboxRefused(str(exc)) from None
    protected, unprotected, notes = _protected(roots, writable, config, env, extra_protected)
    return Layout(tuple(writable), tuple(masked), tuple(read_only), temp_dir, notes, protected, unprotected)


def _inside(path: Path, directories: Sequence[Path]) -> bool:
    return any(path == d or path.is_relative_to(d) for d in directories)


def _protected(
    roots: Sequence[Path],
    writable: Sequence[Path],
    config: LoadedConfig | None,
    env: Mapping[str, str] | None,
    extra: Sequence[Path],
) -> tuple[tuple[Spot, ...], tuple[Path, ...], tuple[str, ...]]:
    """The protected spots a command could write (inside a writable directory), shallowest first.

    The search below the working dirs has a fixed bound, not one of the config's: no setting
    makes it look for fewer.
    """
    found = protected_paths(roots, config=config, env=env, limit=PROTECTED_SEARCH)
    spots: dict[Path, Spot] = {}
    items: list[ProtectedPath | Spot] = [*found.paths, *(Spot(p, True) for p in extra)]
    for item in items:
        real, directory = Path(os.path.realpath(item.path)), item.directory
        while not os.path.lexists(real.parent) and real.parent != real:  # bar the first missing directory
            real, directory = real.parent, True
        if _inside(real.parent, writable) and real not in spots:
            spots[real] = Spot(real, directory)
    unprotected = [real for p in found.unprotected if _inside(real := Path(os.path.realpath(p)), writable)]
    notes = () if found.complete else (
        f"nested protected paths were looked for in the first {PROTECTED_SEARCH} entries below the working "
        "directories only; the protected names at their top are all bound",
    )
    depth = sorted(spots.values(), key=lambda s: len(s.path.parts))
    return tuple(depth), tuple(dict.fromkeys(unprotected)), notes


def _protected_args(layout: Layout) -> list[str]:
    """Read-only binds of the protected spots that exist and writable ones below them, outermost first."""
    binds = [(s.path, "--ro-bind") for s in layout.protected if os.path.lexists(s.path)]
    binds += [(p, "--bind") for p in layout.unprotected]
    args: list[str] = []
    for path, how in sorted(binds, key=lambda b: len(b[0].parts)):
        args += [how, str(path), str(path)]
    return args


def bwrap_args(layout: Layout, *, bwrap: str = "bwrap") -> list[str]:
    """The bubblewrap command line (up to ``--``) for ``layout``; the network is always its own
    (empty) namespace: allowed traffic goes through the proxy bridged in."""
    args = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--unshare-user-try", "--unshare-ipc", "--unshare-pid",
            "--unshare-net", "--die-with-parent"]
    for path in layout.writable:
        args += ["--bind", str(path), str(path)]
    args += _protected_args(layout)
    for path in layout.read_only:
        args += ["--ro-bind", str(path), str(path)]
    for path in layout.masked:
        if path.is_dir():
            args += ["--tmpfs", str(path), "--remount-ro", str(path)]
        else:
            args += ["--ro-bind", "/dev/null", str(path)]
    return args
