"""Path handling for ``Read(...)`` / ``Edit(...)`` rules: normalising, anchoring, matching.

Every spelling of a path (relative, ``~``, ``~user``, ``~+``, ``$HOME``, ``..``, Windows ``C:\\x``)
is reduced to one absolute POSIX form before any rule sees it, so a rule cannot be dodged by
respelling. Tilde forms, ``..`` and symlinks are handled by the kernel's ``pathnames`` module,
the one behind ``pegboard.resolve_path``, so rules and tools agree on the file.
Rule patterns are gitignore patterns (translated by ``pathspec``) anchored to an absolute
directory once, when the engine is built. Deny and ask patterns match case-insensitively,
allow patterns exactly. Containment compares whole path components, never string prefixes.
"""

from __future__ import annotations

import functools
import importlib
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pegboard.core.pathnames import collapse, expand_tilde, resolve_existing, split_tilde


@functools.cache
def _git_pattern() -> Any:
    """pathspec's gitignore pattern class, imported when the first path rule compiles."""
    try:  # pathspec >= 1.0
        return importlib.import_module("pathspec.patterns.gitignore.spec").GitIgnoreSpecPattern
    except ImportError:  # pragma: no cover - pathspec 0.12
        return importlib.import_module("pathspec.patterns.gitwildmatch").GitWildMatchPattern


