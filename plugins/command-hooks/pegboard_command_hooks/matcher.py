"""Hook matchers: which handlers a tool name (or session source / reason) selects.

- ``"*"``, ``""`` or no matcher: everything.
- Only letters, digits, ``_``, ``-``, spaces, ``,`` and ``|``: an exact name, or a list of
  exact names split on ``|`` or ``,`` (whitespace around each name ignored).
- Anything else: a regular expression searched anywhere in the value (unanchored), so
  ``Edit.*`` also matches ``NotebookEdit``; write ``^Edit$`` for one exact name.

Matching is case-sensitive. An invalid regular expression matches nothing.
"""

from __future__ import annotations

import re
from functools import lru_cache

_EXACT_SET = re.compile(r"[A-Za-z0-9_\- ,|]*")


@lru_cache(maxsize=512)
def _compile(matcher: str) -> tuple[frozenset[str] | None, re.Pattern[str] | None, bool]:
    """(exact names, regex, matches-all) for one matcher string."""
    if matcher.strip() in ("", "*"):
        return None, None, True
    if _EXACT_SET.fullmatch(matcher):
        names = frozenset(n.strip() for n in re.split(r"[|,]", matcher) if n.strip())
        return names, None, False
    try:
        return None, re.compile(_python_regex(matcher)), False
    except re.error:
        return frozenset(), None, False


def _python_regex(matcher: str) -> str:
    """JavaScript named groups ``(?<name>...)`` spelled the Python way; the rest is shared syntax."""
    return re.sub(r"\(\?<(?![=!])", "(?P<", matcher)


def matcher_error(matcher: str) -> str | None:
    """Why a matcher can never match (an invalid regular expression), or ``None``."""
    if matcher.strip() in ("", "*") or _EXACT_SET.fullmatch(matcher):
        return None
    try:
        re.compile(_python_regex(matcher))
    except re.error as exc:
        return f"matcher {matcher!r} is not a valid regular expression: {exc}"
    return None


def matches(matcher: str | None, value: str) -> bool:
    """Does ``matcher`` select ``value`` (a tool name, a session source or end reason)?"""
    names, regex, everything = _compile(matcher or "")
    if everything:
        return True
    if regex is not None:
        return regex.search(value) is not None
    return names is not None and value in names
