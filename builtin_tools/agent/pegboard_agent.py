"""``Agent`` (alias ``Task``, ``delegate_task``), ``sessions_spawn``, ``agents_list`` and the
background-agent tools ``background_job``, ``subagent_list``, ``subagent_history``, ``subagent_cancel``.

A subagent runs in the host: Pegboard picks its definition, computes the tool set the policy
gives it and hands both to the ``run_subagent`` hook, which returns the subagent's final text.
A background subagent (``run_in_background``, ``sessions_spawn``, ``background_job``) is a task
of the session's one task table (``pegboard_toolkit.tasks``), next to background commands, so
TaskOutput and TaskStop work on it; it runs on the host's event loop, and its permission asks
go to the parent session's approver, named by the subagent.
Definitions come from config (``subagents.<name>``: ``description``, ``prompt``, ``tools``,
``disallowedTools``, ``model``, ``maxTurns``) and from ``agents/*.md`` files with front matter
(user ``<config dir>/agents``, project ``<project>/.pegboard/agents``; the project wins).
A subagent never gets ``Agent`` or the other spawning and child-managing tools: subagents do
not spawn subagents.
"""

from __future__ import annotations

import dataclasses
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from pegboard import (
    MessageDelivery,
    NeedsHost,
    Pegboard,
    PermissionDecision,
    PermissionUpdate,
    StashKey,
    SubagentRequest,
    SystemClock,
    ToolCall,
    ToolContext,
    ToolRegister,
    ToolResult,
    ask_host,
    find_project_root,
    has_host_service,
    hookimpl,
    tool,
    user_config_dir,
)
from pegboard_skill import SkillFormatError, parse_skill_md, split_list

if TYPE_CHECKING:
    from pegboard_toolkit.tasks import TaskRecord

OWNER = "agent"
GENERAL = "general-purpose"
DEFAULT_MAX_TURNS = 50
#: the clock background runs time their deadline with (a ``pegboard.Clock``); tests put a fake one here
CLOCK: StashKey[Any] = StashKey("pegboard-agent-clock")
#: the tools that start or manage child agents: a subagent has no children, so it gets none of them
SELF_TOOLS = {"agent", "task", "delegatetask", "sessionsspawn", "backgroundjob", "subagentlist", "subagenthistory",
              "subagentcancel"}


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
    run_in_background: bool = Field(
        default=False, description="Run it as a background task and return at once with its task id (read its "
        "report with TaskOutput, stop it with TaskStop)."
    )


def parent_approver(ctx: ToolContext, name: str) -> Any:
    """An approver for the subagent's session that asks the parent session's approver, the
    ask's reason naming the subagent; ``None`` when the parent has none (its hosts' hooks
    then answer, with ``context.subagent`` naming who asks)."""
    parent = ctx.session
    upstream = parent.approver if parent is not None else None
    if upstream is None:
        return None

    async def approve(call: ToolCall, decision: PermissionDecision) -> Any:
        import inspect

        named = decision.model_copy(update={"reason": f"subagent {name} asks: {decision.reason}".rstrip(": ")})
        answer = upstream(call, named)
        if inspect.isawaitable(answer):
            answer = await answer
        if isinstance(answer, PermissionUpdate) and answer.approve and parent is not None:
            parent.remember(answer)
        return answer

    return approve


def _request(ctx: ToolContext, d: SubagentDef, prompt: str, description: str, model: str | None,
             *, background: bool = False) -> SubagentRequest:
    return SubagentRequest(
        subagent_type=d.name, prompt=prompt, description=description, tools=subagent_tools(ctx, d),
        max_turns=d.max_turns or DEFAULT_MAX_TURNS, model=model or d.model, system_prompt=d.prompt,
        parent_session_id=ctx.session_id, session_id=f"sub_{secrets.token_hex(12)}",
        approver=parent_approver(ctx, d.name), background=background,
    )


async def run_foreground(ctx: ToolContext, request: SubagentRequest) -> ToolResult:
    try:
        final = await ask_host(ctx, "run_subagent", request=request)
    except Exception as exc:
        return ToolResult.error(f"the subagent failed: {exc}", error_kind="host_error")
    if final is None:
        return ToolResult.error("no host ran the subagent", error_kind="not_available")
    return ToolResult.from_text(str(final), structured={
        "subagent_type": request.subagent_type, "tools": list(request.tools), "session_id": request.session_id})


