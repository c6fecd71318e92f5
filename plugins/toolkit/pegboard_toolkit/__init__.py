"""Shared building blocks for Pegboard tool authors.

Built-in and third-party tools depend on this distribution; the kernel does not. Every
function here is written against Pegboard's public API only, so a tool that uses it stays
small and a fix lands in one place. It is a library, not a plugin: it registers nothing.
"""

from __future__ import annotations

from pegboard_toolkit.atomic import AtomicWriteError, remove, target_of, write_bytes, write_chunks, write_text
from pegboard_toolkit.diff import (
    NO_NEWLINE,
    Hunk,
    apply_hunks,
    format_hunks,
    patch_stats,
    snippet,
    structured_patch,
    unified_diff,
)
from pegboard_toolkit.ledger import (
    LEDGER,
    NOT_READ,
    PARTIAL_READ,
    STALE_READ,
    LedgerEntry,
    ReadLedger,
    Staleness,
    file_digest,
)
from pegboard_toolkit.nearby import missing_file_message, near_match
from pegboard_toolkit.text import (
    UTF8_LF,
    DecodedText,
    TextFormat,
    decode,
    detect_newline,
    dominant_newline,
    encode,
    is_binary,
    read_bytes,
    read_text,
    to_lf,
    with_newline,
)

__all__ = [
    "LEDGER",
    "NOT_READ",
    "NO_NEWLINE",
    "PARTIAL_READ",
    "STALE_READ",
    "UTF8_LF",
    "AtomicWriteError",
    "DecodedText",
    "Hunk",
    "LedgerEntry",
    "ReadLedger",
    "Staleness",
    "TextFormat",
    "apply_hunks",
    "decode",
    "detect_newline",
    "dominant_newline",
    "encode",
    "file_digest",
    "format_hunks",
    "is_binary",
    "missing_file_message",
    "near_match",
    "patch_stats",
    "read_bytes",
    "read_text",
    "remove",
    "snippet",
    "structured_patch",
    "target_of",
    "to_lf",
    "unified_diff",
    "with_newline",
    "write_bytes",
    "write_chunks",
    "write_text",
]
