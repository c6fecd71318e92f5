"""Diffs of a file before and after a change, as hunks and as unified-diff text.

Hunks have the ``structuredPatch`` shape hooks written for other agents read:
``{"oldStart", "oldLines", "newStart", "newLines", "lines"}``, ``lines`` prefixed with
``" "``, ``"-"`` or ``"+"`` (and ``"\\ No newline at end of file"`` after a last line that
has none), three lines of context, hunks whose context would overlap merged. ``oldStart``
is 1-based even for an empty range (the unified text shows it one lower, as ``diff`` does).

A tool edits one spot of a big file far more often than it rewrites it, so the common head
and tail are skipped with block comparisons first and only the changed middle is diffed
line by line: a one-line edit of a 100 MB file costs a few memory compares, not a line diff
of two million lines. A middle too big to diff line by line becomes one replace hunk.
"""

from __future__ import annotations

import difflib
from typing import Any

Hunk = dict[str, Any]

NO_NEWLINE = "\\ No newline at end of file"
#: above this many lines in the changed middle, emit one replace hunk instead of a line diff
MAX_DIFF_LINES = 20_000


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i, step = 0, 1 << 12
    while i < n:
        j = min(i + step, n)
        if a[i:j] != b[i:j]:
            lo, hi = i, j
            while hi - lo > 32:
                mid = (lo + hi) // 2
                if a[lo:mid] == b[lo:mid]:
                    lo = mid
                else:
                    hi = mid
            while lo < hi and a[lo] == b[lo]:
                lo += 1
            return lo
        i, step = j, min(step * 2, 1 << 22)
    return n


def _common_suffix(a: str, b: str, limit: int) -> int:
    la, lb = len(a), len(b)
    i, step = 0, 1 << 12
    while i < limit:
        j = min(i + step, limit)
        if a[la - j:la - i] != b[lb - j:lb - i]:
            lo, hi = i, j
            while hi - lo > 32:
                mid = (lo + hi) // 2
                if a[la - mid:la - lo] == b[lb - mid:lb - lo]:
                    lo = mid
                else:
                    hi = mid
            while lo < hi and a[la - lo - 1] == b[lb - lo - 1]:
                lo += 1
            return lo
        i, step = j, min(step * 2, 1 << 22)
    return limit


def _at_boundary(text: str, pos: int, start: int) -> bool:
    return pos == start or pos == len(text) or text[pos - 1] == "\n"


def _lines(text: str) -> list[str]:
    """Lines with their ``\\n`` kept (a last line without one stays without)."""
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def _strip(line: str) -> str:
    if line.endswith("\n"):
        line = line[:-1]
        if line.endswith("\r"):
            line = line[:-1]
    return line


def _emit(prefix: str, line: str, out: list[str]) -> None:
    out.append(prefix + _strip(line))
    if not line.endswith("\n"):
        out.append(NO_NEWLINE)


def structured_patch(old: str, new: str, context: int = 3) -> list[Hunk]:
    """The hunks that turn ``old`` into ``new`` (``[]`` when they are equal)."""
    if old == new:
        return []
    context = max(0, context)
    p = _common_prefix(old, new)
    s = _common_suffix(old, new, min(len(old), len(new)) - p)
    start = old.rfind("\n", 0, p) + 1
    end_old, end_new = len(old) - s, len(new) - s
    if not (_at_boundary(old, end_old, start) and _at_boundary(new, end_new, start)):
        nl = old.find("\n", end_old)
        grow = (len(old) if nl < 0 else nl + 1) - end_old
        end_old, end_new = end_old + grow, end_new + grow
    for _ in range(context):
        if start == 0:
            break
        start = old.rfind("\n", 0, start - 1) + 1
    for _ in range(context):
        if end_old >= len(old):
            break
        nl = old.find("\n", end_old)
        grow = (len(old) if nl < 0 else nl + 1) - end_old
        end_old, end_new = end_old + grow, end_new + grow
    base = old.count("\n", 0, start)
    a = _lines(old[start:end_old])
    b = _lines(new[start:end_new])
    if len(a) + len(b) > MAX_DIFF_LINES:
        return [_replace_hunk(a, b, base, context)]
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    hunks: list[Hunk] = []
    for group in matcher.get_grouped_opcodes(context):
        lines: list[str] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for line in a[i1:i2]:
                    _emit(" ", line, lines)
                continue
            for line in a[i1:i2]:
                _emit("-", line, lines)
            for line in b[j1:j2]:
                _emit("+", line, lines)
        first, last = group[0], group[-1]
        hunks.append({
            "oldStart": base + first[1] + 1,
            "oldLines": last[2] - first[1],
            "newStart": base + first[3] + 1,
            "newLines": last[4] - first[3],
            "lines": lines,
        })
    return hunks


