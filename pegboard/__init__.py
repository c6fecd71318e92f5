"""Pegboard: the tool layer for AI agents.

The public API a harness builder or plugin author relies on. Everything under
``pegboard.core`` is private implementation. Names load on first use, so that
``pegboard --help`` starts as fast as the interpreter; each one reports itself as
``pegboard.<name>`` (its ``__module__``), which is where it is documented and imported from.
"""

# ruff: noqa: F401  (the imports under TYPE_CHECKING are the re-exports type checkers see)
from __future__ import annotations

import importlib
from types import FunctionType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names of _PUBLIC, for type checkers (a test keeps the two equal)
    from pegboard.core.app import Pegboard
    from pegboard.core.call import Approver, ToolCall
    from pegboard.core.completion import CompletionError, CompletionRequest, has_completion, request_completion
    from pegboard.core.config import (
        ConfigError,
        ConfigLayer,
        LoadedConfig,
        PegboardConfig,
        find_project_root,
        load_config,
        user_config_dir,
    )
    from pegboard.core.configcheck import config_problem
    from pegboard.core.configwatch import ConfigChange, ConfigWatcher
    from pegboard.core.decisions import HookDecision, PermissionDecision, PostToolUseDecision, PreToolUseDecision
    from pegboard.core.deferred import DeferredTools, deferred_tools_note
    from pegboard.core.execution import ExecBackend, ExecError, ExecProcess
    from pegboard.core.hookrunner import HookError
    from pegboard.core.hostservices import (
        HostServiceError,
        MessageDelivery,
        NeedsHost,
        PlanDecision,
        PlanRequest,
        Question,
        QuestionOption,
        QuestionRequest,
        SubagentRequest,
        SystemClock,
        ask_host,
        has_host_service,
        host_service_reason,
        unavailable_without,
    )
    from pegboard.core.markers import active_when, event_kinds, hookimpl, hookspec, when_configured
    from pegboard.core.pathnames import InvalidPathError, resolve_path
    from pegboard.core.permissions.suggest import RuleSuggestion, suggest_allow_rules
    from pegboard.core.plugins import PluginInfo
    from pegboard.core.policy import PolicyResult, ToolDecision
    from pegboard.core.projecttrust import is_trusted
    from pegboard.core.protected import ProtectedPath, ProtectedPaths, protected_paths
    from pegboard.core.providers import ProviderPolicy
    from pegboard.core.redaction import redact
    from pegboard.core.registration import (
        ConfigSectionRegister,
        GroupRegister,
        PermissionFamilyRegister,
        ProfileRegister,
        ProviderPolicyRegister,
        ToolRegister,
    )
    from pegboard.core.registry import RegistrationConflict
    from pegboard.core.results import ImageBlock, Reason, TextBlock, ToolResult
    from pegboard.core.rulematch import rule_matches
    from pegboard.core.sections import NARROWS, NEUTRAL, ConfigSection, Direction, Widens
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
    from pegboard.core.urls import InvalidHostError, InvalidUrlError, ParsedUrl, parse_url

__version__ = "0.1.0"

#: Every public name, by the private module that defines it: the one list of the API.
_PUBLIC: dict[str, tuple[str, ...]] = {
    "pegboard.core.app": ("Pegboard",),
    "pegboard.core.call": (
        "Approver",
        "ToolCall",
    ),
    "pegboard.core.completion": (
        "CompletionError",
        "CompletionRequest",
        "has_completion",
        "request_completion",
    ),
    "pegboard.core.config": (
        "ConfigError",
        "ConfigLayer",
        "find_project_root",
        "load_config",
        "LoadedConfig",
        "PegboardConfig",
        "user_config_dir",
    ),
    "pegboard.core.decisions": (
        "HookDecision",
        "PermissionDecision",
        "PostToolUseDecision",
        "PreToolUseDecision",
    ),
    "pegboard.core.configcheck": ("config_problem",),
    "pegboard.core.configwatch": ("ConfigChange", "ConfigWatcher"),
    "pegboard.core.deferred": ("DeferredTools", "deferred_tools_note"),
    "pegboard.core.execution": (
        "ExecBackend",
        "ExecError",
        "ExecProcess",
    ),
    "pegboard.core.hookrunner": ("HookError",),
    "pegboard.core.hostservices": (
        "ask_host",
        "has_host_service",
        "host_service_reason",
        "HostServiceError",
        "MessageDelivery",
        "NeedsHost",
        "PlanDecision",
        "PlanRequest",
        "Question",
        "QuestionOption",
        "QuestionRequest",
        "SubagentRequest",
        "SystemClock",
        "unavailable_without",
    ),
    "pegboard.core.markers": (
        "active_when",
        "event_kinds",
        "hookimpl",
        "hookspec",
        "when_configured",
    ),
    "pegboard.core.pathnames": (
        "InvalidPathError",
        "resolve_path",
    ),
    "pegboard.core.plugins": ("PluginInfo",),
    "pegboard.core.permissions.suggest": ("RuleSuggestion", "suggest_allow_rules"),
    "pegboard.core.policy": (
        "PolicyResult",
        "ToolDecision",
    ),
    "pegboard.core.projecttrust": ("is_trusted",),
    "pegboard.core.protected": ("protected_paths", "ProtectedPath", "ProtectedPaths"),
    "pegboard.core.providers": ("ProviderPolicy",),
    "pegboard.core.redaction": ("redact",),
    "pegboard.core.registration": (
        "ConfigSectionRegister",
        "GroupRegister",
        "PermissionFamilyRegister",
        "ProfileRegister",
        "ProviderPolicyRegister",
        "ToolRegister",
    ),
    "pegboard.core.registry": ("RegistrationConflict",),
    "pegboard.core.rulematch": ("rule_matches",),
    "pegboard.core.results": (
        "ImageBlock",
        "Reason",
        "TextBlock",
        "ToolResult",
    ),
    "pegboard.core.sections": ("ConfigSection", "Direction", "NARROWS", "NEUTRAL", "Widens"),
    "pegboard.core.session": (
        "PermissionUpdate",
        "Selection",
        "Session",
        "SessionError",
        "SessionEvent",
        "SessionResults",
        "validate_session_id",
    ),
    "pegboard.core.sqlitestore": ("SQLiteSessionStore",),
    "pegboard.core.state": (
        "MapKey",
        "SessionKey",
        "SessionState",
        "SlotMap",
        "Stash",
        "StashKey",
    ),
    "pegboard.core.store": (
        "default_data_dir",
        "MemorySessionStore",
        "SessionRecord",
        "SessionStore",
        "SessionStoreError",
        "StoredResult",
    ),
    "pegboard.core.tools": (
        "Profile",
        "Subjects",
        "Tool",
        "tool",
        "ToolContext",
        "ToolDefinitionError",
        "ToolPermissions",
    ),
    "pegboard.core.urls": (
        "InvalidHostError",
        "InvalidUrlError",
        "parse_url",
        "ParsedUrl",
    ),
}
_HOME = {name: module for module, names in _PUBLIC.items() for name in names}

__all__ = sorted([*_HOME, "__version__"])


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'pegboard' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    if isinstance(value, type | FunctionType):  # not aliases (Approver) or marker objects
        value.__module__ = __name__
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
