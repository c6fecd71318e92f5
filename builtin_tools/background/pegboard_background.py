"""The background-task tools: ``process`` (as in OpenClaw), ``TaskOutput`` and ``TaskStop`` (as in Fuxi Code).

All three work on the session's one task table (``pegboard_toolkit.tasks``), which Bash
(``run_in_background``), exec (``background`` / ``yieldMs``), Monitor and background subagents
(``Agent`` with ``run_in_background``, ``sessions_spawn``, ``background_job``) fill. ``process``
sees only the calling agent's tasks; TaskOutput and TaskStop see the session's. An unknown
id is an error that lists the running tasks by id and description.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, model_validator

from pegboard import ConfigSectionRegister, ToolContext, ToolRegister, ToolResult, hookimpl, tool
from pegboard_toolkit.runtime_config import BACKGROUND_SECTION

if TYPE_CHECKING:
    from pegboard_toolkit.tasks import TaskRecord, TaskTable

DEFAULT_LOG_LINES = 200
DEFAULT_WAIT_MS = 30_000
MAX_WAIT_MS = 600_000


def _with_lost(table: TaskTable, result: ToolResult) -> ToolResult:
    notice = table.take_lost_notice()
    if notice:
        from pegboard import TextBlock

        result.content.append(TextBlock(text=notice))
        result.metadata["lost_tasks"] = notice
    return result


def _unknown(table: TaskTable, task_id: str, records: list[TaskRecord] | None = None) -> ToolResult:
    running = [r for r in (records if records is not None else table.all()) if r.running]
    if running:
        listing = "\n".join(f"- {r.id}: {r.description or r.command}" for r in running)
        message = f"No task found with ID {task_id}. Running tasks:\n{listing}"
    else:
        message = f"No task found with ID {task_id}. No background tasks are running."
    return ToolResult.error(message, error_kind="unknown_task", running=[r.id for r in running])


def _tail_output(table: TaskTable, record: TaskRecord, cap: int) -> tuple[str, bool]:
    """The end of a task's output, at most ``cap`` characters, and whether earlier output was left out."""
    size = table.output_size(record)
    start = max(0, size - cap * 4)
    text, _end = table.read_output(record, start, cap * 4 + 4)
    cut = start > 0 or len(text) > cap
    return (text[-cap:] if cut else text), cut


# --------------------------------------------------------------------------- process


class ProcessInput(BaseModel):
    action: Literal["list", "poll", "log", "write", "kill", "clear", "remove"] = Field(
        description="list: your background sessions; poll: new output and exit status; log: lines by "
        "offset/limit (the last lines by default); write: send data to stdin; kill: stop it; clear: forget "
        "every finished session; remove: stop and forget one session."
    )
    sessionId: str | None = Field(
        default=None, description="The session id exec returned (all actions but list/clear)."
    )
    data: str | None = Field(default=None, description="Text to write to stdin (write).")
    eof: bool = Field(default=False, description="Close stdin after writing (write).")
    offset: int | None = Field(
        default=None, ge=0, description="Lines to skip from the start (log); omit for the last lines."
    )
    limit: int | None = Field(default=None, ge=1, description=f"Lines to return (log, default {DEFAULT_LOG_LINES}).")

    @model_validator(mode="after")
    def _needs_id(self) -> ProcessInput:
        if self.action not in ("list", "clear") and not self.sessionId:
            raise ValueError(f"action {self.action!r} needs a sessionId")
        if self.action == "write" and self.data is None and not self.eof:
            raise ValueError("write needs data (or eof: true)")
        return self


def _log_lines(path: str, offset: int | None, limit: int, cap: int) -> tuple[list[str], int]:
    """Lines of a possibly huge file without holding it: a window or the last ``limit``."""
    total = 0
    window: deque[str] | list[str] = deque(maxlen=limit) if offset is None else []
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            while piece := fh.readline(cap):
                line = piece
                while not piece.endswith("\n") and (piece := fh.readline(cap)):
                    pass  # the rest of an over-long line: skipped, never held
                total += 1
                if offset is None or offset < total <= offset + limit:
                    window.append(line.rstrip("\n"))
    except OSError:
        return [], 0
    return list(window), total


