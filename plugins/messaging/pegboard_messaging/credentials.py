"""Channel credentials come only from the user's own config or the environment.

A project file (``.pegboard/settings.*``, trusted or not) is shared with whoever wrote the
repository: a password, token or endpoint in it would let that author choose where the
agent's messages go and under whose account. So credential keys are read from the user,
command-line and managed layers only; a project layer that sets one is reported, not used.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pegboard import ToolContext

PROJECT_SCOPES = frozenset({"project", "project-local"})


def _get(data: Mapping[str, Any], dotted: str) -> Any:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def credential(ctx: ToolContext, key: str) -> Any:
    """The value of ``key`` from the layers outside the project (mappings merged key by key,
    higher scopes winning), or ``None``."""
    loaded: Any = ctx.config
    if loaded is None:
        return None
    found: Any = None
    for layer in loaded.layers:
        if layer.scope in PROJECT_SCOPES:
            continue
        value = _get(layer.data, key)
        if value is None:
            continue
        if isinstance(value, Mapping) and isinstance(found, Mapping):
            found = {**found, **value}
        else:
            found = dict(value) if isinstance(value, Mapping) else value
    return found


def set_in_project(ctx: ToolContext, key: str) -> bool:
    """Whether a project layer sets ``key`` (which is then ignored)."""
    loaded: Any = ctx.config
    return loaded is not None and any(
        layer.scope in PROJECT_SCOPES and _get(layer.data, key) is not None for layer in loaded.layers
    )


def ignored_note(ctx: ToolContext, *keys: str) -> str:
    """``"; <key> is set in a project file, ..."`` for the credential keys a project sets, else ``""``."""
    found = [k for k in keys if set_in_project(ctx, k)]
    if not found:
        return ""
    return (f"; {', '.join(found)} in a project file is ignored (credentials count only from your user "
            "config or the environment)")


__all__ = ["PROJECT_SCOPES", "credential", "ignored_note", "set_in_project"]
