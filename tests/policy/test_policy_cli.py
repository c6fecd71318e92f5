"""``pegboard groups``, ``pegboard profiles``, ``pegboard prompt`` and ``Pegboard.prompt``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from pegboard import Profile, Tool, hookimpl
from pegboard.core.cli import cli
from pegboard.core.cli.groups import group_rows
from pegboard.core.cli.profiles import profile_rows
from pegboard.core.config import ConfigLayer
from pegboard.core.prompt import EMPTY, render_prompt
from tests.policy.helpers_policy import NoInput, run_ok


def run_cli(*args: str) -> Any:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def write_config(tmp_path: Path, data: dict[str, Any]) -> str:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(data))
    return str(path)


class Demo:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(Tool("Read", "Read a file.", NoInput, run_ok, groups=("fs",), usage="Read files by absolute path."))
        register(Tool("Grep", "Search file contents\n  with a regex.", NoInput, run_ok, groups=("fs", "search")))
        register(Tool("Bash", "Run a command.", NoInput, run_ok, groups=("runtime",), aliases=("exec",)))

    @hookimpl
    def register_groups(self, register: Any) -> None:
        register("fs", ["Write"], "File tools")

    @hookimpl
    def register_profiles(self, register: Any) -> None:
        register(Profile("reader", allow=["group:fs"], description="Read-only"))


def demo_board(config: dict[str, Any] | None = None) -> Any:
    from pegboard import Pegboard

    return Pegboard(plugins=[Demo()], load_entrypoints=False, layers=[ConfigLayer("project", config or {})])


def test_group_rows_list_installed_and_missing_members() -> None:
    rows = {r["name"]: r for r in group_rows(demo_board())}
    assert rows["fs"]["members"] == ["Grep", "Read"]
    assert rows["fs"]["missing"] == ["Write"]
    assert rows["fs"]["description"] == "File tools"
    assert rows["search"]["members"] == ["Grep"]
    assert rows["runtime"]["entry"] == "group:runtime"


def test_profile_rows_include_full() -> None:
    rows = {r["name"]: r for r in profile_rows(demo_board())}
    assert rows["reader"]["allow"] == ["group:fs"] and rows["reader"]["description"] == "Read-only"
    assert rows["full"]["allow"] is None


def test_render_prompt_uses_usage_else_description() -> None:
    text = render_prompt(demo_board({"tools": {"deny": ["bash"]}}))
    assert "### Read\nRead files by absolute path." in text
    assert "### Grep\nSearch file contents\nwith a regex." in text
    assert "Bash" not in text
    assert demo_board().prompt(profile="reader").count("### ") == 2
    assert EMPTY in render_prompt(demo_board({"tools": {"deny": ["*"]}}))


def test_prompt_and_schema_name_the_same_tools() -> None:
    pb = demo_board({"tools": {"profile": "reader"}})
    names = [d["name"] for d in pb.schema("anthropic")]
    assert [line[4:] for line in pb.prompt().splitlines() if line.startswith("### ")] == names


def test_cli_groups_profiles_prompt_json(tmp_path: Path) -> None:
    groups = json.loads(run_cli("groups", "--json").output)
    assert all({"name", "members", "description", "missing"} <= set(g) for g in groups)
    profiles = {p["name"]: p for p in json.loads(run_cli("profiles", "--json").output)}
    assert profiles["full"]["allow"] is None
    config = write_config(tmp_path, {"tools": {"deny": ["*"]}})
    out = json.loads(run_cli("prompt", "--json", "--config", config).output)
    assert out["prompt"] == f"## Tools\n\n{EMPTY}\n" and out["tools"] == []
    (warning,) = out["warnings"]
    assert "no tool is enabled" in warning and "deny" in warning
    tools = json.loads(run_cli("tools", "--json", "--config", config).output)
    assert tools["enabled"] == []


def test_cli_prompt_text_matches_tools(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"tools": {"deny": ["tool_result_read"]}})
    result = run_cli("prompt", "--config", config)
    enabled = json.loads(run_cli("tools", "--json", "--config", config).output)["enabled"]
    assert [line[4:] for line in result.output.splitlines() if line.startswith("### ")] == enabled
    typo = write_config(tmp_path, {"tools": {"profile": "nope"}})
    refused = CliRunner().invoke(cli, ["prompt", "--config", typo], catch_exceptions=False)
    assert refused.exit_code == 1 and "unknown profile 'nope'" in refused.output  # stderr, mixed in by CliRunner
