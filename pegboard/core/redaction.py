"""Credential redaction at the cost of a few passes over the text.

The result is defined by the plain rule: replace each secret value in turn, then apply each
credential pattern in turn over the whole text. Applying eight regexes to a 5 MB result costs
about a second, so the patterns are not run over the whole text. Every credential shape starts
with a literal (``sk-``, ``AKIA``, ``://`` ...) that a C-speed scan finds; text with none of them
is returned untouched. Where one occurs, the plain rule runs on a window around it:
from one character before the literal to the next whitespace after the longest match that could
start there. A credential never contains whitespace except a private-key block or an
``Authorization: Bearer`` header, whose windows reach past their actual match, so no match of
any step crosses a window edge and the windows can be redacted independently.

A credential can also hide behind look-alike characters: a zero-width space inside
``ghp_...`` or its fullwidth form. Such text is read a second time in normalised form (NFKC,
format characters dropped); what matches there is redacted at the corresponding place of
the text as given, and everything else comes back as it was.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

REDACTED = "[REDACTED]"

_SECRET_ENV_NAME = re.compile(r"(?i)(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)")
_WHITESPACE = re.compile(r"\s")


def secret_values(env: Mapping[str, str]) -> list[str]:
    """Values of environment variables whose names say they are secrets (long enough to be real)."""
    return sorted({v for k, v in env.items() if _SECRET_ENV_NAME.search(k) and len(v) >= 12}, key=len, reverse=True)


@dataclass(frozen=True)
class _Shape:
    """One credential shape: the full pattern and the same without its leading ``\\b``."""

    pattern: re.Pattern[str]
    at: re.Pattern[str]


def _shape(body: str, *, boundary: bool = True, flags: int = 0) -> _Shape:
    return _Shape(re.compile((r"\b" if boundary else "") + body, flags), re.compile(body, flags))


_SHAPES: tuple[_Shape, ...] = (
    _shape(r"sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}"),
    _shape(r"(?:AKIA|ASIA)[A-Z0-9]{16}\b"),
    _shape(r"gh[pousr]_[A-Za-z0-9]{30,}\b"),
    _shape(r"github_pat_[A-Za-z0-9_]{30,}\b"),
    _shape(r"xox[abposr]-[A-Za-z0-9-]{10,}"),
    _shape(r"AIza[0-9A-Za-z_-]{35}\b"),
    _shape(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----", boundary=False),
    _shape(r"(authorization:\s*bearer\s+)[A-Za-z0-9._~+/=-]{12,}", flags=re.IGNORECASE),
    _shape(r"(://[^\s:/?#@]*:)[^\s/?#@]+(?=@)", boundary=False),
)
CREDENTIAL_PATTERNS: tuple[re.Pattern[str], ...] = tuple(shape.pattern for shape in _SHAPES)
_OPENAI, _AWS, _GITHUB, _GITHUB_PAT, _SLACK, _GOOGLE, _PEM, _BEARER, _URL = range(len(_SHAPES))
_LEADS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(lead, flags)
    for lead, flags in (
        ("sk-", 0),
        ("A[KS]IA", 0),
        ("gh[pousr]_", 0),
        ("github_pat_", 0),
        ("xox[abposr]-", 0),
        ("AIza", 0),
        ("-----BEGIN", 0),
        ("authorization:", re.IGNORECASE),
        ("://", 0),
    )
)
_SCANS: tuple[tuple[re.Pattern[str], tuple[tuple[int, int], ...]], ...] = (
    (re.compile(r"-(?:(?<=sk-)|(?<=xox[abposr]-)|(?=----BEGIN))"), ((2, _OPENAI), (4, _SLACK), (0, _PEM))),
    (re.compile(r"_(?:(?<=gh[pousr]_)|(?<=github_pat_))"), ((3, _GITHUB), (10, _GITHUB_PAT))),
    (re.compile(r":(?:(?=//)|(?<=(?i:authorization):))"), ((0, _URL), (13, _BEARER))),
    (re.compile(r"I(?:(?<=A[KS]I)(?=A)|(?<=AI)(?=za))"), ((2, _AWS), (1, _GOOGLE))),
)


#: every lead holds one of the scans' pivot characters; a text without any has no anchor
_PIVOTS = re.compile(r"[-_:I]")
#: any shape's lead: on a short text (a field name, a path) one search tells there is nothing to do
_ANY_LEAD = re.compile(r"sk-|A[KS]IA|gh[pousr]_|github_pat_|xox[abposr]-|AIza|-----BEGIN|(?i:authorization:)|://")
_SHORT = 64


def _anchors(text: str) -> Iterator[tuple[int, int]]:
    """``(start, shape)`` for every occurrence of a shape's lead (``sk-``, ``AKIA``, ``://`` ...).

    Leads are grouped by a character they share (``-``, ``_``, ``:``, ``I``), and each group
    is found by one regex that begins with that character: the engine skips to each occurrence
    of it in C and checks the group's leads around it there, one pass per group. Each pivot
    character is tried once, so no occurrence is missed; a hit is then told apart in Python.
    """
    for scan, members in _SCANS:
        for hit in scan.finditer(text):
            pivot = hit.start()
            for back, shape in members:
                if pivot >= back and _LEADS[shape].match(text, pivot - back):
                    yield pivot - back, shape


def _apply_patterns(text: str) -> str:
    """The plain rule for the patterns: each one in turn over the whole of ``text``."""
    for pattern in CREDENTIAL_PATTERNS:
        if pattern.groups:
            text = pattern.sub(lambda m: m.group(1) + REDACTED, text)
        else:
            text = pattern.sub(REDACTED, text)
    return text


class _Whitespace:
    """Next whitespace at or after a position, remembering the last answer (anchors come in order)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.searched_from = self.found_at = -1

    def after(self, at: int) -> int:
        if not self.searched_from <= at <= self.found_at:
            found = _WHITESPACE.search(self.text, at)
            self.searched_from, self.found_at = at, len(self.text) if found is None else found.start()
        return self.found_at


