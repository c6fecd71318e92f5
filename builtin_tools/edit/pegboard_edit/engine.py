"""Exact string replacement that keeps a file's line endings.

Matching is literal and case-sensitive: no regex, no whitespace or quote folding. The one
liberty taken is line endings: the file and ``old_string`` are compared with ``\\r\\n``
read as ``\\n``, because a model writes ``\\n`` whatever the file uses. The replacement is
spliced into the original text, so every line ending outside the matched span stays as it
was, and ``new_string``'s line breaks take the ending of the span it replaces (or, for a
span without one, the file's usual ending).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field

from pegboard_toolkit import dominant_newline, to_lf

Span = tuple[int, int]


class EditError(Exception):
    """An edit that cannot be made: ``kind`` is the stable ``error_kind`` code."""

    def __init__(self, kind: str, message: str, index: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.index = index


def _where(index: int | None) -> str:
    return f"edits[{index}]: " if index is not None else ""


def not_found(old: str, index: int | None = None) -> EditError:
    return EditError("not_found", f"{_where(index)}String to replace not found in file.\nString: {old}", index)


def not_unique(n: int, old: str, index: int | None = None) -> EditError:
    return EditError(
        "not_unique",
        f"{_where(index)}Found {n} matches of the string to replace, but replace_all is false. To replace all "
        "occurrences, set replace_all to true. To replace only one occurrence, please provide more context to "
        f"uniquely identify the instance.\nString: {old}",
        index,
    )


def find_spans(text: str, old: str) -> list[Span]:
    """Every non-overlapping occurrence of ``old`` in ``text``, left to right, as ``(start,
    end)`` in ``text``; ``\\r\\n`` in either counts as ``\\n``."""
    needle = to_lf(old)
    if not needle:
        return []
    if "\r" not in text:
        return _find_all(text, needle)
    norm = to_lf(text)
    if len(norm) == len(text):
        return _find_all(text, needle)
    # norm position of the "\n" of every "\r\n": a norm offset k is raw k + (CRLFs before it)
    shifted: list[int] = []
    at = text.find("\r\n")
    while at >= 0:
        shifted.append(at - len(shifted))
        at = text.find("\r\n", at + 2)
    return [(s + bisect_left(shifted, s), e + bisect_left(shifted, e)) for s, e in _find_all(norm, needle)]


def _find_all(text: str, needle: str) -> list[Span]:
    spans: list[Span] = []
    size = len(needle)
    at = text.find(needle)
    while at >= 0:
        spans.append((at, at + size))
        at = text.find(needle, at + size)
    return spans


def count(text: str, old: str) -> int:
    """How many times ``old`` occurs (the number :func:`find_spans` would return)."""
    needle = to_lf(old)
    if not needle:
        return 0
    if "\r" not in text:
        return text.count(needle)
    return to_lf(text).count(needle)


def _replacement(text: str, span: Span, new: str, usual: str) -> str:
    piece = text[span[0]:span[1]]
    lf = to_lf(new)
    if "\r\n" in piece:
        return lf.replace("\n", "\r\n")
    if "\n" in piece or usual == "\n":
        return lf
    return lf.replace("\n", usual)


@dataclass
class Applied:
    """The text after one edit, how many spans it replaced, and where its insertions are."""

    text: str
    replacements: int
    inserted: list[Span] = field(default_factory=list)


def apply_edit(
    text: str,
    old: str,
    new: str,
    replace_all: bool = False,
    *,
    protected: list[Span] | None = None,
    index: int | None = None,
) -> Applied:
    """Replace ``old`` with ``new`` in ``text``: once (it must occur exactly once) or everywhere.

    ``protected`` spans are text inserted by earlier edits of the same MultiEdit call; an
    occurrence lying wholly inside one is ``conflicts_with_previous_edit`` (Claude Code's rule:
    one that only overlaps it edits the current text). The returned ``inserted``
    spans are the given protected spans moved to their new places plus this edit's own.
    """
    where = _where(index)
    if old == new:
        raise EditError("no_change", f"{where}No changes to make: old_string and new_string are exactly the same.",
                        index)
    fast = not protected and not replace_all and "\r" not in text and "\r" not in old
    if fast:
        # the common case, kept to C-speed calls: one count, one find, one splice
        n = text.count(old) if old else 0
        if n == 1:
            at = text.find(old)
            lf = to_lf(new)
            return Applied(text[:at] + lf + text[at + len(old):], 1, [(at, at + len(lf))] if lf else [])
        spans: list[Span] = [(0, 0)] * n
    else:
        spans = find_spans(text, old)
    if not spans:
        raise not_found(old, index)
    for s, e in spans:
        for a, b in protected or ():
            if a <= s and e <= b:
                raise EditError(
                    "conflicts_with_previous_edit",
                    f"{where}old_string lies inside text that an earlier edit of this call inserted; "
                    "combine the two edits into one, or order them so each matches the file as it was.\n"
                    f"String: {old}",
                    index,
                )
    if len(spans) > 1 and not replace_all:
        raise not_unique(len(spans), old, index)
    usual = dominant_newline(text)
    parts: list[str] = []
    inserted: list[Span] = []
    moved: list[Span] = []
    prev = 0
    out_len = 0
    shift_points: list[tuple[int, int]] = []  # (old end, cumulative delta after it)
    delta = 0
    for s, e in spans:
        rep = _replacement(text, (s, e), new, usual)
        parts.append(text[prev:s])
        out_len += s - prev
        if rep:
            inserted.append((out_len, out_len + len(rep)))
        parts.append(rep)
        out_len += len(rep)
        delta += len(rep) - (e - s)
        shift_points.append((e, delta))
        prev = e
    parts.append(text[prev:])
    ends = [p[0] for p in shift_points]
    for a, b in protected or ():
        k = bisect_left(ends, a + 1)  # replaced spans ending at or before a shift this one
        d = shift_points[k - 1][1] if k else 0
        moved.append((a + d, b + d))
    return Applied("".join(parts), len(spans), sorted(moved + inserted))


__all__ = ["Applied", "EditError", "Span", "apply_edit", "count", "find_spans", "not_found", "not_unique"]
