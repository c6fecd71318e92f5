"""Test tools and helpers for the hook tests: a Bash-named echo tool, a Write-like tool, scripts."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

import pegboard_command_hooks
from pegboard import ConfigLayer, Pegboard, PermissionDecision, ToolCall, ToolContext, hookimpl, tool

PYTHON = sys.executable


class BashInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str
    timeout: int | None = None
    description: str | None = None
    run_in_background: bool | None = None


class WriteInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file_path: str
    content: str


class FailInput(BaseModel):
    why: str = "boom"


@tool(name="Bash", permission_family="Bash", requires_permission=True)
async def bash(input: BashInput, ctx: ToolContext) -> dict[str, Any]:
    """Pretend to run a shell command: echo it back (the tests never run what a model sends)."""
    return {"stdout": f"ran: {input.command}", "stderr": "", "interrupted": False, "isImage": False}


@tool(name="Write", permission_family="Edit", requires_permission=True)
async def write(input: WriteInput, ctx: ToolContext) -> dict[str, Any]:
    """Pretend to write a file: report what would have been written."""
    return {"message": "written", "bytes_written": len(input.content), "file_path": input.file_path}


@tool(name="Fail", requires_permission=False)
async def fail(input: FailInput, ctx: ToolContext) -> str:
    """Always raise, to exercise PostToolUseFailure."""
    raise RuntimeError(input.why)


class ToolsPlugin:
    """The test tools as one plugin object."""

    @hookimpl
    def register_tools(self, register: Any) -> None:
        for t in (bash, write, fail):
            register(t)


class Approver:
    """Records each approval request; answers ``answer``."""

    def __init__(self, answer: bool | None = True) -> None:
        self.answer = answer
        self.asked: list[tuple[str, PermissionDecision]] = []

    def __call__(self, call: ToolCall, decision: PermissionDecision) -> bool | None:
        self.asked.append((call.name, decision))
        return self.answer


def project_layer(tmp_path: Path, config: Mapping[str, Any], scope: str = "project", name: str = "settings") -> Any:
    path = tmp_path / ".pegboard" / f"{name}.json"
    return ConfigLayer(scope, dict(config), path=path, root=tmp_path)  # type: ignore[arg-type]


def board(
    tmp_path: Path,
    config: Mapping[str, Any] | None = None,
    *plugins: object,
    layers: list[Any] | None = None,
    with_command_hooks: bool = True,
) -> Pegboard:
    """A Pegboard with the test tools, the command-hooks plugin and ``config`` as project config."""
    if layers is None:
        layers = [project_layer(tmp_path, config or {})]
    objects: list[object] = [ToolsPlugin()]
    if with_command_hooks:
        objects.append(pegboard_command_hooks)
    objects.extend(plugins)
    return Pegboard(plugins=objects, load_entrypoints=False, layers=layers, cwd=tmp_path, env=dict(os.environ))


def script(tmp_path: Path, name: str, body: str, *, python: bool = False) -> Path:
    """Write an executable script (POSIX sh unless ``python``) into ``tmp_path``."""
    path = tmp_path / name
    shebang = f"#!{PYTHON}\n" if python else "#!/bin/sh\n"
    path.write_text(shebang + body.lstrip("\n"), encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def hooks(event: str, *handlers: Mapping[str, Any], matcher: str = "") -> dict[str, Any]:
    """``{"hooks": {event: [{"matcher": matcher, "hooks": [handlers]}]}}``."""
    return {"hooks": {event: [{"matcher": matcher, "hooks": [dict(h) for h in handlers]}]}}


def cmd(command: str, **fields: Any) -> dict[str, Any]:
    return {"type": "command", "command": command, **fields}


def json_out(value: Any) -> str:
    """Shell-quoted ``printf`` of a JSON value, for one-line sh hooks."""
    text = json.dumps(value).replace("'", "'\\''")
    return f"printf '%s' '{text}'"
