"""Deciding a Bash (or Monitor) command: every simple command in it, every file it touches.

The command line is parsed (``bashparse``), each simple command is unwrapped (wrappers,
env-var prefixes, ``bash -c``, ``eval``, ``find -exec``) and then judged on its own:

* deny and ask rules match generously: past any wrapper or assignment, case-insensitively,
  against every view of the command; a hit anywhere decides for the whole line;
* an allow needs every simple command approved (an allow rule, the read-only set, or the
  mode) and every output redirect approved as a file write;
* file operands of recognised commands and redirect targets go through the same Read/Edit
  path rules as the file tools, and protected / critical paths are flagged.

The outcome is mode-independent; the engine applies the mode.
"""

from __future__ import annotations

import dataclasses
import os
import posixpath
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from pegboard.permissions import PathDecisions, Rule, collapse, inside, shell_tilde, to_posix, word_pattern_regex
from pegboard_permissions_shell import commands as C
from pegboard_permissions_shell import effects as E
from pegboard_permissions_shell import scripted
from pegboard_permissions_shell.bashparse import MAX_COMMAND_CHARS, ParsedScript, Segment, Word, as_nested, parse
from pegboard_permissions_shell.evaluation import (
    EVALUATING_BUILTINS,
    callback_scripts,
    evaluated_words,
    may_evaluate,
    substitutions,
)
from pegboard_permissions_shell.knownvars import expand_word, line_variables

_MAX_SEGMENTS = 6000
_CMD_WORD = re.compile(r"^[A-Za-z0-9_.+/\\-]+$")
_VAR_GLOB = re.compile(r"^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?/+(\*.*)?$")
_EXEMPT_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_IFS = re.compile(r"\$\{IFS[^}]*\}|\$IFS\b")
_INDIRECT = re.compile(r"\$\{!([A-Za-z_][A-Za-z0-9_]*)\}")
_BRACE_LIST = re.compile(r"\{([^{}\s]*,[^{}\s]*)\}")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_READERS = (
    (frozenset(C.READ_ONLY) - C.NON_FILE_COMMANDS)
    | frozenset({"less", "more", "bat", "batcat", "view", "vim", "vi", "nvim", "nano", "emacs", "code",
                 "base64", "base32", "awk", "gawk", "iconv", "fmt", "pr", "split", "zcat", "gzip", "gunzip",
                 "bzip2", "xz", "unzip", "tar", "zip", "source", ".", "python", "python3", "node", "ruby",
                 "perl", "php", "bash", "sh", "zsh", "openssl", "gpg", "xxd", "egrep", "fgrep", "ag", "ack",
                 "yq", "dd", "scp", "rsync", "cp", "mv", "ln", "install"})
)


_RUNNER_HEADS: dict[str, list[tuple[str, ...]]] = {}
for _key in C.RUNNERS:
    _RUNNER_HEADS.setdefault(_key[0], []).append(_key)
#: Command names that unwrapping must look into (everything else is taken as it is).
_SPECIAL_HEADS = frozenset({*C.ALLOW_STRIP_WRAPPERS, *C.EXEC_WRAPPERS, *_RUNNER_HEADS, *C.SHELLS,
                            *C.EVAL_COMMANDS, *E.EMBEDDED_SCRIPTS, *scripted.INPUT_SCRIPTS, "find", "fd", "fdfind",
                            "command", "xargs", "mapfile", "readarray", "trap", "rsync"})


def has_control_characters(command: str) -> bool:
    """Raw control characters (other than tab and newline) hide parts of a command on screen."""
    return bool(_CONTROL.search(command))


def _nfkc(text: str) -> str:
    return text if text.isascii() else unicodedata.normalize("NFKC", text)


def collapse_ws(text: str) -> str:
    return " ".join(text.split())


# -- rules --------------------------------------------------------------------------------

bash_pattern_regex = word_pattern_regex


@dataclass
class _CompiledCmdRule:
    rule: Rule
    regex: re.Pattern[str]
    exact: bool
    flags: frozenset[str] = frozenset()  # flag-order-insensitive form (deny/ask only)
    residual: re.Pattern[str] | None = None
    words: tuple[str, ...] = ()  # the pattern's words, for matching a command with unseen words


def _pattern_words(spec: str) -> tuple[str, ...]:
    s = collapse_ws(spec)
    if s.endswith(":*"):
        s = s[:-2].rstrip() + " *"
    return tuple(s.split(" "))


def _could_match(pattern: Sequence[str], words: Sequence[str | None], ignore_case: bool) -> bool:
    """Whether a pattern may match a command some of whose words cannot be seen (``None``:
    any text, several words or none). Generous: a wildcard or a flag (flags match in any
    order) ends the comparison with a yes."""
    for i, pw in enumerate(pattern):
        if i >= len(words):
            return False
        w = words[i]
        if w is None:
            return True
        if ignore_case:
            pw, w = pw.lower(), w.lower()
        seen = (w, _name(w)) if i == 0 else (w,)
        if "*" in pw:
            lead = pw.split("*", 1)[0]
            return any(x.startswith(lead) for x in seen)
        if pw in seen:
            continue
        return i > 0 and pw.startswith("-") and w.startswith("-")
    return all(w is None for w in words[len(pattern):])


#: Long options whose meaning is one short flag for flag-order-insensitive matching.
_LONG_FLAGS = {"--recursive": "r", "--force": "f", "--dir": "d", "--verbose": "v", "--all": "a",
               "--interactive": "i", "--no-preserve-root": "--no-preserve-root"}
_SHORT_CLUSTER = re.compile(r"^-[A-Za-z]+$")


def _flag_set(word: str) -> set[str] | None:
    if _SHORT_CLUSTER.match(word):
        return {c.lower() for c in word[1:]}
    if word.startswith("--"):
        name = word.split("=", 1)[0]
        return {_LONG_FLAGS.get(name, name)}
    return None


def _flag_form(spec: str) -> tuple[frozenset[str], str] | None:
    """(required flags, pattern of the other words) when a pattern spells out flags."""
    s = collapse_ws(spec)
    if s.endswith(":*"):
        s = s[:-2].rstrip() + " *"
    words = s.split(" ")
    flags: set[str] = set()
    rest: list[str] = []
    for i, w in enumerate(words):
        fs = _flag_set(w) if i > 0 and "*" not in w else None
        if fs is not None:
            flags |= fs
        else:
            rest.append(w)
    if not flags:
        return None
    return frozenset(flags), " ".join(rest)


def _view_flags(view: str) -> tuple[set[str], str]:
    words = view.split(" ")
    flags: set[str] = set()
    rest: list[str] = []
    for i, w in enumerate(words):
        fs = _flag_set(w) if i > 0 else None
        if fs is not None:
            flags |= fs
        else:
            rest.append(w)
    return flags, " ".join(rest)


class CommandRules:
    """Command-pattern rules of one list, indexed by their first word for speed.

    Generous (deny/ask) rules that spell out flags also match with the flags in any order,
    split or joined, or in their common long forms: ``Bash(rm -rf *)`` covers ``rm -fr x``,
    ``rm -r -f x`` and ``rm --recursive --force x``.
    """

    def __init__(self, entries: Sequence[tuple[Rule, str]], ignore_case: bool) -> None:
        flags = re.IGNORECASE if ignore_case else 0
        self.ignore_case = ignore_case
        self.by_word: dict[str, list[tuple[int, _CompiledCmdRule]]] = {}
        self.wild: list[tuple[int, _CompiledCmdRule]] = []
        self.ordered: list[_CompiledCmdRule] = []
        self.count = 0
        for order, (rule, spec) in enumerate(entries):
            compiled = _CompiledCmdRule(rule, re.compile(bash_pattern_regex(spec), flags), "*" not in spec,
                                        words=_pattern_words(spec))
            self.ordered.append(compiled)
            if ignore_case:
                form = _flag_form(spec)
                if form is not None:
                    compiled.flags = form[0]
                    compiled.residual = re.compile(bash_pattern_regex(form[1]), flags)
            s = collapse_ws(spec)
            if s.endswith(":*"):
                s = s[:-2]
            first = s.split(" ", 1)[0]
            if first and "*" not in first:
                key = first.lower() if ignore_case else first
                self.by_word.setdefault(key, []).append((order, compiled))
            else:
                self.wild.append((order, compiled))
            self.count += 1

    def may_match(self, first_word: str) -> bool:
        """Whether any rule could match a command starting with ``first_word``."""
        if self.wild:
            return True
        return (first_word.lower() if self.ignore_case else first_word) in self.by_word

    def might_match(self, words: Sequence[str | None]) -> Rule | None:
        """The first rule that may match a command whose words ``None`` cannot be seen."""
        if not self.ordered:
            return None
        first = words[0] if words else None
        if first is None:
            return self.ordered[0].rule  # an unseen command name: any rule may match
        keys = {first, _name(first)}
        if self.ignore_case:
            keys = {k.lower() for k in keys}
        candidates = sorted([*self.wild, *(e for k in keys for e in self.by_word.get(k, ()))], key=lambda e: e[0])
        for _order, c in candidates:
            if _could_match(c.words, words, self.ignore_case):
                return c.rule
        return None

    def match(self, views: Sequence[str], exact_only: bool = False) -> Rule | None:
        if not self.count:
            return None
        best: tuple[int, Rule] | None = None
        for view in views:
            first = view.split(" ", 1)[0]
            key = first.lower() if self.ignore_case else first
            view_flags: tuple[set[str], str] | None = None
            for order, c in (*self.by_word.get(key, ()), *self.wild):
                if exact_only and not c.exact:
                    continue
                if best is not None and order >= best[0]:
                    continue
                if c.regex.match(view):
                    best = (order, c.rule)
                elif c.residual is not None:
                    if view_flags is None:
                        view_flags = _view_flags(view)
                    if c.flags <= view_flags[0] and c.residual.match(view_flags[1]):
                        best = (order, c.rule)
        return best[1] if best else None


# -- what the analysis produces -----------------------------------------------------------

