"""``CronCreate``, ``CronList``, ``CronDelete`` and ``ScheduleWakeup``: prompts scheduled in the
current session, delivered by the scheduler through the host's ``deliver_message`` hook."""

from __future__ import annotations

from pydantic import BaseModel, Field

from pegboard import Session, ToolContext, ToolResult, tool
from pegboard_cron.expression import CronExpression, CronExpressionError
from pegboard_cron.jobs import JOBS, WAKEUP_ID, Job, format_seconds, iso, new_job_id, parse_time
from pegboard_cron.scheduler import Scheduler, scheduler
from pegboard_cron.settings import DAY, settings
from pegboard_toolkit import tool_failure

MIN_WAKEUP = 60
MAX_WAKEUP = 3600
GROUPS = ["automation", "pegboard"]


def session_of(ctx: ToolContext) -> Session | ToolResult:
    if ctx.session is None or ctx.pegboard is None:
        return tool_failure("scheduling needs a session (open one with Pegboard.session)", "no_session")
    return ctx.session


def invalid(message: str) -> ToolResult:
    """A refusal of what the model sent: reason and ``error_kind`` ``invalid_input``."""
    return ToolResult.refusal("invalid_input", message, error_kind="invalid_input")


def sched(ctx: ToolContext) -> Scheduler:
    if ctx.pegboard is None:
        raise RuntimeError("scheduling needs a context built by Pegboard")
    return scheduler(ctx.pegboard)


def room_for_one_more(ctx: ToolContext, session: Session) -> ToolResult | None:
    limit = settings(ctx).maxJobs
    if len(session.state.map(JOBS)) >= limit:
        return tool_failure(f"this session already holds {limit} scheduled jobs (tools.cron.maxJobs); delete one "
                            "with CronDelete first", "too_many_jobs")
    return None


def save(ctx: ToolContext, session: Session, job: Job) -> None:
    """Store ``job`` and make sure the scheduler watches its session (and wakes up for it)."""
    session.state.map(JOBS)[job.id] = job
    sched(ctx).watch(session)


class CronCreateInput(BaseModel):
    cron: str = Field(
        min_length=1,
        description="When: a five-field cron expression in local time (minute hour day-of-month month "
        "day-of-week; '*/5 * * * *' every five minutes, '30 9 * * 1-5' at 9:30 on weekdays), or an ISO 8601 "
        "time ('2026-12-01T09:30') for a one-shot.",
    )
    prompt: str = Field(min_length=1, description="The prompt to run when the job fires.")
    recurring: bool | None = Field(
        default=None,
        description="true (the default for an expression): fire at every match until deleted or expired; false: "
        "fire once at the next match, then delete the job. A time is always one-shot.",
    )


@tool(name="CronCreate", groups=GROUPS,
      usage="Schedule a prompt in this session: recurring (cron expression) or one-shot.")
async def cron_create(input: CronCreateInput, ctx: ToolContext) -> ToolResult:
    """Schedule a prompt to run later in this session, on a five-field cron expression (recurring) or
    once. Jobs belong to the session: they fire while it is open and come back when it is resumed,
    unless they expired. Recurring jobs expire after 7 days by default (their last run is the last
    one due before then). Returns the job id for CronDelete."""
    session = session_of(ctx)
    if isinstance(session, ToolResult):
        return session
    full = room_for_one_more(ctx, session)
    if full is not None:
        return full
    found = sched(ctx)
    now = found.clock.now()
    lifetime = settings(ctx).recurringExpiryDays * DAY
    at = parse_time(input.cron, found.tz)
    if at is not None:
        if input.recurring:
            return invalid("a one-shot time cannot recur; give a cron expression for a recurring job")
        if at <= now:
            return invalid(f"{input.cron} has already passed (it is now {iso(now, found.tz)})")
        job = Job(id=new_job_id(session.state), kind="at", at=at, prompt=input.prompt, recurring=False, created=now,
                  next_run=at, expires=at + lifetime)
    else:
        try:
            expression = CronExpression.parse(input.cron)
        except CronExpressionError as exc:
            return invalid(f"cron: {exc}")
        first = expression.next_after(now, found.tz)
        if first is None:
            return invalid(f"cron: {expression} never fires (no such date)")
        recurring = input.recurring is not False
        expires = (now if recurring else first) + lifetime
        job = Job(id=new_job_id(session.state), kind="cron", expr=str(expression), prompt=input.prompt,
                  recurring=recurring, created=now, next_run=first, expires=expires)
    save(ctx, session, job)
    info = job.public(found.tz)
    kind = "Recurring" if job.recurring else "One-shot"
    until = f"; it expires at {info['expiresAt']}" if job.recurring else ""
    return ToolResult.from_text(f"{kind} job {job.id} scheduled ({info['schedule']}); next run at "
                                f"{info['nextRun']}{until}.", structured=info)