async def start_background(ctx: ToolContext, request: SubagentRequest, *, kind: str = "task_notification",
                           timeout_s: float | None = None, delete_session: bool = False) -> TaskRecord:
    """Run the subagent as a task of the calling session, on the host's event loop: its final
    text becomes the task's output; when it ends, the session is told through ``deliver_message``
    (``kind``) if a host delivers, and with ``delete_session`` the subagent's stored session is
    deleted. Raises ``TaskError`` when no task can start."""
    from pegboard_toolkit.tasks import TaskTable

    table = TaskTable.of(ctx)

    async def source(line: Callable[[str], None]) -> str:
        final = await ask_host(ctx, "run_subagent", request=request)
        if final is None:
            raise RuntimeError("no host ran the subagent")
        for text in str(final).splitlines() or [""]:
            line(text)
        return "the subagent finished"

    async def announce(record: TaskRecord) -> None:
        pb: Any = ctx.pegboard
        if delete_session and request.session_id is not None and pb is not None:
            pb.session_store.delete(request.session_id)
        if not (ctx.session_id and has_host_service(ctx, "deliver_message")):
            return
        report, _end = table.read_output(record, 0, 1 << 20)
        text = f"[{record.description or record.command}] {record.status}: {report.strip() or record.note}"
        await ask_host(ctx, "deliver_message", request=MessageDelivery(
            ctx.session_id, text, sender=request.subagent_type, kind=kind,
            metadata={"task_id": record.id, "runId": record.id, "status": record.status, "note": record.note}))

    pb: Any = ctx.pegboard
    clock = (pb.stash.get(CLOCK, None) if pb is not None else None) or SystemClock()
    return await table.start_source(
        ctx, kind="agent", command=request.subagent_type, description=request.description or request.prompt[:60],
        source=source, timeout_s=timeout_s, here=True, on_exit=announce, session_id=request.session_id,
        sleep=clock.sleep,
    )


def _launched(ctx: ToolContext, record: TaskRecord, request: SubagentRequest) -> ToolResult:
    told = "You will be told when it ends; g" if has_host_service(ctx, "deliver_message") else "G"
    text = (f"Started background agent {record.id} ({request.subagent_type}: {record.description}). {told}et its "
            f"report with TaskOutput (task_id: {record.id}) or Read {record.output_file}; stop it with TaskStop.")
    return ToolResult.from_text(text, structured={
        "status": "async_launched", "task_id": record.id, "agentId": record.id, "subagent_type": request.subagent_type,
        "description": record.description, "output_file": record.output_file, "session_id": request.session_id})


