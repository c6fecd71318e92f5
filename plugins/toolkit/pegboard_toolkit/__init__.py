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

_EXPORTS = {
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
    "PARTIAL_READ",
    "STALE_READ",
    "CheckedUrl",
    "GuardPolicy",
    "HostLookupError",
    "LedgerEntry",
    "NetworkGuard",
    "NetworkRefused",
    "PinnedTransport",
    "ReadLedger",
    "Resolver",
    "Staleness",
    "SyncPinnedTransport",
    "SystemResolver",
    "embedded_ipv4",
    "file_digest",
    "is_public",
    "non_public_reason",
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
