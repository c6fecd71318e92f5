"""``Agent`` (alias ``Task``, ``delegate_task``), ``sessions_spawn`` and ``agents_list``.

A subagent runs in the host: Pegboard picks its definition, computes the tool set the policy
gives it and hands both to the ``run_subagent`` hook, which returns the subagent's final text.
Definitions come from config (``subagents.<name>``: ``description``, ``prompt``, ``tools``,
``disallowedTools``, ``model``, ``maxTurns``) and from ``agents/*.md`` files with front matter
(user ``<config dir>/agents``, project ``<project>/.pegboard/agents``; the project wins).
A subagent never gets ``Agent`` itself: subagents do not spawn subagents.
"""

from __future__ import annotations

import dataclasses
import re
import secrets
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from pegboard import (
    MessageDelivery,
    Pegboard,
    StashKey,
    SubagentRequest,
    ToolContext,
    ToolResult,
    ask_host,
    find_project_root,
    has_host_service,
    hookimpl,
    tool,
    unavailable_without,
    user_config_dir,
)
from pegboard_skill import SkillFormatError, parse_skill_md, split_list

OWNER = "agent"
GENERAL = "general-purpose"
DEFAULT_MAX_TURNS = 50
SELF_TOOLS = {"agent", "task", "delegatetask", "sessionsspawn"}
RUNS: StashKey[dict[str, dict[str, Any]]] = StashKey("pegboard-agent-runs")


@dataclass(frozen=True)
class SubagentDef:
    name: str
    description: str = ""
    prompt: str = ""
    tools: tuple[str, ...] | None = None
    disallowed: tuple[str, ...] = ()
    model: str | None = None
    max_turns: int | None = None
    source: str = "builtin"


def _as_list(value: Any) -> tuple[str, ...] | None:
    if value is None or value == []:
        return None
    return tuple(split_list(value) if isinstance(value, str) else (str(v) for v in value))


def _turns(value: Any) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


def file_definitions(pb: Pegboard) -> dict[str, SubagentDef]:
    """``agents/*.md`` of the user, then the project (a project definition replaces a user one)."""
    root = find_project_root(pb.cwd.resolve())
    found: dict[str, SubagentDef] = {}
    for directory, source in ((user_config_dir(pb.env) / "agents", "user"), (root / ".pegboard" / "agents", "project")):
        for path in sorted(directory.glob("*.md")) if directory.is_dir() else []:
            try:
                meta, body = parse_skill_md(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, SkillFormatError) as exc:
                pb.warnings.append(f"subagent file {path} skipped: {exc}")
                continue
            name = str(meta.get("name") or path.stem).strip()
            found[name] = SubagentDef(
                name=name, description=str(meta.get("description") or ""), prompt=body,
                tools=_as_list(meta.get("tools")), disallowed=_as_list(meta.get("disallowedTools")) or (),
                model=(str(meta["model"]) if meta.get("model") not in (None, "", "inherit") else None),
                max_turns=_turns(meta.get("maxTurns")), source=source,
            )
    return found


def definitions(pb: Pegboard) -> dict[str, SubagentDef]:
    """Every subagent type: the built-in general-purpose one, files, then config (config wins)."""
    defs = {GENERAL: SubagentDef(GENERAL, "A general agent for multi-step tasks, with the parent's tools.")}
    defs.update(file_definitions(pb))
    for name, cfg in pb.config.subagents.items():
        extra = cfg.model_extra or {}
        defs[name] = SubagentDef(
            name=name, description=str(extra.get("description") or ""), prompt=str(extra.get("prompt") or ""),
            model=extra.get("model"), max_turns=_turns(extra.get("maxTurns")), source="config",
        )
    return defs


def _matches(entry: str, name: str) -> bool:
    bare = entry.split("(", 1)[0].strip()
    pattern = "^" + ".*".join(re.escape(p) for p in bare.casefold().split("*")) + "$"
    return re.match(pattern, name.casefold()) is not None


