"""Parsing a Bash command line into the simple commands and redirects it would run.

Rules are matched per simple command, never against the raw line, because an operator
(``&&``, ``;``, ``|``, newline, ``$(...)``, backticks, ``<(...)``, subshells, brace groups,
loop and function bodies) can smuggle a second command past a prefix. A real shell grammar
(tree-sitter-bash) does the splitting; this module turns its tree into ``Segment`` objects
with shell quoting removed. Anything the grammar cannot parse, or that this module does not
understand, is reported as ``unanalysable`` so the engine never approves it.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pegboard_permissions_shell.continuations import join_continued_lines

MAX_COMMAND_CHARS = 10_000
_MAX_NESTED_SCRIPTS = 32

_ANSI_ESCAPES = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
    "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}
_ANSI_RE = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)", re.DOTALL)
_GLOB_CHARS = frozenset("*?[{}")
_ESCAPE_PAIR = re.compile(r"\\.", re.DOTALL)
_PLAIN_WORD = re.compile(r"[A-Za-z0-9_./:=@%+,~-]*")
_UNESCAPED_SPACE = re.compile(r"[\s;&|<>]")
#: Node types that cannot contain a command: the walk does not descend into them.
_LEAVES = frozenset({
    "word", "number", "raw_string", "ansi_c_string", "variable_name", "special_variable_name",
    "string_content", "file_descriptor", "heredoc_start", "heredoc_end", "heredoc_content", "comment",
    "regex", "test_operator", "extglob_pattern",
})
_DYNAMIC_NODES = frozenset({
    "simple_expansion", "expansion", "command_substitution", "process_substitution",
    "arithmetic_expansion",
})


_local = threading.local()


@lru_cache(maxsize=1)
def _language() -> Any:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Language(tree_sitter_bash.language())


def _parser() -> Any:
    """One parser per thread: a tree-sitter parser must not be shared between threads."""
    parser = getattr(_local, "parser", None)
    if parser is None:
        import tree_sitter

        parser = _local.parser = tree_sitter.Parser(_language())
    return parser


@dataclass
class Word:
    """One shell word: its value with quoting removed, and what the shell would still do to it."""

    value: str
    raw: str
    dynamic: bool = False  # holds $VAR, ${...}, $(...), `...`, $((...)), <(...)
    glob: bool = False  # unquoted glob or brace-expansion characters
    quoted: bool = False
    tilde: bool = False  # unquoted leading ~


@dataclass
class Redirect:
    op: str
    fd: str | None
    target: Word | None  # None: heredoc, here-string or fd duplication

    @property
    def writes(self) -> bool:
        return self.target is not None and self.op in (">", ">>", ">|", "&>", "&>>", ">&", "<>")

    @property
    def reads(self) -> bool:
        return self.target is not None and self.op in ("<", "<>")


@dataclass
class Segment:
    """One simple command (or a statement that acts like one) somewhere in the line."""

    words: list[Word]
    assignments: list[tuple[str, Word]] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    kind: str = "command"  # command | assignment | declaration | test | arithmetic
    nested: bool = False  # inside $(...), `...`, <(...) or a nested script
    text: str = ""
    #: The command whose output this one reads (``a | b``: b's is a), when it is a simple command.
    stdin_from: Segment | None = field(default=None, repr=False, compare=False)
    #: The text a here-document or here-string feeds the command (programs that read a script
    #: from their input: ``sqlite3``, ``ed``, ``ex``); None when it has none or it is built at run time.
    stdin_text: str | None = field(default=None, repr=False, compare=False)


@dataclass
class ParsedScript:
    segments: list[Segment] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # why it cannot be fully analysed
    read_write_redirects: int = 0  # '<>' redirects, which the grammar reports as errors


def _b2s(b: bytes) -> str:
    try:
        return b.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:  # a node boundary inside a character (only in broken input)
        return b.decode("utf-8", "replace")


def decode_ansi_c(body: str) -> str:
    """Decode the inside of ``$'...'`` the way Bash does."""

    def sub(m: re.Match[str]) -> str:
        esc = m.group(1)
        head = esc[0]
        try:
            if head == "x":
                return chr(int(esc[1:], 16))
            if head in "uU":
                return chr(int(esc[1:], 16))
            if head.isdigit():
                return chr(int(esc, 8) & 0xFF)
            if head == "c":
                return chr(ord(esc[1]) & 0x1F)
        except (ValueError, OverflowError):
            return "\\" + esc
        return _ANSI_ESCAPES.get(esc, "\\" + esc)

    return _ANSI_RE.sub(sub, body)


def _unescape_unquoted(text: str) -> str:
    out = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            out.append(text[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _unescape_dquoted(text: str) -> str:
    out = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in '$`"\\\n':
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


class _Builder:
    def __init__(self, src: bytes, result: ParsedScript, nested_depth: int) -> None:
        self.src = src
        self.result = result
        self.nested_depth = nested_depth
        self.by_node: dict[int, Segment] = {}
        self.pipes: list[list[int]] = []
        self.heredocs: list[tuple[int, str]] = []  # (command node, here-document text)

    def text(self, node: Any) -> str:
        return _b2s(self.src[node.start_byte:node.end_byte])

    # -- words ---------------------------------------------------------------------------
    def word(self, node: Any) -> Word:
        w = Word(value="", raw=self.text(node))
        self._fill(node, w, top=True)
        return w

    def _fill(self, node: Any, w: Word, top: bool = False) -> None:
        t = node.type
        if t in ("word", "number", "variable_name", "special_variable_name"):
            raw = self.text(node)
            if raw.startswith("~") and not w.value:
                w.tilde = True
            if _PLAIN_WORD.fullmatch(raw):  # the common case: nothing to unescape or flag
                w.value += raw
                return
            escaped = "\\" in raw
            bare = _ESCAPE_PAIR.sub("", raw) if escaped else raw  # without escaped characters
            if _UNESCAPED_SPACE.search(bare):
                # The grammar glued words together (seen with a newline before '\\'): a shell
                # would split here, so nothing about this command can be trusted.
                self.result.problems.append(f"ambiguous word {raw[:30]!r}")
                w.dynamic = True
            if escaped:
                w.quoted = True
            if raw != "{}" and any(c in _GLOB_CHARS for c in bare):
                w.glob = True
            if "(" in bare or ")" in bare:
                w.dynamic = True
            w.value += _unescape_unquoted(raw) if escaped else raw
        elif t == "raw_string":
            w.quoted = True
            w.value += self.text(node)[1:-1]
        elif t == "ansi_c_string":
            w.quoted = True
            w.value += decode_ansi_c(self.text(node)[2:-1])
        elif t in ("string", "translated_string"):
            w.quoted = True
            start = node.start_byte + (2 if t == "translated_string" else 1)
            end = node.end_byte - 1
            pos = start
            for child in node.children:
                if child.start_byte < start or child.end_byte > end:
                    continue
                if child.start_byte > pos:
                    w.value += _unescape_dquoted(_b2s(self.src[pos:child.start_byte]))
                if child.type in _DYNAMIC_NODES:
                    w.dynamic = True
                    w.value += self.text(child)
                else:
                    w.value += _unescape_dquoted(self.text(child))
                pos = child.end_byte
            if pos < end:
                w.value += _unescape_dquoted(_b2s(self.src[pos:end]))
        elif t == "concatenation":
            for child in node.children:
                self._fill(child, w)
        elif t in _DYNAMIC_NODES:
            w.dynamic = True
            w.value += self.text(node)
        elif t == "brace_expression":
            w.glob = True
            w.value += self.text(node)
        else:
            # Anything else (extglob, array, unknown): keep the text, never trust it.
            w.dynamic = True
            w.value += self.text(node)

    # -- statements ----------------------------------------------------------------------
    def redirect(self, node: Any) -> Redirect:
        fd = None
        op = ""
        target = None
        for child in node.children:
            if child.type == "file_descriptor":
                fd = self.text(child)
            elif not child.is_named:
                op = self.text(child)
            elif child.type == "ERROR" and op == "<" and self.text(child) == ">":
                op = "<>"  # the grammar does not know the read-write redirect
            elif target is None:
                target = self.word(child)
        if op in (">&", "<&") and target is not None and (target.value.isdigit() or target.value == "-"):
            target = None
        return Redirect(op=op, fd=fd, target=target)

    def command(self, node: Any, nested: bool) -> Segment:
        seg = Segment(words=[], nested=nested, text=self.text(node))
        prev_end = None
        word_end = -1  # where the last word ended: a word starting there continues it
        for child in node.children:
            if prev_end is not None and b"\n" in self.src[prev_end:child.start_byte]:
                # A newline between the words of one command: the shell would end the command
                # there, so the grammar glued two commands together. Trust nothing here.
                self.result.problems.append(f"ambiguous line break in {seg.text[:40]!r}")
            prev_end = child.end_byte
            t = child.type
            if t == "variable_assignment":
                seg.assignments.append(self.assignment(child))
            elif t == "herestring_redirect":
                given = [c for c in child.named_children if c.type != "file_descriptor"]
                if given:
                    w = self.word(given[0])
                    seg.stdin_text = None if w.dynamic else w.value
            elif t in ("file_redirect", "heredoc_redirect"):
                pass  # collected by the walk
            elif t == "comment" or not child.is_named:
                continue
            else:
                inner = child
                if t == "command_name":
                    inner = child.named_children[0] if child.named_child_count else child
                if seg.words and child.start_byte == word_end:
                    # The grammar splits 'a'\m into two words; the shell reads one ("am").
                    w = seg.words[-1]
                    self._fill(inner, w)
                    w.raw += self.text(inner)
                else:
                    seg.words.append(self.word(inner))
                word_end = child.end_byte
        return seg

    def assignment(self, node: Any) -> tuple[str, Word]:
        name = ""
        value: Word | None = None
        for child in node.children:
            if child.type in ("variable_name", "subscript") and not name:
                name = self.text(child)
            elif child.is_named and name:
                value = self.word(child)
        if value is None:
            value = Word(value="", raw="")
        if "[" in name:
            value.dynamic = True  # arr[$(cmd)]=x evaluates the subscript
        return name, value


def _walk(src: bytes, root: Any, result: ParsedScript, nested_depth: int) -> None:
    b = _Builder(src, result, nested_depth)
    stack: list[tuple[Any, bool, Any]] = [(root, False, None)]
    while stack:
        node, nested, parent = stack.pop()
        t = node.type
        if t == "ERROR" and parent is not None and parent.type == "file_redirect" and b.text(node) == ">":
            result.read_write_redirects += 1
            continue
        if t == "ERROR" or node.is_missing:
            result.problems.append(f"cannot parse near {b.text(node)[:40]!r}")
        elif t == "command":
            seg = b.command(node, nested)
            result.segments.append(seg)
            b.by_node[node.id] = seg
        elif t == "pipeline":
            b.pipes.append([c.id for c in node.named_children])
        elif t == "redirected_statement":
            body = node.child_by_field_name("body")
            docs = [c for c in node.named_children if c.type == "heredoc_redirect"]
            if body is not None and body.type == "command" and docs:
                b.heredocs.append((body.id, _heredoc_text(b, docs[-1])))
        elif t == "variable_assignment" and parent is not None and parent.type not in (
            "command", "declaration_command",
        ):
            name, value = b.assignment(node)
            result.segments.append(Segment(words=[], assignments=[(name, value)], kind="assignment",
                                           nested=nested, text=b.text(node)))
        elif t in ("declaration_command", "unset_command"):
            words = [Word(value=b.text(c), raw=b.text(c)) if not c.is_named else b.word(c)
                     for c in node.children if c.type != "variable_assignment"]
            assigns = [b.assignment(c) for c in node.children if c.type == "variable_assignment"]
            result.segments.append(Segment(words=words, assignments=assigns, kind="declaration",
                                           nested=nested, text=b.text(node)))
        elif t == "test_command":
            text = b.text(node)
            safe = not any(x in text for x in ("$", "`", "=~", "(", "<", ">")) and not (
                text.startswith("[[") and re.search(r"-(?:eq|ne|lt|le|gt|ge)\b", text)
            )
            result.segments.append(Segment(words=[Word(value="[[", raw="[[")], kind="test" if not safe
                                           else "safe-test", nested=nested, text=text))
        elif t in ("c_style_for_statement",) or (
            t == "compound_statement" and node.child_count and node.children[0].type == "(("
        ):
            result.segments.append(Segment(words=[Word(value="((", raw="((")], kind="arithmetic",
                                           nested=nested, text=b.text(node)))
        elif t == "file_redirect":
            result.redirects.append(b.redirect(node))
        elif t == "heredoc_redirect":
            _heredoc(b, node, result, nested_depth)
        elif t == "function_definition":
            pass
        if t in _LEAVES:
            continue
        child_nested = nested or t in ("command_substitution", "process_substitution")
        for child in reversed(node.children):
            if child.is_named or child.type == "ERROR":
                stack.append((child, child_nested, node))
    for ids in b.pipes:
        for before, after in itertools.pairwise(ids):
            if before in b.by_node and after in b.by_node:
                b.by_node[after].stdin_from = b.by_node[before]
    for node_id, text in b.heredocs:
        if node_id in b.by_node:
            b.by_node[node_id].stdin_text = text


def _heredoc_text(b: _Builder, node: Any) -> str:
    """A here-document's body as the command reads it (expansions kept as written)."""
    return "".join(b.text(c) for c in node.children if c.type == "heredoc_body")


