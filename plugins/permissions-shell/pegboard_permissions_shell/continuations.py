"""Removing line continuations (backslash-newline) exactly where Bash removes them.

Bash drops an unquoted backslash-newline pair before it splits words, but not when the
backslash is itself escaped (``\\\\`` then newline), inside single quotes, ``$'...'``, a
comment or a quoted here-document, and not before ``\\r\\n`` (the backslash escapes the
carriage return and the newline ends the command). Removing every pair, as a plain string
replace does, glues the next line to the current command, and the shell then runs that line
as a command no rule judged. Inside backticks every pair is removed (the shell reads the
backtick text that way), and in an unquoted here-document body pairs are removed before the
closing delimiter is looked for.

This is a small lexer that tracks only what decides the question: quotes, comments,
``$(...)`` / ``${...}`` / backtick nesting and pending here-documents.
"""

from __future__ import annotations

from dataclasses import dataclass

_META = frozenset(" \t\n;&|()<>")
_WORD_END = frozenset(" \t\n;&|()<>")


@dataclass
class _Heredoc:
    delimiter: str
    quoted: bool
    strip_tabs: bool


def _read_delimiter(text: str, i: int) -> tuple[str, bool, int]:
    """The here-document delimiter word starting at ``i``: (word without quotes, quoted, end)."""
    n = len(text)
    while i < n and text[i] in " \t":
        i += 1
    out: list[str] = []
    quoted = False
    while i < n and text[i] not in _WORD_END:
        ch = text[i]
        if ch == "\\" and i + 1 < n:
            if text[i + 1] == "\n":
                i += 2
                continue
            quoted = True
            out.append(text[i + 1])
            i += 2
        elif ch in "'\"":
            quoted = True
            end = text.find(ch, i + 1)
            if end < 0:
                end = n
            out.append(text[i + 1:end])
            i = end + 1
        elif ch == "$" and i + 1 < n and text[i + 1] in "'\"":
            i += 1  # $'..' / $".." delimiters are quoted
        else:
            out.append(ch)
            i += 1
    return "".join(out), quoted, i


def _read_bodies(text: str, i: int, pending: list[_Heredoc], out: list[str]) -> int:
    """Copy the here-document bodies starting at ``i`` (just after a newline); return the end."""
    n = len(text)
    for doc in pending:
        while i < n:
            line: list[str] = []
            while i < n and text[i] != "\n":
                ch = text[i]
                if not doc.quoted and ch == "\\" and i + 1 < n:
                    if text[i + 1] == "\n":
                        i += 2
                        continue
                    line.append(text[i:i + 2])
                    i += 2
                    continue
                line.append(ch)
                i += 1
            body = "".join(line)
            out.append(body)
            if i < n:
                out.append("\n")
                i += 1
            check = body.lstrip("\t") if doc.strip_tabs else body
            if check == doc.delimiter:
                break
    pending.clear()
    return i


def join_continued_lines(text: str) -> tuple[str, str | None]:
    """``text`` with the line continuations Bash would remove removed; and a problem, if any.

    The problem is set when the line ends inside a quote or nesting the lexer opened, and a
    backslash-newline was seen: then where the command continues cannot be told for sure.
    """
    if "\\\n" not in text:
        return text, None
    n = len(text)
    out: list[str] = []
    stack: list[str] = []  # contexts: ( for $( ), { for ${ }, " , `
    pending: list[_Heredoc] = []
    i = 0
    prev = "\n"  # the previous character of the output, to find word starts

    def emit(s: str) -> None:
        nonlocal prev
        if s:
            out.append(s)
            prev = s[-1]

    while i < n:
        ch = text[i]
        top = stack[-1] if stack else ""
        if ch == "\\":
            if i + 1 < n and text[i + 1] == "\n":
                i += 2
                continue
            emit(text[i:i + 2])
            i += 2
            continue
        if top == "`":
            if ch == "`":
                stack.pop()
            emit(ch)
            i += 1
            continue
        if top == '"':
            if ch == '"':
                stack.pop()
                emit(ch)
                i += 1
            elif ch == "`":
                stack.append("`")
                emit(ch)
                i += 1
            elif ch == "$" and text.startswith(("$(", "${"), i):
                stack.append(text[i + 1])
                emit(text[i:i + 2])
                i += 2
            else:
                emit(ch)
                i += 1
            continue
        # normal text, inside $( ) or ${ }
        if ch == "'":
            end = text.find("'", i + 1)
            end = n if end < 0 else end + 1
            emit(text[i:end])
            i = end
            continue
        if ch == "$" and i + 1 < n and text[i + 1] == "'":
            j = i + 2
            while j < n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            end = min(n, j + 1)
            emit(text[i:end])
            i = end
            continue
        if ch == "#" and top != "{" and prev in _META:
            end = text.find("\n", i)
            end = n if end < 0 else end
            emit(text[i:end])
            i = end
            continue
        if ch == '"':
            stack.append('"')
        elif ch == "`":
            stack.append("`")
        elif ch == "$" and text.startswith(("$(", "${"), i):
            stack.append(text[i + 1])
            emit(text[i:i + 2])
            i += 2
            continue
        elif ch == "(" and top == "(":
            stack.append("(")
        elif (ch == ")" and top == "(") or (ch == "}" and top == "{"):
            stack.pop()
        elif ch == "<" and top != "{" and text.startswith("<<", i) and not text.startswith("<<<", i):
            j = i + 2
            strip = j < n and text[j] == "-"
            if strip:
                j += 1
            delimiter, quoted, end = _read_delimiter(text, j)
            if delimiter:
                pending.append(_Heredoc(delimiter, quoted, strip))
            emit(text[i:j])
            emit(text[j:end].replace("\\\n", "") if not quoted else text[j:end])
            i = end
            continue
        elif ch == "\n" and pending:
            emit(ch)
            i = _read_bodies(text, i + 1, pending, out)
            prev = "\n"
            continue
        emit(ch)
        i += 1
    problem = None
    if stack:
        problem = "a line continuation inside an unterminated quote or substitution"
    return "".join(out), problem
