"""Path decisions shared by the engine's file tools and the Bash analysis.

One object answers, for a path: which Read/Edit deny, ask and allow rule matches (on the
lexical path and on the path with symlinks resolved), whether it lies inside the working
directories, whether it is protected; and, for a directory a command walks, whether a
denied file can be reached from it. Reachability uses the tree on disk when it exists
(bounded), following symlinks when the command does, so ``grep -r x src`` does not ask
because of a ``.env`` deny that nothing under ``src`` matches, and ``grep -R`` does ask
when a link under ``src`` leads to a denied file. A file with several hard links is also
judged by identity (``inodes``): another name of a covered file is covered too.
"""

from __future__ import annotations

import glob as globmod
import os
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pegboard.core.permissions.inodes import CoveredInodes, LinkHit
from pegboard.core.permissions.paths import (
    PathContext,
    PathMatcher,
    collapse,
    combine_patterns,
    inside,
    is_protected,
    pattern_to_abs,
    resolve,
)
from pegboard.core.permissions.rules import Rule

#: Directory entries a reachability walk looks at before it gives up (then: lexical answer).
WALK_LIMIT = 5000


@dataclass
class FileVerdict:
    deny: Rule | None = None
    ask: Rule | None = None
    allow: Rule | None = None
    protected: bool = False
    inside: bool = True
    link: LinkHit | None = None  # the deny or ask came from another name of the file (a hard link)


@dataclass
class Reach:
    """What a walk of a tree found. ``complete`` False: the tree could not be walked."""

    complete: bool
    deny: tuple[Rule, str] | None = None  # a reachable file a deny or ask rule covers
    outside: str | None = None  # a reachable file outside the working directories (through a link)