def _heredoc(b: _Builder, node: Any, result: ParsedScript, depth: int) -> None:
    start = next((c for c in node.children if c.type == "heredoc_start"), None)
    quoted = start is not None and any(q in b.text(start) for q in "'\"\\")
    if quoted:
        return
    for child in node.children:
        if child.type != "heredoc_body":
            continue
        pieces = []
        pos = child.start_byte
        for part in child.children:
            if part.type in _DYNAMIC_NODES:
                pieces.append(_b2s(b.src[pos:part.start_byte]))
                pos = part.end_byte
        pieces.append(_b2s(b.src[pos:child.end_byte]))
        leftover = "".join(pieces)
        if "`" in leftover or "$(" in leftover:
            result.problems.append("command substitution in a here-document")
            for m in re.finditer(r"`([^`]*)`|\$\(([^)]*)\)", leftover):
                _nested_into(m.group(1) or m.group(2) or "", result, depth)


def _nested_into(script: str, result: ParsedScript, depth: int) -> None:
    if depth >= _MAX_NESTED_SCRIPTS:
        result.problems.append("too deeply nested")
        return
    inner = parse(script, depth + 1)
    result.segments.extend(as_nested(inner.segments))
    result.redirects.extend(inner.redirects)
    result.problems.extend(inner.problems)


