"""What the shell tools (Bash, exec, PowerShell) do around a command: refuse an empty one,
turn a foreground run into the tool's result, and start a background task.

One place, so the three tools word their refusals alike and a change to how a run becomes a
result reaches all of them.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from pegboard import ExecError, ToolContext, ToolResult

if TYPE_CHECKING:
    from pegboard_toolkit.shell import ShellOutcome, ShellSettings
    from pegboard_toolkit.tasks import TaskRecord


def empty_command(command: str) -> ToolResult | None:
    """The refusal for a command with nothing to run, else ``None``."""
    if command.strip():
        return None
    return ToolResult.refusal("invalid_input", "command is empty; give the command to run")


async def foreground_result(
    ctx: ToolContext, tool: str, command: str, settings: ShellSettings, run: Awaitable[ShellOutcome]
) -> ToolResult:
    """Await ``run`` (``run_shell(...)`` or ``run_powershell(...)``, not started yet) and return
    ``tool``'s result; a process that cannot start is a ``spawn_failed`` refusal."""
    from pegboard_toolkit.shell import shell_cwd
    from pegboard_toolkit.shellresult import shell_result, wants_tail

    start_cwd = shell_cwd(ctx, settings)
    try:
        outcome = await run
    except (ExecError, FileNotFoundError) as exc:
        return ToolResult.error(f"could not start the command: {exc}", error_kind="spawn_failed")
    return shell_result(ctx, tool, command, outcome, start_cwd=start_cwd,
                        tail=wants_tail(ctx, tool, settings.preview_tail))


async def start_background(ctx: ToolContext, **task: Any) -> TaskRecord | ToolResult:
    """``start_shell_task(ctx, **task)``, or a ``background_start_failed`` refusal saying why not."""
    from pegboard_toolkit.tasks import TaskError, start_shell_task

    try:
        return await start_shell_task(ctx, **task)
    except (TaskError, ExecError, FileNotFoundError) as exc:
        return ToolResult.error(str(exc), error_kind="background_start_failed")


__all__ = ["empty_command", "foreground_result", "start_background"]