@dataclass
class BashOutcome:
    """Everything the engine needs to decide; mode-independent."""

    deny: Rule | None = None
    deny_reason: str = ""
    ask_rule: Rule | None = None
    ask_reason: str = ""
    hard_ask: str | None = None  # asks even in bypassPermissions (critical rm, a denied file maybe read)
    unverifiable: str | None = None  # cannot be analysed: asks even in bypass while deny/ask rules exist
    #: a deny or ask rule that may apply to a part the analysis cannot see (an expansion, a script
    #: on stdin, a directory changed to): asks in every mode but dontAsk, which denies
    might: tuple[Rule, str] | None = None
    might_files_only: bool = True  # every rule that might apply is a Read/Edit deny rule
    protected: str | None = None  # a protected-path write (bypass allows)
    unapproved: str | None = None  # first part no rule, read-only set or mode approves
    needs_edit_mode: str | None = None  # approved only if the mode approves in-scope edits
    writes: str | None = None  # the command writes files (plan mode holds it back)
    allow_rule: Rule | None = None
    approvals: list[str] = field(default_factory=list)

    def set_deny(self, rule: Rule, reason: str) -> None:
        if self.deny is None:
            self.deny, self.deny_reason = rule, reason

    def set_ask(self, rule: Rule, reason: str) -> None:
        if self.ask_rule is None:
            self.ask_rule, self.ask_reason = rule, reason

    def set_hard(self, reason: str) -> None:
        if self.hard_ask is None:
            self.hard_ask = reason

    def set_might(self, rule: Rule | None, reason: str) -> None:
        if rule is None:
            return
        self.might_files_only = self.might_files_only and rule.lst == "deny" and rule.target in ("Read", "Edit")
        if self.might is None:
            self.might = (rule, f"{reason}; {rule.text} might apply")

    def set_unverifiable(self, reason: str) -> None:
        if self.unverifiable is None:
            self.unverifiable = reason

    def set_unapproved(self, reason: str) -> None:
        if self.unapproved is None:
            self.unapproved = reason


@dataclass(slots=True)
class _Unwrapped:
    seg: Segment
    deny_views: list[str]
    core: list[Word]  # the innermost command (deny-style unwrapping)
    allow_core: list[Word] | None  # after allow-side stripping; None: no allow rule may match
    allow_block: str | None  # why no allow rule / read-only match is possible
    exec_like: bool = False
    dangerous: str | None = None
    unknown_head: bool = False
    via_xargs: bool = False  # bare xargs was stripped for allow matching
    wrapper_writes: Sequence[Word] = ()  # files a wrapper's own options write
    wrapper_reads: Sequence[Word] = ()
    chdir: bool = False  # a wrapper runs the command in another directory
    xargs: bool = False  # the core command gets more operands from its input
    xargs_inner: list[Word] | None = None  # for read-only checks: the command xargs runs
    evaluated: str | None = None  # a word Bash evaluates as code (a subscript with a substitution)
    eff: E.Effects | None = None  # the core command's effects, once computed
    allow_view: str | None = None  # the allow core as one string, when unwrapping already built it
    script: scripted.Script | None = None  # what the script the core command reads from its input does


#: Commands that may write files named inside an archive or a patch (see ``effects.hidden_writes``).
_HIDDEN_WRITERS = frozenset({"patch", "unzip", "tar", "bsdtar", "cpio", "7z", "7za", "7zr", "git"})

#: Links under /proc that lead into another directory tree: (process, link, rest).
_PROC_LINK = re.compile(r"^/proc/(self|thread-self|\d+)(?:/task/\d+)?/(cwd|root|fd|map_files)$")


def _has_glob(path: str) -> bool:
    return "*" in path or "?" in path or "[" in path


_SEQUENCE = re.compile(r"^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?$")


def brace_expand(word: str, limit: int = 64) -> list[str] | None:
    """The words bash makes of ``word`` by brace expansion (``a{b,c}`` -> ``ab ac``,
    ``{1..3}``), in order; None when there would be more than ``limit``.

    As bash 5 does: the first ``{`` whose matching ``}`` follows a top-level comma or ``..``
    opens an expression. Its body is a list when a comma appears anywhere in it (split at the
    top-level commas, so ``{1..3{a,b}}`` is the one alternative ``1..3{a,b}``), else a
    sequence; a body that is neither stays as written, braces and all (``{1..3{1..3}}``), and
    the text after it is expanded on its own. A ``{`` with no such ``}`` is plain text and
    the rest of the word is expanded after it (``{x{a,b}}`` -> ``{xa} {xb}``)."""
    start = word.find("{")
    if start == -1:
        return [word]
    end = _matching_close(word, start)
    if end is None:
        rest = brace_expand(word[start + 1:], limit)
        return None if rest is None else [word[:start + 1] + r for r in rest]
    body = word[start + 1:end]
    alts = _brace_alternatives(body)
    if alts is None and end + 1 >= len(word):
        return [word]
    tails = brace_expand(word[end + 1:], limit)
    if tails is None:
        return None
    middles_of = [["{" + body + "}"]] if alts is None else [brace_expand(alt, limit) for alt in alts]
    out: list[str] = []
    for middles in middles_of:
        if middles is None:
            return None
        for middle in middles:
            for tail in tails:
                out.append(word[:start] + middle + tail)
                if len(out) > limit:
                    return None
    return out


