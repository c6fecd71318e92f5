"""Pegboard: the tool layer for AI agents.

The public API a harness builder or plugin author relies on. Everything under
``pegboard.core`` is private implementation.
"""

from pegboard.core.app import Pegboard
from pegboard.core.call import ToolCall
from pegboard.core.config import ConfigError, ConfigLayer, PegboardConfig, load_config
from pegboard.core.decisions import HookDecision, PermissionDecision
from pegboard.core.markers import hookimpl, hookspec
from pegboard.core.providers import ProviderPolicy
from pegboard.core.registration import GroupRegister, ProfileRegister, ProviderPolicyRegister, ToolRegister
from pegboard.core.results import ImageBlock, Reason, TextBlock, ToolResult
from pegboard.core.tools import Profile, Tool, ToolContext, ToolDefinitionError, tool

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "ConfigLayer",
    "GroupRegister",
    "HookDecision",
    "ImageBlock",
    "Pegboard",
    "PegboardConfig",
    "PermissionDecision",
    "Profile",
    "ProfileRegister",
    "ProviderPolicy",
    "ProviderPolicyRegister",
    "Reason",
    "TextBlock",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolDefinitionError",
    "ToolRegister",
    "ToolResult",
    "__version__",
    "hookimpl",
    "hookspec",
    "load_config",
    "tool",
]
