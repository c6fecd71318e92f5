"""Deferred tools and ``ToolSearch``.

A deferred tool (``Tool.deferred``; MCP tools past a threshold) is offered by name only. When
``ToolSearch`` finds it (keywords, a regex, or ``select:Name``) its full definition comes back
in the result and the tool is *loaded*: from the next request on it is part of the tool set
(:func:`visible_tools`). Policy still applies: the search only sees tools enabled for the
caller, and a loaded tool's calls run the whole pipeline like any other.

Loaded tools are remembered per ``Pegboard`` and per ``session_id`` in the kernel's
``Pegboard.deferred``; the helpers here keep their names for harness code.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from pegboard import Tool, ToolContext, ToolRegister, ToolResult, deferred_tools_note, hookimpl, tool

SEARCH_TOOL = "ToolSearch"
DEFAULT_RESULTS = 5
MAX_RESULTS = 20


def state_version(pegboard: Any) -> int:
    """Changes whenever the tool set does (a search loads tools, a tool registers or goes)."""
    version: int = pegboard.tool_set_version
    return version


def loaded_tools(pegboard: Any, session_id: str | None = None) -> set[str]:
    loaded: set[str] = pegboard.deferred.loaded(session_id)
    return loaded


def load(pegboard: Any, names: Iterable[str], session_id: str | None = None) -> list[str]:
    loaded: list[str] = pegboard.deferred.load(names, session_id)
    return loaded


def visible_tools(pegboard: Any, tools: Sequence[Tool], session_id: str | None = None) -> list[Tool]:
    """The tools whose full definitions go into the next request (``Pegboard.deferred.visible``)."""
    visible: list[Tool] = pegboard.deferred.visible(tools, session_id)
    return visible


def deferred_names(pegboard: Any, tools: Sequence[Tool], session_id: str | None = None) -> list[str]:
    """Deferred tools not loaded yet: offered to the model by name only."""
    pending: list[str] = pegboard.deferred.pending(tools, session_id)
    return pending


def deferred_note(names: Sequence[str]) -> str:
    """The line that lists deferred tools by name (appended to ToolSearch's description)."""
    return deferred_tools_note(names)


# -- searching -------------------------------------------------------------------------------


def _words(text: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.casefold()) if w]


def search(tools: Sequence[Tool], query: str, limit: int = DEFAULT_RESULTS) -> list[Tool]:
    """Tools matching ``query``: ``select:A,B`` by name, ``regex:PAT`` or ``/PAT/`` as a regular
    expression over name and description, otherwise keywords (``+word`` must match), best first."""
    query = query.strip()
    if query.lower().startswith("select:"):
        wanted = [n.strip().casefold() for n in query[len("select:") :].split(",") if n.strip()]
        by_name = {t.name.casefold(): t for t in tools}
        return [by_name[n] for n in wanted if n in by_name][:limit]
    pattern: str | None = None
    if query.lower().startswith("regex:"):
        pattern = query[len("regex:") :]
    elif len(query) > 2 and query.startswith("/") and query.endswith("/"):
        pattern = query[1:-1]
    if pattern is not None:
        regex = re.compile(pattern, re.IGNORECASE)
        return [t for t in tools if regex.search(t.name) or regex.search(t.description)][:limit]
    terms = query.split()
    required = [t[1:].casefold() for t in terms if t.startswith("+") and len(t) > 1]
    optional = [t.casefold() for t in terms if not t.startswith("+")]
    scored: list[tuple[int, str, Tool]] = []
    for candidate in tools:
        name = candidate.name.casefold()
        name_words = set(_words(candidate.name))
        description = candidate.description.casefold()
        if any(r not in name and r not in description for r in required):
            continue
        score = 0
        for term in required + optional:
            if term in name_words:
                score += 5
            elif term in name:
                score += 3
            if term in description:
                score += 1
        if score:
            scored.append((-score, candidate.name.casefold(), candidate))
    return [t for _s, _n, t in sorted(scored, key=lambda item: (item[0], item[1]))[:limit]]


class ToolSearchInput(BaseModel):
    query: str = Field(
        min_length=1,
        description='Keywords ("github issue"; "+slack send" requires slack), a regex ("regex:^mcp__db__" '
        'or "/read|write/"), or exact names ("select:mcp__github__get_issue,OtherTool").',
    )
    max_results: int = Field(default=DEFAULT_RESULTS, ge=1, le=MAX_RESULTS, description="How many tools at most.")


def _definition(t: Tool) -> dict[str, Any]:
    schema = t.input_schema()
    schema.pop("title", None)
    return {"name": t.name, "description": t.description, "input_schema": schema}


@tool(name=SEARCH_TOOL, groups=["pegboard"], read_only=True, loads_deferred=True)
async def tool_search(input: ToolSearchInput, ctx: ToolContext) -> ToolResult:
    """Search the deferred tools (offered by name only) by keyword, regex or exact name, and load
    the ones found: their full definitions are returned now and they can be called from the next
    request on."""
    session = ctx.session
    if session is None:
        return ToolResult.refusal("unavailable", "ToolSearch needs a session (run it through Pegboard)")
    enabled = ctx.enabled_tools()
    deferred = [t for t in enabled if t.deferred]
    try:
        found = search(deferred, input.query, input.max_results)
    except re.error as exc:
        return ToolResult.refusal("invalid_input", f"Invalid regular expression in {input.query!r}: {exc}")
    if not found:
        loaded = session.loaded_deferred()
        names = sorted((t.name for t in deferred if t.name not in loaded), key=str.casefold)
        listed = ", ".join(names[:50]) or "(none)"
        return ToolResult.from_text(
            f"No deferred tool matches {input.query!r}. Deferred tools: {listed}",
            structured={"matches": [], "definitions": []},
        )
    session.load_deferred([t.name for t in found])
    definitions = [_definition(t) for t in found]
    text = "\n".join(
        [f"Loaded {len(found)} tool(s); they are available from the next request on:"]
        + [json.dumps(d, ensure_ascii=False) for d in definitions]
    )
    return ToolResult.from_text(text, structured={"matches": [t.name for t in found], "definitions": definitions})


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(tool_search)