def _task_failure(exc: Exception) -> ToolResult:
    return ToolResult.error(f"the background agent could not start: {exc}", error_kind="task_error")


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
    needs, and what to report back. It returns one final message; with run_in_background it runs as a
    background task and this call returns its task id at once."""
    from pegboard_toolkit.tasks import TaskError

    pb: Any = ctx.pegboard
    defs = definitions(pb)
    name = input.subagent_type or GENERAL
    if name not in defs:
        known = ", ".join(sorted(defs))
        return ToolResult.error(f"unknown subagent_type {name!r}; available: {known}",
                                  error_kind="not_found")
    request = _request(ctx, defs[name], input.prompt, input.description, input.model,
                       background=input.run_in_background)
    if not input.run_in_background:
        return await run_foreground(ctx, request)
    try:
        record = await start_background(ctx, request)
    except TaskError as exc:
        return _task_failure(exc)
    return _launched(ctx, record, request)


# --------------------------------------------------------------------------- background_job, subagent_*


class BackgroundJobInput(BaseModel):
    task: str = Field(min_length=1, description="The work for the background agent, with everything it needs.")
    description: str | None = Field(default=None, description="A short description (shown in listings).")
    subagent_type: str | None = Field(default=None, description=f"Which subagent runs it (default {GENERAL}).")
    model: str | None = Field(default=None, description="A model for it (default: its own or the host's).")


@tool(name="background_job", groups=["subagents", "pegboard"], specifier_matcher=match_agent,
      usage="Start independent background work; returns its task id at once.")
async def background_job(input: BackgroundJobInput, ctx: ToolContext) -> ToolResult:
    """Start independent work in a background agent and return its task id at once; see it with
    subagent_list, read it with subagent_history or TaskOutput, stop it with subagent_cancel."""
    from pegboard_toolkit.tasks import TaskError

    pb: Any = ctx.pegboard
    defs = definitions(pb)
    name = input.subagent_type or GENERAL
    if name not in defs:
        return ToolResult.error(f"unknown subagent_type {name!r}; available: {', '.join(sorted(defs))}",
                                  error_kind="not_found")
    request = _request(ctx, defs[name], input.task, input.description or input.task[:60], input.model,
                       background=True)
    try:
        record = await start_background(ctx, request)
    except TaskError as exc:
        return _task_failure(exc)
    return _launched(ctx, record, request)


def _agent_tasks(ctx: ToolContext) -> tuple[Any, list[TaskRecord]]:
    from pegboard_toolkit.tasks import TaskTable

    table = TaskTable.of(ctx)
    return table, [r for r in table.all() if r.type == "agent"]


def _no_such_agent(tasks: list[TaskRecord], key: str) -> ToolResult:
    running = [r for r in tasks if r.running]
    listing = "\n".join(f"- {r.id}: {r.description} ({r.command})" for r in running)
    text = f"No background agent {key!r}. " + (f"Running agents:\n{listing}" if running else "None is running.")
    return ToolResult.error(text, error_kind="unknown_task", running=[r.id for r in running])


class SubagentListInput(BaseModel):
    running_only: bool = Field(default=False, description="Only the agents still running.")


@tool(name="subagent_list", groups=["subagents", "pegboard"], read_only=True,
      usage="List this session's background agents and their status.")
async def subagent_list(input: SubagentListInput, ctx: ToolContext) -> ToolResult:
    """List the background agents of this session (oldest first) with their status."""
    _table, tasks = _agent_tasks(ctx)
    rows = [r.summary() for r in tasks if r.running or not input.running_only]
    text = "\n".join(f"{r['task_id']} [{r['status']}] {r['command']}: {r['description']}" for r in rows)
    return ToolResult.from_text(text or "No background agents.", structured={"agents": rows})


class SubagentRefInput(BaseModel):
    task_id: str = Field(min_length=1, description="The background agent's task id (or its name).")


class SubagentHistoryInput(SubagentRefInput):
    limit: int = Field(default=50, ge=1, le=500, description="The last N messages of its transcript.")
    includeTools: bool = Field(default=False, description="Include tool calls and results.")


@tool(name="subagent_history", groups=["subagents", "pegboard"], read_only=True,
      usage="Read a background agent's transcript and report so far.")
async def subagent_history(input: SubagentHistoryInput, ctx: ToolContext) -> ToolResult:
    """Read what a background agent did: its status, the messages its host recorded in its
    session, and its report once it ended."""
    from pegboard_messages import is_tool_message, transcript

    table, tasks = _agent_tasks(ctx)
    record = table.lookup(input.task_id)
    if record is None or record.type != "agent":
        return _no_such_agent(tasks, input.task_id)
    messages = transcript(ctx, record.session_id) if record.session_id else []
    messages = [m for m in messages if input.includeTools or not is_tool_message(m)][-input.limit:]
    report = "" if record.running else table.read_output(record, 0, 1 << 20)[0].strip()
    lines = [f"[{record.id}: {record.status}] {record.command}: {record.description}"]
    lines += [f"{m.get('role')}: {m.get('content')}" for m in messages] or ["(no messages recorded)"]
    if report:
        lines.append(f"Report:\n{report}")
    return ToolResult.from_text("\n".join(lines), structured={
        "task": record.summary(), "messages": messages, "report": report or None})


@tool(name="subagent_cancel", groups=["subagents", "pegboard"], usage="Stop a running background agent.")
async def subagent_cancel(input: SubagentRefInput, ctx: ToolContext) -> ToolResult:
    """Stop a running background agent by task id or name."""
    table, tasks = _agent_tasks(ctx)
    record = table.lookup(input.task_id)
    if record is None or record.type != "agent":
        return _no_such_agent(tasks, input.task_id)
    if not record.running:
        return ToolResult.error(f"Agent {record.id} is not running (status: {record.status}).",
                                  error_kind="not_running")
    stopped = await table.stop(record.id, "cancelled with subagent_cancel") or record
    return ToolResult.from_text(f"Cancelled background agent {record.id} ({record.description}).",
                                structured=stopped.summary())


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
    cleanup: Literal["delete", "keep"] = Field(default="keep", description="'delete' or 'keep' the run's session "
                                               "afterwards.")


@tool(name="sessions_spawn", groups=["sessions", "pegboard"],
    usage="Start a sub-agent run in the background.")
async def sessions_spawn(input: SpawnInput, ctx: ToolContext) -> ToolResult:
    """Start a sub-agent run and return at once (status "accepted"); its result is announced back to
    this chat when it finishes. The run is a background task: TaskOutput reads it, TaskStop stops it."""
    from pegboard_toolkit.tasks import TaskError

    allowed, allow_any = allowed_agents(ctx)
    target = input.agentId or allowed[0]
    if not allow_any and target not in allowed:
        return ToolResult.refusal("denied", f"agent {target!r} is not in subagents.allowAgents; allowed: "
                                  f"{', '.join(allowed)}", error_kind="not_allowed")
    definition = SubagentDef(target, source="spawn")
    request = _request(ctx, definition, input.task, input.label or input.task[:60], input.model, background=True)
    try:
        record = await start_background(ctx, request, kind="announce", timeout_s=input.runTimeoutSeconds or None,
                                        delete_session=input.cleanup == "delete")
    except TaskError as exc:
        return _task_failure(exc)
    return ToolResult.from_text(
        f"Accepted: run {record.id} started for agent {target}; its result will be announced.",
        structured={"status": "accepted", "runId": record.id, "agentId": target, "childSessionKey": request.session_id})


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
def register_tools(register: ToolRegister) -> None:
    needs_host = NeedsHost("run_subagent", "run subagents")
    for item in (agent_tool, sessions_spawn, background_job, subagent_list, subagent_history, subagent_cancel):
        register(dataclasses.replace(item, availability=needs_host))
    register(agents_list)


__all__ = [
    "SubagentDef",
    "agent_tool",
    "agents_list",
    "background_job",
    "definitions",
    "parent_approver",
    "sessions_spawn",
    "start_background",
    "subagent_cancel",
    "subagent_history",
    "subagent_list",
    "subagent_tools",
]