def rough_segments(text: str) -> list[Segment]:
    """A crude split of a line the grammar could not parse, for generous deny matching only."""
    import shlex

    flat = re.sub(r"[\n`]|\$\(|<\(|>\(", ";", text)
    try:
        lexer = shlex.shlex(flat, posix=True, punctuation_chars=";&|()<>")
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        tokens = flat.replace("'", " ").replace('"', " ").split()
    segments: list[Segment] = []
    cur: list[str] = []
    for tok in [*tokens, ";"]:
        if tok and all(c in ";&|()<>" for c in tok):
            if cur:
                segments.append(Segment(words=[Word(value=v, raw=v) for v in cur], nested=True,
                                        text=" ".join(cur)))
            cur = []
        else:
            cur.append(tok)
    return segments


_SIMPLE_LINE = re.compile(r"[A-Za-z0-9_./:=@%+,*\- \t\n;&|]*")
_SIMPLE_OP_CAPTURE = re.compile(r"(\s*(?:&&|\|\||\|&|[;&|\n])\s*)")
_RESERVED = frozenset({
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac", "in",
    "function", "select", "time", "coproc", "!", "{", "}", "[[", "]]",
})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _fast_parse(text: str) -> ParsedScript | None:
    """Split a line made only of plain words and list operators without the grammar.

    Such a line has no quoting, expansion, redirection, grouping or comment, so splitting
    on the operators and then on blanks is exactly what the shell does (a property test
    compares this with the grammar). Anything else returns ``None`` and goes to the grammar.
    """
    if not _SIMPLE_LINE.fullmatch(text) or "&&&" in text or "|||" in text:
        return None
    # One split with a capturing group: chunks at even indexes, operators at odd ones.
    parts = _SIMPLE_OP_CAPTURE.split(text)
    chunks = parts[0::2]
    ops = [op.strip() or "\n" for op in parts[1::2]]
    if not chunks[-1].strip():  # ends with an operator: only ';', '&' or a newline may end a list
        if not ops or ops[-1] not in (";", "&", "\n"):
            return None
        ops.pop()
        chunks.pop()
    # Operators must separate non-empty commands (';;', '&& ||' ... are syntax errors).
    if any(not c.strip() for c in chunks) or len(ops) != len(chunks) - 1:
        return None
    result = ParsedScript()
    previous: Segment | None = None
    for k, chunk in enumerate(chunks):
        piped = k > 0 and ops[k - 1] == "|"
        words = chunk.split()
        assigns: list[tuple[str, Word]] = []
        while words and _ASSIGNMENT.match(words[0]):
            name, _, value = words.pop(0).partition("=")
            assigns.append((name, Word(value=value, raw=value, glob="*" in value)))
        if words and words[0] in _RESERVED:
            return None
        if not words:
            for name, value in assigns:
                result.segments.append(Segment(words=[], assignments=[(name, value)], kind="assignment",
                                               text=f"{name}={value.raw}"))
            previous = None
            continue
        seg = Segment(words=[Word(value=w, raw=w, glob="*" in w) for w in words], assignments=assigns,
                      text=chunk.strip())
        if piped and previous is not None:
            seg.stdin_from = previous
        result.segments.append(seg)
        previous = seg
    return result


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def _ascii_shape(text: str, src: bytes) -> bytes:
    """``src`` with every non-ASCII character replaced by as many ``x`` bytes as it takes.

    Non-ASCII characters are ordinary word characters to the shell, so the tree has the
    same shape and the same byte offsets (words are still read from the original bytes).
    The grammar's scanner has crashed on some non-ASCII input; it never sees any now.
    """
    if src.isascii():
        return src
    return _NON_ASCII.sub(lambda m: "x" * len(m.group(0).encode("utf-8", "surrogatepass")), text).encode("ascii")