def subagent_tools(ctx: ToolContext, definition: SubagentDef) -> tuple[str, ...]:
    """The tool names the subagent may use: the policy's set for a configured subagent, else
    the parent's set narrowed by the definition's lists; never the spawning tools."""
    pb: Any = ctx.pegboard
    if definition.source == "config":
        policy = pb.tools(agent=ctx.agent, provider=ctx.provider, model=ctx.model, subagent=definition.name)
        names = list(policy.enabled)
    else:
        names = list(pb.tools(agent=ctx.agent, provider=ctx.provider, model=ctx.model, profile=ctx.profile).enabled)
        if definition.tools is not None:
            names = [n for n in names if any(_matches(e, n) for e in definition.tools)]
        names = [n for n in names if not any(_matches(e, n) and "(" not in e for e in definition.disallowed)]
    return tuple(n for n in names if n.casefold().replace("_", "").replace("-", "") not in SELF_TOOLS)


def match_agent(specifier: str, tool_input: Any) -> bool:
    """``Agent(Explore)`` matches by ``subagent_type`` (``*`` is a wildcard); ``Agent(model:opus)`` by model."""
    data = tool_input if isinstance(tool_input, dict) else {}
    key, _, value = specifier.partition(":")
    if value and key.strip() == "model":
        subject, spec = str(data.get("model") or ""), value.strip()
    else:
        subject, spec = str(data.get("subagent_type") or GENERAL), specifier.strip()
    pattern = "^" + ".*".join(re.escape(p) for p in spec.split("*")) + "$"
    return re.match(pattern, subject) is not None


class AgentInput(BaseModel):
    description: str = Field(min_length=1, description="A short (3-5 word) description of the task.")
    prompt: str = Field(min_length=1, description="The task for the subagent, with everything it needs to know.")
    subagent_type: str | None = Field(default=None, description=f"Which subagent to use (default {GENERAL}).")
    model: str | None = Field(default=None, description="A model for this subagent (default: its own or the host's).")
    run_in_background: bool = Field(default=False, description="Run without waiting (not supported by every host).")


def _request(ctx: ToolContext, d: SubagentDef, prompt: str, description: str, model: str | None) -> SubagentRequest:
    return SubagentRequest(
        subagent_type=d.name, prompt=prompt, description=description, tools=subagent_tools(ctx, d),
        max_turns=d.max_turns or DEFAULT_MAX_TURNS, model=model or d.model, system_prompt=d.prompt,
        parent_session_id=ctx.session_id,
    )


@tool(
    name="Agent",
    aliases=["Task", "delegate_task"],
    groups=["subagents", "pegboard"],
    specifier_matcher=match_agent,
    usage="Hand a self-contained task to a subagent; it returns one final report.",
)
async def agent_tool(input: AgentInput, ctx: ToolContext) -> ToolResult:
    """Launch a subagent for a complex, multi-step task it can do on its own, such as a broad search
    of the code. It starts with no memory of this conversation, so the prompt must say everything it
    needs, and what to report back. It returns one final message."""
    pb: Any = ctx.pegboard
    defs = definitions(pb)
    name = input.subagent_type or GENERAL
    if name not in defs:
        known = ", ".join(sorted(defs))
        return ToolResult.refusal("tool_error", f"unknown subagent_type {name!r}; available: {known}",
                                  error_kind="not_found")
    if input.run_in_background:
        return ToolResult.refusal("tool_error", "background subagents are not supported here; run it in the "
                                  "foreground (run_in_background: false)", error_kind="not_supported")
    request = _request(ctx, defs[name], input.prompt, input.description, input.model)
    try:
        final = await ask_host(ctx, "run_subagent", request=request)
    except Exception as exc:
        return ToolResult.refusal("tool_error", f"the subagent failed: {exc}", error_kind="host_error")
    if final is None:
        return ToolResult.refusal("tool_error", "no host ran the subagent", error_kind="not_available")
    return ToolResult.from_text(str(final), structured={"subagent_type": name, "tools": list(request.tools)})


# --------------------------------------------------------------------------- sessions_spawn, agents_list


def allowed_agents(ctx: ToolContext) -> tuple[list[str], bool]:
    """Agent ids the current agent may spawn (``agents.list[].subagents.allowAgents``) and whether any is."""
    data = ctx.config.data if ctx.config is not None else {}
    entries = [e for e in (data.get("agents", {}) or {}).get("list", []) or [] if isinstance(e, dict)]
    ids = [str(e.get("id")) for e in entries if e.get("id")]
    me = ctx.agent or (ids[0] if ids else "main")
    mine = next((e for e in entries if e.get("id") == me), {})
    allow = [str(a) for a in ((mine.get("subagents") or {}).get("allowAgents") or [])]
    if "*" in allow:
        return sorted({me, *ids}), True
    return [me, *[a for a in allow if a != me]], False


