"""Text files as tools see them: bytes to text and back without losing anything.

A tool that changes a file must write it back the way it found it: the same encoding, the
same byte-order mark, the same line endings on every line it did not touch. ``decode``
returns the text (without the BOM) and the :class:`TextFormat` needed to encode it again;
``encode(decode(data))`` gives back ``data`` byte for byte, for any input. Bytes that are
not valid UTF-8 are carried as lone surrogates (``surrogateescape``), so decoding never
raises and a stray Latin-1 byte survives an edit elsewhere in the file.
"""

from __future__ import annotations

import codecs
import os
from dataclasses import dataclass
from typing import Literal

Newline = Literal["lf", "crlf", "cr", "mixed", "none"]

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


@dataclass(frozen=True)
class TextFormat:
    """How a file's text is stored: ``encoding`` (a Python codec name), the ``bom`` bytes it
    starts with (``b""`` for none), the ``errors`` handler that round-trips it, and the
    line-ending style found (``lf``, ``crlf``, ``cr``, ``mixed`` or ``none``)."""

    encoding: str = "utf-8"
    bom: bytes = b""
    errors: str = "strict"
    newline: Newline = "none"

    @property
    def lossless(self) -> bool:
        """False when the bytes were not valid in ``encoding`` (carried as escapes)."""
        return self.errors == "strict"

    @property
    def label(self) -> str:
        """A short human name: ``utf-8``, ``utf-8 with BOM``, ``utf-16-le with BOM`` ..."""
        name = self.encoding + (" with BOM" if self.bom else "")
        return name if self.lossless else f"{name} (invalid bytes kept as they were)"


UTF8_LF = TextFormat(newline="lf")


@dataclass(frozen=True)
class DecodedText:
    text: str
    format: TextFormat


def detect_newline(text: str) -> Newline:
    """The line-ending style of ``text``: one style throughout, ``mixed``, or ``none``."""
    if "\r" not in text:  # one fast scan for the common case
        return "lf" if "\n" in text else "none"
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    cr = text.count("\r") - crlf
    kinds = [k for k, n in (("crlf", crlf), ("lf", lf), ("cr", cr)) if n]
    if not kinds:
        return "none"
    if len(kinds) > 1:
        return "mixed"
    return kinds[0]  # type: ignore[return-value]


def dominant_newline(text: str) -> str:
    """The line ending most lines of ``text`` use (``"\\n"`` when there is none or a tie)."""
    if "\r" not in text:
        return "\n"
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    return "\r\n" if crlf > lf else "\n"


def decode(data: bytes) -> DecodedText:
    """Decode a file's bytes: UTF-8, UTF-8 with BOM, UTF-16 LE/BE with BOM; anything else as
    UTF-8 with its invalid bytes escaped. Never raises."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            body = data[len(bom):]
            try:
                text = body.decode(encoding)
            except UnicodeDecodeError:
                if encoding != "utf-8":
                    continue
                text = body.decode("utf-8", "surrogateescape")
                return DecodedText(text, TextFormat("utf-8", bom, "surrogateescape", detect_newline(text)))
            return DecodedText(text, TextFormat(encoding, bom, "strict", detect_newline(text)))
    try:
        text = data.decode("utf-8")
        errors = "strict"
    except UnicodeDecodeError:
        text = data.decode("utf-8", "surrogateescape")
        errors = "surrogateescape"
    return DecodedText(text, TextFormat("utf-8", b"", errors, detect_newline(text)))


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """A file's bytes: the one place tools read files, so another backend can replace it."""
    with open(path, "rb") as fh:
        return fh.read()


def read_text(path: str | os.PathLike[str]) -> DecodedText:
    """A file's text and format (:func:`decode` of its bytes); ``OSError`` if it cannot be read."""
    return decode(read_bytes(path))


def encode(text: str, fmt: TextFormat = UTF8_LF) -> bytes:
    """``text`` as bytes in ``fmt`` (BOM first). Characters the encoding cannot hold are
    written as UTF-8 escapes would be for an escaped file, else replaced with ``?``."""
    errors = "surrogateescape" if fmt.errors == "surrogateescape" else "strict"
    try:
        return fmt.bom + text.encode(fmt.encoding, errors)
    except UnicodeEncodeError:
        # a lone surrogate the model typed into a strict file: never crash on the way out
        return fmt.bom + text.encode(fmt.encoding, "replace")


def is_binary(data: bytes, sample: int = 8192) -> bool:
    """A NUL byte near the start, outside a UTF-16 file, means the file is not text."""
    head = data[:sample]
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    return b"\x00" in head


def to_lf(text: str) -> str:
    """Every ``\\r\\n`` as ``\\n`` (a lone ``\\r`` is left alone)."""
    return text.replace("\r\n", "\n") if "\r" in text else text


def with_newline(text: str, newline: str) -> str:
    """``text`` whose line breaks are ``\\n`` (or ``\\r\\n``) rewritten to ``newline``."""
    lf = to_lf(text)
    return lf.replace("\n", newline) if newline != "\n" else lf


__all__ = [
    "UTF8_LF",
    "DecodedText",
    "Newline",
    "TextFormat",
    "decode",
    "detect_newline",
    "dominant_newline",
    "encode",
    "is_binary",
    "read_bytes",
    "read_text",
    "to_lf",
    "with_newline",
]