def _windows(text: str) -> list[tuple[int, int]]:
    """Merged ``[start, end)`` windows holding every anchor, keeping only those where a shape matches.

    An anchor where its shape does not match now cannot match after other replacements either
    (a replacement only inserts ``[``, which ends every token but a URL password, and a URL
    password only loses its ``@`` to a private-key block, whose anchor then shares its window),
    so a window with no matching anchor is left alone.
    """
    anchors = sorted(_anchors(text))
    if not anchors:
        return []
    whitespace = _Whitespace(text)
    spans: list[tuple[int, int, bool]] = []
    for start, shape in anchors:
        match = _SHAPES[shape].at.match(text, start)
        end = whitespace.after(match.end() if match else start + 1)
        if match and shape == _PEM and _end_line_may_break(text, start, match.end(), end):
            end = len(text)
        spans.append((max(start - 1, 0), end, match is not None))
    if not any(live for _, _, live in spans):
        return []
    spans.sort()
    merged: list[list[int]] = []
    for start, end, live in spans:
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
            merged[-1][2] |= live
        else:
            merged.append([start, end, int(live)])
    return [(start, end) for start, end, live in merged if live]


def _end_line_may_break(text: str, start: int, match_end: int, end: int) -> bool:
    """Whether a token next to a private key's END line could swallow part of it first.

    Tokens are replaced before private keys; one that eats into the END line moves the key's
    match to a later END line, past its window, so the window must then run to the end.
    The header holds a space, so the word holding ``-----END`` starts inside the match.
    """
    marker = text.rfind("-----END", start, match_end)
    word_start = max(text.rfind(c, start, marker) for c in " \t\n\r\f\v") + 1
    region = text[word_start:end]
    return any(shape < _PEM for _, shape in _anchors(region))


def _replace_secrets(text: str, secrets: Iterable[str]) -> str:
    """Each value in turn (``str.replace`` hands back the same string when a value is absent)."""
    for value in secrets:
        text = text.replace(value, REDACTED)
    return text


def redact(text: str, secrets: Sequence[str] = ()) -> str:
    """Replace the given secret values, then known credential shapes, with ``[REDACTED]``.

    Same result as replacing each secret in turn and then applying each pattern of
    ``CREDENTIAL_PATTERNS`` in turn; the cost is one substring search per secret, four regex
    passes that find the anchors, and the patterns over the small windows around them.
    Text holding look-alike characters is read normalised as well (``_redact_normalised``).
    """
    if text.isascii() or (unicodedata.is_normalized("NFKC", text) and not _INVISIBLE.search(text)):
        return _redact_plain(text, secrets)
    return _redact_normalised(text, secrets, _look_alikes(text))


def _redact_plain(text: str, secrets: Sequence[str]) -> str:
    text = _replace_secrets(text, secrets)
    if len(text) <= _SHORT:
        windows = _windows(text) if _ANY_LEAD.search(text) else []
    else:
        windows = _windows(text) if _PIVOTS.search(text) else []
    if not windows:
        return text
    pieces: list[str] = []
    done = 0
    for start, end in windows:
        pieces += (text[done:start], _apply_patterns(text[start:end]))
        done = end
    pieces.append(text[done:])
    return "".join(pieces)


