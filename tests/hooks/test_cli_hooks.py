"""``pegboard hooks list`` and ``pegboard hooks test``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from pegboard.core.cli import cli
from tests.hooks.support import script


def run(*args: str) -> Any:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result


def write_config(tmp_path: Path, data: dict[str, Any], name: str = "hooks.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def guard_config(tmp_path: Path) -> Path:
    guard = script(tmp_path, "guard.sh", 'case "$(cat)" in *"rm -rf"*) echo "no rm -rf" >&2; exit 2;; esac\n')
    return write_config(
        tmp_path,
        {
            "hooks": {
                "PreToolUse": [
                    {"matcher": "Bash", "hooks": [{"type": "command", "command": str(guard), "failClosed": True}]},
                    {"matcher": "Bash", "hooks": [{"type": "command", "command": "exit 1"}]},
                ],
                "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo welcome"}]}],
            }
        },
    )


def test_list_json_shows_configured_and_plugin_hooks(tmp_path: Path) -> None:
    config = guard_config(tmp_path)
    result = run("hooks", "list", "--json", "--config", str(config), "--cwd", str(tmp_path))
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    events = [(h["event"], h["matcher"], h["failClosed"]) for h in data["configured"]]
    assert events == [("PreToolUse", "Bash", True), ("PreToolUse", "Bash", False), ("SessionStart", "startup", False)]
    assert data["configured"][0]["sources"] == [{"scope": "cli", "path": str(config.resolve())}]
    assert data["config_hooks_run"] is True
    assert {"hook": "pre_tool_use", "plugin": "command-hooks"}.items() <= next(
        p for p in data["plugins"] if p["hook"] == "pre_tool_use"
    ).items()


def test_list_table(tmp_path: Path) -> None:
    config = guard_config(tmp_path)
    result = run("hooks", "list", "--config", str(config), "--cwd", str(tmp_path))
    assert result.exit_code == 0
    assert "PreToolUse" in result.stdout and "failClosed" in result.stdout and "command-hooks" in result.stdout


def test_test_pre_tool_use_blocks(tmp_path: Path) -> None:
    config = guard_config(tmp_path)
    args = ["hooks", "test", "PreToolUse", "--tool", "Bash", "--input", '{"command": "rm -rf /"}']
    result = run(*args, "--config", str(config), "--cwd", str(tmp_path), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["combined"]["decision"] == "deny" and data["combined"]["reason"] == "no rm -rf"
    codes = [h["run"]["exit_code"] for h in data["handlers"]]
    assert codes == [2, 1]
    assert any("exited with code 1" in n for n in data["combined"]["notices"])


def test_test_pre_tool_use_human_output(tmp_path: Path) -> None:
    config = guard_config(tmp_path)
    args = ["hooks", "test", "pre_tool_use", "--tool", "Bash", "--input", '{"command": "make"}']
    result = run(*args, "--config", str(config), "--cwd", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert "exit 0" in result.stdout and "exit 1" in result.stdout and "Combined:" in result.stdout
    assert "Permission after hooks:" in result.stdout


def test_test_session_start(tmp_path: Path) -> None:
    config = guard_config(tmp_path)
    result = run("hooks", "test", "SessionStart", "--config", str(config), "--cwd", str(tmp_path), "--json")
    data = json.loads(result.stdout)
    assert data["combined"]["additional_context"] == "welcome"
    nothing = run("hooks", "test", "SessionStart", "--source", "resume", "--config", str(config), "--json")
    assert json.loads(nothing.stdout)["handlers"] == []


def test_test_usage_errors(tmp_path: Path) -> None:
    assert run("hooks", "test", "Nope").exit_code == 2
    assert run("hooks", "test", "PreToolUse").exit_code == 2
