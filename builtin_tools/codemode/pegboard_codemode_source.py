"""What a program may not say: ``import`` in any form.

Deno loads local modules (``import x from "/home/u/key.json"``, ``await import(...)``) without
read permission, so a program that imports anything is refused before the runtime starts.
``eval`` and ``new Function`` are off in the runtime (V8 ``--disallow-code-generation-from-strings``),
so the word cannot be assembled at run time. Strings, template text, comments and regular
expressions are skipped; template ``${...}`` parts are code.
"""

from __future__ import annotations

import re

_IDENT = re.compile(r"[A-Za-z_$\u0080-\uffff][\w$\u0080-\uffff]*")
#: after these a ``/`` starts a regular expression, not a division
_REGEX_AFTER_WORDS = {"return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "do",
                      "else", "yield", "await"}


def find_import(source: str) -> int | None:
    """The offset of the first ``import`` keyword in code, or ``None``."""
    i, n = 0, len(source)
    braces: list[int] = []  # for each open ${ in a template: the brace depth it opened at
    depth = 0
    last = ""  # the last significant token: "ident:<word>", "value" or a punctuator
    while i < n:
        c = source[i]
        if c in " \t\r\n\u2028\u2029\ufeff":
            i += 1
        elif source.startswith("//", i):
            end = source.find("\n", i)
            i = n if end < 0 else end
        elif source.startswith("/*", i):
            end = source.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif c in "'\"":
            i = _skip_string(source, i)
            last = "value"
        elif c == "`" or (c == "}" and braces and braces[-1] == depth):
            if c == "}":
                braces.pop()
                depth -= 1
            i, opened = _skip_template(source, i + 1)
            if opened:
                depth += 1
                braces.append(depth)
                last = "("
            else:
                last = "value"
        elif c == "/" and _regex_allowed(last):
            i = _skip_regex(source, i)
            last = "value"
        elif m := _IDENT.match(source, i):
            word = m.group()
            if word == "import":
                return i
            i = m.end()
            last = "ident:" + word
        else:
            if c in "([{":
                depth += 1 if c == "{" else 0
            elif c == "}":
                depth -= 1
            last = "value" if c in ")]}" or c.isdigit() else c
            i += 1
    return None


def _regex_allowed(last: str) -> bool:
    if last == "value":
        return False
    if last.startswith("ident:"):
        return last[6:] in _REGEX_AFTER_WORDS
    return True


def _skip_string(source: str, i: int) -> int:
    quote, i = source[i], i + 1
    while i < len(source):
        c = source[i]
        if c == "\\":
            i += 2
        elif c == quote or c == "\n":
            return i + 1
        else:
            i += 1
    return i


def _skip_template(source: str, i: int) -> tuple[int, bool]:
    """From inside a template: the offset after its end or after its next ``${``, and which."""
    while i < len(source):
        c = source[i]
        if c == "\\":
            i += 2
        elif c == "`":
            return i + 1, False
        elif source.startswith("${", i):
            return i + 2, True
        else:
            i += 1
    return i, False


def _skip_regex(source: str, i: int) -> int:
    i += 1
    in_class = False
    while i < len(source):
        c = source[i]
        if c == "\\":
            i += 2
            continue
        if c == "\n":
            return i
        if c == "[":
            in_class = True
        elif c == "]":
            in_class = False
        elif c == "/" and not in_class:
            i += 1
            while i < len(source) and (source[i].isalnum() or source[i] == "_"):
                i += 1
            return i
        i += 1
    return i
