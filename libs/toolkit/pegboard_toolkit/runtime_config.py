"""The settings sections of the runtime tools: ``tools.bash``, ``tools.exec``, ``tools.background``.

Bash registers ``tools.bash``, exec ``tools.exec`` and the background-task tools
``tools.background`` (``register_config_sections``), so a wrong type is an error naming the
file and key. Keys that make commands run something of the config's choosing (the env
file, the startup file, the shell) widen what an agent does: an untrusted project's values
for them are ignored. Tools read a section with :func:`section`, which also works when the
tool that registers it is not installed (it then reads the raw config).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from pegboard import NEUTRAL, ConfigSection, ToolContext, Widens
from pegboard_toolkit.availability import shell_binary

_RUNS_CODE = Widens.when_set("runs a program of the config's choosing with every command")


class BashConfig(BaseModel):
    """``tools.bash``: limits and switches of Bash (and of exec and Monitor commands)."""

    model_config = ConfigDict(extra="allow")

    defaultTimeoutMs: Annotated[int | None, NEUTRAL] = Field(
        default=None, ge=1, description="Default timeout (120000)."
    )
    maxTimeoutMs: Annotated[int | None, NEUTRAL] = Field(
        default=None, ge=1, description="Largest timeout a call may ask for (600000)."
    )
    maxOutputLength: Annotated[int | None, NEUTRAL] = Field(
        default=None, ge=1, description="Output cap in characters (30000, at most 150000)."
    )
    progressIntervalMs: Annotated[int | None, NEUTRAL] = Field(
        default=None, ge=0, description="Least time between two progress reports of a command (1000; 0: none)."
    )
    previewTail: Annotated[bool, NEUTRAL] = Field(
        default=False, description="Show a cut output's first and last 1,000 characters (a deviation for Bash)."
    )
    maintainProjectWorkingDir: Annotated[bool, NEUTRAL] = Field(
        default=False, description="Start every command in the project dir."
    )
    envFile: Annotated[str | None, _RUNS_CODE] = Field(
        default=None, description="A shell script sourced before every command."
    )
    startupFile: Annotated[str | None, _RUNS_CODE] = Field(
        default=None, description="The startup file to snapshot; \"\" for none."
    )
    shell: Annotated[str | None, _RUNS_CODE] = Field(
        default=None, description="The bash binary (default: bash on PATH)."
    )


class ExecConfig(BaseModel):
    """``tools.exec``: defaults of the exec tool."""

    model_config = ConfigDict(extra="allow")

    timeoutSec: Annotated[int | None, NEUTRAL] = Field(
        default=None, ge=1, description="Default timeout in seconds (1800)."
    )
    yieldMs: Annotated[int | None, NEUTRAL] = Field(default=None, ge=0, description="Default yieldMs (10000).")


class BackgroundConfig(BaseModel):
    """``tools.background``: the session's background task table."""

    model_config = ConfigDict(extra="allow")

    maxRunning: Annotated[int | None, NEUTRAL] = Field(
        default=None, ge=1, description="Running tasks per session (64)."
    )


#: The largest output cap ``maxOutputLength`` may set, in characters.
HARD_MAX_OUTPUT = 150_000


BASH_SECTION = ConfigSection(
    "tools.bash", BashConfig, description="Bash: timeouts, output cap, cwd carry-over, env file, startup-file snapshot"
)
EXEC_SECTION = ConfigSection("tools.exec", ExecConfig, description="exec: default timeout and yieldMs")
BACKGROUND_SECTION = ConfigSection(
    "tools.background", BackgroundConfig, description="Background tasks: the per-session cap on running tasks"
)


def section(ctx: ToolContext, key: str) -> dict[str, Any]:
    """The settings at ``key`` as a dict of the keys set: the registered section's validated
    value, else the raw config (the registering tool is not installed)."""
    try:
        value = ctx.settings(key)
    except (KeyError, RuntimeError):
        value = None
    if isinstance(value, BaseModel):
        return value.model_dump(exclude_none=True, exclude_unset=True)
    data: Any = ctx.config.data if ctx.config is not None else {}
    for part in key.split("."):
        data = data.get(part) if isinstance(data, dict) else None
    return dict(data) if isinstance(data, dict) else {}


__all__ = [
    "BACKGROUND_SECTION",
    "BASH_SECTION",
    "EXEC_SECTION",
    "HARD_MAX_OUTPUT",
    "BackgroundConfig",
    "BashConfig",
    "ExecConfig",
    "section",
    "shell_binary",
]
