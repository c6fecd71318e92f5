"""Walking a tree the way ``rg --files --hidden`` does, for when no rg can be had.

The walk lists regular files (never symlinks, so link loops and links out of the tree are
never followed), includes dotfiles, never enters VCS directories, and with ``ignore=True``
honours ``.gitignore`` (inside a git repository, including the ones of parent directories
up to the repository root and ``.git/info/exclude``), ``.ignore`` and ``.rgignore``, as rg
does without a global gitignore. Glob patterns (``**``, ``*``, ``?``, ``[...]``,
``{a,b}``) compile to regular expressions here, so rg's output and the walk's are filtered
by one matcher.

Read-deny filtering (``ReadFilter``) also lives here: search tools never list a path a
``Read(...)`` deny rule covers.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pegboard import ToolContext

VCS_DIRS = (".git", ".hg", ".svn", ".bzr", ".jj", ".sl", "_darcs")
IGNORE_FILES = (".gitignore", ".ignore", ".rgignore")
GLOB_CHARS = frozenset("*?[{")


class GlobError(ValueError):
    """A glob pattern that cannot be compiled (an unclosed ``[`` or ``{``)."""


class WalkTimeout(Exception):
    """The walk ran past its deadline (not an ``OSError``, so no per-entry handler swallows it)."""


def _translate(pattern: str, pos: int, depth: int, in_braces: bool) -> tuple[str, int]:
    out: list[str] = []
    n = len(pattern)
    while pos < n:
        c = pattern[pos]
        if c == "*":
            if pattern.startswith("**", pos):
                at_start = pos == 0 or pattern[pos - 1] == "/"
                end = pos + 2
                if at_start and (end == n or pattern[end] == "/"):
                    if end == n:
                        out.append(".*")
                        pos = end
                    else:
                        out.append("(?:.*/)?")
                        pos = end + 1
                    continue
            out.append("[^/]*")
            pos += 1
            while pos < n and pattern[pos] == "*":
                pos += 1
        elif c == "?":
            out.append("[^/]")
            pos += 1
        elif c == "[":
            end = pos + 1
            if end < n and pattern[end] in "!^":
                end += 1
            if end < n and pattern[end] == "]":
                end += 1
            while end < n and pattern[end] != "]":
                end += 1
            if end >= n:
                raise GlobError(f"unclosed character class in glob {pattern!r}")
            body = pattern[pos + 1 : end]
            negate = body[:1] in ("!", "^")
            body = body[1:] if negate else body
            body = body.replace("\\", "\\\\").replace("^", "\\^")
            out.append(f"[{'^/' if negate else ''}{body}]" if body else "[^/]")
            pos = end + 1
        elif c == "{":
            alternatives: list[str] = []
            pos += 1
            while True:
                part, pos = _translate(pattern, pos, depth + 1, True)
                alternatives.append(part)
                if pos >= n:
                    raise GlobError(f"unclosed '{{' in glob {pattern!r}")
                if pattern[pos] == "}":
                    pos += 1
                    break
                pos += 1
            out.append("(?:" + "|".join(alternatives) + ")")
        elif in_braces and c in ",}":
            return "".join(out), pos
        elif c == "\\" and pos + 1 < n:
            out.append(re.escape(pattern[pos + 1]))
            pos += 2
        else:
            out.append(re.escape(c))
            pos += 1
    return "".join(out), pos


@lru_cache(maxsize=256)
def compile_glob(pattern: str, ignore_case: bool = False) -> re.Pattern[str]:
    """A regex matching whole ``/``-separated relative paths against ``pattern``."""
    body, _ = _translate(pattern, 0, 0, False)
    try:
        return re.compile(f"(?s:{body})\\Z", re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise GlobError(f"invalid glob {pattern!r}: {exc}") from None


def has_magic(segment: str) -> bool:
    return any(c in GLOB_CHARS for c in segment)


def split_glob(pattern: str) -> tuple[str, str]:
    """Split a pattern into its literal leading directories and the glob rest:
    ``/abs/src/**/*.py`` gives ``("/abs/src", "**/*.py")``; ``*.py`` gives ``("", "*.py")``."""
    parts = pattern.split("/")
    literal: list[str] = []
    for i, part in enumerate(parts[:-1]):
        if has_magic(part):
            return "/".join(literal) or ("/" if pattern.startswith("/") else ""), "/".join(parts[i:])
        literal.append(part)
    base = "/".join(literal)
    if pattern.startswith("/") and not base:
        base = "/"
    return base, parts[-1]


def _glob_hit(glob: str, path: str) -> bool:
    anchored = glob.startswith("/") or "/" in glob.rstrip("/")
    body = glob.strip("/") if anchored else glob.rstrip("/")
    return bool(compile_glob(body).match(path if anchored else path.rsplit("/", 1)[-1]))


def rg_glob_matches(rel: str, globs: Sequence[str]) -> bool:
    """rg ``--glob`` semantics for a file at ``rel``: a glob without ``/`` matches a name at
    any depth, one with ``/`` the path from the search root; ``!`` excludes, and a negated
    glob that matches a directory excludes everything below it; among the globs that match
    the file the last one wins; with any positive glob, a file no glob matches is left out."""
    parts = rel.split("/")
    for raw in globs:
        if raw.startswith("!"):
            for i in range(1, len(parts)):
                if _glob_hit(raw[1:], "/".join(parts[:i])):
                    return False
    verdict: bool | None = None
    positives = False
    for raw in globs:
        negate = raw.startswith("!")
        glob = raw[1:] if negate else raw
        positives |= not negate
        if glob.endswith("/"):
            continue
        if _glob_hit(glob, rel):
            verdict = not negate
    if verdict is None:
        return not positives
    return verdict


def positive_glob_matches(rel: str, globs: Sequence[str]) -> bool:
    """Whether a positive glob picks the file at ``rel`` (rg lets such a glob override ignore files)."""
    return any(not g.startswith("!") and not g.endswith("/") and _glob_hit(g, rel) for g in globs)


@dataclass
class _IgnoreLayer:
    base: str
    spec: Any


def _read_spec(path: str) -> Any | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    import pathspec

    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except Exception:
        return None


def find_repo_root(path: str) -> str | None:
    current = os.path.abspath(path)
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def ancestors(path: str) -> list[str]:
    """The parent directories of ``path``, nearest first, up to the filesystem root."""
    found: list[str] = []
    current = os.path.dirname(path)
    while True:
        if current != path:
            found.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            return found
        current = parent


@dataclass
class _Walker:
    root: str
    ignore: bool
    deadline: float | None
    clock: Any = time.monotonic
    force_include: Callable[[str], bool] | None = None
    repo: str | None = None
    seen: int = 0
    layers: list[_IgnoreLayer] = field(default_factory=list)

    def layers_for(self, directory: str) -> list[_IgnoreLayer]:
        found: list[_IgnoreLayer] = []
        in_repo = self.repo is not None and (directory + "/").startswith(self.repo.rstrip("/") + "/")
        if in_repo and self.repo is not None and os.path.abspath(directory) == self.repo:
            spec = _read_spec(os.path.join(self.repo, ".git", "info", "exclude"))
            if spec is not None:
                found.append(_IgnoreLayer(directory, spec))
        for name in IGNORE_FILES:
            if name == ".gitignore" and not in_repo:
                continue
            candidate = os.path.join(directory, name)
            if os.path.isfile(candidate):
                spec = _read_spec(candidate)
                if spec is not None:
                    found.append(_IgnoreLayer(directory, spec))
        return found

    def ignored(self, path: str, is_dir: bool, layers: Sequence[_IgnoreLayer]) -> bool:
        for layer in reversed(layers):
            rel = os.path.relpath(path, layer.base).replace(os.sep, "/")
            if rel.startswith("../"):
                continue
            result = layer.spec.check_file(rel + "/" if is_dir else rel)
            if result.include is not None:
                return bool(result.include)
        return False

    def tick(self) -> None:
        self.seen += 1
        if self.deadline is not None and self.seen % 256 == 0 and self.clock() > self.deadline:
            raise WalkTimeout("the walk ran past its time limit")

    def outer_layers(self) -> list[_IgnoreLayer]:
        """The ignore rules that apply at the root from its parent directories (finds the repository)."""
        layers: list[_IgnoreLayer] = []
        if self.ignore:
            self.repo = find_repo_root(self.root)
            for parent in reversed(ancestors(self.root)):
                layers.extend(self.layers_for(parent))
        return layers

    def walk(self) -> Iterator[str]:
        yield from self._dir(self.root, "", self.outer_layers())

    def _dir(self, path: str, rel: str, layers: list[_IgnoreLayer]) -> Iterator[str]:
        if self.ignore:
            layers = layers + self.layers_for(path)
        try:
            with os.scandir(path) as it:
                entries = list(it)
        except OSError:
            return
        for entry in entries:
            self.tick()
            name = entry.name
            child_rel = f"{rel}{name}"
            try:
                if entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if name in VCS_DIRS:
                        continue
                    if self.ignore and self.ignored(entry.path, True, layers):
                        continue
                    yield from self._dir(entry.path, child_rel + "/", layers)
                elif entry.is_file(follow_symlinks=False):
                    if name in VCS_DIRS:
                        continue
                    forced = self.force_include is not None and self.force_include(child_rel)
                    if self.ignore and not forced and self.ignored(entry.path, False, layers):
                        continue
                    yield child_rel
            except OSError:
                continue


def walk_files(
    root: Path | str,
    *,
    ignore: bool,
    deadline: float | None = None,
    clock: Any = time.monotonic,
    force_include: Callable[[str], bool] | None = None,
) -> Iterator[str]:
    """Relative ``/``-separated paths of the regular files under ``root`` (see the module doc).

    ``deadline`` is a ``clock()`` value after which the walk raises ``WalkTimeout``;
    ``force_include(rel)`` lists an ignored file anyway (rg's positive ``--glob``).
    """
    return _Walker(os.path.abspath(str(root)), ignore, deadline, clock, force_include).walk()


def vcs_exclude_globs() -> list[str]:
    """rg ``--glob`` arguments that keep VCS directories out at any depth."""
    return [f"!{name}" for name in VCS_DIRS]


# ------------------------------------------------------------------ Read-deny filtering


def _rule_lists(ctx: ToolContext) -> list[str]:
    rules: list[str] = []
    data: Mapping[str, Any] = ctx.config.data if ctx.config is not None else {}
    perms = data.get("permissions")
    if isinstance(perms, Mapping):
        deny = perms.get("deny")
        if isinstance(deny, list):
            rules += [r for r in deny if isinstance(r, str)]
    session = ctx.session
    if session is not None:
        with contextlib.suppress(Exception):
            rules += list(session.session_rules().get("deny", ()))
    return rules


_READ_RULE = re.compile(r"^\s*Read\s*\((?P<spec>.*)\)\s*$", re.IGNORECASE)


def read_deny_specs(ctx: ToolContext) -> list[str]:
    """The specifiers of every ``Read(...)`` deny rule that applies to this call."""
    return [m.group("spec") for r in _rule_lists(ctx) if (m := _READ_RULE.match(r))]


def deny_globs(specs: Sequence[str], search_root: Path | str, cwd: Path | str, home: str | None = None) -> list[str]:
    """Negated rg globs for the deny specifiers that can be expressed under ``search_root``
    (best effort: results are filtered through ``may_read`` as well)."""
    root = os.path.abspath(str(search_root))
    home = home or os.path.expanduser("~")
    out: list[str] = []
    for spec in specs:
        spec = spec.strip()
        if not spec:
            continue
        if "/" not in spec.rstrip("/"):
            out.append("!" + spec)
            continue
        if spec.startswith("//"):
            absolute = spec[1:]
        elif spec.startswith("~/"):
            absolute = home + spec[1:]
        elif spec.startswith("/"):
            absolute = str(cwd).rstrip("/") + spec
        else:
            absolute = os.path.join(str(cwd), spec.removeprefix("./"))
        if (absolute + "/").startswith(root.rstrip("/") + "/") and absolute != root:
            out.append("!/" + absolute[len(root.rstrip("/")) + 1 :])
    return out


class ReadFilter:
    """``keep(path)``: whether a search may list ``path`` (no ``Read(...)`` deny covers it, nor
    another name of a file one covers).
    Without any Read deny rule it answers without asking the rule engine."""

    def __init__(self, ctx: ToolContext) -> None:
        self._ctx = ctx
        self.specs = read_deny_specs(ctx)
        self.active = bool(self.specs)

    def keep(self, path: str | Path) -> bool:
        return not self.active or self._ctx.permissions.may_list(path)


__all__ = [
    "VCS_DIRS",
    "GlobError",
    "ReadFilter",
    "WalkTimeout",
    "compile_glob",
    "deny_globs",
    "find_repo_root",
    "has_magic",
    "positive_glob_matches",
    "read_deny_specs",
    "rg_glob_matches",
    "split_glob",
    "vcs_exclude_globs",
    "walk_files",
]