def as_nested(segments: list[Segment]) -> list[Segment]:
    """Copies of ``segments`` marked as nested (parse results are shared and never changed)."""
    copies = {id(s): dataclasses.replace(s, nested=True) for s in segments}
    for s in segments:
        if s.stdin_from is not None and id(s.stdin_from) in copies:
            copies[id(s)].stdin_from = copies[id(s.stdin_from)]
    return list(copies.values())


def parse(command: str, depth: int = 0) -> ParsedScript:
    """Parse ``command``; never raises (problems are reported in the result).

    Results are cached by text: the lists are fresh for every caller, the segments and
    words in them are shared and must not be changed.
    """
    cached = _parse_cached(command, depth)
    return ParsedScript(segments=list(cached.segments), redirects=list(cached.redirects),
                        problems=list(cached.problems), read_write_redirects=cached.read_write_redirects)


@lru_cache(maxsize=512)
def _parse_cached(command: str, depth: int) -> ParsedScript:
    return _parse(command, depth)


def _parse(command: str, depth: int) -> ParsedScript:
    text, joined_problem = join_continued_lines(command)
    fast = _fast_parse(text) if joined_problem is None else None
    if fast is not None:
        return fast
    result = ParsedScript()
    if joined_problem is not None:
        result.problems.append(joined_problem)
    try:
        src = text.encode("utf-8", "surrogatepass")
    except UnicodeError:
        result.problems.append("undecodable characters")
        return result
    try:
        tree = _parser().parse(_ascii_shape(text, src))
    except Exception as exc:  # pragma: no cover - parser failures are not expected
        result.problems.append(f"parser failed: {type(exc).__name__}")
        return result
    root = tree.root_node
    _walk(src, root, result, depth)
    if root.has_error and not result.read_write_redirects:
        result.problems.append("the shell grammar cannot parse this command")
    if result.problems:
        result.segments.extend(rough_segments(text))
    return result

