"""Lines of a big file without loading it: a sparse line-offset index, built by one scan.

The index keeps, for every block of ``BLOCK`` bytes, how many newlines come before the
block's start. Reading lines ``n..n+k`` seeks to the block holding the ``n``-th newline and
reads forward, so a page near the end of a 1 GB log costs one block read, and the index of
that file is about 8 bytes per MiB. Indexes are cached per path, size and mtime in a bounded
cache (``LineIndexCache``); a changed file gets a new scan.

Text decoding lives here too (a small private helper, used by ``read_lines``): UTF-8, UTF-8
and UTF-16 with a byte-order mark, and Latin-1 as the fallback that never raises.
"""

from __future__ import annotations

import codecs
import io
import os
import threading
from array import array
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

BLOCK = 1 << 18
MAX_LINE_BYTES = 64 * 1024
DEFAULT_CACHE_ENTRIES = 64


@dataclass(frozen=True)
class LineIndex:
    """Where the lines of one file version start: ``newlines_before[i]`` counts the newlines
    in bytes ``0 .. i*BLOCK``. ``encoding`` is what ``sniff_encoding`` found at the start."""

    path: str
    size: int
    mtime_ns: int
    newlines: int
    ends_with_newline: bool
    newlines_before: array[int]
    encoding: str
    bom: int
    block: int = BLOCK

    @property
    def total_lines(self) -> int:
        if self.size <= self.bom:
            return 0
        return self.newlines + (0 if self.ends_with_newline else 1)

    def start_of(self, line: int) -> tuple[int, int]:
        """A byte offset at or before line ``line`` (0-based) and how many lines to skip from it."""
        if line <= 0:
            return self.bom, 0
        block = max(bisect_left(self.newlines_before, line) - 1, 0)
        return block * self.block, line - self.newlines_before[block]


def sniff_encoding(head: bytes) -> tuple[str, int]:
    """The encoding a file's first bytes announce, and the length of its byte-order mark."""
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8", 3
    if head.startswith(codecs.BOM_UTF16_LE):
        return "utf-16-le", 2
    if head.startswith(codecs.BOM_UTF16_BE):
        return "utf-16-be", 2
    return "utf-8", 0


def decode_line(raw: bytes, encoding: str = "utf-8") -> tuple[str, str]:
    """Decode one line; bytes that are not valid in ``encoding`` fall back to Latin-1 (never raises)."""
    try:
        return raw.decode(encoding), encoding
    except UnicodeDecodeError:
        return raw.decode("latin-1"), "latin-1"


def build_index(path: Path | str, chunk: int = BLOCK) -> LineIndex:
    """Scan ``path`` once and build its index. Memory stays at one block plus the index."""
    key = os.path.abspath(str(path))
    with open(key, "rb") as fh:
        st = os.fstat(fh.fileno())
        head = fh.read(4)
        encoding, bom = sniff_encoding(head)
        fh.seek(0)
        before: array[int] = array("q")
        seen = 0
        last = b""
        newline = "\n".encode(encoding)
        if len(newline) == 1:
            while block := fh.read(chunk):
                before.append(seen)
                seen += block.count(b"\n")
                last = block[-1:]
            ends = last == b"\n"
        else:
            seen, ends = _count_wide(fh, encoding, bom, before)
    return LineIndex(key, st.st_size, st.st_mtime_ns, seen, ends, before, encoding, bom, chunk)


def _count_wide(fh: io.BufferedReader, encoding: str, bom: int, before: array[int]) -> tuple[int, bool]:
    """UTF-16: newlines are counted on decoded text; the index then only knows the total."""
    fh.seek(bom)
    reader = codecs.getreader(encoding)(fh, "replace")
    seen = 0
    last = ""
    while text := reader.read(BLOCK):
        seen += text.count("\n")
        last = text[-1:]
    before.append(0)
    return seen, last == "\n"


