"""Shared building blocks for Pegboard tool authors.

Built-in and third-party tools depend on this distribution; the kernel does not. Every
function here is written against Pegboard's public API only, so a tool that uses it stays
small and a fix lands in one place. It is a library, not a plugin: it registers nothing.
"""

from __future__ import annotations

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

__all__ = [
    "LEDGER",
    "NOT_READ",
    "PARTIAL_READ",
    "STALE_READ",
    "LedgerEntry",
    "ReadLedger",
    "Staleness",
    "file_digest",
]
