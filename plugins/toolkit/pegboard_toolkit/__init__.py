"""Shared building blocks for Pegboard tool authors.

Built-in and third-party tools depend on this distribution; the kernel does not. Every
function here is written against Pegboard's public API only, so a tool that uses it stays
small and a fix lands in one place. It is a library, not a plugin: it registers nothing.
Names load on first use, so a tool that needs one part does not pay for the others' imports
(the network guard brings in httpx).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pegboard_toolkit.atomic import (
        AtomicWriteError,
        remove,
        target_of,
        write_bytes,
        write_chunks,
        write_text,
    )
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
    from pegboard_toolkit.nearby import (
        missing_file_message,
        near_match,
    )
    from pegboard_toolkit.netguard import (
        BLOCKED_NAMES,
        CheckedUrl,
        GuardPolicy,
        HostLookupError,
        NetworkGuard,
        NetworkRefused,
        PinnedTransport,
        Resolver,
        SyncPinnedTransport,
        SystemResolver,
        embedded_ipv4,
        is_public,
        non_public_reason,
    )
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

_EXPORTS = {
    "AtomicWriteError": "pegboard_toolkit.atomic",
    "remove": "pegboard_toolkit.atomic",
    "target_of": "pegboard_toolkit.atomic",
    "write_bytes": "pegboard_toolkit.atomic",
    "write_chunks": "pegboard_toolkit.atomic",
    "write_text": "pegboard_toolkit.atomic",
    "NO_NEWLINE": "pegboard_toolkit.diff",
    "Hunk": "pegboard_toolkit.diff",
    "apply_hunks": "pegboard_toolkit.diff",
    "format_hunks": "pegboard_toolkit.diff",
    "patch_stats": "pegboard_toolkit.diff",
    "snippet": "pegboard_toolkit.diff",
    "structured_patch": "pegboard_toolkit.diff",
    "unified_diff": "pegboard_toolkit.diff",
    "missing_file_message": "pegboard_toolkit.nearby",
    "near_match": "pegboard_toolkit.nearby",
    "UTF8_LF": "pegboard_toolkit.text",
    "DecodedText": "pegboard_toolkit.text",
    "TextFormat": "pegboard_toolkit.text",
    "decode": "pegboard_toolkit.text",
    "detect_newline": "pegboard_toolkit.text",
    "dominant_newline": "pegboard_toolkit.text",
    "encode": "pegboard_toolkit.text",
    "is_binary": "pegboard_toolkit.text",
    "read_bytes": "pegboard_toolkit.text",
    "read_text": "pegboard_toolkit.text",
    "to_lf": "pegboard_toolkit.text",
    "with_newline": "pegboard_toolkit.text",
    "LEDGER": "pegboard_toolkit.ledger",
    "NOT_READ": "pegboard_toolkit.ledger",
    "PARTIAL_READ": "pegboard_toolkit.ledger",
    "STALE_READ": "pegboard_toolkit.ledger",
    "LedgerEntry": "pegboard_toolkit.ledger",
    "ReadLedger": "pegboard_toolkit.ledger",
    "Staleness": "pegboard_toolkit.ledger",
    "file_digest": "pegboard_toolkit.ledger",
    "BLOCKED_NAMES": "pegboard_toolkit.netguard",
    "CheckedUrl": "pegboard_toolkit.netguard",
    "GuardPolicy": "pegboard_toolkit.netguard",
    "HostLookupError": "pegboard_toolkit.netguard",
    "NetworkGuard": "pegboard_toolkit.netguard",
    "NetworkRefused": "pegboard_toolkit.netguard",
    "PinnedTransport": "pegboard_toolkit.netguard",
    "Resolver": "pegboard_toolkit.netguard",
    "SyncPinnedTransport": "pegboard_toolkit.netguard",
    "SystemResolver": "pegboard_toolkit.netguard",
    "embedded_ipv4": "pegboard_toolkit.netguard",
    "is_public": "pegboard_toolkit.netguard",
    "non_public_reason": "pegboard_toolkit.netguard",
}

__all__ = [
    "BLOCKED_NAMES",
    "LEDGER",
    "NOT_READ",
    "NO_NEWLINE",
    "PARTIAL_READ",
    "STALE_READ",
    "UTF8_LF",
    "AtomicWriteError",
    "CheckedUrl",
    "DecodedText",
    "GuardPolicy",
    "HostLookupError",
    "Hunk",
    "LedgerEntry",
    "NetworkGuard",
    "NetworkRefused",
    "PinnedTransport",
    "ReadLedger",
    "Resolver",
    "Staleness",
    "SyncPinnedTransport",
    "SystemResolver",
    "TextFormat",
    "apply_hunks",
    "decode",
    "detect_newline",
    "dominant_newline",
    "embedded_ipv4",
    "encode",
    "file_digest",
    "format_hunks",
    "is_binary",
    "is_public",
    "missing_file_message",
    "near_match",
    "non_public_reason",
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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pegboard_toolkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
