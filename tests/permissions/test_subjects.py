"""A tool's declared permission subjects are what the rules judge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from pegboard import Subjects, ToolContext, ToolRegister, hookimpl, tool
from pegboard.testing import isolated_pegboard


class PatchInput(BaseModel):
    input: str


def _patch_subjects(model: PatchInput) -> Subjects:
    writes = [line.split(":", 1)[1].strip() for line in model.input.splitlines() if line.startswith("write:")]
    reads = [line.split(":", 1)[1].strip() for line in model.input.splitlines() if line.startswith("read:")]
    return Subjects(paths_written=writes, paths_read=reads)


@tool(name="Patchy", permission_family="Edit", requires_permission=True, permission_subjects=_patch_subjects)
async def patchy(input: PatchInput, ctx: ToolContext) -> str:
    """Pretend to apply a patch that writes and reads the files it names."""
    return "ok"


class CmdInput(BaseModel):
    script: str


@tool(
    name="Runner",
    permission_family="Bash",
    requires_permission=True,
    permission_subjects=lambda m: Subjects(command=m.script),
)
async def runner(input: CmdInput, ctx: ToolContext) -> str:
    """Pretend to run a shell script."""
    return "ran"


class Plugin:
    @hookimpl
    def register_tools(self, register: ToolRegister) -> None:
        register(patchy)
        register(runner)


def board(tmp_path: Path, permissions: dict[str, Any]) -> Any:
    return isolated_pegboard(Plugin(), cwd=tmp_path, config={"permissions": permissions})


def test_one_denied_file_denies_the_whole_patch(tmp_path: Path) -> None:
    pb = board(tmp_path, {"deny": ["Edit(./locked/**)"], "defaultMode": "acceptEdits"})
    ok = pb.check("Patchy", {"input": "write: a.txt\nwrite: b/c.txt"})
    assert ok.decision == "allow", ok
    denied = pb.check("Patchy", {"input": "write: a.txt\nwrite: locked/x.txt"})
    assert denied.decision == "deny" and denied.rule == "Edit(./locked/**)"


def test_a_write_outside_the_working_dirs_asks_even_in_accept_edits(tmp_path: Path) -> None:
    pb = board(tmp_path, {"defaultMode": "acceptEdits"})
    assert pb.check("Patchy", {"input": "write: /elsewhere/x.txt"}).decision == "ask"


def test_read_subjects_answer_to_read_rules(tmp_path: Path) -> None:
    pb = board(tmp_path, {"deny": ["Read(./.env)"], "defaultMode": "acceptEdits"})
    assert pb.check("Patchy", {"input": "write: a.txt\nread: .env"}).decision == "deny"
    assert pb.check("Patchy", {"input": "write: a.txt\nread: other.txt"}).decision == "allow"


def test_a_command_subject_answers_to_bash_rules(tmp_path: Path) -> None:
    pb = board(tmp_path, {"allow": ["Bash(git status)"], "deny": ["Bash(rm *)"]})
    assert pb.check("Runner", {"script": "git status"}).decision == "allow"
    assert pb.check("Runner", {"script": "git status && rm -rf x"}).decision == "deny"


async def test_a_denied_subject_never_runs(tmp_path: Path) -> None:
    pb = board(tmp_path, {"deny": ["Edit(./locked/**)"], "defaultMode": "acceptEdits"})
    result = await pb.call("Patchy", {"input": "write: locked/x"})
    assert result.is_error and result.reason == "denied"