def _replace_hunk(a: list[str], b: list[str], base: int, context: int) -> Hunk:
    head = 0
    while head < min(len(a), len(b), context) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and tail < context and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    lines: list[str] = []
    for line in a[:head]:
        _emit(" ", line, lines)
    for line in a[head:len(a) - tail]:
        _emit("-", line, lines)
    for line in b[head:len(b) - tail]:
        _emit("+", line, lines)
    for line in a[len(a) - tail:]:
        _emit(" ", line, lines)
    return {"oldStart": base + 1, "oldLines": len(a), "newStart": base + 1, "newLines": len(b), "lines": lines}


def _range(start: int, count: int) -> str:
    if count == 1:
        return str(start)
    return f"{start - 1 if count == 0 else start},{count}"


def format_hunks(hunks: list[Hunk]) -> str:
    """The hunks as unified-diff text (``@@ -a,b +c,d @@`` headers), without file headers."""
    out: list[str] = []
    for h in hunks:
        out.append(f"@@ -{_range(h['oldStart'], h['oldLines'])} +{_range(h['newStart'], h['newLines'])} @@")
        out.extend(h["lines"])
    return "\n".join(out)


def unified_diff(old: str, new: str, old_name: str = "a", new_name: str = "b", context: int = 3) -> str:
    """A complete unified diff (``---`` / ``+++`` headers and hunks); ``""`` when equal."""
    hunks = structured_patch(old, new, context)
    if not hunks:
        return ""
    return f"--- {old_name}\n+++ {new_name}\n{format_hunks(hunks)}\n"


def snippet(hunks: list[Hunk], max_lines: int = 40, max_line_chars: int = 500) -> str:
    """The new side of ``hunks`` numbered like ``cat -n`` (what the file looks like now around
    each change), hunks separated by ``...``; at most ``max_lines`` lines."""
    out: list[str] = []
    for h in hunks:
        if out:
            out.append("...")
        number = h["newStart"]
        for line in h["lines"]:
            if line.startswith(("-", "\\")):
                continue
            body = line[1:]
            if len(body) > max_line_chars:
                body = body[:max_line_chars] + "..."
            out.append(f"{number:>6}\t{body}")
            number += 1
        if len(out) >= max_lines:
            out = [*out[:max_lines], "..."]
            break
    return "\n".join(out)


def patch_stats(hunks: list[Hunk]) -> tuple[int, int]:
    """``(lines added, lines removed)`` over ``hunks``."""
    added = sum(1 for h in hunks for line in h["lines"] if line.startswith("+"))
    removed = sum(1 for h in hunks for line in h["lines"] if line.startswith("-"))
    return added, removed


def apply_hunks(old: str, hunks: list[Hunk]) -> str:
    """Apply hunks made by :func:`structured_patch` to ``old`` (LF text): the check that a
    patch says what it claims. Raises ``IndexError`` on hunks that do not fit ``old``."""
    src = _lines(old)
    out: list[str] = []
    pos = 0
    for h in hunks:
        begin = h["oldStart"] - 1
        out.extend(src[pos:begin])
        pos = begin
        lines: list[str] = h["lines"]
        for k, line in enumerate(lines):
            if line == NO_NEWLINE:
                continue
            if line.startswith(" "):
                out.append(src[pos])
                pos += 1
            elif line.startswith("-"):
                pos += 1
            else:
                last = k + 1 < len(lines) and lines[k + 1] == NO_NEWLINE
                out.append(line[1:] + ("" if last else "\n"))
    out.extend(src[pos:])
    return "".join(out)


__all__ = [
    "MAX_DIFF_LINES",
    "NO_NEWLINE",
    "Hunk",
    "apply_hunks",
    "format_hunks",
    "patch_stats",
    "snippet",
    "structured_patch",
    "unified_diff",
]