def _matching_close(word: str, start: int) -> int | None:
    """The index of the ``}`` that closes the brace expression opened at ``start``, or None.

    As bash's scanner does: a ``}`` at the top level closes it only once a top-level comma
    or a ``..`` (not right before a ``}``) came (``a{b}}c,d}`` is ``a`` + ``{b}}c,d}``, and
    ``{1..3a},}`` closes after ``3a``, which is no sequence, so the word stays as it is); a ``{`` at
    the start of the word followed by ``}`` opens nothing (``{}``, as ``find -exec`` uses)."""
    if start == 0 and word[1:2] == "}":
        return None
    depth = 0
    separated = False  # a top-level comma, or a ``..`` not right before a ``}``, came
    for i in range(start + 1, len(word)):
        ch = word[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            if depth:
                depth -= 1
            elif separated:
                return i
        elif depth == 0 and (ch == "," or (ch == "." and word[i + 1:i + 2] == "." and word[i + 2:i + 3] != "}")):
            separated = True
    return None


def _expand_braces(args: list[Word]) -> list[Word]:
    """The arguments after brace expansion (one word may become several, which moves the
    operands after it: ``cp {a,/etc/x}`` is ``cp a /etc/x``)."""
    if not any(w.glob and "{" in w.value and not w.dynamic for w in args):
        return args
    out: list[Word] = []
    for w in args:
        alternatives = brace_expand(w.value) if w.glob and "{" in w.value and not w.dynamic else None
        if alternatives is None or alternatives == [w.value]:
            out.append(w)
            continue
        out += [Word(value=alt, raw=w.raw, glob=_has_glob(alt), quoted=w.quoted, tilde=alt.startswith("~"))
                for alt in alternatives if alt]
    return out


def _brace_alternatives(body: str) -> list[str] | None:
    """The alternatives of one ``{body}``, or None when it is no brace expansion (no comma, no range)."""
    m = _SEQUENCE.match(body)
    if m:
        a, b, step = m.group(1), m.group(2), abs(int(m.group(3) or 1)) or 1
        if a.lstrip("-").isdigit() and b.lstrip("-").isdigit():
            lo, hi = int(a), int(b)
            if abs(hi - lo) // step > 64:
                return [body] * 65  # too many: the caller gives up
            rng = range(lo, hi + 1, step) if lo <= hi else range(lo, hi - 1, -step)
            return [str(n) for n in rng]
        if a.isalpha() and b.isalpha():
            lo, hi = ord(a), ord(b)
            rng = range(lo, hi + 1, step) if lo <= hi else range(lo, hi - 1, -step)
            return [chr(n) for n in rng]
    parts: list[str] = []
    depth, cur = 0, ""
    for ch in body:
        if ch == "{":
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if not parts and "," not in body:
        return None
    return [*parts, cur]


def _name(word: str) -> str:
    w = word.lstrip("=")
    return posixpath.basename(w) if "/" in w else w


def _view(words: Sequence[Word]) -> str:
    return collapse_ws(" ".join(w.value for w in words))


def _shell_script(args: list[Word]) -> tuple[Word | None, bool]:
    """The script of ``sh -c SCRIPT`` style args, and whether a -c flag was present."""
    for i, a in enumerate(args):
        v = a.value
        if v == "--":
            return None, False
        if v.startswith("-") and not v.startswith("--") and "c" in v[1:]:
            rest = [x for x in args[i + 1:] if not x.value.startswith("-")]
            return (rest[0] if rest else None), True
        if v in ("--command",):
            return (args[i + 1] if i + 1 < len(args) else None), True
        if not v.startswith("-") and not v.startswith("+"):
            return None, False
    return None, False


_GIT_MESSAGE_OPTIONS = frozenset({"-m", "--message"})
#: A word that holds code rather than one name (an interpreter's -c / -e program)
_CODE_LIKE = re.compile(r"[\s()'\";{}=,]")
_PATH_TOKEN = re.compile(r"(?:~|\.{1,2}/|/)?[A-Za-z0-9_@+-][A-Za-z0-9_.@+-]*(?:/[A-Za-z0-9_.@+-]+)*"
                         r"|\.[A-Za-z0-9_.@+-]+(?:/[A-Za-z0-9_.@+-]+)*")
#: find's actions that delete or write files: a wildcard allow rule (``Bash(find *)``) does not cover them
_FIND_WRITING_ACTIONS = frozenset({"-delete", "-fprint", "-fprint0", "-fprintf", "-fls"})


def _without_messages(args: list[Word], words: list[Word]) -> list[Word]:
    """git's ``-m MSG`` / ``--message=MSG`` values are commit messages, never files."""
    messages = {id(args[i + 1]) for i, a in enumerate(args[:-1]) if a.value in _GIT_MESSAGE_OPTIONS}
    return [w for w in words if id(w) not in messages and not w.value.startswith("--message=")]


_FIND_EXECS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_FD_EXECS = frozenset({"-x", "--exec", "-X", "--exec-batch"})


def _exec_roots(name: str, args: list[Word]) -> list[Word] | None:
    """The trees whose files ``find ... -exec CMD {}`` (or ``fd -x CMD``) hands to CMD, or
    None when it runs nothing on the files it finds."""
    values = [w.value for w in args]
    if name == "find":
        if not any(v in _FIND_EXECS for v in values) or "{}" not in values:
            return None
        roots: list[Word] = []
        for w in args:
            if not roots and (w.value in ("-H", "-L", "-P") or w.value.startswith(("-D", "-O"))):
                continue
            if w.value.startswith(("-", "(", "!")):
                break
            roots.append(w)
        return roots or [Word(value=".", raw=".")]
    if not any(v in _FD_EXECS or v.startswith(("--exec=", "--exec-batch=")) for v in values):
        return None
    positional: list[Word] = []
    for w in args:
        if w.value in _FD_EXECS:
            break
        if not w.value.startswith("-"):
            positional.append(w)
    return positional[1:] or [Word(value=".", raw=".")]


def unseen_rule(deny: CommandRules, ask: CommandRules, oracle: PathDecisions) -> Rule | None:
    """The rule that may apply to a command nothing of which can be seen: the first command
    deny rule, else command ask rule, else path deny or ask rule."""
    return deny.might_match([None]) or ask.might_match([None]) or oracle.unseen_rule(write=True)


def _script_from_input(args: list[Word]) -> bool:
    """Whether a shell started with ``args`` (no ``-c``) reads its script from its input:
    with ``-s`` or ``-i``, or with no script file operand."""
    skip = False
    for a in args:
        v = a.value
        if skip:
            skip = False
            continue
        if v == "--":
            return False
        if v in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            skip = True
            continue
        if v.startswith("--"):
            continue
        if v.startswith(("-", "+")):
            if "s" in v[1:] or "i" in v[1:]:
                return True
            continue
        return False
    return True


def _dangerous(name: str, args: list[str]) -> str | None:
    """Why a command runs another program through its own options (only exact allow rules approve it)."""
    if name == "git":
        call = E.git_call(args)
        return call.danger or E.git_option_danger(args[call.sub + 1:])
    eff = E.effects(name, args)
    if eff is not None:
        return eff.runs_program
    if name == "tar" and any(_tar_runs(a) for a in args):
        return "tar option that runs a program"
    if name in ("zip",) and any(a in ("-TT", "--unzip-command") for a in args):
        return "zip -TT runs a program"
    return None


#: tar's long options that run programs; GNU tar takes any unambiguous prefix of them.
_TAR_RUNNING = ("to-command", "use-compress-program", "checkpoint-action", "info-script", "new-volume-script",
                "rsh-command", "rmt-command")


def _tar_runs(arg: str) -> bool:
    if arg.startswith("--"):
        body = arg[2:].split("=", 1)[0]
        return len(body) >= 3 and any(name.startswith(body) for name in _TAR_RUNNING)
    if arg.startswith("-"):
        return any(c in arg[1:2] for c in "IF")  # -I PROG, -F SCRIPT (first letter of a cluster)
    return False


#: Commands whose options can make them run other programs (see ``_dangerous``).
_DANGER_CHECKED = frozenset({*E.FAMILIES, "git", "tar", "zip"})


def _passive(core: list[Word]) -> bool:
    """Whether a command leaves the file tree as it is (a read-only command by its validator)."""
    validator = C.READ_ONLY.get(_name(core[0].value).lower())
    return validator is not None and validator([w.value for w in core[1:]])


def _refs(words: Sequence[Word], refs: Sequence[E.Ref]) -> list[Word]:
    """Words for (argument index, value) pairs; a value cut from a word keeps the word's flags."""
    out: list[Word] = []
    for i, value in refs:
        if 0 <= i < len(words) and words[i].value == value:
            out.append(words[i])
            continue
        src = words[i] if 0 <= i < len(words) else None
        out.append(Word(value=value, raw=value, dynamic=bool(src and src.dynamic), glob=bool(src and src.glob),
                        tilde=value.startswith("~")))
    return out


def _xargs_inner(acore: list[Word]) -> list[Word] | None:
    """The command ``xargs [OPTIONS] CMD ...`` runs, when its options are all plain ones."""
    wa = C.skip_wrapper([w.value for w in acore[1:]], C.EXEC_WRAPPERS["xargs"])
    if wa.scripts or any(w.value.split("=", 1)[0] in ("-I", "-i", "--replace") for w in acore[1:1 + wa.index]):
        return None  # replacement strings put names inside arguments
    inner = acore[1 + wa.index:]
    return inner or [Word(value="echo", raw="echo")]


def _env_runs_nothing(args: list[str]) -> bool:
    wa = C.skip_wrapper(args, C.EXEC_WRAPPERS["env"])
    return wa.index >= len(args) and not wa.scripts and not wa.chdir


_SSH_COMMAND_KEYS = re.compile(r"^\s*(?:ProxyCommand|LocalCommand|KnownHostsCommand|RemoteCommand)\s*(?:=|\s)\s*(.+)$",
                               re.IGNORECASE | re.DOTALL)


def _ssh_commands(args: list[str]) -> list[str]:
    """Commands ssh runs locally from ``-o Key=cmd`` options (ProxyCommand and friends)."""
    out = []
    for i, a in enumerate(args):
        value = None
        if a == "-o" and i + 1 < len(args):
            value = args[i + 1]
        elif a.startswith("-o") and len(a) > 2:
            value = a[2:]
        if value is not None:
            m = _SSH_COMMAND_KEYS.match(value)
            if m:
                out.append(m.group(1))
    return out


_GIT_COMMAND_KEYS = re.compile(
    r"^(?:core\.(?:fsmonitor|pager|sshcommand|editor|hookspath|askpass)|diff\.external|sequence\.editor"
    r"|gpg\.(?:\w+\.)?program|credential\.(?:.*\.)?helper|alias\..+|pager\..+|diff\..+\.(?:textconv|command)"
    r"|filter\..+\.(?:clean|smudge|process)|uploadpack\.packobjectshook|merge\..+\.driver)$", re.IGNORECASE)


def _git_config_commands(args: list[str], call: E.GitCall | None = None) -> list[str]:
    """Programs git would run from ``-c key=value`` settings and from its subcommand's
    arguments (``submodule foreach``, ``rebase -x`` ...), for deny rules to see."""
    call = call or E.git_call(args)
    out = E.git_commands(args[call.sub], args[call.sub + 1:]) if call.sub < len(args) else []
    for i, a in enumerate(args):
        if not a.startswith("-"):
            break
        value = args[i + 1] if a == "-c" and i + 1 < len(args) else (a[2:] if a.startswith("-c") and
                                                                       not a.startswith("--") else None)
        if value is None or "=" not in value:
            continue
        key, _eq, val = value.partition("=")
        if _GIT_COMMAND_KEYS.match(key) and val:
            out.append(val[1:] if val.startswith("!") else val)
    return out


def _builtin_scripts(name: str, args: list[str]) -> list[str]:
    """Shell text a command runs from its arguments: builtins' callbacks, ``rsync -e``."""
    if name == "rsync":
        return [a.split("=", 1)[1] for a in args if a.startswith("--rsh=")] + [
            args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-e", "--rsh")]
    embedded = E.EMBEDDED_SCRIPTS.get(name)
    if embedded is not None:
        return embedded(args)
    return callback_scripts(name, args)


#: Commands whose output is a list of file names under their operands (for ``... | xargs cmd``).
_LISTERS = frozenset({"find", "fd", "fdfind", "ls", "tree"})


def _listed_roots(producer: _Unwrapped) -> tuple[list[Word], bool] | None:
    """The directories whose files a producer of names prints, and whether it follows links there."""
    core = producer.core
    if not core or producer.xargs:
        return None
    name = _name(core[0].value).lower()
    args = core[1:]
    vals = [w.value for w in args]
    if name in _LISTERS:
        eff = E.effects(name, vals)
        if eff is None:
            return None
        return (_refs(args, eff.reads) or [Word(value=".", raw=".")]), eff.follows_links
    if name == "git":
        call = E.git_call(vals)
        if call.sub < len(vals) and vals[call.sub] == "ls-files" and not call.directories:
            return [Word(value=".", raw=".")], False
        return None
    if name in ("rg", "grep", "egrep", "fgrep"):
        eff = E.effects(name, vals)
        letters = "l" if name == "rg" else "lL"
        lists = ("--files", "--files-with-matches", "--files-without-match")

        def names_only(v: str) -> bool:
            if v.startswith("--"):
                return v in lists
            return v.startswith("-") and any(c in v[1:] for c in letters)

        if eff is not None and eff.trees and any(names_only(v) for v in vals):
            return _refs(args, eff.trees), eff.follows_links
    return None


class _Analysis:
    def __init__(self, oracle: PathDecisions, deny: CommandRules, ask: CommandRules, allow: CommandRules) -> None:
        self.o = oracle
        self.deny_rules = deny
        self.ask_rules = ask
        self.allow_rules = allow
        self.out = BashOutcome()
        self.cwds: list[str] = [oracle.cwd]
        self.cwd_unknown = False
        self.changed_dir = False
        self.literals: dict[str, str] = {}
        self.line_vars: dict[str, list[str]] = {}
        self.blocked_vars: set[str] = set()
        self.links: dict[str, list[str]] = {}  # a path a command of the line makes -> what it names
        self.link_makers: dict[str, set[int]] = {}  # the segments that make each of those paths
        self._judging: int | None = None
        self.parsed = ParsedScript()
        self.units_by_seg: dict[int, _Unwrapped] = {}
        self._units: list[_Unwrapped] = []
        self._disk_trusted: bool | None = None
        self._trusted_for: _Unwrapped | bool | None = None  # the one writing command, when it is alone
        self._effects: dict[tuple[str, tuple[str, ...]], E.Effects | None] = {}
        self._git_calls: dict[tuple[str, ...], E.GitCall] = {}

    # -- unwrapping ------------------------------------------------------------------------
    def unwrap(self, seg: Segment, parsed: ParsedScript, depth: int) -> _Unwrapped:
        deny_views: list[str] = []
        words = seg.words
        first_word = words[0].value if words else ""
        # Common case: a plain command name that is no wrapper, shell, runner or eval.
        plain = (seg.kind == "command" and bool(words) and "/" not in first_word
                 and not first_word.startswith("=") and first_word.lower() not in _SPECIAL_HEADS)
        if seg.kind != "command":
            deny_views.append(collapse_ws(seg.text))
        extras = None
        if plain:
            deny_views.append(_view(words))
            cur = words
            if first_word.lower() == "git":  # programs git runs from -c settings and its arguments
                for script in _git_config_commands([w.value for w in words[1:]], self.git_call(words[1:])):
                    self.nested(script, parsed, depth, dynamic=False)
        else:
            extras = _Unwrapped(seg=seg, deny_views=[], core=[], allow_core=None, allow_block=None)
            cur = self._unwrap_deny(seg, parsed, depth, deny_views, extras)
        core = cur
        # Allow side: only safe env vars, only the fixed wrapper list, bare xargs.
        allow_block: str | None = None
        for name_, value in seg.assignments:
            if not C.safe_env_var(name_) or value.dynamic:
                allow_block = f"assignment to {name_}"
                break
        acur: list[Word] | None
        if plain:
            acur, via_xargs = list(words), False
        else:
            acur, via_xargs = self._unwrap_allow(words)
        u = self._finish(seg, deny_views, core, acur, via_xargs, allow_block)
        if plain:
            u.allow_view = deny_views[0]  # the words as they are: the same string
        if extras is not None:
            u.wrapper_writes, u.wrapper_reads, u.chdir, u.xargs = (extras.wrapper_writes, extras.wrapper_reads,
                                                                   extras.chdir, extras.xargs)
            u.script = extras.script
            if u.script is not None and (u.script.commands or u.script.runs):
                u.dangerous = u.dangerous or u.script.runs or "its input runs shell commands"
        if u.allow_core and u.allow_core[0].value == "xargs":
            u.xargs_inner = _xargs_inner(u.allow_core)
        if core and core[0].value in EVALUATING_BUILTINS:
            u.evaluated = self.evaluation(core, parsed)
        return u

    def _unwrap_deny(self, seg: Segment, parsed: ParsedScript, depth: int, deny_views: list[str],
                     extras: _Unwrapped) -> list[Word]:
        cur = list(seg.words)
        for _ in range(24):
            if not cur:
                break
            deny_views.append(_view(cur))
            first = cur[0].value
            name = _name(first)
            if name != first:
                deny_views.append(collapse_ws(" ".join([name, *(w.value for w in cur[1:])])))
            lname = name.lower()
            args = [w.value for w in cur[1:]]
            if lname == "command" and args and args[0] in ("-v", "-V"):
                break
            spec = C.ALLOW_STRIP_WRAPPERS.get(lname) or C.EXEC_WRAPPERS.get(lname)
            if spec is not None:
                wa = C.skip_wrapper(args, spec)
                idx = wa.index
                for s in wa.scripts:
                    self.nested(s, parsed, depth, dynamic=False)
                if wa.writes:
                    extras.wrapper_writes = [*extras.wrapper_writes, *_refs(cur[1:], wa.writes)]
                if wa.reads:
                    extras.wrapper_reads = [*extras.wrapper_reads, *_refs(cur[1:], wa.reads)]
                extras.chdir = extras.chdir or wa.chdir
                extras.xargs = extras.xargs or lname == "xargs"
                if lname == "ssh":
                    for s in _ssh_commands(args[:idx]):
                        self.nested(s, parsed, depth, dynamic=False)
                if spec.joins_args and idx < len(args):
                    self.nested(" ".join(args[idx:]), parsed, depth,
                                dynamic=any(w.dynamic for w in cur[1 + idx:]))
                cur = cur[1 + idx:]
                continue
            runner = None
            for k in _RUNNER_HEADS.get(lname, ()):
                if tuple(w.value.lower() for w in cur[:len(k)]) == k:
                    runner = k
                    break
            if runner is not None:
                rspec = C.RUNNERS[runner]
                rargs = [w.value for w in cur[len(runner):]]
                wa = C.skip_wrapper(rargs, rspec)
                idx = wa.index
                for s in wa.scripts:
                    self.nested(s, parsed, depth, dynamic=False)
                cur = cur[len(runner) + idx:]
                continue
            if lname in C.SHELLS:
                script, has_c = _shell_script(cur[1:])
                if has_c:
                    if script is not None:
                        self.nested(script.value, parsed, depth, dynamic=script.dynamic)
                    else:
                        self.out.set_unverifiable(f"cannot see the script {name} runs")
                elif _script_from_input(cur[1:]):
                    text = _input_text(seg)
                    if text is not None:
                        self.nested(text, parsed, depth, dynamic=False)
                    else:
                        self.unseen(f"what the script {name} reads from its input runs")
                break
            if lname == "eval":
                self.nested(" ".join(args), parsed, depth, dynamic=any(w.dynamic for w in cur[1:]))
                break
            if lname in ("find", "fd", "fdfind"):
                self.find_exec(args, parsed, depth)
            if lname == "git":
                for s in _git_config_commands(args):
                    self.nested(s, parsed, depth, dynamic=False)
            for s in _builtin_scripts(lname, args):
                self.nested(s, parsed, depth, dynamic=False)
            reader = scripted.INPUT_SCRIPTS.get(lname)
            if reader is not None:
                extras.script = reader(lname, args, _input_text(seg))
                for s in extras.script.commands if extras.script is not None else ():
                    self.nested(s, parsed, depth, dynamic=False)
            break
        return cur

    @staticmethod
    def _unwrap_allow(words: list[Word]) -> tuple[list[Word], bool]:
        acur = list(words)
        via_xargs = False
        for _ in range(24):
            if not acur:
                break
            first = acur[0].value
            if first == "command" and len(acur) > 1 and acur[1].value in ("-v", "-V"):
                break
            wspec = C.ALLOW_STRIP_WRAPPERS.get(first)
            if wspec is not None:
                acur = acur[1 + C.skip_wrapper([w.value for w in acur[1:]], wspec).index:]
                continue
            if first == "xargs" and len(acur) > 1 and not acur[1].value.startswith("-"):
                acur = acur[1:]
                via_xargs = True
                continue
            break
        return acur, via_xargs

    def _finish(self, seg: Segment, deny_views: list[str], core: list[Word], acur: list[Word] | None,
                via_xargs: bool, allow_block: str | None) -> _Unwrapped:
        if seg.kind != "command":
            allow_block = allow_block or {"assignment": None, "declaration": "declaration",
                                          "safe-test": None}.get(seg.kind, seg.kind)
            if seg.kind in ("assignment", "safe-test") and allow_block is None:
                acur = []
        if acur is not None and any(w.dynamic for w in acur):
            allow_block = allow_block or "contains a shell expansion"
        if seg.kind == "command" and not acur:
            allow_block = allow_block or "no command to run"
        joined = "\n".join(deny_views)
        if not joined.isascii():  # fullwidth or compatibility spellings
            deny_views += [_nfkc(v) for v in deny_views]
        if "$" in joined or "{" in joined:
            deny_views += self.expanded_views(deny_views)
        u = _Unwrapped(seg=seg, deny_views=list(dict.fromkeys(deny_views)) if len(deny_views) > 1 else deny_views,
                       core=core, allow_core=acur if allow_block is None else None, allow_block=allow_block)
        if acur:
            aname = acur[0].value
            if aname in C.EXEC_WRAPPERS or aname in C.EVAL_COMMANDS or (
                aname in C.SHELLS and (len(acur) == 1 or _shell_script(acur[1:])[1])
            ) or aname == "xargs":
                u.exec_like = not (aname == "env" and _env_runs_nothing([w.value for w in acur[1:]]))
            dname = _name(aname)
            if dname in _DANGER_CHECKED:
                u.dangerous = self.dangerous(dname, acur[1:])
            u.via_xargs = via_xargs
        if core:
            cname = _name(core[0].value).lower()
            u.unknown_head = not (cname in C.READ_ONLY or cname in C.WRITE_ALL or cname in C.COPY_LIKE
                                  or cname in C.CHMOD_LIKE or cname in C.NON_FILE_COMMANDS)
        return u

    def expanded_views(self, views: list[str]) -> list[str]:
        """Deny-only guesses at what expansions produce: ``$IFS`` as a blank, variables set
        to literals earlier in the line, and brace lists (``{rm,-rf,x}`` is ``rm -rf x``)."""
        out: list[str] = []
        for v in views:
            w = _IFS.sub(" ", v)
            w = _INDIRECT.sub(lambda m: self.literals.get(self.literals.get(m.group(1), ""), m.group(0)), w)
            for name, value in self.literals.items():
                pattern = r"\$(?:\{" + re.escape(name) + r"\}|" + re.escape(name) + r"\b)"
                w = re.sub(pattern, value.replace("\\", "\\\\"), w)
            w = _BRACE_LIST.sub(lambda m: m.group(1).replace(",", " "), w)
            w = collapse_ws(w)
            if w != v:
                out.append(w)
                if " " in w:  # the first word may now carry a directory or a leading '='
                    head, rest = w.split(" ", 1)
                    out.append(f"{_name(head)} {rest}")
        return out

    def find_exec(self, args: list[str], parsed: ParsedScript, depth: int) -> None:
        i = 0
        while i < len(args):
            if args[i] in ("-exec", "-execdir", "-ok", "-okdir", "-x", "--exec", "-X", "--exec-batch"):
                j = i + 1
                chunk = []
                while j < len(args) and args[j] not in (";", "+", r"\;"):
                    chunk.append(args[j])
                    j += 1
                if chunk:
                    self.nested(" ".join(_quote(a) for a in chunk), parsed, depth, dynamic=False)
                i = j
            i += 1

    def nested(self, script: str, parsed: ParsedScript, depth: int, dynamic: bool) -> None:
        if dynamic:
            self.out.set_unapproved("runs a script built from shell expansions")
            self.unseen("what a script built from shell expansions runs")
        if depth > 8:
            self.out.set_unverifiable("commands nested too deeply to analyse")
            return
        inner = parse(script, depth + 1)
        parsed.segments.extend(as_nested(inner.segments))
        parsed.redirects.extend(inner.redirects)
        if inner.problems:
            self.out.set_unverifiable(f"cannot analyse the nested script: {inner.problems[0]}")

    # -- what the analysis cannot see ------------------------------------------------------
    def variables(self) -> dict[str, list[str]]:
        """Variables whose values are known here: the line's own literals, ``$HOME``, ``$PWD``
        (each directory the command may be in) and ``$OLDPWD`` once the line changes directory."""
        known = dict(self.line_vars)
        for name in ("HOME", "PWD", "OLDPWD"):
            if name in self.line_vars or name in self.blocked_vars:
                continue
            if name == "HOME":
                known[name] = [self.o.home]
            elif not self.cwd_unknown and (name == "PWD" or self.changed_dir):
                known[name] = list(self.cwds)
        return known

    def known_word(self, w: Word) -> str | None:
        """The word's one value, or None when an expansion in it cannot be known."""
        if not w.dynamic:
            return w.value
        texts = expand_word(w.raw, self.variables())
        return texts[0] if texts is not None and len(texts) == 1 else None

    def unseen(self, what: str) -> None:
        """A part of the line that could be any command touching any file (a script built
        from expansions, a script on the input the line does not show)."""
        self.out.set_might(unseen_rule(self.deny_rules, self.ask_rules, self.o), f"cannot tell {what}")

    def through_links(self, paths: list[str]) -> list[str]:
        """``paths`` and, for each one a command of the line makes as a link, copy or move
        target (or a path below one), what it names: ``ln -s ../.env l && cat l`` reads .env."""
        out = list(paths)
        frontier = list(paths)
        for _ in range(4):
            found: list[str] = []
            for p in map(collapse, frontier):
                for made, targets in self.links.items():
                    if self.link_makers.get(made) == {self._judging}:
                        continue  # the command that makes the link is judged on what it writes
                    if p == made or p.startswith(made.rstrip("/") + "/"):
                        rest = p[len(made):]
                        found += [t + rest for t in targets if t + rest not in out]
            if not found:
                break
            out += found
            frontier = found
        return out

    def made_links(self, units: list[_Unwrapped]) -> None:
        """Record what each link, copy or move the line makes names (see ``through_links``)."""
        for u in units:
            if not u.core:
                continue
            name = _name(u.core[0].value).lower()
            if name not in ("ln", "cp", "mv", "install", "link"):
                continue
            args = u.core[1:]
            eff = self.effects(name, args)
            if eff is None or not eff.writes:
                continue
            symbolic = name == "ln" and any(
                a.value == "--symbolic" or (_SHORT_CLUSTER.match(a.value) is not None and "s" in a.value)
                for a in args)
            sources = _refs(args, eff.reads)
            target = _refs(args, list(eff.writes)[:1])
            if not target:
                continue
            made = self.resolve_word(target[0], for_deny=True) or []
            pairs: list[tuple[str, Word]] = [(m, src) for m in made for src in sources[:1]] if len(sources) == 1 else []
            if eff.into_target is not None:
                for m in made:
                    for src in sources:
                        pairs.append((m.rstrip("/") + "/" + posixpath.basename(src.value.rstrip("/")), src))
            for m, src in pairs:
                m = collapse(m)
                if symbolic and not src.value.startswith("/"):
                    texts = [collapse(posixpath.dirname(m) + "/" + src.value)] if not src.dynamic else []
                else:
                    texts = [collapse(p) for p in self.resolve_word(src, for_deny=True) or []]
                if texts and len(self.links) < 64:
                    self.link_makers.setdefault(m, set()).add(id(u.seg))
                    self.links.setdefault(m, [])
                    self.links[m] += [t for t in texts if t not in self.links[m]]

    # -- paths -----------------------------------------------------------------------------
    def resolve_word(self, w: Word, for_deny: bool = False) -> list[str] | None:
        """Absolute candidate paths for a word, or None when they cannot be known."""
        paths = self._resolve_word(w, for_deny)
        return self.through_links(paths) if paths is not None and self.links else paths

    def _resolve_word(self, w: Word, for_deny: bool = False) -> list[str] | None:
        v = w.value
        if w.glob and "{" in v and not w.dynamic:  # bash expands brace lists into several words first
            alternatives = brace_expand(v)
            if alternatives is None:
                return None
            if alternatives != [v]:
                out: list[str] = []
                for alt in alternatives:
                    paths = self.resolve_word(Word(value=alt, raw=w.raw, glob=_has_glob(alt), quoted=w.quoted,
                                                   tilde=alt.startswith("~")), for_deny)
                    if paths is None:
                        return None
                    out += paths
                return out
        if w.dynamic:
            texts = expand_word(w.raw, self.variables())
            if texts is None:
                return None
            found: list[str] = []
            for text in texts:
                paths = self.resolve_word(Word(value=text, raw=w.raw, glob=w.glob and _has_glob(text),
                                               quoted=w.quoted, tilde=w.tilde and text.startswith("~")), for_deny)
                if paths is None:
                    return None
                found += paths
            return found
        if self.o.windows:
            v = to_posix(v, True)
        # Not collapsed: '..' must be applied after symlinks when the path is resolved.
        if w.tilde and v.startswith("~"):
            return shell_tilde(v, self.o.home, self.cwds)
        if v.startswith("/"):
            return self._proc_alias(v) if v.startswith(("/proc/", "/dev/fd/")) else [v]
        if self.cwd_unknown and not for_deny:
            return None
        return [c + "/" + v for c in self.cwds]

    def _proc_alias(self, path: str) -> list[str] | None:
        """``/proc/self/cwd/x`` is ``x`` in the command's own directory (not the checker's);
        ``/proc/N/root/x`` is ``/x``; another process's cwd or open files cannot be known."""
        parts = path.split("/")
        stack: list[str] = []
        m = None
        for k, part in enumerate(parts):
            if part in ("", "."):
                continue
            if part == "..":
                if stack:
                    stack.pop()
                continue
            stack.append(part)
            m = _PROC_LINK.match("/" + "/".join(stack))
            if m is not None:  # what follows the link is applied after it, '..' included
                rest = "/".join(parts[k + 1:])
                break
        if m is None:
            return [path]
        who, link, rest = m.group(1), m.group(2), "/" + rest if rest else ""
        if link == "root":
            return ["/" + rest.lstrip("/")]
        if link == "cwd" and who in ("self", "thread-self"):
            return [c.rstrip("/") + rest if rest else c for c in self.cwds]
        return None

    def check_reads(self, u: _Unwrapped, words: list[Word], recognised: bool, recursive: bool,
                    may_write: bool = False) -> bool:
        """Apply Read rules to file operands; return whether all are known and inside.

        ``may_write``: the command has no table, so it may write what it names (``perl -i``,
        ``ffmpeg IN OUT``): an Edit deny or ask rule on one asks."""
        all_inside = True
        name = _name(u.core[0].value) if u.core else ""
        for w in words:
            if self.o.deny_bases and _CODE_LIKE.search(w.value):
                self.code_mentions(name, w)
            paths = self.resolve_word(w, for_deny=True)
            if paths is None:
                all_inside = False
                self.unknowable(name, w, write=may_write)
                continue
            self.relative_unknown(name, w, write=may_write)
            for p in paths:
                if not recognised and not w.glob and not recursive and not self.o.may_deny(p):
                    all_inside = False  # an unknown command's argument no deny or ask rule covers
                    continue
                v = self.o.read_verdict(p) if recognised else self.o.read_deny_only(p)
                if v.deny is not None:
                    if recognised:
                        self.out.set_deny(v.deny, f"{name} reads {p}, which {v.deny.text} denies")
                    else:
                        self.out.set_hard(f"{name} may read {p}, which {v.deny.text} denies")
                elif v.ask is not None:
                    self.out.set_ask(v.ask, f"{name} reads {p}, which {v.ask.text} covers")
                elif may_write and self.o.may_deny(p):
                    wv = self.o.write_deny_only(p)
                    if wv.deny is not None:
                        self.out.set_hard(f"{name} may write {p}, which {wv.deny.text} denies")
                    elif wv.ask is not None:
                        self.out.set_ask(wv.ask, f"{name} may write {p}, which {wv.ask.text} covers")
                if not v.inside:
                    all_inside = False
                if (w.glob and _has_glob(p) and name not in C.NAME_LISTERS) or recursive:
                    base = _glob_base(collapse(p)) if w.glob else collapse(p)
                    hit = self.o.deny_under(base)
                    if hit is not None and not (w.glob and self.glob_reads(name, p, recognised)):
                        self.out.set_hard(f"{name} may read files under {base} that {hit.text} denies")
        if self.cwd_unknown:
            all_inside = False
        return all_inside

    def code_mentions(self, name: str, w: Word) -> None:
        """A word that reads as code (``python -c "open('.env')"``, ``node -e ...``): the
        file names in it may be read or written by it, so a deny or ask rule on one might apply."""
        for token in _PATH_TOKEN.findall(w.value)[:64]:
            if "." not in token and "/" not in token:
                continue
            for p in self._resolve_word(Word(value=token, raw=token, tilde=token.startswith("~")), True) or []:
                v = self.o.read_deny_only(p)
                rule = v.deny or v.ask
                if rule is None:
                    wv = self.o.write_deny_only(p)
                    rule = wv.deny or wv.ask
                if rule is not None:
                    self.out.set_might(rule, f"{name} runs code that names {collapse(p)}")
                    return

    def unknowable(self, name: str, w: Word, write: bool = False) -> None:
        """A path operand the analysis cannot resolve (an expansion, ``~-``, another process's
        directory): a Read (for a write: Read or Edit) deny or ask rule might cover it."""
        self.out.set_might(self.o.unseen_rule(write), f"{name}: cannot tell which file {w.raw} names")

    def relative_unknown(self, name: str, w: Word, write: bool) -> None:
        """A relative operand in a directory the analysis cannot name (``cd "$x"``, ``popd``)."""
        if self.cwd_unknown and not w.value.startswith(("/", "~", "-")):
            self.out.set_might(self.o.unseen_rule(write),
                               f"{name}: cannot tell which file {w.raw} names in a directory the line changes to")

    def glob_reads(self, name: str, pattern: str, recognised: bool) -> bool:
        """Apply Read rules to what a glob matches on disk now; False when that cannot be told."""
        matches = self.o.glob_matches(collapse(pattern)) if self.disk_trusted and recognised else None
        if matches is None:
            return False
        for m in matches:
            v = self.o.read_verdict(m)
            if v.deny is not None:
                self.out.set_deny(v.deny, f"{name} reads {m}, which {v.deny.text} denies")
            elif v.ask is not None:
                self.out.set_ask(v.ask, f"{name} reads {m}, which {v.ask.text} covers")
        return True

    def check_writes(self, name: str, words: list[Word]) -> tuple[bool, bool]:
        """Apply Edit rules / protected paths to written operands: (all inside, all allowed by rule)."""
        all_inside = True
        all_allowed = True
        if words and self.out.writes is None:
            self.out.writes = f"{name} writes {words[0].raw}"
        for w in words:
            paths = self.resolve_word(w, for_deny=True)
            if paths is None or w.glob:
                all_inside = all_allowed = False
                if paths is None:
                    self.unknowable(name, w, write=True)
                    continue
            self.relative_unknown(name, w, write=True)
            for p in paths:
                v = self.o.write_verdict(p)
                if v.deny is not None:
                    self.out.set_deny(v.deny, f"{name} writes {p}, which {v.deny.text} denies")
                elif v.ask is not None:
                    self.out.set_ask(v.ask, f"{name} writes {p}, which {v.ask.text} covers")
                if v.protected and self.out.protected is None:
                    self.out.protected = f"{name} writes the protected path {p}"
                if not v.inside:
                    all_inside = False
                if v.allow is None:
                    all_allowed = False
        if self.cwd_unknown:
            all_inside = all_allowed = False
        return all_inside, all_allowed

    def critical(self, w: Word, workdir: bool = True) -> str | None:
        """Why deleting ``w`` is critical (``/``, a top-level directory, home or above; with
        ``workdir`` the working directory or above too)."""
        v = w.value
        if w.dynamic:
            stripped = v.replace('"', "")
            if _VAR_GLOB.match(stripped):
                return f"a glob or trailing slash under a shell variable ({w.raw})"
        paths = self.resolve_word(w, for_deny=True)
        if not paths:
            return None
        home = self.o.home
        for p in map(collapse, paths):
            if not workdir and p != "/" and inside(p, self.o.cwd) and not inside(home, p):
                continue  # inside the working directory: a selective delete there is ordinary work
            if w.glob:
                base = _glob_base(p)
                if base == "/" or any(base == d for d in self.o.workdirs) or base == home:
                    return f"a glob directly under {base}"
                if base.count("/") <= 1:
                    return f"a glob directly under {base}"
            if p == "/" or p.count("/") == 1:
                return f"{p} is a top-level directory"
            if inside(home, p):
                return f"{p} is the home directory or above it"
            if workdir and any(inside(d, p) for d in self.o.workdirs[:1]):
                return f"{p} is the working directory or above it"
            if self.o.windows and p.count("/") <= 2:
                return f"{p} is a drive root or a top-level directory"
        return None

    # -- the walk --------------------------------------------------------------------------
    def run(self, command: str) -> BashOutcome:
        out = self.out
        parsed = parse(command)
        if len(command) > MAX_COMMAND_CHARS:
            out.set_unverifiable(f"the command is longer than {MAX_COMMAND_CHARS} characters")
        if _CONTROL.search(command):
            out.set_unverifiable("the command contains control characters")
        if parsed.problems:
            out.set_unverifiable(f"cannot analyse the command: {parsed.problems[0]}")
        self.parsed = parsed
        for seg in parsed.segments:  # literal assignments, for deny-side variable guesses
            for name, value in seg.assignments:
                if not value.dynamic and len(self.literals) < 64:
                    self.literals[name] = value.value
        if ("$(" in command or "`" in command) and may_evaluate(command):
            self.evaluated_text(parsed)
        units: list[_Unwrapped] = []
        i = 0
        while i < len(parsed.segments):
            if i >= _MAX_SEGMENTS:
                out.set_unverifiable("too many subcommands to analyse")
                break
            seg = parsed.segments[i]
            units.append(self.unwrap(seg, parsed, 1 if seg.nested else 0))
            i += 1
        self.line_vars = line_variables(command, parsed.segments, self.variables())
        self.blocked_vars = {n for seg in parsed.segments for n, _v in seg.assignments} - set(self.line_vars)
        self.directories(units)
        self.made_links(units)
        self._units = units
        for u in units:
            self.judge(u)
        self.redirects(parsed)
        if not units and not parsed.redirects and out.hard_ask is None and out.unverifiable is None:
            out.set_unapproved("empty command")
        return out

    @property
    def disk_trusted(self) -> bool:
        """Whether the tree on disk now is the tree the command will see: nothing in the line writes."""
        if self._disk_trusted is None:
            self._disk_trusted = not any(r.writes for r in self.parsed.redirects) and all(
                _passive(u.core) for u in self._units if u.core)
        return self._disk_trusted

    def trusted_for(self, u: _Unwrapped) -> bool:
        """Whether the tree on disk is the tree ``u`` walks: no other command of the line
        writes (its own output, ``tar -cf out.tar src``, cannot add links to what it reads)."""
        if self.disk_trusted:
            return True
        if self._trusted_for is None:
            writers = [o for o in self._units if o.core and not _passive(o.core)]
            self._trusted_for = writers[0] if len(writers) == 1 and not any(
                r.writes for r in self.parsed.redirects) else False
        return self._trusted_for is u

    def evaluated_text(self, parsed: ParsedScript) -> None:
        """Quoted text Bash will evaluate as arithmetic: variables holding ``a[$(cmd)]``, ``(( 'a[$(cmd)]' ))``."""
        texts = [v for v in self.literals.values() if "$(" in v or "`" in v]
        texts += [seg.text for seg in parsed.segments if seg.kind in ("test", "arithmetic")]
        texts += [w.raw for seg in parsed.segments for w in seg.words if "$((" in w.raw or "$[" in w.raw]
        for text in texts:
            bodies = substitutions(text)
            if bodies:
                self.out.set_unapproved("bash evaluates quoted text as arithmetic or a subscript, which runs code")
            for body in bodies:
                self.nested(body, parsed, 1, dynamic=False)

    def directories(self, units: list[_Unwrapped]) -> None:
        for u in units:
            if not u.core:
                continue
            name = _name(u.core[0].value)
            if name in ("cd", "pushd", "popd", "chdir"):
                targets = [w for w in u.core[1:] if not w.value.startswith("-") or w.value == "-"]
                if name == "popd" or (targets and targets[0].value == "-"):
                    self.cwd_unknown = True
                    continue
                if not targets:
                    self.cwds.append(self.o.home)
                    self.changed_dir = True
                    continue
                paths = self.resolve_word(targets[0], for_deny=True)
                if paths is None:
                    self.cwd_unknown = True
                    continue
                for p in map(collapse, paths):
                    if p not in self.cwds:
                        self.cwds.append(p)
                    if p != self.o.cwd:
                        self.changed_dir = True

    def judge(self, u: _Unwrapped) -> None:
        out = self.out
        self._judging = id(u.seg)
        self.rules(u)
        core = u.core
        name = _name(core[0].value).lower() if core else ""
        reads_ok, writes_inside = self.files(u, name)
        evaluated = u.evaluated
        deletes = name in ("rm", "rmdir", "unlink", "shred")
        if deletes or (name == "find" and any(w.value == "-delete" for w in core[1:])):
            for w in self._write_words(u, name):
                why = self.critical(w, workdir=deletes)
                if why:
                    out.set_hard(f"{name} on a critical path: {why}")
                    break
        for w in u.wrapper_writes:
            self.write_target(w, f"'{collapse_ws(u.seg.text)}' writes {w.raw}")
        # approval
        if u.allow_core is None:
            out.set_unapproved(f"'{collapse_ws(u.seg.text)}': {u.allow_block}")
            return
        if not u.allow_core:
            return  # a safe assignment on its own
        acore = u.allow_core
        aview = u.allow_view if u.allow_view is not None else _view(acore)
        if evaluated is not None:
            out.set_unapproved(f"'{aview}': {evaluated}")
            return
        views = [aview]
        if acore[0].value == "git":
            call = self.git_call(acore[1:])
            if call.plain and self._git_dirs_inside(acore[1:], call):
                views.append(_view([acore[0], *acore[1 + call.sub:]]))
        exact_only = u.exec_like or u.dangerous is not None
        rule = self.allow_rules.match(views, exact_only=exact_only)
        if rule is not None:
            if out.allow_rule is None:
                out.allow_rule = rule
            out.approvals.append(f"'{aview}' by {rule.text}")
            return
        head = acore[0].value
        if self.read_only(u, head, list(acore[1:]), reads_ok):
            out.approvals.append(f"'{aview}' is read-only")
            return
        if (head in C.ACCEPT_EDITS_COMMANDS and not u.exec_like
                and (head != "sed" or u.dangerous is None) and writes_inside and reads_ok):
            if out.needs_edit_mode is None:
                out.needs_edit_mode = f"'{aview}' edits files"
            return
        why = u.dangerous or ("runs another command" if u.exec_like else "no rule allows it")
        out.set_unapproved(f"'{aview}': {why}")

    def git_call(self, args: list[Word]) -> E.GitCall:
        """git's global options for these arguments, split once per analysis (never changed after)."""
        key = tuple([w.value for w in args])
        call = self._git_calls.get(key)
        if call is None:
            call = self._git_calls[key] = E.git_call(list(key))
        return call

    def dangerous(self, name: str, args: list[Word]) -> str | None:
        """Why a command runs another program through its own options (only exact allow rules approve it)."""
        if name == "git":
            call = self.git_call(args)
            values = [w.value for w in args]
            if call.danger:
                return call.danger
            if call.sub < len(values) and E.git_commands(values[call.sub], values[call.sub + 1:]):
                return f"git {values[call.sub]} runs a command from its arguments"
            return E.git_option_danger(values[call.sub + 1:])
        if name == "find" and any(w.value in _FIND_WRITING_ACTIONS for w in args):
            return f"{name} {next(w.value for w in args if w.value in _FIND_WRITING_ACTIONS)} deletes or writes files"
        if name in E.FAMILIES:
            eff = self.effects(name, args)
            return eff.runs_program if eff is not None else None
        return _dangerous(name, [w.value for w in args])

    def rules(self, u: _Unwrapped) -> None:
        """Deny and ask rules, generously, on every view; and words an unknown command may run."""
        out = self.out
        rule = self.deny_rules.match(u.deny_views)
        if rule is not None:
            out.set_deny(rule, f"'{collapse_ws(u.seg.text) or u.deny_views[-1]}' matches {rule.text}")
        rule = self.ask_rules.match(u.deny_views)
        if rule is not None:
            out.set_ask(rule, f"'{collapse_ws(u.seg.text) or u.deny_views[-1]}' matches {rule.text}")
        core = u.core
        if core and core[0].dynamic and self.known_word(core[0]) is None:
            self.unseen(f"which command '{_view(core)}' runs")
        elif out.deny is None and any(w.dynamic for w in u.seg.words):
            for words in (core, u.seg.words):
                shape = [self.known_word(w) for w in words]
                if None not in shape:
                    seen = collapse_ws(" ".join(x for x in shape if x is not None))
                    views = [seen, collapse_ws(" ".join([_name(shape[0] or ""), *(x or "" for x in shape[1:])]))]
                    hit = self.deny_rules.match(views)
                    if hit is not None:
                        out.set_deny(hit, f"'{seen}' matches {hit.text}")
                    elif (hit := self.ask_rules.match(views)) is not None:
                        out.set_ask(hit, f"'{seen}' matches {hit.text}")
                    continue
                might = self.deny_rules.might_match(shape) or self.ask_rules.might_match(shape)
                if might is not None:
                    out.set_might(might, f"cannot tell what '{_view(words)}' runs")
                    break
        if u.unknown_head and len(core) > 1 and (self.deny_rules.count or self.ask_rules.count):
            for j in range(1, len(core)):
                w = core[j]
                if w.dynamic or w.value.startswith("-") or not _CMD_WORD.match(w.value):
                    continue
                head = _name(w.value)
                if not (self.deny_rules.may_match(head) or self.ask_rules.may_match(head)
                        or (head != w.value and (self.deny_rules.may_match(w.value)
                                                 or self.ask_rules.may_match(w.value)))):
                    continue
                views = [_view(core[j:]), collapse_ws(" ".join([_name(w.value), *(x.value for x in core[j + 1:])]))]
                hit = self.deny_rules.match(views) or self.ask_rules.match(views)
                if hit is not None:
                    out.set_hard(f"'{_view(core)}' may run '{views[0]}', which {hit.text} covers")
                    break

    def effects(self, name: str, args: list[Word]) -> E.Effects | None:
        """The command's file effects: its family's table, or operands by the generic rule."""
        if not name or (name in C.NON_FILE_COMMANDS and name not in E.FAMILIES):
            return None
        svals = tuple([w.value for w in args])
        key = (name, svals)
        if key in self._effects:
            return self._effects[key]
        eff = E.effects(name, svals)
        if eff is None:
            eff = C.generic_effects(name, svals)
        self._effects[key] = eff
        return eff

    def _write_words(self, u: _Unwrapped, name: str) -> list[Word]:
        args = _expand_braces(u.core[1:]) if "{" in u.seg.text else u.core[1:]
        eff = self.effects(name, args)
        return _refs(args, eff.writes) if eff is not None else []

    def files(self, u: _Unwrapped, name: str) -> tuple[bool, bool]:
        """Read/Edit rules on the files the command reads and writes: (reads all inside, writes all inside)."""
        args = _expand_braces(u.core[1:]) if "{" in u.seg.text else u.core[1:]
        reads_ok = True
        writes_inside = True
        eff = u.eff = self.effects(name, args)
        if eff is not None and u.script is not None:
            eff = u.eff = dataclasses.replace(eff, reads=list(eff.reads))
            u.script.effects_into(eff)
        if eff is not None:
            recognised = name in _READERS or name in E.FAMILIES
            read_words = _refs(args, eff.reads)
            if name == "git":
                read_words = _without_messages(args, read_words)
            if any("=" in w.value for w in args):
                read_words += [Word(value=v, raw=v) for v in _opt_file_values([w.value for w in args])]
            reads_ok = self.check_reads(u, [*read_words, *u.wrapper_reads] if u.wrapper_reads else read_words,
                                        recognised, False, may_write=name not in E.FAMILIES)
            if eff.trees:
                reads_ok = self.check_trees(u, name, _refs(args, eff.trees), eff.follows_links) and reads_ok
            write_words = _refs(args, eff.writes)
            if eff.into_target is not None and eff.into_target[1]:
                write_words += self.copied_into(u, args, eff.into_target)
            if write_words:
                writes_inside, _all_allowed = self.check_writes(name, write_words)
                reads_ok = self.check_reads(u, write_words, True, False) and reads_ok
            if eff.names_from is not None:
                reads_ok = False
                self.hidden_names(name, eff.names_from)
            if eff.into:
                writes_inside = self.check_into(name, _refs(args, eff.into)) and writes_inside
            if eff.opaque is not None:
                reads_ok = writes_inside = False
                if self.o.deny_bases:
                    self.out.set_hard(f"{eff.opaque}, so deny rules cannot be checked on its files")
        elif u.wrapper_reads:
            reads_ok = self.check_reads(u, list(u.wrapper_reads), True, False)
        if name in _HIDDEN_WRITERS and (why := E.hidden_writes(
                name, [w.value for w in args], self.git_call(args) if name == "git" else None)) is not None:
            writes_inside = False
            if self.o.deny_bases:
                self.out.set_hard(f"{why}; deny rules cannot be checked on them")
        if u.xargs and name and name not in C.NON_FILE_COMMANDS:
            reads_ok = self.xargs_names(u, name) and reads_ok
        if name == "git":
            reads_ok = self.git_files(u, args) and reads_ok
            outputs = self.git_outputs(args)
            call = self.git_call(args)
            rest = args[call.sub + 1:]
            if call.sub < len(args) and args[call.sub].value in E.GIT_FILE_WRITERS:
                files, dirs = E.git_sub_writes(args[call.sub].value, [w.value for w in rest])
                outputs += _refs(rest, files)
                if dirs:
                    writes_inside = self.check_into("git", _refs(rest, dirs)) and writes_inside
            if outputs:
                inside, _all_allowed = self.check_writes("git", outputs)
                writes_inside = writes_inside and inside
        if name in ("find", "fd", "fdfind") and (roots := _exec_roots(name, args)) is not None:
            reads_ok = self.check_trees(u, f"{name} -exec", roots, any(w.value == "-L" for w in args)) and reads_ok
        if u.chdir:
            reads_ok = writes_inside = False
            if any(not w.value.startswith(("/", "-")) for w in args):
                self.out.set_might(self.o.unseen_rule(True), f"'{collapse_ws(u.seg.text)}' runs in another directory, "
                                   "so cannot tell which files its operands name")
        return reads_ok, writes_inside

    def copied_into(self, u: _Unwrapped, args: list[Word], into: tuple[E.Ref, Sequence[E.Ref]]) -> list[Word]:
        """The paths ``cp SRC TARGET`` writes inside TARGET when TARGET is a directory: when it
        ends in ``/``, is a directory on disk now, or another command of the line may make one."""
        target = _refs(args, [into[0]])[0]
        paths = self.resolve_word(target, for_deny=True)
        if paths is None or target.dynamic or target.glob:
            return []
        if target.value.endswith("/") or any(os.path.isdir(collapse(p)) for p in paths) or any(
                other is not u and other.core and _name(other.core[0].value) in _DIR_MAKERS for other in self._units):
            return _refs(args, into[1])
        return []

    def check_into(self, name: str, words: list[Word]) -> bool:
        """Edit rules on directories a command writes files into under names it alone knows
        (``tar -x -C DIR``, ``unzip -d DIR``, ``curl -J``): a rule covering the directory, or
        anything directly in it, decides; one that may cover something deeper asks."""
        all_inside = True
        if words and self.out.writes is None:
            self.out.writes = f"{name} writes files into {words[0].raw}"
        for w in words:
            paths = self.resolve_word(w, for_deny=True)
            if paths is None:
                all_inside = False
                self.unknowable(name, w, write=True)
                continue
            for p in map(collapse, paths):
                inner = p.rstrip("/") + "/" + _UNSEEN_NAME
                v = self.o.write_verdict(p)
                if v.deny is None and v.ask is None:
                    v = self.o.write_verdict(inner)
                if v.deny is not None:
                    self.out.set_deny(v.deny, f"{name} writes files into {p}, which {v.deny.text} denies")
                elif v.ask is not None:
                    self.out.set_ask(v.ask, f"{name} writes files into {p}, which {v.ask.text} covers")
                elif (hit := self.o.deny_under(p)) is not None:
                    self.out.set_hard(f"{name} writes files into {p} under names it reads at run time, "
                                      f"which {hit.text} may cover")
                if v.protected and self.out.protected is None:
                    self.out.protected = f"{name} writes into the protected path {p}"
                if not v.inside:
                    all_inside = False
        return all_inside and not self.cwd_unknown

    def git_outputs(self, args: list[Word]) -> list[Word]:
        """The files ``--output`` makes the git subcommand write (checked against Edit rules)."""
        call = self.git_call(args)
        rest = args[call.sub + 1:]
        words: list[Word] = []
        for k in E.git_output_files([w.value for w in rest]):
            w = rest[k]
            if w.value.startswith("--") and "=" in w.value:
                value = w.value.split("=", 1)[1]
                words.append(Word(value=value, raw=value, dynamic=w.dynamic, glob=w.glob, tilde=w.tilde))
            else:
                words.append(w)
        return words

    def git_files(self, u: _Unwrapped, args: list[Word]) -> bool:
        """git show HEAD:.env, git grep x -- .env, git log -p .env: operands may name files."""
        call = self.git_call(args)
        git_words: list[Word] = [Word(value=v, raw=v) for v in _opt_file_values([w.value for w in args])]
        rest = args[call.sub + 1:]
        for k, w in enumerate(rest[:-1]):
            if w.value == "--contents":  # git blame --contents FILE
                git_words.append(rest[k + 1])
        for w in _without_messages(rest, rest):
            v = w.value
            if v.startswith("-") or not v:
                continue
            if ":" in v and not v.startswith("/"):
                v = v.split(":", 1)[1]
                if not v:
                    continue
            git_words.append(Word(value=v, raw=w.raw, dynamic=w.dynamic, glob=w.glob, tilde=w.tilde))
        ok = self.check_reads(u, git_words, True, False)
        if call.sub < len(args) and args[call.sub].value == "grep":
            ok = self.check_trees(u, "git grep", [Word(value=".", raw=".")], False) and ok
        return ok

    def hidden_names(self, name: str, why: str) -> None:
        """File names the analysis cannot see: Read deny rules cannot be checked on them."""
        if self.o.deny_bases:
            self.out.set_hard(f"{why}; Read deny rules cannot be checked on names {name} gets that way")

    def xargs_names(self, u: _Unwrapped, name: str) -> bool:
        """``producer | xargs cmd``: cmd also gets the names the producer prints."""
        if not self.units_by_seg:
            self.units_by_seg = {id(unit.seg): unit for unit in self._units}
        producer = self.units_by_seg.get(id(u.seg.stdin_from)) if u.seg.stdin_from is not None else None
        listed = _listed_roots(producer) if producer is not None else None
        if listed is None:
            self.hidden_names(name, f"xargs {name} takes file names from its input")
            return False
        return self.check_trees(u, name, listed[0], listed[1], link_files=True)

    def evaluation(self, core: list[Word], parsed: ParsedScript) -> str | None:
        """Words Bash evaluates as subscripts or arithmetic: their substitutions run (``test -v 'a[$(x)]'``)."""
        name = _name(core[0].value).lower()
        args = core[1:]
        found = None
        for i in evaluated_words(name, [w.value for w in args]):
            w = args[i]
            if "$" in w.value or "`" in w.value:
                found = found or f"bash evaluates {w.raw} as an array subscript or arithmetic, which runs code"
                for body in substitutions(w.value):
                    self.nested(body, parsed, 1, dynamic=False)
        return found

    def check_trees(self, u: _Unwrapped, name: str, words: list[Word], follow: bool,
                    link_files: bool = False) -> bool:
        """Whether a denied file can be reached from trees a command walks; return whether all stay inside."""
        all_inside = True
        for w in words:
            paths = self.resolve_word(w, for_deny=True)
            if paths is None:
                all_inside = False
                if self.o.deny_bases:
                    self.out.set_hard(f"{name} walks {w.raw}, which cannot be checked against Read deny rules")
                continue
            for p in paths:
                base = _glob_base(collapse(p)) if w.glob else collapse(p)
                lexical_hit = self.o.deny_under(base)
                if lexical_hit is None and not follow and not link_files:
                    continue
                reach = self.o.reach(base, follow, link_files) if self.trusted_for(u) else None
                if reach is None or not reach.complete:
                    if lexical_hit is not None:
                        self.out.set_hard(f"{name} may read files under {base} that {lexical_hit.text} denies")
                    if follow:
                        all_inside = False
                    continue
                if reach.deny is not None:
                    rule, path = reach.deny
                    self.out.set_hard(f"{name} may read {path} under {base}, which {rule.text} covers")
                if reach.outside is not None:
                    all_inside = False
        return all_inside

    def write_target(self, t: Word, what: str) -> None:
        """A file written by a redirect or a wrapper's output option: Edit rules, protection, scope."""
        out = self.out
        if t.value in _EXEMPT_TARGETS and not t.dynamic:
            return
        if out.writes is None:
            out.writes = what
        paths = self.resolve_word(t, for_deny=True)
        if paths is None:
            out.set_might(self.o.unseen_rule(True), f"{what}: cannot tell which file it names")
        else:
            self.relative_unknown(what, t, write=True)
            for p in paths:
                v = self.o.write_verdict(p)
                if v.deny is not None:
                    out.set_deny(v.deny, f"{what}: {p}, which {v.deny.text} denies")
                elif v.ask is not None:
                    out.set_ask(v.ask, f"{what}: {p}, which {v.ask.text} covers")
                if v.protected and out.protected is None:
                    out.protected = f"{what}: the protected path {p}"
        if paths is None or t.dynamic or t.glob or t.tilde or self.cwd_unknown:
            out.set_unapproved(f"{what}: needs approval")
            return
        verdicts = [self.o.write_verdict(p) for p in paths]
        if all(v.allow is not None for v in verdicts):
            return
        if all(v.inside for v in verdicts):
            if out.needs_edit_mode is None:
                out.needs_edit_mode = what
            return
        out.set_unapproved(f"{what}: outside the working directories")

    def _git_dirs_inside(self, args: list[Word], call: E.GitCall) -> bool:
        for w in _refs(args, call.directories):
            paths = self.resolve_word(w)
            if paths is None or not all(self._in_workdirs(p) for p in paths):
                return False
        return True

    def read_only(self, u: _Unwrapped, head: str, args: list[Word], reads_ok: bool) -> bool:
        if head == "xargs" and u.xargs_inner is not None and not u.dangerous:
            inner = u.xargs_inner
            return bool(inner) and self._read_only_command(u, inner[0].value, inner[1:], reads_ok)
        if u.exec_like or u.dangerous is not None or (u.via_xargs and u.seg.stdin_from is None):
            return False
        return self._read_only_command(u, head, args, reads_ok)

    def _read_only_command(self, u: _Unwrapped, head: str, args: list[Word], reads_ok: bool) -> bool:
        if head in E.FAMILIES:
            if head not in C.READ_ONLY:
                return False
            same = u.core and u.core[0].value == head and len(u.core) == len(args) + 1
            eff = u.eff if same else self.effects(head, args)
            if eff is None or eff.writes or eff.side_effect or eff.runs_program or eff.names_from or eff.into \
                    or eff.opaque:
                return False
        else:
            vals = [w.value for w in args]
            validator = C.READ_ONLY.get(head)
            if validator is None:
                return E.version_only(head, vals)
            if not validator(vals):
                return False
        if head in C.GLOB_SENSITIVE and any(w.glob for w in args):
            return False
        if head == "git":
            if self.changed_dir:
                return False
            call = self.git_call(args)
            if not self._git_dirs_inside(args, call):
                return False
        if head in ("cd", "pushd"):
            targets = [w for w in args if not w.value.startswith("-")]
            if not targets:
                return False
            paths = self.resolve_word(targets[0])
            return paths is not None and all(self._in_workdirs(p) for p in paths)
        return reads_ok

    def _in_workdirs(self, p: str) -> bool:
        return self.o.read_verdict(p).inside

    def redirects(self, parsed: ParsedScript) -> None:
        out = self.out
        for r in parsed.redirects:
            if r.target is None:
                continue
            t = r.target
            if r.writes:
                self.write_target(t, f"output redirect writes {t.raw}")
            if r.reads:
                paths = self.resolve_word(t, for_deny=True)
                if paths is None:
                    out.set_unapproved(f"input redirect from {t.raw} cannot be checked")
                    out.set_might(self.o.unseen_rule(False),
                                  f"input redirect from {t.raw}: cannot tell which file it names")
                    continue
                self.relative_unknown("input redirect", t, write=False)
                for p in paths:
                    v = self.o.read_verdict(p)
                    if v.deny is not None:
                        out.set_deny(v.deny, f"input redirect reads {p}, which {v.deny.text} denies")
                    elif v.ask is not None:
                        out.set_ask(v.ask, f"input redirect reads {p}, which {v.ask.text} covers")
                    if not v.inside and v.allow is None:
                        out.set_unapproved(f"input redirect reads {p} outside the working directories")


#: Commands that may make a directory (or a link to one) another command of the line then copies into.
_DIR_MAKERS = frozenset({"mkdir", "ln", "cp", "mv", "install", "rsync", "scp", "tar", "bsdtar", "unzip", "cpio", "7z",
                         "git"})

#: A file name no rule names on purpose: a rule that matches it covers every name in its directory.
_UNSEEN_NAME = "pegboard-unseen-name"


def _input_text(seg: Segment) -> str | None:
    """The text a command reads from its input when the line shows it: a here-document, a
    here-string, or the literal words ``echo`` / ``printf`` pipe into it."""
    if seg.stdin_text is not None:
        return seg.stdin_text
    src = seg.stdin_from
    if src is None or not src.words or src.words[0].value not in ("echo", "printf"):
        return None
    words = src.words[1:]
    if any(w.dynamic for w in words):
        return None
    values = [w.value for w in words]
    if src.words[0].value == "echo":
        values = [v for v in values if v not in ("-n", "-e", "-E", "-ne", "-en")]
        return " ".join(values).replace("\\n", "\n") + "\n"
    return "\n".join(values).replace("\\n", "\n") + "\n"


def _quote(arg: str) -> str:
    if arg and re.fullmatch(r"[A-Za-z0-9_./{}=:,+@%-]+", arg):
        return arg
    return "'" + arg.replace("'", "'\\''") + "'"


def _pick(words: list[Word], values: list[str]) -> list[Word]:
    """The words among ``words`` whose values are ``values`` (in order, by identity of position)."""
    out: list[Word] = []
    pool = list(words)
    for v in values:
        for i, w in enumerate(pool):
            if w.value == v:
                out.append(w)
                del pool[i]
                break
    return out


def _opt_value(args: list[str], names: tuple[str, ...]) -> str | None:
    for i, a in enumerate(args):
        if a in names and i + 1 < len(args):
            return args[i + 1]
        for n in names:
            if n.startswith("--") and a.startswith(n + "="):
                return a.split("=", 1)[1]
    return None


def _opt_file_values(args: list[str]) -> list[str]:
    """Values of ``--opt=value`` options that look like paths (for Read deny rules)."""
    out = []
    for a in args:
        if a.startswith("-") and "=" in a:
            v = a.split("=", 1)[1]
            if v and ("/" in v or "." in v):
                out.append(v)
    return out


def _glob_base(path: str) -> str:
    parts = path.split("/")
    out: list[str] = []
    for seg in parts[1:]:
        if any(c in seg for c in "*?[{"):
            break
        out.append(seg)
    if len(out) == len(parts) - 1:
        out = out[:-1]
    return "/" + "/".join(out)


def analyse(command: str, oracle: PathDecisions, deny: CommandRules, ask: CommandRules,
            allow: CommandRules) -> BashOutcome:
    """Judge one Bash command line; never raises on any string."""
    return _Analysis(oracle, deny, ask, allow).run(command)
