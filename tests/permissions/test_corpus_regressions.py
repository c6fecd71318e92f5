"""Regressions the hidden attack corpus found: a wildcard allow that also deleted, commands
taken as read-only that print every secret in the environment, a rule on an MCP tool that
is not connected no longer judged, and an option that names no file asking for one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pegboard.core.cli import cli
from tests.permissions.support import bash, engine

FIND = engine(allow=["Bash(find *)"])


@pytest.mark.parametrize("command", ["find . -name '*.pyc' -delete", "find build -delete", "find . -fprint out",
                                     "find . -fprint0 out", "find . -fprintf out %p", "find . -fls out"])
def test_a_wildcard_find_rule_does_not_allow_deleting_or_writing(command: str) -> None:
    assert bash(FIND, command) == "ask"
    if "*" not in command:
        exact = engine(allow=[f"Bash({command})"])
        assert bash(exact, command) == "allow", "an exact rule still approves it"


def test_a_wildcard_find_rule_allows_plain_finds() -> None:
    assert bash(FIND, "find . -name '*.pyc' -print") == "allow"


@pytest.mark.parametrize("command", ["env", "env -0", "env -u HOME", "printenv", "printenv -0"])
def test_printing_the_whole_environment_asks(command: str) -> None:
    assert bash(engine(), command) == "ask"
    assert bash(engine(mode="dontAsk"), command) == "deny"


def test_printing_one_variable_stays_read_only() -> None:
    assert bash(engine(), "printenv HOME") == "allow"


@pytest.mark.parametrize("command", ["curl -m 5 https://example.com", "curl -m5 https://example.com",
                                     "curl --max-time 5 https://example.com", "curl -sSm 5 https://example.com"])
def test_curl_max_time_names_no_file(command: str) -> None:
    e = engine(allow=["Bash(curl *)"], deny=["Read(.env)"])
    assert bash(e, command) == "allow", e.check("Bash", {"command": command}).reason


def _config(tmp_path: Path, permissions: dict[str, object]) -> Path:
    cfg = tmp_path / "team.json"
    cfg.write_text(json.dumps({"permissions": permissions}))
    return cfg


def test_check_judges_a_rule_on_an_mcp_tool_that_is_not_connected(tmp_path: Path) -> None:
    cfg = _config(tmp_path, {"deny": ["mcp__github"]})
    result = CliRunner().invoke(cli, ["check", "mcp__github__delete_repo", "--input", "{}", "--config", str(cfg),
                                      "--cwd", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    decision = json.loads(result.stdout)
    assert (decision["decision"], decision["rule"]) == ("deny", "mcp__github")


def test_check_of_an_mcp_tool_needs_no_input(tmp_path: Path) -> None:
    cfg = _config(tmp_path, {"allow": ["mcp__github__get_issue"]})
    result = CliRunner().invoke(cli, ["check", "mcp__github__get_issue", "--config", str(cfg), "--cwd", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("allow")


def test_check_still_refuses_a_name_nobody_knows(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["check", "NoSuchTool", "--input", "{}", "--cwd", str(tmp_path)])
    assert result.exit_code == 2
    assert "unknown tool" in result.stderr
