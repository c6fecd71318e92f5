"""Pegboard plugin: run the hooks configured under the ``hooks`` key of every config scope.

Handlers are shell commands (``{"type": "command", "command": "..."}``, or exec form with
``args``) or HTTP endpoints (``{"type": "http", "url": "..."}``, only for URLs allowed by
``allowedHttpHookUrls``). They read the event as JSON and answer with an exit code and
optional JSON, the protocol existing hook scripts already speak. See ``docs/hooks.md``.

Modules: ``config`` (the ``hooks`` key across scopes), ``matcher``, ``runner`` (commands),
``http``, ``protocol`` (JSON in and out), ``engine`` (one event end to end), ``plugin``
(the hook implementations Pegboard calls).
"""

from pegboard_command_hooks.config import EVENTS, Handler, collect_handlers, event_name
from pegboard_command_hooks.engine import EventReport, HandlerReport, decision_json, run_event
from pegboard_command_hooks.plugin import (
    permission_request,
    post_tool_use,
    post_tool_use_failure,
    pre_tool_use,
    session_end,
    session_start,
)
from pegboard_command_hooks.protocol import combine

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
    "permission_request",
    "post_tool_use",
    "post_tool_use_failure",
    "pre_tool_use",
    "run_event",
    "session_end",
    "session_start",
]