class LineIndexCache:
    """A bounded, thread-safe LRU of indexes keyed by path, size and mtime."""

    def __init__(self, max_entries: int = DEFAULT_CACHE_ENTRIES) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple[str, int, int], LineIndex] = OrderedDict()
        self._lock = threading.Lock()
        self.scans = 0

    def get(self, path: Path | str) -> LineIndex:
        key_path = os.path.abspath(str(path))
        st = os.stat(key_path)
        key = (key_path, st.st_size, st.st_mtime_ns)
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                return found
        index = build_index(key_path)
        with self._lock:
            self.scans += 1
            for old in [k for k in self._entries if k[0] == key_path]:
                del self._entries[old]
            self._entries[(key_path, index.size, index.mtime_ns)] = index
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return index

    def has(self, path: Path | str, size: int, mtime_ns: int) -> bool:
        """Whether the index of this version of ``path`` is cached (a read then needs no scan)."""
        with self._lock:
            return (os.path.abspath(str(path)), size, mtime_ns) in self._entries

    def __len__(self) -> int:
        return len(self._entries)


@dataclass(frozen=True)
class Line:
    """One line as read: its text (without the line ending), whether it was cut, its encoding."""

    number: int
    text: str
    cut: bool
    encoding: str


def read_lines(index: LineIndex, first: int, count: int, max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[Line]:
    """Lines ``first`` .. ``first+count-1`` (0-based) of the file ``index`` describes.

    A line longer than ``max_line_bytes`` is cut (``Line.cut``); the rest of it is skipped
    without being held in memory.
    """
    if count <= 0 or first >= index.total_lines:
        return
    if index.encoding.startswith("utf-16"):
        yield from _read_wide(index, first, count, max_line_bytes)
        return
    offset, skip = index.start_of(first)
    with open(index.path, "rb", buffering=BLOCK) as fh:
        fh.seek(offset)
        while skip:
            chunk = fh.readline(MAX_LINE_BYTES)
            if not chunk:
                return
            if chunk.endswith(b"\n"):
                skip -= 1
        for number in range(first + 1, first + count + 1):
            raw = fh.readline(max_line_bytes)
            if not raw:
                return
            cut = False
            if len(raw) == max_line_bytes and not raw.endswith(b"\n"):
                while rest := fh.readline(BLOCK):
                    cut = cut or rest not in (b"\n", b"\r\n")
                    if rest.endswith(b"\n"):
                        break
            text, encoding = decode_line(raw.rstrip(b"\n").removesuffix(b"\r"), index.encoding)
            yield Line(number, _trim_partial(text) if cut else text, cut, encoding)


def plain_lines(data: bytes) -> list[str] | None:
    """A whole small file's lines as ``read_lines`` gives them, decoded in one go, when that
    is all it takes: UTF-8 without a byte-order mark and without ``\\r``. ``None`` otherwise
    (and for an empty file): read it with ``read_lines``, which knows the other cases."""
    if not data or b"\r" in data or data.startswith(codecs.BOM_UTF8):
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def _trim_partial(text: str) -> str:
    return text[:-1] if text and text[-1] == "\ufffd" else text


def _read_wide(index: LineIndex, first: int, count: int, max_line_bytes: int) -> Iterator[Line]:
    with open(index.path, "rb") as fh:
        fh.seek(index.bom)
        reader = codecs.getreader(index.encoding)(fh, "replace")
        for number, line in enumerate(_wide_lines(reader, max_line_bytes // 2), start=0):
            if number < first:
                continue
            if number >= first + count:
                return
            text, cut = line
            yield Line(number + 1, text.removesuffix("\r"), cut, index.encoding)


def _wide_lines(reader: codecs.StreamReader, max_chars: int) -> Iterator[tuple[str, bool]]:
    pending = ""
    dropping = False
    while block := reader.read(BLOCK):
        start = 0
        while (pos := block.find("\n", start)) >= 0:
            if not dropping:
                pending += block[start:pos]
            yield pending[:max_chars], dropping or len(pending) > max_chars
            pending, dropping = "", False
            start = pos + 1
        if not dropping:
            pending += block[start:]
            if len(pending) > max_chars:
                pending, dropping = pending[:max_chars], True
    if pending or dropping:
        yield pending[:max_chars], dropping


__all__ = [
    "BLOCK",
    "Line",
    "LineIndex",
    "LineIndexCache",
    "build_index",
    "decode_line",
    "plain_lines",
    "read_lines",
    "sniff_encoding",
]
