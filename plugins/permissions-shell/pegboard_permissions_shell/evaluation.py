"""Where Bash evaluates a string as arithmetic or an array subscript, which runs code.

When Bash evaluates ``a[SUBSCRIPT]`` or an arithmetic expression, it expands the text again:
``test -v 'a[$(cmd)]'`` runs ``cmd`` although the word was single-quoted, and so does
``x='a[$(cmd)]'; (( x ))`` (a variable's value is evaluated when its name appears in
arithmetic). Checked against bash 5.2, the builtins that do this with an operand are
``test -v`` / ``[ -v``, ``printf -v``, ``read`` (the names it assigns), ``let`` and the
``mapfile -C`` callback (run as code); the syntax that does it is ``(( ))``, ``$(( ))``,
``$[ ]``, ``[[ ... -eq ... ]]``, ``[[ -v ]]``, ``${a[i]}``, ``${s:off:len}`` and ``${!name}``;
and ``${name@P}`` expands the value as a prompt, substitutions included.
"""

from __future__ import annotations

import re

#: Syntax in a command line that evaluates variables' values or quoted text as arithmetic.
EVAL_SYNTAX = re.compile(
    r"\(\(|\$\[|\[\[|\$\{!|\$\{\w+[\[:]|\$\{\w+@P\}|\b(?:let|read|mapfile|readarray)\s|\s-v\s"
    r"|\b(?:declare|typeset|local|export|readonly)\s+-\w*[in]"
)

_HINTS = ("((", "$[", "[[", "${", "let", "read", "mapfile", " -v", "declare", "typeset", "local", "export")


def may_evaluate(text: str) -> bool:
    """Whether ``text`` has syntax that evaluates quoted text or variables' values as arithmetic."""
    return any(h in text for h in _HINTS) and EVAL_SYNTAX.search(text) is not None


_READ_VALUED = frozenset("dinNptu")
#: Builtins with operands Bash may evaluate (see ``evaluated_words``).
EVALUATING_BUILTINS = frozenset({"test", "[", "printf", "let", "read"})


def evaluated_words(name: str, args: list[str]) -> list[int]:
    """Indexes of ``args`` that Bash evaluates as a subscript or an arithmetic expression."""
    if name in ("test", "["):
        return [i + 1 for i, a in enumerate(args[:-1]) if a == "-v"]
    if name == "printf":
        return [i + 1 for i, a in enumerate(args[:-1]) if a == "-v"][:1]
    if name == "let":
        return list(range(len(args)))
    if name == "read":
        out: list[int] = []
        i = 0
        while i < len(args):
            a = args[i]
            if a == "--":
                out.extend(range(i + 1, len(args)))
                break
            if a.startswith("-") and len(a) > 1:
                letters = a[1:]
                for k, ch in enumerate(letters):
                    if ch == "a":
                        if k + 1 < len(letters):
                            break
                        out.append(i + 1)
                        i += 1
                        break
                    if ch in _READ_VALUED:
                        if k + 1 == len(letters):
                            i += 1
                        break
                i += 1
                continue
            out.append(i)
            i += 1
        return [i for i in out if i < len(args)]
    return []


def callback_scripts(name: str, args: list[str]) -> list[str]:
    """Shell text a builtin runs later as code: ``mapfile -C CMD``, ``trap CMD SIGNAL``."""
    if name in ("mapfile", "readarray"):
        return [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-C"]
    if name == "trap":
        rest = [a for a in args if a != "--"]
        if len(rest) >= 2 and not rest[0].startswith("-"):
            return [rest[0]]
    return []


def substitutions(text: str) -> list[str]:
    """The bodies of ``$(...)`` and backtick substitutions in ``text`` (balanced, best effort)."""
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        if text.startswith("$(", i) and not text.startswith("$((", i):
            depth = 1
            j = i + 2
            while j < n and depth:
                if text[j] == "(":
                    depth += 1
                elif text[j] == ")":
                    depth -= 1
                j += 1
            out.append(text[i + 2:j - 1] if depth == 0 else text[i + 2:])
            i = j
        elif text[i] == "`":
            j = text.find("`", i + 1)
            j = n if j < 0 else j
            out.append(text[i + 1:j])
            i = j + 1
        else:
            i += 1
    return [s for s in out if s.strip()]


def evaluates_code(value: str) -> bool:
    """Whether evaluating ``value`` as a subscript or arithmetic can run or expand anything."""
    return "$" in value or "`" in value