class PathDecisions:
    """Read/Edit rule matching, working directories and tree reachability for one engine."""

    def __init__(self, *, cwd: str, home: str, windows: bool, workdirs: Sequence[str],
                 read: Mapping[str, PathMatcher], edit: Mapping[str, PathMatcher],
                 deny_bases: Sequence[tuple[str, Rule]]) -> None:
        self.cwd = cwd
        self.home = home
        self.windows = windows
        self.workdirs = list(workdirs)
        self.workdirs_resolved = [self.resolve(d) or d for d in self.workdirs]
        self.read = read
        self.edit = edit
        self.deny_bases = list(deny_bases)
        self._denials: re.Pattern[str] | bool | None = False  # built on first use
        self.links = CoveredInodes(roots=self._link_roots(), read=dict(read), edit=dict(edit),
                                   may_cover=self.may_deny)
        self.links.active = self.links.active and not windows

    def _link_roots(self) -> list[str]:
        """Where covered files are looked for: the working directories, and each rule's own
        directory that lies outside them and holds none of them (``~/.ssh``, not ``/``), or
        the very path a rule without wildcards names (``/etc/shadow``, not ``/etc``)."""
        roots = list(self.workdirs)
        ctx = PathContext(self.cwd, self.home, self.windows)
        for base, rule in self.deny_bases:
            if base == "/" or any(inside(base, d) or inside(d, base) for d in self.workdirs):
                continue
            try:
                pattern = pattern_to_abs(rule.specifier or "", rule.root or self.cwd, ctx, True).rstrip("/")
            except Exception:
                pattern = ""
            literal = pattern and not any(c in pattern for c in "*?[\\")
            roots.append(pattern if literal else base)
        return roots

    def unseen_rule(self, write: bool) -> Rule | None:
        """What may cover a file the caller cannot name (an expansion, an unknown directory):
        the first deny, else ask, path rule of the kind — for a write an Edit rule first,
        then a Read one (a Read deny covers edits too); for a read only Read rules."""
        kinds = ("edit", "read") if write else ("read",)
        for lst in ("deny", "ask"):
            for kind in kinds:
                for _base, r in self.deny_bases:
                    if r.lst == lst and r.target.lower() == kind:
                        return r
        return None

    # -- single paths ----------------------------------------------------------------------
    def resolve(self, path: str) -> str | None:
        return None if self.windows else resolve(path)

    @staticmethod
    def rule(matchers: Mapping[str, PathMatcher], lst: str, lexical: str, resolved: str | None = None) -> Rule | None:
        paths = [lexical] if resolved is None or resolved == lexical else [lexical, resolved]
        m = matchers[lst]
        hit = m.matches_all(paths) if lst == "allow" else m.first(paths)
        return hit if isinstance(hit, Rule) else None

    def inside(self, lexical: str, resolved: str | None) -> bool:
        if not any(inside(lexical, d) for d in self.workdirs):
            return False
        if resolved is None:
            return True
        return any(inside(resolved, d) for d in self.workdirs_resolved) or any(
            inside(resolved, d) for d in self.workdirs
        )

    def verdict(self, matchers: Mapping[str, PathMatcher], path: str, write: bool) -> FileVerdict:
        lexical = collapse(path)
        resolved = self.resolve(path)
        paths = [lexical] if resolved is None or resolved == lexical else [lexical, resolved]
        deny, ask = matchers["deny"].first(paths), matchers["ask"].first(paths)
        allow = matchers["allow"].matches_all(paths)
        v = FileVerdict(deny=deny if isinstance(deny, Rule) else None, ask=ask if isinstance(ask, Rule) else None,
                        allow=allow if isinstance(allow, Rule) else None, inside=self.inside(lexical, resolved))
        if write:
            v.protected = is_protected(lexical) or (resolved is not None and is_protected(resolved))
        if v.deny is None:
            self._note_link(v, resolved or path, "edit" if write else "read")
        return v

    def other_name(self, path: str, kind: str) -> LinkHit | None:
        """The deny or ask rule ``path`` (absolute) falls under as another name of a file the
        ``kind`` (``read`` / ``edit``) rules cover; the one check every file tool shares."""
        if not self.links.active or self.windows:
            return None
        try:
            return self.links.other_name(path, kind)
        except (OSError, ValueError, RecursionError):
            return None

    @staticmethod
    def several_links(paths: Sequence[str | None]) -> bool:
        """Whether any of ``paths`` is a regular file with more than one link (or cannot be told)."""
        for path in paths:
            if path is None:
                return True
            try:
                st = os.stat(path)
            except (OSError, ValueError):
                continue
            if st.st_nlink > 1 and stat.S_ISREG(st.st_mode):
                return True
        return False

    def _note_link(self, v: FileVerdict, path: str, kind: str) -> None:
        hit = self.other_name(path, kind)
        if hit is None:
            return
        if hit.lst == "deny":
            v.deny, v.link = hit.rule, hit
        elif v.ask is None:
            v.ask, v.link = hit.rule, hit

    def read_verdict(self, path: str) -> FileVerdict:
        return self.verdict(self.read, path, False)

    def write_verdict(self, path: str) -> FileVerdict:
        return self.verdict(self.edit, path, True)

    def read_deny_only(self, path: str) -> FileVerdict:
        """Deny/ask rules only, on the lexical path: for arguments of commands we do not know."""
        paths = [collapse(path)]
        deny, ask = self.read["deny"].first(paths), self.read["ask"].first(paths)
        return FileVerdict(deny=deny if isinstance(deny, Rule) else None, ask=ask if isinstance(ask, Rule) else None,
                           inside=False)

    def may_deny(self, path: str) -> bool:
        """Whether any Read or Edit deny or ask pattern can match ``path`` (one regex for all
        four lists: most arguments of unknown commands match none)."""
        if self._denials is False:
            matchers = [self.read["deny"], self.read["ask"], self.edit["deny"], self.edit["ask"]]
            patterns = list(dict.fromkeys(rx.pattern for m in matchers for _prefix, rx, _item in m.entries))
            caseless = all(m.ignore_case for m in matchers)
            self._denials = re.compile(combine_patterns(patterns), re.DOTALL) if patterns and caseless else None
            if not patterns:
                self._denials = re.compile(r"(?!)")
        if self._denials is None or not path.isascii():
            return True
        assert isinstance(self._denials, re.Pattern)
        return self._denials.match(collapse(path)[1:].lower() + "/") is not None

    def write_deny_only(self, path: str) -> FileVerdict:
        """Edit deny/ask rules only, on the lexical path: an unknown command may write its arguments."""
        paths = [collapse(path)]
        deny, ask = self.edit["deny"].first(paths), self.edit["ask"].first(paths)
        return FileVerdict(deny=deny if isinstance(deny, Rule) else None, ask=ask if isinstance(ask, Rule) else None,
                           inside=False)

    def is_read_denied(self, lexical: str) -> bool:
        """A Read deny rule covers ``lexical``, or it may be another name of such a file
        (a search drops it from its results either way)."""
        if self.rule(self.read, "deny", lexical) is not None:
            return True
        hit = self.other_name(lexical, "read")
        return hit is not None and (hit.lst == "deny" or hit.name is None)

    def deny_under(self, directory: str) -> Rule | None:
        """A Read/Edit deny or ask rule whose pattern could match something under ``directory``."""
        d = collapse(directory).lower()
        for base, rule in self.deny_bases:
            b = base.lower()
            if inside(b, d) or inside(d, b):
                return rule
        return None

    # -- trees ------------------------------------------------------------------------------
    def _covered(self, lexical: str, resolved: str | None) -> Rule | None:
        return self.rule(self.read, "deny", lexical, resolved) or self.rule(self.read, "ask", lexical, resolved)

    def reach(self, root: str, follow: bool, link_files: bool = False) -> Reach:
        """Walk ``root`` on disk: a reachable denied file, or one outside the working directories.

        ``follow``: the walk descends through links. ``link_files``: links to files are read
        (a command given the listed names opens them) but linked directories are not walked.
        """
        if self.windows:
            return Reach(complete=False)
        lex_root = collapse(root)
        try:
            if not os.path.isdir(lex_root):
                return Reach(complete=os.path.exists(lex_root))
        except (OSError, ValueError):
            return Reach(complete=False)
        real_root = self.resolve(lex_root)
        out = Reach(complete=True)
        stack: list[tuple[str, str | None]] = [(lex_root, real_root if real_root != lex_root else None)]
        seen: set[str] = set()
        count = 0
        while stack:
            lex_dir, real_dir = stack.pop()
            key = real_dir or lex_dir
            if key in seen:
                continue
            seen.add(key)
            try:
                entries = list(os.scandir(real_dir or lex_dir))
            except OSError:
                continue
            for entry in entries:
                count += 1
                if count > WALK_LIMIT:
                    return Reach(complete=False)
                lex = f"{lex_dir}/{entry.name}"
                real = f"{real_dir}/{entry.name}" if real_dir else None
                try:
                    link = entry.is_symlink()
                    if link and not follow and not (link_files and entry.is_file()):
                        continue  # a walk that does not follow links skips them
                    if link:
                        real = os.path.realpath(real or lex)
                    rule = self._covered(lex, real)
                    if rule is None and self.links.active and entry.is_file(follow_symlinks=follow or link):
                        hit = self.other_name(real or lex, "read")
                        rule = hit.rule if hit is not None else None
                    if rule is not None and out.deny is None:
                        out.deny = (rule, real or lex)
                    if real is not None and out.outside is None and not self.inside(lex, real):
                        out.outside = real
                    if entry.is_dir(follow_symlinks=follow) and not (link and not follow):
                        stack.append((lex, real))
                except OSError:
                    continue
            if out.deny is not None and out.outside is not None:
                break
        return out

    def glob_matches(self, pattern: str) -> list[str] | None:
        """What an unquoted glob expands to on disk now; None when that cannot be told."""
        if self.windows or "{" in pattern:
            return None
        parts = pattern.split("/")
        base = "/".join(next((parts[:i] for i, seg in enumerate(parts) if any(c in seg for c in "*?[")), parts))
        try:
            if not os.path.isdir(base or "/"):
                return None  # no tree on disk to look at: the lexical answer stands
            hits = globmod.glob(pattern)
        except (OSError, ValueError, RecursionError):
            return None
        if len(hits) > WALK_LIMIT:
            return None
        return hits
