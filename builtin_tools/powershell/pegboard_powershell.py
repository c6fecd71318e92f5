"""The built-in ``PowerShell`` tool: one PowerShell command per call, like Bash.

Opt-in (``PEGBOARD_USE_POWERSHELL_TOOL=1``, Fuxi Code's ``FUXI_CODE_USE_POWERSHELL_TOOL=1``,
or ``tools.powershell.enabled``), and available only where ``pwsh`` 7+ is on ``PATH``.
Limits, cwd carry-over and exit-code meaning are Bash's; the run is in
``pegboard_powershell_run``.
"""

from __future__ import annotations

import os
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from pegboard import (
    ConfigSection,
    ConfigSectionRegister,
    Subjects,
    ToolContext,
    ToolRegister,
    ToolResult,
    Widens,
    hookimpl,
    tool,
)
from pegboard_powershell_run import pwsh_missing
from pegboard_toolkit.runtime_config import HARD_MAX_OUTPUT, section


class PowerShellConfig(BaseModel):
    """``tools.powershell``."""

    model_config = ConfigDict(extra="allow")

    enabled: Annotated[bool | None, Widens.when_true("lets the agent run PowerShell commands")] = Field(
        default=None, description="Switch the tool on (else the environment variable)."
    )
    respectExecutionPolicy: Annotated[bool | None, Widens.when_false("bypasses the execution policy")] = Field(
        default=None, description="Do not pass -ExecutionPolicy Bypass; the machine's policy applies."
    )


POWERSHELL_SECTION = ConfigSection(
    "tools.powershell", PowerShellConfig, description="PowerShell: opt-in switch and execution policy"
)


class PowerShellInput(BaseModel):
    command: str = Field(description="The PowerShell command to run.")
    timeout: int | None = Field(
        default=None, ge=1, description="Timeout in milliseconds (default 120000, at most 600000)."
    )
    description: str | None = Field(default=None, description="What the command does, in 5-10 words.")
    dangerouslyDisableSandbox: bool = Field(
        default=False, description="Run outside the sandbox (only when the sandbox is on; always asks)."
    )



def subjects(input: PowerShellInput) -> Subjects:
    return Subjects(command=input.command)


@tool(
    name="PowerShell",
    groups=["runtime", "pegboard"],
    permission_family="PowerShell",
    requires_permission=True,
    permission_subjects=subjects,
    availability=pwsh_missing,
    destructive=True,
    open_world=True,
    max_result_chars=HARD_MAX_OUTPUT + 10_000,
    usage="Run PowerShell commands (pwsh). `Set-Location` carries over like `cd` in Bash.",
)
async def powershell(input: PowerShellInput, ctx: ToolContext) -> ToolResult:
    """Run a PowerShell command with pwsh (no profile, non-interactive) and return its output.
    The working directory carries over between calls while it stays inside the project; the
    timeout and output limits are Bash's. Exit code 1 of grep/git grep/git diff is not failure."""
    from pegboard_powershell_run import find_pwsh, opted_in, respects_policy, run_powershell
    from pegboard_toolkit.shell import ShellSettings
    from pegboard_toolkit.shelltool import empty_command, foreground_result

    conf = section(ctx, "tools.powershell")
    env = {**os.environ, **dict(ctx.env)}
    if not opted_in(env, conf):
        return ToolResult.error(
            "the PowerShell tool is opt-in: set PEGBOARD_USE_POWERSHELL_TOOL=1 (or "
            "FUXI_CODE_USE_POWERSHELL_TOOL=1) or tools.powershell.enabled = true", error_kind="not_enabled")
    if (refusal := empty_command(input.command)) is not None:
        return refusal
    pwsh, why = find_pwsh(env.get("PATH", ""))
    if pwsh is None:
        return ToolResult.error(why or "pwsh is not available", error_kind="unavailable")
    settings = ShellSettings.load(ctx)
    run = run_powershell(ctx, input.command, pwsh=pwsh, settings=settings,
                         timeout_s=settings.timeout_seconds(input.timeout), respect_policy=respects_policy(env, conf))
    return await foreground_result(ctx, "PowerShell", input.command, settings, run)


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(powershell)


@hookimpl
def register_config_sections(register: ConfigSectionRegister) -> None:
    register(POWERSHELL_SECTION)