#: format characters (category Cf: zero-width space, soft hyphen, bidi controls ...) and the
#: other invisible ones (variation selectors, the combining grapheme joiner), as of Unicode 15
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufe00-\ufe0f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f\U000e0100-\U000e01ef]"
)


def _look_alikes(text: str) -> dict[str, str]:
    """What each character of ``text`` that normalisation changes becomes: ``""`` for a format
    character (zero-width space, soft hyphen, bidi control ...), its NFKC form otherwise."""
    found: dict[str, str] = {}
    for char in set(text):
        if char.isascii():
            continue
        if _INVISIBLE.match(char) or unicodedata.category(char) == "Cf":
            found[char] = ""
        elif (plain := unicodedata.normalize("NFKC", char)) != char:
            found[char] = plain
    return found


class _Normalised:
    """``text`` with look-alike characters replaced, and the way back to positions in ``text``.

    Between two replaced characters the texts run in step, so one breakpoint per replaced
    character maps every position: ``starts[i]`` in the normalised text is ``origins[i]`` in
    ``text``, and ``plain[i]`` says whether the run from there is a copy (else one character's
    replacement).
    """

    def __init__(self, text: str, look_alikes: dict[str, str]) -> None:
        pieces: list[str] = []
        self.starts: list[int] = []
        self.origins: list[int] = []
        self.plain: list[bool] = []
        done = at = 0
        for hit in re.finditer("[" + "".join(map(re.escape, look_alikes)) + "]", text):
            if hit.start() > done:
                self._mark(at, done, True)
                pieces.append(text[done : hit.start()])
                at += hit.start() - done
            replacement = look_alikes[hit.group()]
            self._mark(at, hit.start(), False)
            pieces.append(replacement)
            at += len(replacement)
            done = hit.end()
        self._mark(at, done, True)
        pieces.append(text[done:])
        self.text = "".join(pieces)

    def _mark(self, at: int, origin: int, plain: bool) -> None:
        if self.starts and self.starts[-1] == at:  # an empty replacement: the next run starts here too
            self.starts.pop(), self.origins.pop(), self.plain.pop()
        self.starts.append(at)
        self.origins.append(origin)
        self.plain.append(plain)

    def origin(self, at: int) -> int:
        """Where the normalised character at ``at`` comes from in the text as given."""
        i = bisect_right(self.starts, at) - 1
        return self.origins[i] + (at - self.starts[i] if self.plain[i] else 0)


def _spans(text: str, secrets: Sequence[str]) -> list[tuple[int, int]]:
    """``[start, end)`` of every secret value and every credential match in ``text``, each found
    on its own (a bearer header or URL keeps its lead-in)."""
    found: list[tuple[int, int]] = []
    for value in secrets:
        at = text.find(value)
        while at >= 0:
            found.append((at, at + len(value)))
            at = text.find(value, at + len(value))
    for start, end in _windows(text):
        window = text[start:end]
        for pattern in CREDENTIAL_PATTERNS:
            for match in pattern.finditer(window):
                begin = match.end(1) if pattern.groups else match.start()
                if match.end() > begin:
                    found.append((start + begin, start + match.end()))
    return found


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` in order, overlapping ones joined."""
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(start, end) for start, end in merged]


def _redact_normalised(text: str, secrets: Sequence[str], look_alikes: dict[str, str]) -> str:
    """``text`` with every credential redacted, including those that only show normalised.

    Normalising is NFKC per character (the fullwidth forms of ``ghp_`` read ``ghp_``) with format and
    other invisible characters dropped (a zero-width space inside a token). When the
    normalised text holds a secret value or credential shape, every one found in it, and
    every one found in ``text`` itself, replaces the characters it spans in ``text``; the rest
    of ``text`` is kept as given, look-alikes included. Otherwise the plain rule applies.
    """
    if not look_alikes:  # not NFKC-normalised only as a whole (a letter and a combining accent)
        return _redact_plain(text, secrets)
    if len(look_alikes) <= 8:
        plain = text
        for char, into in look_alikes.items():
            plain = plain.replace(char, into)
    else:
        plain = text.translate({ord(char): into for char, into in look_alikes.items()})
    if _redact_plain(plain, secrets) == plain:
        return _redact_plain(text, secrets)
    normal = _Normalised(text, look_alikes)
    spans = _spans(text, secrets)
    spans += [(normal.origin(start), normal.origin(end - 1) + 1) for start, end in _spans(normal.text, secrets)]
    pieces: list[str] = []
    done = 0
    for start, end in _merged(spans):
        pieces += (text[done:start], REDACTED)
        done = end
    pieces.append(text[done:])
    return "".join(pieces)
