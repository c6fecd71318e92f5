"""What a shell word expands to when every variable in it has a value the analysis knows.

``$PWD``, ``$HOME`` and ``$OLDPWD`` (after a ``cd`` in the line) are known from the working
directories; a variable the line itself sets to a literal is known when nothing else in the
line can change it. Anything else — a command substitution, an operator expansion
(``${x:-y}``), a variable from the environment — leaves the word unknown (``None``), which
the analysis treats as "cannot tell" rather than as harmless.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence

from pegboard_permissions_shell.bashparse import Segment

#: Candidate expansions of one word before the analysis gives up on it.
MAX_CANDIDATES = 16
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_SPLITS = frozenset(" \t\n*?[")
#: What may stand before a variable's first assignment for it to hold whatever runs after it:
#: nothing but other unconditional top-level statements.
_CONDITIONAL = re.compile(r"&&|\|\||[(){}`]|\$\(|(?<![A-Za-z0-9_])(?:if|then|else|elif|while|until|for|do|case|"
                          r"select|function)(?![A-Za-z0-9_])")


def line_variables(command: str, segments: Sequence[Segment],
                   given: Mapping[str, Sequence[str]] | None = None) -> dict[str, list[str]]:
    """Variables the line sets to literals before any use, with every value it gives them.

    A variable qualifies when its first appearance in the line is a plain top-level
    ``NAME=literal`` statement that nothing conditional precedes, every assignment to it is a
    literal statement of its own (not a prefix of a command, which bash applies to that
    command only), and every other appearance of its name is a plain ``$NAME`` / ``${NAME}``
    reference (no ``read NAME``, ``for NAME in``, ``unset``, ``${NAME:-...}``). A value with
    expansions counts when each of them is one of ``given`` (``f="$PWD/x"``)."""
    values: dict[str, list[str]] = {}
    blocked: set[str] = set()
    for seg in segments:
        for name, value in seg.assignments:
            texts = [value.value] if not value.dynamic else expand_word(value.raw, given or {})
            if texts is None or seg.kind != "assignment" or seg.words:
                blocked.add(name)
            else:
                values.setdefault(name, []).extend(texts)
    known: dict[str, list[str]] = {}
    for name, vals in values.items():
        if name in blocked or len(known) >= 64 or not re.fullmatch(_NAME, name):
            continue
        occurrences = [m.start() for m in re.finditer(rf"(?<![A-Za-z0-9_]){name}(?![A-Za-z0-9_])", command)]
        refs = len(re.findall(rf"\$(?:{name}(?![A-Za-z0-9_])|\{{{name}\}})", command))
        assigns = len(re.findall(rf"(?<![A-Za-z0-9_$]){name}=", command))
        if not occurrences or len(occurrences) != refs + assigns or assigns > len(vals):
            continue
        first = occurrences[0]
        if command[first:first + len(name) + 1] != f"{name}=":
            continue
        before = command[:first]
        if before.strip() and (before.rstrip()[-1] not in ";\n" or _CONDITIONAL.search(before)):
            continue
        known[name] = list(dict.fromkeys(vals))
    return known


def expand_word(raw: str, variables: Mapping[str, Sequence[str]]) -> list[str] | None:
    """The texts ``raw`` (a word as written) becomes, quotes removed, when each expansion in it
    is a variable in ``variables``; ``None`` when any part cannot be known. An unquoted value
    with blanks or glob characters would be split or globbed, so it is unknown too."""
    pieces: list[list[str]] = []
    i = 0
    quoted = False
    literal: list[str] = []

    def flush() -> None:
        if literal:
            pieces.append(["".join(literal)])
            literal.clear()

    while i < len(raw):
        ch = raw[i]
        if ch == "'" and not quoted:
            end = raw.find("'", i + 1)
            if end < 0:
                return None
            literal.append(raw[i + 1:end])
            i = end + 1
        elif ch == '"':
            quoted = not quoted
            i += 1
        elif ch == "\\" and i + 1 < len(raw):
            nxt = raw[i + 1]
            if quoted and nxt not in '$`"\\\n':
                literal.append(ch)
            literal.append(nxt)
            i += 2
        elif ch == "`":
            return None
        elif ch == "$":
            m = re.match(rf"\$(?:\{{({_NAME})\}}|({_NAME}))", raw[i:])
            if m is None:
                if i + 1 == len(raw) or raw[i + 1] in ' "/':
                    literal.append(ch)  # a lone '$' is itself
                    i += 1
                    continue
                return None
            name = m.group(1) or m.group(2)
            vals = variables.get(name)
            if not vals or (not quoted and any(c in _SPLITS for v in vals for c in v)):
                return None
            flush()
            pieces.append(list(vals))
            i += m.end()
        else:
            literal.append(ch)
            i += 1
    if quoted:
        return None
    flush()
    out: list[str] = []
    for combo in itertools.product(*pieces):
        out.append("".join(combo))
        if len(out) > MAX_CANDIDATES:
            return None
    return out or [""]
