"""The pluggy markers for the ``pegboard`` project."""

from collections.abc import Callable
from typing import Any, TypeVar

import pluggy

PROJECT_NAME = "pegboard"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)

#: the attribute ``event_kinds`` sets on an ``on_event`` implementation
EVENT_KINDS_ATTR = "pegboard_event_kinds"

F = TypeVar("F", bound=Callable[..., Any])


def event_kinds(*kinds: str) -> Callable[[F], F]:
    """Let an ``on_event`` implementation hear only events of ``kinds``.

    Events of other kinds are not built for it: a session whose listeners all name kinds
    pays nothing for a call's ``call_started`` / ``call_finished`` unless one of them asks::

        @hookimpl
        @event_kinds("progress", "log")
        def on_event(event, session): ...
    """
    if not kinds or not all(isinstance(k, str) and k for k in kinds):
        raise ValueError("event_kinds needs one or more event kind names")

    def mark(fn: F) -> F:
        setattr(fn, EVENT_KINDS_ATTR, frozenset(kinds))
        return fn

    return mark


#: the attribute ``active_when`` sets on a hook implementation
ACTIVE_WHEN_ATTR = "pegboard_active_when"


def active_when(predicate: Callable[[Any], bool]) -> Callable[[F], F]:
    """Let a Pegboard call a hook implementation only when ``predicate(pegboard)`` is true.

    For an implementation with nothing to do under some configurations (no handler set up
    for its event): it then costs a call nothing. The predicate is asked once per Pegboard
    (whose config is fixed for its life) and again when plugins are registered or removed;
    one that raises leaves the implementation in, so a broken predicate never drops a hook::

        @hookimpl
        @active_when(lambda pegboard: "audit" in pegboard.config.model_extra)
        def pre_tool_use(call, context): ...
    """
    if not callable(predicate):
        raise TypeError("active_when needs a function of the Pegboard")

    def mark(fn: F) -> F:
        setattr(fn, ACTIVE_WHEN_ATTR, predicate)
        return fn

    return mark


#: the attribute ``when_configured`` sets on a hook implementation: the config keys it waits for
WHEN_CONFIGURED_ATTR = "pegboard_when_configured"


def when_configured(*keys: str) -> Callable[[F], F]:
    """Let a Pegboard call a hook implementation only when its config sets one of ``keys``
    (dotted paths such as ``"mcpServers"`` or ``"sandbox"``, any value, in any scope).

    Unlike :func:`active_when` the condition is plain data, so a declaration file records it:
    a plugin whose ``pegboard_ready`` has nothing to do unless it is configured is then not
    imported at start-up when it is not::

        @hookimpl
        @when_configured("mcpServers")
        def pegboard_ready(pegboard): ...
    """
    if not keys or not all(isinstance(k, str) and k and not k.startswith(".") for k in keys):
        raise ValueError("when_configured needs one or more dotted config keys")

    def configured(pegboard: Any) -> bool:
        return any(pegboard.configured(key) is not None for key in keys)

    def mark(fn: F) -> F:
        setattr(fn, WHEN_CONFIGURED_ATTR, tuple(keys))
        setattr(fn, ACTIVE_WHEN_ATTR, configured)
        return fn

    return mark