class SpawnInput(BaseModel):
    task: str = Field(min_length=1, description="The task for the new agent run.")
    label: str | None = Field(default=None, description="A short label for the run.")
    agentId: str | None = Field(default=None, description="Which agent runs it (see agents_list); default: this one.")
    model: str | None = Field(default=None, description="A model for the run.")
    runTimeoutSeconds: float | None = Field(default=None, ge=0, description="Stop the run after this long (0: none).")
    cleanup: str | None = Field(default=None, description="'delete' or 'keep' the run's session afterwards.")


async def _run_spawned(ctx: ToolContext, run_id: str, request: SubagentRequest, timeout: float | None) -> None:
    import asyncio

    pb: Any = ctx.pegboard
    runs = pb.stash.setdefault(RUNS, {})
    try:
        final = await asyncio.wait_for(ask_host(ctx, "run_subagent", request=request), timeout or None)
        runs[run_id].update(status="ok", result=str(final))
    except TimeoutError:
        runs[run_id].update(status="timeout")
    except Exception as exc:
        runs[run_id].update(status="error", error=str(exc))
    if ctx.session_id and has_host_service(pb, "deliver_message"):
        text = f"[{request.description or run_id}] {runs[run_id]['status']}: {runs[run_id].get('result', '')}"
        try:
            await ask_host(ctx, "deliver_message", request=MessageDelivery(
                ctx.session_id, text, sender=request.subagent_type, kind="announce", metadata={"runId": run_id}))
        except Exception as exc:
            runs[run_id]["announce_error"] = str(exc)


@tool(name="sessions_spawn", groups=["sessions", "pegboard"],
    usage="Start a sub-agent run in the background.")
async def sessions_spawn(input: SpawnInput, ctx: ToolContext) -> ToolResult:
    """Start a sub-agent run and return at once (status "accepted"); its result is announced back to
    this chat when it finishes."""
    import asyncio

    pb: Any = ctx.pegboard
    allowed, allow_any = allowed_agents(ctx)
    target = input.agentId or allowed[0]
    if not allow_any and target not in allowed:
        return ToolResult.refusal("denied", f"agent {target!r} is not in subagents.allowAgents; allowed: "
                                  f"{', '.join(allowed)}", error_kind="not_allowed")
    definition = SubagentDef(target, source="spawn")
    request = _request(ctx, definition, input.task, input.label or "", input.model)
    run_id = f"run_{secrets.token_hex(6)}"
    pb.stash.setdefault(RUNS, {})[run_id] = {"status": "running", "agentId": target, "label": input.label}
    task = asyncio.get_running_loop().create_task(_run_spawned(ctx, run_id, request, input.runTimeoutSeconds))
    pb.stash[RUNS][run_id]["_task"] = task
    return ToolResult.from_text(f"Accepted: run {run_id} started for agent {target}; its result will be announced.",
                                structured={"status": "accepted", "runId": run_id, "agentId": target})


class AgentsListInput(BaseModel):
    pass


@tool(
    name="agents_list", groups=["sessions", "pegboard"], read_only=True,
    usage="List the agent ids sessions_spawn may use.",
)
async def agents_list(input: AgentsListInput, ctx: ToolContext) -> ToolResult:
    """List the agent ids this session may address with sessions_spawn."""
    allowed, allow_any = allowed_agents(ctx)
    text = "Agents you may spawn: " + ", ".join(allowed) + (" (any configured agent)" if allow_any else "")
    return ToolResult.from_text(text, structured={"agents": allowed, "allowAny": allow_any})


@hookimpl
def pegboard_ready(pegboard: Pegboard) -> None:
    check = unavailable_without(pegboard, "run_subagent", "run subagents")
    for item in (agent_tool, sessions_spawn):
        pegboard.add_tool(dataclasses.replace(item, availability=check), owner=OWNER)
    pegboard.add_tool(agents_list, owner=OWNER)


__all__ = ["SubagentDef", "agent_tool", "agents_list", "definitions", "sessions_spawn", "subagent_tools"]
