"""The built-in ``exec`` tool: a shell command with a timeout in seconds that moves itself to the
background when it runs longer than ``yieldMs``.

It runs over the same engine as Bash (``pegboard_toolkit.shell``: snapshot, env file, cwd
carry-over, output cap and spill) and the session's task table. When the agent may not use
``process`` (the tool that polls, writes to and kills background sessions), exec runs
synchronously and ignores ``yieldMs`` and ``background``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from pegboard import ConfigSectionRegister, Subjects, ToolContext, ToolRegister, ToolResult, hookimpl, tool
from pegboard_toolkit.availability import bash_missing
from pegboard_toolkit.runtime_config import EXEC_SECTION, HARD_MAX_OUTPUT

if TYPE_CHECKING:
    from pegboard_toolkit.shell import ShellSettings
    from pegboard_toolkit.tasks import TaskTable

DEFAULT_TIMEOUT_S = 1800
DEFAULT_YIELD_MS = 10_000
TAIL_CHARS = 4_000


class ExecInput(BaseModel):
    command: str = Field(description="The shell command to run.")
    timeout: int | None = Field(
        default=None, ge=1, description=f"Kill the command after this many seconds (default {DEFAULT_TIMEOUT_S})."
    )
    yieldMs: int | None = Field(
        default=None,
        ge=0,
        description=f"Move the command to the background after this many milliseconds (default {DEFAULT_YIELD_MS}).",
    )
    background: bool = Field(default=False, description="Start in the background at once.")
    pty: bool = Field(default=False, description="Run on a pseudo-terminal, for programs that need a real TTY.")



def subjects(input: ExecInput) -> Subjects:
    return Subjects(command=input.command)


def _process_enabled(ctx: ToolContext) -> bool:
    return any(t.name.lower() == "process" for t in ctx.enabled_tools())


def _int_setting(value: object, default: int) -> int:
    try:
        number = int(str(value))
    except (TypeError, ValueError):
        return default
    return number if number >= 0 else default


@tool(
    name="exec",
    groups=["runtime", "pegboard"],
    permission_family="Bash",
    requires_permission=True,
    permission_subjects=subjects,
    availability=bash_missing,
    destructive=True,
    open_world=True,
    max_result_chars=HARD_MAX_OUTPUT + 10_000,
    usage="Run shell commands in the workspace; long ones continue in the background (see process).",
)
async def exec_(input: ExecInput, ctx: ToolContext) -> ToolResult:
    """Run a shell command in the workspace. `timeout` is in seconds (default 1800). A command
    still running after `yieldMs` milliseconds (default 10000) continues in the background and the
    result says status "running" with its sessionId; `background: true` backgrounds it at once.
    Manage background sessions with the `process` tool (poll, log, write, kill). Set `pty: true`
    for programs that need a real terminal."""
    from pegboard_toolkit.shell import ShellSettings, run_shell, tool_settings
    from pegboard_toolkit.shelltool import empty_command, foreground_result, start_background
    from pegboard_toolkit.tasks import TaskTable

    if (refusal := empty_command(input.command)) is not None:
        return refusal

    conf = tool_settings(ctx, "exec")
    timeout_s = input.timeout or _int_setting(conf.get("timeoutSec"), DEFAULT_TIMEOUT_S)
    yield_ms = input.yieldMs if input.yieldMs is not None else _int_setting(conf.get("yieldMs"), DEFAULT_YIELD_MS)
    settings = ShellSettings.load(ctx)
    ends_with_call = ctx.session is not None and ctx.session.background_refusal is not None
    if not _process_enabled(ctx) or (ends_with_call and not input.background):
        run = run_shell(ctx, input.command, settings=settings, timeout_s=timeout_s, pty=input.pty)
        result = await foreground_result(ctx, "exec", input.command, settings, run)
        if result.structured is not None:
            result.structured["status"] = "failed" if result.is_error else "completed"
        return result
    record = await start_background(
        ctx, kind="exec", command=input.command, description=input.command[:80], stdin=True, pty=input.pty,
        timeout_s=timeout_s,
    )
    if isinstance(record, ToolResult):
        return record
    table = TaskTable.of(ctx)
    finished = False if input.background else await table.wait(record.id, yield_ms / 1000)
    current = table.get(record.id) or record
    if not finished:
        text, _end = table.read_output(current, max(0, table.output_size(current) - TAIL_CHARS * 4), TAIL_CHARS * 4)
        tail = text[-TAIL_CHARS:]
        note = "started in the background" if input.background else f"still running after {yield_ms} ms"
        message = (
            f"Command {note}: sessionId {record.id}. Output goes to {record.output_file}. "
            "Use process (poll, log, write, kill) with this sessionId."
        )
        if tail:
            message += f"\nOutput so far (last {len(tail):,} characters):\n{tail}"
        return ToolResult.from_text(
            message,
            structured={
                "status": "running",
                "sessionId": record.id,
                "output_file": record.output_file,
                "tail": tail,
            },
        )
    return _finished(ctx, table, current.id, settings)


def _finished(ctx: ToolContext, table: TaskTable, task_id: str, settings: ShellSettings) -> ToolResult:
    """A command that ended within ``yieldMs``: its whole output, capped, and no task left behind."""
    from pegboard_toolkit.output import read_text_tail
    from pegboard_toolkit.shell import exit_meaning, shell_cwd
    from pegboard_toolkit.shellresult import EDGE_CHARS, spill_note

    record = table.get(task_id)
    assert record is not None
    size = table.output_size(record)
    cap = settings.max_output_chars
    text, _end = table.read_output(record, 0, cap * 4 + 4)
    truncated = len(text) > cap or size > cap * 4 + 4
    output_file = record.output_file if truncated else None
    tail: str | None = None
    if truncated:
        tail = read_text_tail(Path(record.output_file), EDGE_CHARS)
        shown = text[:EDGE_CHARS]
        body = spill_note(f"{size:,} bytes", record.output_file, None, text, tail)
    else:
        shown = body = text
    notices = []
    failed = record.status != "completed"
    if record.status == "timeout":
        notices.append(f"Command timed out after {(record.timeout_ms or 0) / 1000:g} seconds")
    elif record.exit_code not in (0, None):
        if exit_meaning(record.command, record.exit_code) is None:
            notices.append(f"Exit code {record.exit_code}")
        else:
            failed = False
    message = body.rstrip("\n")
    if notices:
        message = (message + "\n" if message else "") + "\n".join(notices)
    if output_file is None:
        table.remove(task_id)
    else:
        del table.records[task_id]
    structured = {
        "status": "failed" if failed else "completed",
        "exit_code": record.exit_code,
        "output": shown,
        "output_tail": tail,
        "truncated": truncated,
        "output_file": output_file,
        "wall_time_seconds": round((record.ended or record.started) - record.started, 3),
        "cwd": str(Path(shell_cwd(ctx, settings))),
        "interrupted": record.status == "timeout",
    }
    return ToolResult.from_text(
        message or "(no output)",
        structured=structured,
        is_error=failed,
        metadata={"error_kind": "timeout" if record.status == "timeout" else "exit_code"} if failed else {},
    )


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(exec_)


@hookimpl
def register_config_sections(register: ConfigSectionRegister) -> None:
    register(EXEC_SECTION)
