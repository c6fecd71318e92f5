"""One tool OpenAI's strict mode cannot express turns strict off for the whole set: the CLI says which."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

import pegboard_provider_openai as openai_plugin
from pegboard import Pegboard, Tool, ToolContext
from pegboard.core.render import render_tools, schema_notes


def pegboard(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pegboard", *args], capture_output=True, text=True, cwd=cwd, env=dict(os.environ),
        timeout=60,
    )


def strict_flags(definitions: list[dict[str, Any]]) -> set[bool]:
    return {(d.get("function") or d)["strict"] for d in definitions}


def test_schema_says_on_stderr_which_tool_turned_strict_off(tmp_path: Path) -> None:
    for fmt in ("openai", "openai-responses"):
        proc = pegboard("schema", "--format", fmt, "--profile", "full", "--provider", "openai", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert strict_flags(json.loads(proc.stdout)) == {False}
        [note] = [line for line in proc.stderr.splitlines() if line.startswith("note: ")]
        assert note.startswith("note: openai: strict function schemas: off for every tool, because the schemas of ")
        assert "TaskCreate (a free-form object at metadata)" in note and "the set renders strict" in note
    coding = pegboard("schema", "--format", "openai", "--profile", "coding", cwd=tmp_path)
    assert coding.returncode == 0 and strict_flags(json.loads(coding.stdout)) == {True}
    assert "note: openai: strict function schemas: on (every tool's schema qualifies)" in coding.stderr
    anthropic = pegboard("schema", "--format", "anthropic", cwd=tmp_path)
    assert anthropic.returncode == 0 and "note:" not in anthropic.stderr


def test_tools_explain_names_the_tool_that_turned_strict_off(tmp_path: Path) -> None:
    table = pegboard("tools", "--explain", "--provider", "openai", cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    [line] = [x for x in table.stdout.splitlines() if x.startswith("schema: ")]
    assert line.startswith("schema: openai: strict function schemas: off") and "TaskCreate" in line
    assert line in (Path(__file__).resolve().parents[2] / "docs" / "policy.md").read_text().splitlines()
    as_json = pegboard("tools", "--explain", "--provider", "openai", "--profile", "coding", "--json", cwd=tmp_path)
    notes = json.loads(as_json.stdout)["schema_notes"]
    assert len(notes) == 1 and notes[0].startswith("openai: strict function schemas: on")
    plain = pegboard("tools", "--explain", cwd=tmp_path)
    assert plain.returncode == 0 and "schema:" not in plain.stdout


class Loose(BaseModel):
    query: str
    options: dict[str, Any] = {}


class Tight(BaseModel):
    query: str
    limit: int = 10


async def _run(input: BaseModel, ctx: ToolContext) -> str:
    return "ok"


def test_the_note_names_the_field_that_does_not_qualify() -> None:
    loose = Tool(name="Loose", description="A loose tool.", input_model=Loose, run=_run)
    tight = Tool(name="Tight", description="A tight tool.", input_model=Tight, run=_run)
    policies = [openai_plugin.POLICY]
    assert strict_flags(render_tools([tight, loose], "openai", policies)) == {False}
    [note] = schema_notes([tight, loose], policies, format="openai")
    assert "off for every tool, because the schema of Loose (a free-form object at options) does not qualify" in note
    assert schema_notes([tight], policies, provider="openai") == [
        "openai: strict function schemas: on (every tool's schema qualifies)"
    ]
    assert schema_notes([tight, loose], policies, format="anthropic") == []
    assert openai_plugin.strict_obstacle(Tight.model_json_schema()) is None


def test_the_python_api_gets_the_same_notes(tmp_path: Path) -> None:
    pb = Pegboard(cwd=tmp_path)
    tools = pb.visible_tools(profile="full", provider="openai")
    notes = schema_notes(tools, pb.registry.provider_policies, provider="openai")
    assert any("TaskCreate" in n for n in notes)
