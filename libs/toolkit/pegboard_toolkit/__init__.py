"""Shared building blocks for Pegboard tool authors.

Built-in and third-party tools depend on this distribution; the kernel does not. Every
function here is written against Pegboard's public API only, so a tool that uses it stays
small and a fix lands in one place. It is a library, not a plugin: it registers nothing.
Names load on first use, so a tool that needs one part does not pay for the others' imports
(the network guard brings in httpx). Code only one tool uses lives in that tool's own
distribution instead: Read's line index and image sizing, Glob's file index, the PowerShell
runner, WebSearch's backend protocol.
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
    from pegboard_toolkit.deadline import within
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
    from pegboard_toolkit.exec import (
        LocalBackend,
        LocalProcess,
        backend_for,
        process_env,
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
        Resolver,
        SystemResolver,
        embedded_ipv4,
        is_public,
        non_public_reason,
    )
    from pegboard_toolkit.output import (
        CapturedOutput,
        OutputCapture,
    )
    from pegboard_toolkit.pinned import (
        PinnedTransport,
        SyncPinnedTransport,
    )
    from pegboard_toolkit.ripgrep import (
        RG_UNAVAILABLE,
        RgResult,
        RipgrepUnavailable,
        choose_backend,
        find_ripgrep,
        require_ripgrep,
        run_ripgrep,
    )
    from pegboard_toolkit.shell import (
        ShellOutcome,
        ShellSettings,
        run_shell,
    )
    from pegboard_toolkit.tasks import (
        TaskError,
        TaskRecord,
        TaskTable,
        start_shell_task,
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
    from pegboard_toolkit.toolconfig import (
        config_value,
        tool_failure,
    )
    from pegboard_toolkit.walk import (
        VCS_DIRS,
        GlobError,
        ReadFilter,
        WalkTimeout,
        compile_glob,
        rg_glob_matches,
        split_glob,
        walk_files,
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
    "LocalBackend": "pegboard_toolkit.exec",
    "LocalProcess": "pegboard_toolkit.exec",
    "backend_for": "pegboard_toolkit.exec",
    "process_env": "pegboard_toolkit.exec",
    "LEDGER": "pegboard_toolkit.ledger",
    "NOT_READ": "pegboard_toolkit.ledger",
    "PARTIAL_READ": "pegboard_toolkit.ledger",
    "STALE_READ": "pegboard_toolkit.ledger",
    "LedgerEntry": "pegboard_toolkit.ledger",
    "ReadLedger": "pegboard_toolkit.ledger",
    "Staleness": "pegboard_toolkit.ledger",
    "file_digest": "pegboard_toolkit.ledger",
    "missing_file_message": "pegboard_toolkit.nearby",
    "near_match": "pegboard_toolkit.nearby",
    "BLOCKED_NAMES": "pegboard_toolkit.netguard",
    "CheckedUrl": "pegboard_toolkit.netguard",
    "GuardPolicy": "pegboard_toolkit.netguard",
    "HostLookupError": "pegboard_toolkit.netguard",
    "NetworkGuard": "pegboard_toolkit.netguard",
    "NetworkRefused": "pegboard_toolkit.netguard",
    "Resolver": "pegboard_toolkit.netguard",
    "SystemResolver": "pegboard_toolkit.netguard",
    "embedded_ipv4": "pegboard_toolkit.netguard",
    "is_public": "pegboard_toolkit.netguard",
    "non_public_reason": "pegboard_toolkit.netguard",
    "CapturedOutput": "pegboard_toolkit.output",
    "OutputCapture": "pegboard_toolkit.output",
    "PinnedTransport": "pegboard_toolkit.pinned",
    "SyncPinnedTransport": "pegboard_toolkit.pinned",
    "RG_UNAVAILABLE": "pegboard_toolkit.ripgrep",
    "RgResult": "pegboard_toolkit.ripgrep",
    "RipgrepUnavailable": "pegboard_toolkit.ripgrep",
    "choose_backend": "pegboard_toolkit.ripgrep",
    "find_ripgrep": "pegboard_toolkit.ripgrep",
    "require_ripgrep": "pegboard_toolkit.ripgrep",
    "run_ripgrep": "pegboard_toolkit.ripgrep",
    "ShellOutcome": "pegboard_toolkit.shell",
    "ShellSettings": "pegboard_toolkit.shell",
    "run_shell": "pegboard_toolkit.shell",
    "within": "pegboard_toolkit.deadline",
    "TaskError": "pegboard_toolkit.tasks",
    "TaskRecord": "pegboard_toolkit.tasks",
    "TaskTable": "pegboard_toolkit.tasks",
    "start_shell_task": "pegboard_toolkit.tasks",
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
    "config_value": "pegboard_toolkit.toolconfig",
    "tool_failure": "pegboard_toolkit.toolconfig",
    "VCS_DIRS": "pegboard_toolkit.walk",
    "GlobError": "pegboard_toolkit.walk",
    "ReadFilter": "pegboard_toolkit.walk",
    "WalkTimeout": "pegboard_toolkit.walk",
    "compile_glob": "pegboard_toolkit.walk",
    "rg_glob_matches": "pegboard_toolkit.walk",
    "split_glob": "pegboard_toolkit.walk",
    "walk_files": "pegboard_toolkit.walk",
}

__all__ = [
    "BLOCKED_NAMES",
    "LEDGER",
    "NOT_READ",
    "NO_NEWLINE",
    "PARTIAL_READ",
    "RG_UNAVAILABLE",
    "STALE_READ",
    "UTF8_LF",
    "VCS_DIRS",
    "AtomicWriteError",
    "CapturedOutput",
    "CheckedUrl",
    "DecodedText",
    "GlobError",
    "GuardPolicy",
    "HostLookupError",
    "Hunk",
    "LedgerEntry",
    "LocalBackend",
    "LocalProcess",
    "NetworkGuard",
    "NetworkRefused",
    "OutputCapture",
    "PinnedTransport",
    "ReadFilter",
    "ReadLedger",
    "Resolver",
    "RgResult",
    "RipgrepUnavailable",
    "ShellOutcome",
    "ShellSettings",
    "Staleness",
    "SyncPinnedTransport",
    "SystemResolver",
    "TaskError",
    "TaskRecord",
    "TaskTable",
    "TextFormat",
    "WalkTimeout",
    "apply_hunks",
    "backend_for",
    "choose_backend",
    "compile_glob",
    "config_value",
    "decode",
    "detect_newline",
    "dominant_newline",
    "embedded_ipv4",
    "encode",
    "file_digest",
    "find_ripgrep",
    "format_hunks",
    "is_binary",
    "is_public",
    "missing_file_message",
    "near_match",
    "non_public_reason",
    "patch_stats",
    "process_env",
    "read_bytes",
    "read_text",
    "remove",
    "require_ripgrep",
    "rg_glob_matches",
    "run_ripgrep",
    "run_shell",
    "snippet",
    "split_glob",
    "start_shell_task",
    "structured_patch",
    "target_of",
    "to_lf",
    "tool_failure",
    "unified_diff",
    "walk_files",
    "with_newline",
    "within",
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
