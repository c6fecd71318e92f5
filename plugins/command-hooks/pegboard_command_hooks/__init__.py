"""Pegboard plugin: run the hooks configured under the ``hooks`` key of every config scope.

Handlers are shell commands (``{"type": "command", "command": "..."}``, or exec form with
``args``) or HTTP endpoints (``{"type": "http", "url": "..."}``, only for URLs allowed by
``allowedHttpHookUrls``). They read the event as JSON and answer with an exit code and
optional JSON, the protocol existing hook scripts already speak. See ``docs/hooks.md``.

Modules: ``config`` (the ``hooks`` key across scopes), ``matcher``, ``runner`` (commands),
``http``, ``protocol`` (JSON in and out), ``engine`` (one event end to end), ``plugin``
(the hook implementations Pegboard calls).
"""

import importlib
from typing import Any

from pegboard_command_hooks.plugin import (
    pegboard_close,
    permission_request,
    post_tool_use,
    post_tool_use_failure,
    pre_tool_use,
    register_config_sections,
    session_end,
    session_start,
)

_LAZY = {
    "EVENTS": "config",
    "Handler": "config",
    "collect_handlers": "config",
    "event_name": "config",
    "EventReport": "engine",
    "HandlerReport": "engine",
    "decision_json": "engine",
    "run_event": "engine",
    "combine": "protocol",
}


def __getattr__(name: str) -> Any:
    """The engine's names load on first use, so loading the plugin imports no asyncio."""
    if name not in _LAZY:
        raise AttributeError(f"module 'pegboard_command_hooks' has no attribute {name!r}")
    return getattr(importlib.import_module(f"pegboard_command_hooks.{_LAZY[name]}"), name)


__version__ = "0.1.0"

__all__ = [
    "EVENTS",
    "EventReport",
    "Handler",
    "HandlerReport",
    "collect_handlers",
    "combine",
    "decision_json",
    "event_name",
    "pegboard_close",
    "permission_request",
    "post_tool_use",
    "post_tool_use_failure",
    "pre_tool_use",
    "register_config_sections",
    "run_event",
    "session_end",
    "session_start",
]