@tool(
    name="process",
    groups=["runtime", "terminal", "pegboard"],
    usage="Manage background exec sessions: list, poll, log, write, kill, clear, remove.",
)
async def process(input: ProcessInput, ctx: ToolContext) -> ToolResult:
    """Manage background exec sessions of this agent: `list` them, `poll` for new output and the
    exit status, read the `log` by line offset/limit (omit offset for the last lines), `write`
    to stdin, `kill`, `clear` finished sessions, or `remove` one."""
    from pegboard_toolkit.shell import ShellSettings
    from pegboard_toolkit.tasks import TaskError, TaskTable

    table = TaskTable.of(ctx)
    agent = ctx.selection.agent
    mine = table.all(agent)
    cap = ShellSettings.load(ctx).max_output_chars
    if input.action == "list":
        rows = [r.summary() for r in mine]
        lines = [
            f"{r.id} [{r.status}{'' if r.exit_code is None else f', exit {r.exit_code}'}] {r.description or r.command}"
            for r in mine
        ]
        return _with_lost(
            table, ToolResult.from_text("\n".join(lines) or "No background sessions.", structured={"sessions": rows})
        )
    if input.action == "clear":
        done = [r for r in mine if not r.running]
        for r in done:
            table.remove(r.id)
        return _with_lost(
            table,
            ToolResult.from_text(
                f"Cleared {len(done)} finished sessions.", structured={"cleared": [r.id for r in done]}
            ),
        )
    task_id = input.sessionId or ""
    record = next((r for r in mine if r.id == task_id), None)
    if record is None:
        return _unknown(table, task_id, mine)
    if input.action == "poll":
        # the status first: a task is marked ended only after all its output reached the file,
        # so output read after an ended status is complete (read before, the end could pass it)
        record = table.get(record.id) or record
        size = table.output_size(record)
        text, end = table.read_output(record, record.poll_offset, min(size - record.poll_offset, cap * 4) or 1)
        more = len(text) > cap
        if more:
            text = text[:cap]
            end = record.poll_offset + len(text.encode("utf-8"))
        more = more or end < size
        table.mark_polled(record.id, end)
        message = text or "(no new output)"
        if not record.running:
            message += f"\nProcess exited: {record.status}" + (
                "" if record.exit_code is None else f", exit code {record.exit_code}"
            )
        return _with_lost(
            table,
            ToolResult.from_text(
                message,
                structured={
                    "sessionId": record.id,
                    "status": record.status,
                    "exitCode": record.exit_code,
                    "output": text,
                    "more": more,
                    "output_file": record.output_file,
                },
            ),
        )
    if input.action == "log":
        limit = input.limit or DEFAULT_LOG_LINES
        lines, total = _log_lines(record.output_file, input.offset, limit, cap)
        return _with_lost(
            table,
            ToolResult.from_text(
                "\n".join(lines) or "(no output)",
                structured={
                    "sessionId": record.id,
                    "status": record.status,
                    "lines": lines,
                    "total_lines": total,
                    "offset": input.offset if input.offset is not None else max(0, total - len(lines)),
                },
            ),
        )
    if input.action == "write":
        try:
            await table.write(record.id, (input.data or "").encode("utf-8"), eof=input.eof)
        except (TaskError, OSError) as exc:
            return ToolResult.error(str(exc), error_kind="write_failed")
        return ToolResult.from_text(
            f"Wrote {len((input.data or '').encode('utf-8'))} bytes to {record.id}"
            + (" and closed its stdin." if input.eof else ".")
        )
    if input.action == "kill":
        if not record.running:
            return ToolResult.from_text(
                f"Session {record.id} is not running ({record.status}).", structured=record.summary()
            )
        stopped = await table.stop(record.id, "killed with process kill")
        return ToolResult.from_text(f"Killed {record.id}.", structured=(stopped or record).summary())
    # remove
    if record.running:
        await table.stop(record.id, "removed with process remove")
    table.remove(record.id)
    return ToolResult.from_text(f"Removed {record.id}.", structured={"removed": record.id})


# --------------------------------------------------------------------------- TaskOutput


class TaskOutputInput(BaseModel):
    task_id: str = Field(description="The id of the background task.")
    block: bool = Field(default=True, description="Wait for the task to finish.")
    timeout: int = Field(
        default=DEFAULT_WAIT_MS, ge=0, le=MAX_WAIT_MS, description="How long to wait, in milliseconds."
    )


