"""The built-in ``Monitor`` tool: watch a background command and report every output line.

The command runs as a background task of the session (``pegboard_toolkit.tasks``). Each line
it prints is written to the task's output file first and then emitted as a ``task_output``
session event, so a slow event reader loses nothing: TaskOutput, ``process poll`` and Read
of the file return every line. The monitor ends at its deadline unless ``persistent``;
TaskStop ends it early. Monitor answers to ``Bash(...)`` rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, field_validator, model_validator

from pegboard import ExecError, PermissionDecision, Subjects, ToolContext, ToolRegister, ToolResult, hookimpl, tool
from pegboard_monitor_ws import check_protocols, check_ws_url
from pegboard_toolkit.availability import monitor_unavailable

if TYPE_CHECKING:
    from pegboard_toolkit.tasks import TaskRecord

DEFAULT_TIMEOUT_MS = 300_000
MAX_TIMEOUT_MS = 3_600_000


class WsSource(BaseModel):
    url: str = Field(description="ws:// or wss:// URL, ASCII only, without credentials or whitespace.")
    protocols: list[str] | None = Field(default=None, description="WebSocket subprotocols to offer (unique tokens).")

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        return check_ws_url(value)

    @field_validator("protocols")
    @classmethod
    def _protocols(cls, value: list[str] | None) -> list[str] | None:
        return check_protocols(value)


class MonitorInput(BaseModel):
    command: str | None = Field(default=None, description="The command to watch; each output line is an event.")
    ws: WsSource | None = Field(default=None, description="A WebSocket to watch instead of a command.")
    description: str | None = Field(default=None, description="What is being watched, in a few words.")
    timeout_ms: int = Field(
        default=DEFAULT_TIMEOUT_MS,
        ge=1,
        description=f"Stop after this many milliseconds (default {DEFAULT_TIMEOUT_MS}, at most {MAX_TIMEOUT_MS}).",
    )
    persistent: bool = Field(default=False, description="Keep running past the deadline until stopped.")

    @model_validator(mode="after")
    def _one_source(self) -> MonitorInput:
        if (self.command is None) == (self.ws is None):
            raise ValueError("give exactly one of command and ws")
        if self.command is not None and not self.command.strip():
            raise ValueError("command is empty")
        return self


def subjects(input: MonitorInput) -> Subjects:
    if input.ws is not None:
        return Subjects(url=input.ws.url)
    return Subjects(command=input.command)


@tool(
    name="Monitor",
    groups=["runtime", "terminal", "pegboard"],
    permission_family="Bash",
    requires_permission=True,
    permission_subjects=subjects,
    availability=monitor_unavailable,
    open_world=True,
    usage="Watch a background command; every output line comes back as an event. Stop it with TaskStop.",
)
async def monitor(input: MonitorInput, ctx: ToolContext) -> ToolResult:
    """Run a command in the background and report each line it prints as an event, to watch a log,
    poll a CI job or follow a long script. It stops after timeout_ms (default 300000, at most
    3600000) unless persistent is true; stop it early with TaskStop. Every line also goes to the
    task's output file, readable with Read or TaskOutput."""
    from pegboard_monitor_ws import start_ws_monitor
    from pegboard_toolkit.tasks import TaskError, start_shell_task

    timeout_ms = min(input.timeout_ms, MAX_TIMEOUT_MS)

    def line(record: TaskRecord, text: str, seq: int) -> None:
        ctx.emit("task_output", {"task_id": record.id, "line": text, "seq": seq})

    if input.ws is not None:
        return await start_ws_monitor(ctx, input.ws.url, input.ws.protocols, input.description, timeout_ms,
                                      input.persistent, line)
    command = input.command or ""

    try:
        record = await start_shell_task(
            ctx,
            kind="monitor",
            command=command,
            description=input.description or command[:80],
            timeout_s=None if input.persistent else timeout_ms / 1000,
            persistent=input.persistent,
            on_line=line,
        )
    except (TaskError, ExecError, FileNotFoundError) as exc:
        return ToolResult.error(str(exc), error_kind="background_start_failed")
    until = "until stopped with TaskStop" if input.persistent else f"for up to {timeout_ms} ms"
    text = (
        f"Monitor started with ID {record.id}, watching {until}. Each output line arrives as a "
        f"task_output event and is written to {record.output_file}."
    )
    return ToolResult.from_text(
        text,
        structured={
            "taskId": record.id,
            "timeoutMs": timeout_ms,
            "persistent": input.persistent,
            "output_file": record.output_file,
        },
    )


@hookimpl
def check_permission(call: Any) -> PermissionDecision | None:
    """Opening a WebSocket always asks, whatever the rules or an earlier approval say."""
    if call.tool is monitor and isinstance(call.input, dict) and call.input.get("ws"):
        reason = "opening a WebSocket always asks; no rule can allow it"
        return PermissionDecision(decision="ask", reason=reason, hard=True)
    return None


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(monitor)


