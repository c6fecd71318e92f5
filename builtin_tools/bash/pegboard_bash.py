"""The built-in ``Bash`` tool: one shell command per call, in its own process group.

Limits, cwd carry-over, the shell snapshot and background tasks come from
``pegboard-toolkit`` (``pegboard_toolkit.shell`` and ``pegboard_toolkit.tasks``); this module
is the tool's face: its input, its permission subjects and its result.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from pegboard import ConfigSectionRegister, Subjects, ToolContext, ToolRegister, ToolResult, hookimpl, tool
from pegboard_toolkit.availability import bash_missing
from pegboard_toolkit.runtime_config import BASH_SECTION, HARD_MAX_OUTPUT


class BashInput(BaseModel):
    command: str = Field(description="The command to run.")
    timeout: int | None = Field(
        default=None,
        ge=1,
        description="Timeout in milliseconds (default 120000, at most 600000; larger values are clamped).",
    )
    description: str | None = Field(default=None, description="What the command does, in 5-10 words.")
    run_in_background: bool = Field(
        default=False, description="Run in the background; read its output later with TaskOutput or Read."
    )
    dangerouslyDisableSandbox: bool = Field(
        default=False, description="Run outside the sandbox (only when the sandbox is on; always asks)."
    )



def subjects(input: BashInput) -> Subjects:
    return Subjects(command=input.command)


@tool(
    name="Bash",
    groups=["runtime", "terminal", "pegboard"],
    permission_family="Bash",
    requires_permission=True,
    permission_subjects=subjects,
    availability=bash_missing,
    destructive=True,
    open_world=True,
    max_result_chars=HARD_MAX_OUTPUT + 10_000,
    usage="Run shell commands; prefer Read/Grep/Glob for files. `cd` carries over; exports do not.",
)
async def bash(input: BashInput, ctx: ToolContext) -> ToolResult:
    """Run a bash command in its own process and return its output (stdout and stderr merged, in
    order). The working directory carries over between calls while it stays inside the project
    or an additional working directory; exported variables do not. Aliases and functions from the
    user's shell startup file are available. Commands time out after 2 minutes by default (timeout
    up to 10 minutes); output past 30,000 characters is saved to a file whose path and a preview
    are returned. Exit code 1 of grep/rg/diff means no matches or differences, not failure. Set
    run_in_background for servers and watchers: the result has a task id and the output file."""
    from pegboard_toolkit.shell import ShellSettings, run_shell, shell_cwd
    from pegboard_toolkit.shelltool import empty_command, foreground_result, start_background

    if (refusal := empty_command(input.command)) is not None:
        return refusal
    settings = ShellSettings.load(ctx)
    if input.run_in_background:
        record = await start_background(
            ctx, kind="bash", command=input.command, description=input.description or input.command[:80]
        )
        if isinstance(record, ToolResult):
            return record
        text = f"Command running in background with ID: {record.id}. Output is being written to: {record.output_file}"
        return ToolResult.from_text(
            text,
            structured={
                "stdout": "",
                "stderr": "",
                "interrupted": False,
                "isImage": False,
                "backgroundTaskId": record.id,
                "output_file": record.output_file,
                "exit_code": None,
                "output": "",
                "truncated": False,
                "wall_time_seconds": 0.0,
                "cwd": str(shell_cwd(ctx, settings)),
            },
        )
    run = run_shell(ctx, input.command, settings=settings, timeout_s=settings.timeout_seconds(input.timeout))
    return await foreground_result(ctx, "Bash", input.command, settings, run)


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(bash)


@hookimpl
def register_config_sections(register: ConfigSectionRegister) -> None:
    register(BASH_SECTION)
