"""Judging a call by what its tool says it touches (``Tool.permission_subjects``).

A tool that declares its subjects is judged subject by subject, each with the rule grammar
that fits it: every path it writes against the tool's own family (``Edit(...)`` rules, the
working directories, ``acceptEdits``), every path it only reads against ``Read(...)``
rules, its command against ``Bash(...)`` rules, its URL against ``WebFetch(domain:...)``
rules. The strongest answer wins (deny > ask > allow), so a patch that touches one denied
file is denied whole. The kernel names no tool: the declaration does the work.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pegboard.core.decisions import PermissionDecision, strongest_permission

if TYPE_CHECKING:
    from pegboard.core.permissions.engine import PermissionEngine
    from pegboard.core.tools import Subjects, Tool


def declared_subjects(tool: Tool | None, tool_input: Mapping[str, Any], model: Any = None) -> Subjects | None:
    """The subjects ``tool`` declares for this input, or ``None`` (no declaration, or an
    input its model rejects: the engine then judges the input as sent). ``model`` is the
    input already validated, when the caller knows it holds exactly ``tool_input``."""
    if tool is None or tool.permission_subjects is None:
        return None
    try:
        if model is None:
            model = tool.input_model.model_validate(dict(tool_input))
        return tool.permission_subjects(model)
    except Exception:
        return None


def check_call(
    engine: PermissionEngine, name: str, tool_input: Mapping[str, Any], tool: Tool | None, model: Any = None
) -> PermissionDecision:
    """The engine's decision for one call, by declared subjects where the tool has them
    (``model``: the input validated, when it is known to hold exactly ``tool_input``)."""
    subjects = declared_subjects(tool, tool_input, model)
    if subjects is None or tool is None:
        return engine.check(name, tool_input, tool)
    base = dict(tool_input)
    own: list[PermissionDecision] = []
    other: list[PermissionDecision] = []
    for path in subjects.paths_written:
        own.append(engine.check(name, {**base, "file_path": path}, tool))
    reads = engine.file_head("read")
    for path in subjects.paths_read:
        if tool.family == reads:
            own.append(engine.check(name, {**base, "file_path": path}, tool))
        else:
            other.append(engine.file_check("read", path))
    if subjects.command is not None:
        own.append(engine.check(name, {**base, "command": subjects.command}, tool))
    for url in (subjects.url, *subjects.urls) if subjects.url is not None else subjects.urls:
        own.append(engine.check(name, {**base, "url": url}, tool))
    if not own:
        own.append(engine.check(name, base, tool))
    decisions = own + other
    return strongest_permission(decisions) or engine.check(name, base, tool)


__all__ = ["check_call", "declared_subjects"]