_DRIVE = re.compile(r"^([A-Za-z]):(?:[\\/]|$)")
_HOME_VAR = re.compile(r"^(?:\$HOME|\$\{HOME\})(?=/|$)")
_NAMED_GROUP = re.compile(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>")

#: Directories no allow rule or mode (short of bypass) approves writes into.
PROTECTED_DIRS = frozenset(
    {
        ".git",
        ".vscode",
        ".idea",
        ".husky",
        ".cargo",
        ".devcontainer",
        ".yarn",
        ".mvn",
        ".claude",
        ".pegboard",
    }
)
#: Sub-directories of a protected directory that are not protected.
PROTECTED_DIR_EXCEPTIONS = frozenset({(".claude", "worktrees"), (".pegboard", "worktrees")})
#: Protected files, by base name.
PROTECTED_FILES = frozenset(
    {
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".bash_aliases",
        ".bash_logout",
        ".zshrc",
        ".zprofile",
        ".zshenv",
        ".zlogin",
        ".zlogout",
        ".profile",
        ".envrc",
        ".gitconfig",
        ".gitmodules",
        ".npmrc",
        ".yarnrc",
        ".yarnrc.yml",
        ".pnp.cjs",
        ".pnp.loader.mjs",
        ".pnpmfile.cjs",
        "bunfig.toml",
        ".bunfig.toml",
        ".bazelrc",
        ".bazelversion",
        ".bazeliskrc",
        "gradle-wrapper.properties",
        "maven-wrapper.properties",
        ".pre-commit-config.yaml",
        "lefthook.yml",
        "lefthook.yaml",
        ".lefthook.yml",
        ".lefthook.yaml",
        ".devcontainer.json",
        ".ripgreprc",
        "pyrightconfig.json",
        ".mcp.json",
        ".claude.json",
        ".gitattributes",
        ".gitignore_global",
    }
)


def is_windows_path(path: str) -> bool:
    return bool(_DRIVE.match(path)) or path.startswith("\\\\")


def to_posix(path: str, windows: bool = False) -> str:
    """``C:\\Users\\x`` -> ``/c/Users/x``; UNC ``\\\\srv\\share`` -> ``//srv/share``."""
    m = _DRIVE.match(path)
    if m:
        return "/" + m.group(1).lower() + "/" + path[2:].replace("\\", "/").lstrip("/")
    if path.startswith("\\\\"):
        return "//" + path[2:].replace("\\", "/")
    if windows:
        return path.replace("\\", "/")
    return path


def absolute(raw: str, base: str, home: str, windows: bool = False) -> str:
    """``raw`` made absolute (``~``, ``$HOME``, relative to ``base``) but with ``..`` kept.

    The operating system applies ``..`` after following symlinks, so symlink resolution
    must start from this form, not from the lexically collapsed one.
    """
    p = to_posix(raw, windows)
    expanded = expand_tilde(p, home, base) if p.startswith("~") else None
    if expanded is not None:
        p = expanded
    elif p.startswith("$"):
        p = _HOME_VAR.sub(lambda _m: home, p, count=1)
    if not p.startswith("/"):
        p = base.rstrip("/") + "/" + p
    return p


def normalize(raw: str, base: str, home: str, windows: bool = False) -> str:
    """The absolute, lexically normalised POSIX form of ``raw`` (relative to ``base``)."""
    return collapse(absolute(raw, base, home, windows))


def resolve(path: str) -> str | None:
    """The symlink-resolved form of an absolute path (as far as it exists), or ``None`` (a loop)."""
    try:
        return resolve_existing(path)
    except (OSError, ValueError, RecursionError):
        return None


def shell_tilde(word: str, home: str, cwds: Sequence[str]) -> list[str] | None:
    """Candidate paths of a shell word that starts with an unquoted ``~``, or ``None`` (unknowable).

    ``~``, ``~user``, ``~+`` expand as in ``pegboard.resolve_path``; ``~+`` once per directory
    the command may be in. ``~-`` and directory-stack forms depend on the shell's history,
    so they cannot be known; an unknown user leaves the word a relative name, as bash does.
    """
    parts = split_tilde(word)
    if parts is None:
        return None
    prefix, rest = parts
    name = prefix[1:]
    if name in ("+", "0", "+0"):
        return [(c.rstrip("/") + rest) if rest else c for c in cwds]
    if name == "-" or name.lstrip("+-").isdigit():
        return None
    expanded = expand_tilde(word, home, cwds[0] if cwds else "/")
    if expanded is not None:
        return [expanded]
    return [c.rstrip("/") + "/" + word for c in cwds]


def inside(path: str, directory: str) -> bool:
    """Whether ``path`` is ``directory`` or below it (component-wise, not a string prefix)."""
    if directory == "/":
        return True
    return path == directory or path.startswith(directory + "/")


def is_protected(path: str) -> bool:
    """Whether ``path`` is a protected file or lies inside a protected directory."""
    parts = path.lower().split("/")
    for i, part in enumerate(parts):
        if part in PROTECTED_DIRS:
            nxt = parts[i + 1] if i + 1 < len(parts) else ""
            if (part, nxt) in PROTECTED_DIR_EXCEPTIONS:
                continue
            return True
        if part == ".config" and i + 1 < len(parts) and parts[i + 1] == "git":
            return True
    return bool(parts) and parts[-1] in PROTECTED_FILES


@dataclass(frozen=True)
class PathContext:
    """Where relative rule patterns and input paths are anchored."""

    cwd: str
    home: str
    windows: bool = False


def _single_segment_dir(rest: str) -> bool:
    return bool(re.fullmatch(r"[^/]+/(\*\*)?", rest))


def _rule_tilde(spec: str, ctx: PathContext) -> tuple[str, str] | None:
    """``~user/p`` and ``~+/p`` in a rule: (the directory, the rest), as inputs expand them."""
    parts = split_tilde(spec)
    if parts is None:
        return None
    base = expand_tilde(parts[0], ctx.home, ctx.cwd)
    return None if base is None else (base, parts[1].lstrip("/"))


def pattern_to_abs(spec: str, root: str, ctx: PathContext, generous: bool) -> str:
    """The absolute gitignore pattern a rule specifier stands for.

    ``//p`` absolute, ``~/p`` home (``~user/p`` that user's, ``~+/p`` the cwd), ``/p`` the
    settings source's root, ``./p`` and ``p`` the cwd. A bare name (no ``/``) matches at any
    depth under its anchor; a single-segment directory pattern (``src/**``) does too in
    deny/ask rules (``generous``), not in allow.
    """
    s = spec.strip()
    if ctx.windows or is_windows_path(s):
        s = to_posix(s, True)
        if _DRIVE.match(spec.strip()) or spec.strip().startswith("\\\\"):
            s = "/" + s  # an absolute Windows path is an absolute rule
    anchored = True
    if s.startswith("//"):
        base, rest = "/", s[2:]
    elif s == "~" or s.startswith("~/"):
        base, rest = ctx.home, s[2:]
    elif (tilde := _rule_tilde(s, ctx)) is not None:
        base, rest = tilde
    elif _HOME_VAR.match(s):
        base, rest = ctx.home, _HOME_VAR.sub("", s, count=1).lstrip("/")
    elif s.startswith("/"):
        base, rest = root, s[1:]
    else:
        base, rest = ctx.cwd, s
        while rest.startswith("./"):
            rest = rest[2:]
        while rest.startswith("../"):
            base = collapse(base + "/..")
            rest = rest[3:]
        if rest in (".", ".."):
            base, rest = collapse(base + "/" + rest), ""
        stripped = rest.rstrip("/")
        if (stripped and "/" not in stripped) or (generous and _single_segment_dir(rest)):
            anchored = False
    base = collapse(base)
    if not rest:
        rest = "**"
    prefix = "" if base == "/" else base
    if anchored:
        return prefix + "/" + rest
    return prefix + "/**/" + rest


def compile_path_regex(abs_pattern: str) -> str:
    """A regex (anchored, to ``re.match`` a path without its leading ``/``) for the pattern."""
    regex, include = _git_pattern().pattern_to_regex(abs_pattern)
    if regex is None or not include:
        raise ValueError(f"pattern {abs_pattern!r} does not select paths")
    return _NAMED_GROUP.sub("(?:", regex)


_PREFIX_STOP = frozenset("(.[*+?|{$)")
_ANY_DEPTH = "(?:/.+)?/"


def _split_head(rx: str) -> tuple[str, str]:
    """Split a translated pattern into a literal head and the rest, at a top-level ``/``."""
    i = 0
    cut = 0
    while i < len(rx):
        if rx.startswith(_ANY_DEPTH, i):
            return rx[: i + len(_ANY_DEPTH)], rx[i + len(_ANY_DEPTH) :]
        ch = rx[i]
        if ch == "\\" and i + 1 < len(rx):
            i += 2
            continue
        if ch in _PREFIX_STOP:
            break
        if ch == "/":
            cut = i + 1
        i += 1
    return rx[:cut], rx[cut:]


def _literal_prefix(rx: str) -> str:
    """The plain text at the start of an anchored regex (``^proj/src/`` -> ``proj/src/``)."""
    out: list[str] = []
    i = 1 if rx.startswith("^") else 0
    while i < len(rx):
        ch = rx[i]
        if ch == "\\" and i + 1 < len(rx) and not rx[i + 1].isalnum():
            out.append(rx[i + 1])
            i += 2
            continue
        if ch in _PREFIX_STOP or ch in "\\^":
            break
        out.append(ch)
        i += 1
    # A quantifier may follow: the last character is then optional, so drop it.
    if i < len(rx) and rx[i] in "*+?{" and out:
        out.pop()
    return "".join(out)


def combine_patterns(regexes: Sequence[str]) -> str:
    """One alternation with shared literal heads factored out (far less backtracking)."""
    groups: dict[str, list[str]] = {}
    for rx in regexes:
        head, tail = _split_head(rx)
        groups.setdefault(head, []).append(tail)
    parts = []
    for head, tails in groups.items():
        alts = "|".join(f"(?:{t})" for t in tails)
        parts.append(f"{head}(?:{alts})")
    return "|".join(f"(?:{p})" for p in parts)


class PathMatcher:
    """A list of path patterns matched together (one combined regex, then the first rule).

    Paths are matched with a trailing ``/`` so a directory pattern also covers the directory
    itself. Case-insensitive matchers lower-case both the patterns and the paths.
    """

    def __init__(self, entries: Sequence[tuple[str, object]], ignore_case: bool) -> None:
        self.ignore_case = ignore_case
        fixed = [(rx.lower() if ignore_case else rx, item) for rx, item in entries]
        # Each entry with the literal text every path it matches starts with: a cheap
        # ``startswith`` skips most patterns before any regex runs.
        self.entries = [(_literal_prefix(rx), re.compile(rx, re.DOTALL), item) for rx, item in fixed]
        self.combined = re.compile(combine_patterns([rx for rx, _ in fixed]), re.DOTALL) if fixed else None

    def _rel(self, path: str) -> str:
        r = path[1:] + "/"
        return r.lower() if self.ignore_case else r

    def first(self, paths: Iterable[str]) -> object | None:
        """The first item whose pattern matches any of ``paths`` (absolute), else ``None``."""
        if self.combined is None:
            return None
        rels = [self._rel(p) for p in paths]
        if self.ignore_case and not "".join(rels).isascii():
            rels += [unicodedata.normalize("NFKC", r).lower() for r in rels]
        match = self.combined.match
        if not any(match(r) for r in rels):
            return None
        for prefix, rx, item in self.entries:
            if any(r.startswith(prefix) and rx.match(r) for r in rels):
                return item
        return None

    def matches_all(self, paths: Sequence[str]) -> object | None:
        """The first item whose pattern matches every one of ``paths`` (allow: link and target)."""
        if self.combined is None or not paths:
            return None
        rels = [self._rel(p) for p in paths]
        if not all(self.combined.match(r) for r in rels):
            return None
        for prefix, rx, item in self.entries:
            if all(r.startswith(prefix) and rx.match(r) for r in rels):
                return item
        return None


def literal_base(abs_pattern: str) -> str:
    """The deepest directory of an absolute pattern that holds no glob characters."""
    parts = abs_pattern.split("/")
    out: list[str] = []
    for seg in parts[1:-1]:
        if any(c in seg for c in "*?[\\"):
            break
        out.append(seg)
    return "/" + "/".join(out)
