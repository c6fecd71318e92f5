"""Pegboard: the tool layer for AI agents.

The public API a harness builder or plugin author relies on. Everything under
``pegboard.core`` is private implementation. Names load on first use, so that
``pegboard --help`` starts as fast as the interpreter.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pegboard.core.app import Pegboard
    from pegboard.core.call import ToolCall
    from pegboard.core.config import (
        ConfigError,
        ConfigLayer,
        PegboardConfig,
        find_project_root,
        load_config,
        user_config_dir,
    )
    from pegboard.core.decisions import HookDecision, PermissionDecision, PostToolUseDecision, PreToolUseDecision
    from pegboard.core.execution import ExecBackend, ExecError, ExecProcess
    from pegboard.core.hostservices import (
        HostServiceError,
        MessageDelivery,
        PlanDecision,
        PlanRequest,
        Question,
        QuestionOption,
        QuestionRequest,
        SubagentRequest,
        SystemClock,
        ask_host,
        has_host_service,
        unavailable_without,
    )
    from pegboard.core.markers import hookimpl, hookspec
    from pegboard.core.pathnames import InvalidPathError, resolve_path
    from pegboard.core.providers import ProviderPolicy
    from pegboard.core.redaction import redact
    from pegboard.core.registration import (
        ConfigSectionRegister,
        GroupRegister,
        ProfileRegister,
        ProviderPolicyRegister,
        ToolRegister,
    )
    from pegboard.core.results import ImageBlock, Reason, TextBlock, ToolResult
    from pegboard.core.sections import ConfigSection
    from pegboard.core.services import CompletionError, CompletionRequest, has_completion, request_completion
    from pegboard.core.session import (
        PermissionUpdate,
        Selection,
        Session,
        SessionError,
        SessionEvent,
        SessionResults,
        validate_session_id,
    )
    from pegboard.core.sqlitestore import SQLiteSessionStore
    from pegboard.core.state import MapKey, SessionKey, SessionState, SlotMap, Stash, StashKey
    from pegboard.core.store import (
        MemorySessionStore,
        SessionRecord,
        SessionStore,
        SessionStoreError,
        StoredResult,
        default_data_dir,
    )
    from pegboard.core.tools import Profile, Subjects, Tool, ToolContext, ToolDefinitionError, ToolPermissions, tool
    from pegboard.core.trust import is_trusted
    from pegboard.core.urls import InvalidHostError, InvalidUrlError, ParsedUrl, parse_url

__version__ = "0.1.0"

_EXPORTS = {
    "redact": "pegboard.core.redaction",
    "default_data_dir": "pegboard.core.store",
    "find_project_root": "pegboard.core.config",
    "user_config_dir": "pegboard.core.config",
    "is_trusted": "pegboard.core.trust",
    "Pegboard": "pegboard.core.app",
    "ToolCall": "pegboard.core.call",
    "ConfigError": "pegboard.core.config",
    "ConfigLayer": "pegboard.core.config",
    "PegboardConfig": "pegboard.core.config",
    "load_config": "pegboard.core.config",
    "HookDecision": "pegboard.core.decisions",
    "PermissionDecision": "pegboard.core.decisions",
    "PreToolUseDecision": "pegboard.core.decisions",
    "PostToolUseDecision": "pegboard.core.decisions",
    "ExecBackend": "pegboard.core.execution",
    "ExecError": "pegboard.core.execution",
    "ExecProcess": "pegboard.core.execution",
    "HostServiceError": "pegboard.core.hostservices",
    "MessageDelivery": "pegboard.core.hostservices",
    "PlanDecision": "pegboard.core.hostservices",
    "PlanRequest": "pegboard.core.hostservices",
    "Question": "pegboard.core.hostservices",
    "QuestionOption": "pegboard.core.hostservices",
    "QuestionRequest": "pegboard.core.hostservices",
    "SubagentRequest": "pegboard.core.hostservices",
    "SystemClock": "pegboard.core.hostservices",
    "ask_host": "pegboard.core.hostservices",
    "has_host_service": "pegboard.core.hostservices",
    "unavailable_without": "pegboard.core.hostservices",
    "hookimpl": "pegboard.core.markers",
    "hookspec": "pegboard.core.markers",
    "InvalidPathError": "pegboard.core.pathnames",
    "resolve_path": "pegboard.core.pathnames",
    "ProviderPolicy": "pegboard.core.providers",
    "GroupRegister": "pegboard.core.registration",
    "ProfileRegister": "pegboard.core.registration",
    "ProviderPolicyRegister": "pegboard.core.registration",
    "ToolRegister": "pegboard.core.registration",
    "PermissionUpdate": "pegboard.core.session",
    "Selection": "pegboard.core.session",
    "Session": "pegboard.core.session",
    "SessionError": "pegboard.core.session",
    "SessionEvent": "pegboard.core.session",
    "SessionResults": "pegboard.core.session",
    "validate_session_id": "pegboard.core.session",
    "MapKey": "pegboard.core.state",
    "SessionKey": "pegboard.core.state",
    "SessionState": "pegboard.core.state",
    "SlotMap": "pegboard.core.state",
    "Stash": "pegboard.core.state",
    "StashKey": "pegboard.core.state",
    "MemorySessionStore": "pegboard.core.store",
    "SessionRecord": "pegboard.core.store",
    "SessionStore": "pegboard.core.store",
    "SessionStoreError": "pegboard.core.store",
    "SQLiteSessionStore": "pegboard.core.sqlitestore",
    "StoredResult": "pegboard.core.store",
    "Subjects": "pegboard.core.tools",
    "ToolPermissions": "pegboard.core.tools",
    "ConfigSection": "pegboard.core.sections",
    "CompletionError": "pegboard.core.services",
    "CompletionRequest": "pegboard.core.services",
    "has_completion": "pegboard.core.services",
    "request_completion": "pegboard.core.services",
    "ConfigSectionRegister": "pegboard.core.registration",
    "ImageBlock": "pegboard.core.results",
    "Reason": "pegboard.core.results",
    "TextBlock": "pegboard.core.results",
    "ToolResult": "pegboard.core.results",
    "Profile": "pegboard.core.tools",
    "Tool": "pegboard.core.tools",
    "ToolContext": "pegboard.core.tools",
    "ToolDefinitionError": "pegboard.core.tools",
    "tool": "pegboard.core.tools",
    "InvalidHostError": "pegboard.core.urls",
    "InvalidUrlError": "pegboard.core.urls",
    "ParsedUrl": "pegboard.core.urls",
    "parse_url": "pegboard.core.urls",
}

__all__ = [
    "CompletionError",
    "CompletionRequest",
    "ConfigError",
    "ConfigLayer",
    "ConfigSection",
    "ConfigSectionRegister",
    "ExecBackend",
    "ExecError",
    "ExecProcess",
    "GroupRegister",
    "HookDecision",
    "HostServiceError",
    "ImageBlock",
    "InvalidHostError",
    "InvalidPathError",
    "InvalidUrlError",
    "MapKey",
    "MemorySessionStore",
    "MessageDelivery",
    "ParsedUrl",
    "Pegboard",
    "PegboardConfig",
    "PermissionDecision",
    "PermissionUpdate",
    "PlanDecision",
    "PlanRequest",
    "PostToolUseDecision",
    "PreToolUseDecision",
    "Profile",
    "ProfileRegister",
    "ProviderPolicy",
    "ProviderPolicyRegister",
    "Question",
    "QuestionOption",
    "QuestionRequest",
    "Reason",
    "SQLiteSessionStore",
    "Selection",
    "Session",
    "SessionError",
    "SessionEvent",
    "SessionKey",
    "SessionRecord",
    "SessionResults",
    "SessionState",
    "SessionStore",
    "SessionStoreError",
    "SlotMap",
    "Stash",
    "StashKey",
    "StoredResult",
    "SubagentRequest",
    "Subjects",
    "SystemClock",
    "TextBlock",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolDefinitionError",
    "ToolPermissions",
    "ToolRegister",
    "ToolResult",
    "__version__",
    "ask_host",
    "default_data_dir",
    "find_project_root",
    "has_completion",
    "has_host_service",
    "hookimpl",
    "hookspec",
    "is_trusted",
    "load_config",
    "parse_url",
    "redact",
    "request_completion",
    "resolve_path",
    "tool",
    "unavailable_without",
    "user_config_dir",
    "validate_session_id",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pegboard' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
