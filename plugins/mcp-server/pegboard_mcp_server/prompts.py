"""Skills as MCP prompts: ``prompts/list`` offers what ``Skill`` can load, ``prompts/get`` loads it.

Loading goes through the client's session and the ``Skill`` tool's whole pipeline, so the
same rules hold as for a model's ``Skill`` call: a deny rule (``Skill(name)``) refuses it, a
trusted skill's ``allowed-tools`` are granted for the session, an untrusted project's skill
loads but grants nothing. Picking a prompt in the client is the user's own choice, so the ask
that ``Skill`` needs by default is approved for that one call.
"""

from __future__ import annotations

import inspect
from typing import Any

from pegboard import PermissionDecision, Session, ToolCall

SKILL_TOOL = "Skill"
ARGUMENTS = [{"name": "args", "description": "Arguments for the skill (optional).", "required": False}]


class PromptError(ValueError):
    """A ``prompts/get`` that cannot be answered: the message says why (JSON-RPC -32602)."""


def _catalog(session: Session) -> dict[str, Any]:
    from pegboard_skill import skills

    if SKILL_TOOL not in {t.name for t in session.enabled_tools()}:
        return {}
    return skills(session.pegboard)


def skill_prompts(session: Session) -> list[dict[str, Any]]:
    """One prompt per skill the session's ``Skill`` tool may load (a skill a rule denies is left out)."""
    prompts = []
    for info in _catalog(session).values():
        if session.check(SKILL_TOOL, {"skill": info.name}).decision == "deny":
            continue
        description = info.description or f"The {info.name} skill"
        if info.allowed_tools and not info.trusted:
            description += " (from an untrusted source: its allowed-tools grant nothing)"
        prompts.append({"name": info.name, "title": info.name, "description": description, "arguments": ARGUMENTS})
    return prompts


async def load_skill_prompt(session: Session, name: Any, arguments: Any) -> dict[str, Any]:
    """The skill's instructions as one user message, loaded through ``Skill`` in ``session``."""
    if not isinstance(name, str) or not name:
        raise PromptError("prompts/get needs params.name, a prompt name from prompts/list")
    catalog = _catalog(session)
    info = catalog.get(name)
    if info is None:
        known = ", ".join(sorted(catalog)) or "none"
        raise PromptError(f"Unknown prompt {name!r}; the prompts (skills) here: {known}")
    args = arguments.get("args") if isinstance(arguments, dict) else None
    tool_input: dict[str, Any] = {"skill": name}
    if isinstance(args, str) and args.strip():
        tool_input["args"] = args
    chosen = dict(tool_input)
    before = session.approver

    async def approve(call: ToolCall, decision: PermissionDecision) -> Any:
        if call.name == SKILL_TOOL and call.input == chosen:
            return True
        if before is None:
            return None
        answer = before(call, decision)
        return await answer if inspect.isawaitable(answer) else answer

    session.approver = approve  # read once when the call starts: no other call sees it
    try:
        result = await session.call(SKILL_TOOL, tool_input)
    finally:
        if session.approver is approve:
            session.approver = before
    if result.is_error:
        raise PromptError(f"Prompt {name!r} cannot be loaded: {result.text}")
    return {
        "description": info.description,
        "messages": [{"role": "user", "content": {"type": "text", "text": result.text}}],
    }