class CronListInput(BaseModel):
    pass


@tool(name="CronList", groups=GROUPS, read_only=True, usage="List this session's scheduled jobs.")
async def cron_list(input: CronListInput, ctx: ToolContext) -> ToolResult:
    """List every job scheduled in this session (CronCreate, ScheduleWakeup and cron jobs), with its
    id, schedule, next run and prompt."""
    session = session_of(ctx)
    if isinstance(session, ToolResult):
        return session
    tz = sched(ctx).tz
    jobs = sorted((j for _id, j in session.state.map(JOBS).items()), key=lambda j: (j.next_run is None, j.next_run))
    rows = [j.public(tz) for j in jobs]
    lines = [f"{r['id']}  {r['schedule']}  next {r['nextRun'] or '-'}  {str(r['prompt'])[:80]}" for r in rows]
    return ToolResult.from_text("\n".join(lines) or "No scheduled jobs.", structured={"jobs": rows})


class CronDeleteInput(BaseModel):
    id: str = Field(min_length=1, description="The job id CronCreate returned (see CronList).")


@tool(name="CronDelete", groups=GROUPS, usage="Cancel a scheduled job by id.")
async def cron_delete(input: CronDeleteInput, ctx: ToolContext) -> ToolResult:
    """Cancel a job scheduled in this session, by the id CronCreate returned."""
    session = session_of(ctx)
    if isinstance(session, ToolResult):
        return session
    jobs = session.state.map(JOBS)
    if input.id not in jobs:
        there = ", ".join(jobs.keys()) or "none"
        return tool_failure(f"no scheduled job {input.id!r} in this session (jobs: {there})", "not_found")
    del jobs[input.id]
    sched(ctx).poke()
    return ToolResult.from_text(f"Cancelled job {input.id}.", structured={"id": input.id, "deleted": True})


class ScheduleWakeupInput(BaseModel):
    delaySeconds: float | None = Field(
        default=None, description=f"Seconds until the next iteration, {MIN_WAKEUP}-{MAX_WAKEUP} (a minute to an "
        "hour; values outside are brought into that range). Required unless stop is true.")
    prompt: str | None = Field(default=None, description="The prompt to run on waking (the loop's prompt). "
                               "Required unless stop is true.")
    reason: str | None = Field(default=None, description="Why this delay, in a few words, for the user.")
    stop: bool = Field(default=False, description="true: end the loop instead; cancels the pending wakeup.")


@tool(name="ScheduleWakeup", groups=GROUPS,
      usage="At the end of a self-paced loop iteration, choose when the next one runs (or stop the loop).")
async def schedule_wakeup(input: ScheduleWakeupInput, ctx: ToolContext) -> ToolResult:
    """Schedule the next iteration of a self-paced loop, between one minute and one hour from now; call
    it at the end of each iteration. A new call replaces the pending wakeup. To end the loop, call it
    with stop: true, which cancels the pending wakeup."""
    session = session_of(ctx)
    if isinstance(session, ToolResult):
        return session
    jobs = session.state.map(JOBS)
    if input.stop:
        pending = WAKEUP_ID in jobs
        if pending:
            del jobs[WAKEUP_ID]
            sched(ctx).poke()
        text = "Loop stopped; the pending wakeup was cancelled." if pending else "Loop stopped; no wakeup was pending."
        return ToolResult.from_text(text, structured={"stopped": True, "cancelled": pending})
    missing = [name for name, value in (("delaySeconds", input.delaySeconds), ("prompt", input.prompt))
               if value is None or value == ""]
    if missing:
        return invalid(f"{' and '.join(missing)} required unless stop is true")
    if WAKEUP_ID not in jobs:
        full = room_for_one_more(ctx, session)
        if full is not None:
            return full
    asked = float(input.delaySeconds or 0)
    delay = min(MAX_WAKEUP, max(MIN_WAKEUP, asked))
    found = sched(ctx)
    now = found.clock.now()
    job = Job(id=WAKEUP_ID, kind="at", source="ScheduleWakeup", at=now + delay, prompt=str(input.prompt),
              recurring=False, created=now, next_run=now + delay, expires=now + delay + DAY, reason=input.reason)
    save(ctx, session, job)
    note = f" ({asked:g} s is outside {MIN_WAKEUP}-{MAX_WAKEUP} s)" if delay != asked else ""
    text = f"Next iteration in {format_seconds(delay)}{note}, at {iso(job.next_run, found.tz)}."
    return ToolResult.from_text(text, structured={**job.public(found.tz), "delaySeconds": delay,
                                                  "reason": input.reason})


TOOLS = (cron_create, cron_list, cron_delete, schedule_wakeup)

__all__ = ["TOOLS", "cron_create", "cron_delete", "cron_list", "invalid", "schedule_wakeup"]
