"""The ``cron`` tool (OpenClaw's): manage jobs and wakeups with actions, over the same jobs as
``CronCreate``.

Actions: ``status``, ``list``, ``add`` (a whole job object), ``update`` (``jobId`` + ``patch``),
``remove``, ``run`` (deliver now), ``runs`` (the run history) and ``wake`` (deliver a system
event now, or on the scheduler's next turn). Jobs run in the calling session (``sessionTarget:
"main"``); there is no separate gateway, so ``gatewayUrl`` is refused rather than ignored.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pegboard import Session, ToolContext, ToolResult, tool
from pegboard_cron.expression import CronExpression, CronExpressionError
from pegboard_cron.jobs import JOBS, Job, iso, ms, new_job_id, parse_time, valid_zone
from pegboard_cron.scheduler import Scheduler
from pegboard_cron.settings import settings
from pegboard_cron.tools import GROUPS, invalid, room_for_one_more, save, sched, session_of
from pegboard_toolkit import tool_failure

MIN_EVERY_MS = 60_000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AtSchedule(_Strict):
    kind: Literal["at"]
    at: str | None = Field(default=None, description="ISO 8601 time")
    atMs: int | None = Field(default=None, description="epoch milliseconds")


class EverySchedule(_Strict):
    kind: Literal["every"]
    everyMs: int = Field(ge=MIN_EVERY_MS, description="interval in milliseconds, at least one minute")
    anchorMs: int | None = Field(default=None, description="epoch milliseconds the intervals count from")


class CronSchedule(_Strict):
    kind: Literal["cron"]
    expr: str = Field(description="five-field cron expression")
    tz: str | None = Field(default=None, description="IANA time zone (default: local)")


Schedule = Annotated[AtSchedule | EverySchedule | CronSchedule, Field(discriminator="kind")]


class SystemEvent(_Strict):
    kind: Literal["systemEvent"]
    text: str = Field(min_length=1)


class AgentTurn(BaseModel):
    model_config = ConfigDict(extra="allow")
    kind: Literal["agentTurn"]
    message: str = Field(min_length=1)


Payload = Annotated[SystemEvent | AgentTurn, Field(discriminator="kind")]


class JobSpec(_Strict):
    name: str | None = None
    description: str | None = None
    schedule: Schedule
    payload: Payload
    sessionTarget: Literal["main", "isolated"] = "main"
    wakeMode: Literal["now", "next-heartbeat"] = "next-heartbeat"
    enabled: bool = True
    deleteAfterRun: bool | None = None
    agentId: str | None = None


class JobPatch(_Strict):
    name: str | None = None
    description: str | None = None
    schedule: Schedule | None = None
    payload: Payload | None = None
    sessionTarget: Literal["main", "isolated"] | None = None
    wakeMode: Literal["now", "next-heartbeat"] | None = None
    enabled: bool | None = None
    deleteAfterRun: bool | None = None


class CronInput(BaseModel):
    action: Literal["status", "list", "add", "update", "remove", "run", "runs", "wake"]
    jobId: str | None = Field(default=None, description="update, remove, run, runs: the job")
    id: str | None = Field(default=None, description="the same as jobId (accepted for compatibility)")
    job: dict[str, Any] | None = Field(
        default=None, description="add: {name?, schedule: {kind: at, at | atMs} | {kind: every, everyMs} | "
        "{kind: cron, expr, tz?}, payload: {kind: systemEvent, text} | {kind: agentTurn, message}, "
        "sessionTarget: main, enabled?, deleteAfterRun?}")
    patch: dict[str, Any] | None = Field(default=None, description="update: the fields of the job to change")
    includeDisabled: bool = Field(default=False, description="list: also disabled and finished jobs")
    mode: str | None = Field(default=None, description="run: force (default) or due; wake: now (default) or "
                             "next-heartbeat")
    text: str | None = Field(default=None, description="wake: the system event's text")
    limit: int = Field(default=20, ge=1, le=100, description="runs: the last N runs")
    gatewayUrl: str | None = Field(default=None, description="not used: jobs run in this process")
    gatewayToken: str | None = Field(default=None, description="not used")
    timeoutMs: int | None = Field(default=None, ge=0, description="not used")


def _invalid(what: str, exc: ValidationError) -> ToolResult:
    problems = "; ".join(f"{what}.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
    return invalid(problems)


def _apply_schedule(job: Job, schedule: AtSchedule | EverySchedule | CronSchedule, now: float,
                    found: Scheduler) -> Job | ToolResult:
    """``job`` with ``schedule`` and its next run, or why that schedule cannot be used."""
    if isinstance(schedule, CronSchedule):
        if schedule.tz and (why := valid_zone(schedule.tz)):
            return invalid(f"job.schedule.tz: {why}")
        try:
            expression = CronExpression.parse(schedule.expr)
        except CronExpressionError as exc:
            return invalid(f"job.schedule.expr: {exc}")
        job = job.model_copy(update={"kind": "cron", "expr": str(expression), "tz": schedule.tz, "at": None,
                                     "every": None, "recurring": True})
    elif isinstance(schedule, EverySchedule):
        anchor = schedule.anchorMs / 1000 if schedule.anchorMs is not None else now
        job = job.model_copy(update={"kind": "every", "every": schedule.everyMs / 1000, "anchor": anchor,
                                     "expr": None, "at": None, "recurring": True})
    else:
        if (schedule.at is None) == (schedule.atMs is None):
            return invalid("job.schedule: give exactly one of at (ISO 8601) and atMs")
        at = schedule.atMs / 1000 if schedule.atMs is not None else parse_time(schedule.at or "", found.tz)
        if at is None:
            return invalid(f"job.schedule.at: {schedule.at!r} is not an ISO 8601 time")
        job = job.model_copy(update={"kind": "at", "at": at, "expr": None, "every": None, "recurring": False})
    following = job.following(now, found.tz)
    if following is None:
        return invalid("job.schedule never fires after now (a past time, or no such date)")
    return job.model_copy(update={"next_run": following})


def _payload_fields(payload: SystemEvent | AgentTurn) -> dict[str, Any]:
    if isinstance(payload, SystemEvent):
        return {"prompt": payload.text, "payload_kind": "systemEvent"}
    return {"prompt": payload.message, "payload_kind": "agentTurn"}


ISOLATED = ("sessionTarget 'isolated' runs a job in a fresh agent session, which this scheduler does not do; "
            "use sessionTarget 'main' (the job's prompt is delivered to this session)")


def _listing(job: Job, found: Scheduler) -> dict[str, Any]:
    info = job.public(found.tz)
    return {**info, "jobId": job.id, "payload": {"kind": job.payload_kind, "text": job.prompt},
            "sessionTarget": "main", "deleteAfterRun": job.delete_after_run}


async def _add(ctx: ToolContext, session: Session, spec_data: dict[str, Any] | None) -> ToolResult:
    if spec_data is None:
        return invalid("add needs job: {schedule, payload, ...}")
    try:
        spec = JobSpec.model_validate(spec_data)
    except ValidationError as exc:
        return _invalid("job", exc)
    if spec.sessionTarget == "isolated":
        return tool_failure(ISOLATED, "not_supported")
    full = room_for_one_more(ctx, session)
    if full is not None:
        return full
    found = sched(ctx)
    now = found.clock.now()
    one_shot = isinstance(spec.schedule, AtSchedule)
    job = Job(id=new_job_id(session.state), kind="at", source="cron", created=now, name=spec.name,
              description=spec.description, enabled=spec.enabled,
              delete_after_run=spec.deleteAfterRun if spec.deleteAfterRun is not None else one_shot,
              **_payload_fields(spec.payload))
    placed = _apply_schedule(job, spec.schedule, now, found)
    if isinstance(placed, ToolResult):
        return placed
    save(ctx, session, placed)
    info = _listing(placed, found)
    return ToolResult.from_text(f"Added job {placed.id} ({info['schedule']}); next run at {info['nextRun']}.",
                                structured={"job": info})


async def _update(ctx: ToolContext, session: Session, job_id: str, patch_data: dict[str, Any] | None) -> ToolResult:
    if not patch_data:
        return invalid("update needs patch: the fields to change")
    try:
        patch = JobPatch.model_validate(patch_data)
    except ValidationError as exc:
        return _invalid("patch", exc)
    if patch.sessionTarget == "isolated":
        return tool_failure(ISOLATED, "not_supported")
    jobs = session.state.map(JOBS)
    job = jobs.get(job_id)
    if job is None:
        return _not_found(session, job_id)
    found = sched(ctx)
    now = found.clock.now()
    changes: dict[str, Any] = {}
    for field, attr in (("name", "name"), ("description", "description"), ("enabled", "enabled"),
                        ("deleteAfterRun", "delete_after_run")):
        value = getattr(patch, field)
        if value is not None:
            changes[attr] = value
    if patch.payload is not None:
        changes.update(_payload_fields(patch.payload))
    job = job.model_copy(update=changes)
    if patch.schedule is not None:
        placed = _apply_schedule(job, patch.schedule, now, found)
        if isinstance(placed, ToolResult):
            return placed
        job = placed
    elif patch.enabled and job.next_run is None:
        job = job.model_copy(update={"next_run": job.following(now, found.tz)})
    save(ctx, session, job)
    return ToolResult.from_text(f"Updated job {job.id}.", structured={"job": _listing(job, found)})


def _not_found(session: Session, job_id: str) -> ToolResult:
    there = ", ".join(session.state.map(JOBS).keys()) or "none"
    return tool_failure(f"no job {job_id!r} in this session (jobs: {there})", "not_found")


@tool(name="cron", groups=GROUPS,
      usage="Manage scheduled jobs and wakeups (status, list, add, update, remove, run, runs, wake).")
async def cron(input: CronInput, ctx: ToolContext) -> ToolResult:
    """Manage this session's scheduled jobs and wakeups. Actions: status, list, add (a whole job:
    schedule {kind: at|every|cron}, payload {kind: systemEvent, text} or {kind: agentTurn, message}),
    update ({jobId, patch}), remove, run (deliver now), runs (run history), wake (deliver a system
    event now, or with mode next-heartbeat on the scheduler's next turn)."""
    if input.gatewayUrl:
        return tool_failure("gatewayUrl is not used: jobs are kept and run in this process's session store; "
                            "leave gatewayUrl out", "not_supported")
    session = session_of(ctx)
    if isinstance(session, ToolResult):
        return session
    found = sched(ctx)
    jobs = session.state.map(JOBS)
    job_id = input.jobId or input.id
    action = input.action
    if action == "status":
        all_jobs = jobs.values()
        due = [j.next_run for j in all_jobs if j.enabled and j.next_run is not None]
        status = {"enabled": True, "running": found.running, "jobs": len(all_jobs),
                  "nextWakeAtMs": ms(min(due)) if due else None, "nextWake": iso(min(due), found.tz) if due else None,
                  "canDeliver": found.can_deliver(), "maxJobs": settings(ctx).maxJobs}
        return ToolResult.from_text(f"{len(all_jobs)} jobs; next wake {status['nextWake'] or '-'}.", structured=status)
    if action == "list":
        rows = [_listing(j, found) for j in jobs.values()
                if input.includeDisabled or (j.enabled and j.next_run is not None)]
        rows.sort(key=lambda r: (r["nextRunAtMs"] is None, r["nextRunAtMs"] or 0))
        lines = [f"{r['jobId']}  {r['name'] or '-'}  {r['schedule']}  next {r['nextRun'] or '-'}" for r in rows]
        return ToolResult.from_text("\n".join(lines) or "No jobs.", structured={"jobs": rows})
    if action == "add":
        return await _add(ctx, session, input.job)
    if action == "wake":
        return await _wake(ctx, session, input)
    if not job_id:
        return invalid(f"{action} needs jobId")
    if action == "update":
        return await _update(ctx, session, job_id, input.patch)
    if job_id not in jobs:
        return _not_found(session, job_id)
    if action == "remove":
        del jobs[job_id]
        found.poke()
        return ToolResult.from_text(f"Removed job {job_id}.", structured={"jobId": job_id, "removed": True})
    if action == "runs":
        kept = jobs[job_id].runs[-input.limit:]
        runs = [{"dueAtMs": ms(r.due), "ranAtMs": ms(r.ran), "late": r.late, "status": r.status, "error": r.error}
                for r in kept]
        lines = [f"{iso(r.ran, found.tz)}  {r.status}{'  late' if r.late else ''}" for r in kept]
        return ToolResult.from_text("\n".join(lines) or "No runs yet.", structured={"jobId": job_id, "runs": runs})
    mode = input.mode or "force"
    if mode not in ("force", "due"):
        return invalid(f"mode: run takes force or due, not {mode!r}")
    if not found.can_deliver():
        return tool_failure("the host does not deliver prompts (no plugin implements deliver_message)",
                            "not_available")
    if mode == "due":
        fired = [f for f in await found.run_due(session) if f.job_id == job_id]
        run = fired[0] if fired else None
        if run is None:
            return ToolResult.from_text(f"Job {job_id} is not due.", structured={"jobId": job_id, "ran": False})
    else:
        run = await found.run_now(session, job_id)
        if run is None:
            return _not_found(session, job_id)
    text = f"Ran job {job_id}: {run.status}."
    return ToolResult.from_text(text, structured={"jobId": job_id, "ran": True, "status": run.status,
                                                  "error": run.error})


async def _wake(ctx: ToolContext, session: Session, input: CronInput) -> ToolResult:
    if not input.text:
        return invalid("wake needs text: the system event to deliver")
    mode = input.mode or "now"
    if mode not in ("now", "next-heartbeat"):
        return invalid(f"mode: wake takes now or next-heartbeat, not {mode!r}")
    found = sched(ctx)
    now = found.clock.now()
    job = Job(id=new_job_id(session.state), kind="at", source="cron", at=now, next_run=now, prompt=input.text,
              payload_kind="systemEvent", recurring=False, created=now, delete_after_run=True, name="wake")
    if mode == "next-heartbeat":
        full = room_for_one_more(ctx, session)
        if full is not None:
            return full
        save(ctx, session, job)
        return ToolResult.from_text("Queued for the scheduler's next turn.", structured={"queued": True, "mode": mode})
    if not found.can_deliver():
        return tool_failure("the host does not deliver prompts (no plugin implements deliver_message)",
                            "not_available")
    session.state.map(JOBS)[job.id] = job
    run = await found.run_now(session, job.id)
    status = run.status if run is not None else "not_delivered"
    return ToolResult.from_text(f"Woke the session: {status}.", structured={"mode": mode, "status": status})


__all__ = ["CronInput", "JobPatch", "JobSpec", "cron"]
