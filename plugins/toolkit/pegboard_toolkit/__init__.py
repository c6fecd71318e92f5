"""Shared building blocks for Pegboard tool authors.

Built-in and third-party tools depend on this distribution; the kernel does not. Every
function here is written against Pegboard's public API only, so a tool that uses it stays
small and a fix lands in one place. It is a library, not a plugin: it registers nothing.
"""

from __future__ import annotations

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

__all__: list[str] = [
    "BLOCKED_NAMES",
    "CheckedUrl",
    "GuardPolicy",
    "HostLookupError",
    "NetworkGuard",
    "NetworkRefused",
    "PinnedTransport",
    "Resolver",
    "SyncPinnedTransport",
    "SystemResolver",
    "embedded_ipv4",
    "is_public",
    "non_public_reason",
]
