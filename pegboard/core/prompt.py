"""The prompt channel: the human-readable tool list an agent's system prompt carries.

OpenClaw presents tools in two parallel channels: the structured definitions sent to the
model API (``Pegboard.schema``) and a readable list with guidance in the system prompt.
A tool that appears in neither cannot be called. This module renders the second channel
from the same policy result as the first, so the two always name the same tools.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pegboard.core.app import Pegboard
    from pegboard.core.session import Session
    from pegboard.core.tools import Tool

__all__ = ["PromptEntry", "prompt_entries", "render_prompt", "render_prompt_text"]

HEADING = "## Tools"
INTRO = "These tools are available in this session. Call a tool by its exact name."
EMPTY = "No tools are available in this session."


@dataclass(frozen=True)
class PromptEntry:
    """One enabled tool as the prompt shows it: its name and usage text."""

    name: str
    usage: str


def usage_text(tool: Tool) -> str:
    """A tool's usage text for the prompt: ``Tool.usage`` if set, else its description."""
    text = tool.usage if isinstance(tool.usage, str) and tool.usage.strip() else tool.description
    return inspect.cleandoc(text)


def prompt_entries(
    pegboard: Pegboard, session_id: str | None = None, *, session: Session | None = None, **selection: Any
) -> list[PromptEntry]:
    """The visible tools for ``selection`` (agent, provider, model, profile, subagent), in policy order."""
    tools = session.visible_tools() if session is not None else pegboard.visible_tools(session_id, **selection)
    return [PromptEntry(t.name, usage_text(t)) for t in tools]


def render_prompt_text(entries: list[PromptEntry]) -> str:
    """Markdown for a system prompt: a heading, one line of guidance, a section per tool."""
    if not entries:
        return f"{HEADING}\n\n{EMPTY}\n"
    parts = [HEADING, "", INTRO]
    for entry in entries:
        parts += ["", f"### {entry.name}", entry.usage]
    return "\n".join(parts) + "\n"


def render_prompt(
    pegboard: Pegboard, session_id: str | None = None, *, session: Session | None = None, **selection: Any
) -> str:
    """The tool list for this agent's system prompt (``Pegboard.prompt(...)``); deferred tools
    that no search loaded yet are named in one closing line."""
    text = render_prompt_text(prompt_entries(pegboard, session_id, session=session, **selection))
    if session is not None:
        pending = session.pending_deferred()
    else:
        pending = pegboard.deferred.pending(pegboard.enabled_tools(**selection), session_id)
    if pending:
        from pegboard.core.deferred import deferred_tools_note

        text += f"\n{deferred_tools_note(pending)}\n"
    return text
