"""Capturing a command's output with bounded memory, spilling to a file past a cap.

A command may print gigabytes. :class:`OutputCapture` keeps only the start of the output in
memory (enough for the cap, counted in characters of the decoded text) and, once the output
passes the cap, writes every byte (the kept start included) to a spill file, which is
renamed into place when the command ends. The caller gets the text, or a preview and the
file's path.
"""

from __future__ import annotations

import codecs
import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO


@dataclass(frozen=True)
class CapturedOutput:
    """The text (whole, or its start when ``truncated``), the counts and the spill file."""

    text: str
    truncated: bool
    total_chars: int
    total_bytes: int
    spill_path: Path | None


class OutputCapture:
    """Feed it chunks with :meth:`feed`; :meth:`finish` once. ``cap`` is in characters.

    ``spill_path`` makes the file's path when the output first passes the cap.
    """

    def __init__(self, cap: int, spill_path: Callable[[], Path]) -> None:
        self.cap = cap
        self._make_path = spill_path
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._head = bytearray()
        self._chars = 0
        self._bytes = 0
        self._spill: BinaryIO | None = None
        self._spill_tmp: Path | None = None
        self._spill_final: Path | None = None
        self.lines = 0

    @property
    def total_bytes(self) -> int:
        return self._bytes

    def feed(self, data: bytes) -> None:
        if not data:
            return
        self._bytes += len(data)
        self.lines += data.count(b"\n")
        self._chars += len(self._decoder.decode(data))
        if self._spill is None:
            self._head += data
            if self._chars > self.cap:
                self._open_spill()
        else:
            self._spill.write(data)

    def _open_spill(self) -> None:
        final = self._make_path()
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = final.with_name(f".{final.name}.partial")
        fh = open(tmp, "wb")  # noqa: SIM115 - kept open across feed() calls
        fh.write(self._head)
        self._spill, self._spill_tmp, self._spill_final = fh, tmp, final
        # the head now only needs enough bytes for the preview: at most 4 per character
        del self._head[self.cap * 4 :]

    def finish(self) -> CapturedOutput:
        self._chars += len(self._decoder.decode(b"", final=True))
        if self._spill is None and self._chars > self.cap:
            self._open_spill()  # a cut-off character at the very end tipped it over
        spilled: Path | None = None
        if self._spill is not None and self._spill_tmp is not None and self._spill_final is not None:
            self._spill.close()
            os.replace(self._spill_tmp, self._spill_final)
            spilled = self._spill_final
            self._spill = None
        text = bytes(self._head).decode("utf-8", errors="replace")
        truncated = spilled is not None
        if truncated:
            text = text[: self.cap]
        return CapturedOutput(text, truncated, self._chars, self._bytes, spilled)

    def abandon(self) -> None:
        """Drop a half-written spill file (the caller failed before :meth:`finish`)."""
        if self._spill is not None:
            self._spill.close()
            self._spill = None
            if self._spill_tmp is not None:
                with contextlib.suppress(OSError):
                    self._spill_tmp.unlink()


def read_text_slice(path: Path, start: int = 0, max_bytes: int = 1 << 20) -> tuple[str, int]:
    """Up to ``max_bytes`` of ``path`` from byte ``start``, decoded, and the byte offset after it.

    The end is moved back to a UTF-8 character boundary so a later slice starts cleanly.
    """
    try:
        with open(path, "rb") as fh:
            fh.seek(start)
            data = fh.read(max_bytes)
    except OSError:
        return "", start
    if len(data) == max_bytes:
        cut = len(data)
        while cut > 0 and len(data) - cut < 4 and (data[cut - 1] & 0xC0) == 0x80:
            cut -= 1
        if cut > 0 and data[cut - 1] >= 0xC0:
            cut -= 1
        if cut > 0:
            data = data[:cut]
    return data.decode("utf-8", errors="replace"), start + len(data)


def read_text_tail(path: Path, chars: int) -> str:
    """The last ``chars`` characters of ``path`` (read from its end, not the whole file)."""
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            start = max(0, size - chars * 4 - 4)
            fh.seek(start)
            data = fh.read()
    except OSError:
        return ""
    skip = 0
    while start and skip < min(4, len(data)) and (data[skip] & 0xC0) == 0x80:
        skip += 1  # start on a character boundary, not in the middle of one
    text = data[skip:].decode("utf-8", errors="replace")
    return text[-chars:] if chars > 0 else ""


__all__ = ["CapturedOutput", "OutputCapture", "read_text_slice", "read_text_tail"]