@tool(
    name="TaskOutput",
    aliases=["BashOutput"],
    groups=["runtime", "terminal", "pegboard"],
    read_only=True,
    usage="Get a background task's output (or Read its output file).",
)
async def task_output(input: TaskOutputInput, ctx: ToolContext) -> ToolResult:
    """Get the output of a background task (a Bash run_in_background command, an exec session, a
    Monitor, a background agent's final report), waiting for it to finish when block is true (up
    to timeout milliseconds). Reading the task's output file with Read works as well."""
    from pegboard_toolkit.shell import ShellSettings
    from pegboard_toolkit.tasks import TaskTable

    table = TaskTable.of(ctx)
    record = table.lookup(input.task_id)
    if record is None:
        return _with_lost(table, _unknown(table, input.task_id))
    status = "success"
    if record.running:
        if input.block:
            finished = await table.wait(record.id, input.timeout / 1000)
            status = "success" if finished else "timeout"
        else:
            status = "not_ready"
    record = table.get(record.id) or record
    cap = ShellSettings.load(ctx).max_output_chars
    output, cut = _tail_output(table, record, cap)
    task = {
        "task_id": record.id,
        "task_type": record.type,
        "status": record.status,
        "description": record.description,
        "command": record.command,
        "output": output,
        "exitCode": record.exit_code,
        "output_file": record.output_file,
        "truncated": cut,
        "note": record.note,
    }
    head = (
        f"[{record.id}: {record.status}" + ("" if record.exit_code is None else f", exit code {record.exit_code}") + "]"
    )
    if record.note and not record.running:
        head += f" ({record.note})"
    if status == "timeout":
        head += " still running after the wait"
    if cut:
        head += f"\n[earlier output left out; the whole output is in {record.output_file}]"
    return _with_lost(
        table,
        ToolResult.from_text(f"{head}\n{output}".rstrip("\n"), structured={"retrieval_status": status, "task": task}),
    )


# --------------------------------------------------------------------------- TaskStop


class TaskStopInput(BaseModel):
    task_id: str | None = Field(
        default=None, description="The id of the background task to stop (or a background agent's name)."
    )
    shell_id: str | None = Field(default=None, description="Deprecated: use task_id.")

    @model_validator(mode="after")
    def _one_id(self) -> TaskStopInput:
        if not (self.task_id or self.shell_id):
            raise ValueError("give task_id")
        return self


@tool(
    name="TaskStop",
    aliases=["KillShell", "KillBash"],
    groups=["runtime", "terminal", "pegboard"],
    usage="Stop a running background task by id.",
)
async def task_stop(input: TaskStopInput, ctx: ToolContext) -> ToolResult:
    """Stop a running background task (a background Bash command, an exec session, a Monitor or a
    background agent) by its id, or a background agent by its name; a process's whole process
    group is terminated."""
    from pegboard_toolkit.tasks import TaskTable

    table = TaskTable.of(ctx)
    task_id = input.task_id or input.shell_id or ""
    record = table.lookup(task_id)
    if record is None:
        return _with_lost(table, _unknown(table, task_id))
    task_id = record.id
    if record.status == "lost":
        return _with_lost(table, ToolResult.refusal(
            "tool_error", f"Task {task_id} is lost: it {record.note}.", error_kind="lost", status="lost"
        ))
    if not record.running:
        return ToolResult.refusal(
            "tool_error", f"Task {task_id} is not running (status: {record.status}).", error_kind="not_running"
        )
    stopped = await table.stop(task_id, "stopped with TaskStop") or record
    if stopped.status == "lost":
        return ToolResult.refusal(
            "tool_error", f"Task {task_id} is lost: it {stopped.note}.", error_kind="lost", status="lost"
        )
    if stopped.running:
        return ToolResult.refusal(
            "tool_error", f"Task {task_id} runs in another process; stop it from there.", error_kind="not_here"
        )
    data: dict[str, Any] = {
        "message": f"Successfully stopped task: {task_id} ({record.command})",
        "task_id": task_id,
        "task_type": record.type,
        "command": record.command,
        "status": stopped.status,
    }
    return _with_lost(table, ToolResult.from_text(data["message"], structured=data))


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(process)
    register(task_output)
    register(task_stop)


@hookimpl
def register_config_sections(register: ConfigSectionRegister) -> None:
    register(BACKGROUND_SECTION)
