"""What a new user does in the first hour, run as they would: typos fail closed, nothing is silent."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from pegboard import Pegboard, Tool, ToolContext
from pegboard.core.permissions.suggest import narrowest_rule

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def pegboard(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real command line, in ``cwd``, with a user config directory of its own."""
    full = {**os.environ, "PEGBOARD_CONFIG_DIR": str(cwd / ".user-config"), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "pegboard", *args], capture_output=True, text=True, cwd=cwd, env=full, timeout=60
    )


def write(path: Path, data: Any) -> str:
    path.write_text(json.dumps(data))
    return str(path)


# ------------------------------------------------------------------------------- typos fail closed


def test_an_unknown_profile_on_the_command_line_is_an_error(tmp_path: Path) -> None:
    proc = pegboard("tools", "--profile", "codnig", cwd=tmp_path)
    assert proc.returncode == 1
    assert "unknown profile 'codnig'; did you mean 'coding'?" in proc.stderr
    assert "enabled" not in [line.split()[1] for line in proc.stdout.splitlines()[2:] if line.split()]
    as_json = pegboard("tools", "--profile", "codnig", "--json", cwd=tmp_path)
    data = json.loads(as_json.stdout)
    assert as_json.returncode == 1 and data["enabled"] == [] and "did you mean 'coding'" in data["errors"][0]
    for command in ("schema", "prompt"):
        assert pegboard(command, "--profile", "codnig", cwd=tmp_path).returncode == 1


def test_an_unknown_profile_in_config_enables_nothing_through_the_api(tmp_path: Path) -> None:
    config = write(tmp_path / "typo.json", {"tools": {"profile": "codnig"}})
    pb = Pegboard(config_files=[config], cwd=tmp_path, env={"PEGBOARD_CONFIG_DIR": str(tmp_path)})
    result = pb.tools()
    assert result.enabled == [] and "did you mean 'coding'" in result.errors[0]
    assert Pegboard(cwd=tmp_path, env={"PEGBOARD_CONFIG_DIR": str(tmp_path)}).tools(profile="codnig").enabled == []
    refused = pb.call_sync("Read", {"file_path": config})
    assert refused.is_error and "unknown profile 'codnig'" in refused.text


def test_an_empty_tool_set_warns(tmp_path: Path) -> None:
    config = tmp_path / "narrow.json"
    config.write_text(json.dumps({"tools": {"deny": ["session_status"]}}))
    proc = pegboard("tools", "--profile", "minimal", "--config", str(config), cwd=tmp_path)
    assert proc.returncode == 0 and "no tool is enabled" in proc.stderr, proc.stderr


# ------------------------------------------------------------------------------- config validate

TYPOS = {
    "tools": {"profile": "codnig", "alow": ["Read"]},
    "hooks": {
        "PreTooluse": [{"matcher": "Bash", "hooks": [{"type": "comand", "command": "true"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "true"}]}],
    },
    "permissions": {"defaultMode": 3},
}


def test_config_validate_reports_every_typo_with_a_suggestion(tmp_path: Path) -> None:
    config = write(tmp_path / "typos.json", TYPOS)
    proc = pegboard("config", "validate", config, cwd=tmp_path)
    assert proc.returncode == 1 and "invalid (4 errors)" in proc.stdout
    for line in (
        "unknown hook event 'PreTooluse'; did you mean 'PreToolUse'?",
        "unknown handler type 'comand'; did you mean 'command'?",
        "tools.profile: unknown profile 'codnig'; did you mean 'coding'?",
        "key 'permissions.defaultMode'",
    ):
        assert f"error: {config}: " in proc.stderr and line in proc.stderr, line
    assert "warning: " in proc.stderr
    assert "unknown key 'tools.alow' (ignored); did you mean 'tools.allow'?" in proc.stderr
    assert "Pegboard never fires 'Stop'" in proc.stderr
    data = json.loads(pegboard("config", "validate", config, "--json", cwd=tmp_path).stdout)
    assert data["valid"] is False and len(data["errors"]) == 4 and len(data["warnings"]) == 2


def test_config_validate_strict_fails_on_warnings(tmp_path: Path) -> None:
    config = write(tmp_path / "warn.json", {"tools": {"alow": ["Read"]}})
    relaxed = pegboard("config", "validate", config, cwd=tmp_path)
    assert relaxed.returncode == 0 and "valid, 1 warning" in relaxed.stdout
    strict = pegboard("config", "validate", "--strict", config, cwd=tmp_path)
    assert strict.returncode == 1 and "--strict" in strict.stdout
    clean = pegboard("config", "validate", "--strict", write(tmp_path / "ok.json", {"tools": {"profile": "coding"}}),
                     cwd=tmp_path)
    assert clean.returncode == 0 and clean.stderr == ""


# ------------------------------------------------------------------------------- pegboard check


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("Bash",), "--input is required"),
        (("Bsh", "--input", "{}"), "unknown tool 'Bsh' (did you mean 'Bash'?)"),
        (("Bash", "--input", '{"cmd": "ls"}'), "Bash has no field 'cmd' (did you mean 'command'?)"),
        (("Read", "--input", '{"path": "/etc/hosts"}'), "Read has no field 'path'"),
    ],
)
def test_check_says_what_is_wrong_and_which_fields_the_tool_takes(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    proc = pegboard("check", *args, cwd=tmp_path)
    assert proc.returncode == 2 and message in proc.stderr
    tool = "Read" if args[0] == "Read" else "Bash"
    if args[0] != "Bsh":
        assert f"{tool} takes: " in proc.stderr and ("command" in proc.stderr or "file_path" in proc.stderr)


def test_check_with_a_good_input_still_decides(tmp_path: Path) -> None:
    proc = pegboard("check", "Read", "--input", '{"file_path": "/etc/hosts"}', cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("ask: ")


# ------------------------------------------------------------------------------- refusals


def test_a_refusal_on_the_command_line_names_the_narrowest_rule_and_yes_on_stderr(tmp_path: Path) -> None:
    proc = pegboard("call", "Read", "--input", '{"file_path": "/etc/hosts"}', cwd=tmp_path)
    assert proc.returncode == 1
    assert '"Read(//etc/hosts)"' in proc.stdout and "--yes" not in proc.stdout
    assert "--yes" in proc.stderr and "approver=" not in proc.stdout + proc.stderr


def test_a_refusal_in_the_python_api_names_approver_in_its_metadata(tmp_path: Path) -> None:
    pb = Pegboard(cwd=tmp_path, env={"PEGBOARD_CONFIG_DIR": str(tmp_path)})
    result = pb.call_sync("Read", {"file_path": "/etc/hosts"})
    assert result.reason == "not_approved"
    assert '"Read(//etc/hosts)"' in result.text and "approver=" not in result.text
    assert "approver=" in result.metadata["how_to_approve"] and "--yes" not in result.metadata["how_to_approve"]
    assert result.metadata["suggested_rules"] == ["Read(//etc/hosts)"]


class CommandInput(BaseModel):
    command: str


async def nothing(input: CommandInput, ctx: ToolContext) -> str:
    return ""


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("npm run test -- --watch", "Bash(npm run test *)"),
        ("npm run test", "Bash(npm run test *)"),
        ("git push origin main", "Bash(git push origin *)"),
        ("ls -la", "Bash(ls *)"),
        ("make && rm -rf build", 'Bash(make *)", "Bash(rm *)'),
    ],
)
def test_the_suggested_bash_rule_is_narrow_and_allows_the_call(tmp_path: Path, command: str, rule: str) -> None:
    bash = Tool("Bash", "Run a command.", CommandInput, nothing)
    assert narrowest_rule(bash, {"command": command}, tmp_path) == rule


# ------------------------------------------------------------------------------- failed plugins


@pytest.fixture(scope="module")
def broken_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A plugin that fails at import, ``pip install``ed into a directory of its own."""
    target = tmp_path_factory.mktemp("site")
    source = tmp_path_factory.mktemp("src") / "broken_plugin"
    shutil.copytree(FIXTURES / "broken_plugin", source, ignore=shutil.ignore_patterns("*.egg-info", "build"))
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
         "--no-build-isolation", "--target", str(target), str(source)],
        check=True, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    return target


@pytest.mark.parametrize(
    "args",
    [
        ("tools",),
        ("schema",),
        ("groups",),
        ("profiles",),
        ("prompt",),
        ("check", "Read", "--input", '{"file_path": "x"}'),
        ("call", "Read", "--input", '{"file_path": "x"}'),
        ("hooks", "list"),
        ("config", "validate", "settings.json"),
    ],
)
def test_every_command_names_a_plugin_that_failed_to_load(broken_site: Path, tmp_path: Path, args: Any) -> None:
    (tmp_path / "settings.json").write_text("{}")
    proc = pegboard(*args, cwd=tmp_path, env={"PYTHONPATH": str(broken_site)})
    lines = [line for line in proc.stderr.splitlines() if "failed to load" in line]
    assert len(lines) == 1 and "warning: plugin broken failed to load; see pegboard plugins" in lines[0], proc.stderr


def test_an_unknown_tool_refusal_mentions_failed_plugins(broken_site: Path, tmp_path: Path) -> None:
    proc = pegboard("call", "Acme", "--input", "{}", "--json", cwd=tmp_path, env={"PYTHONPATH": str(broken_site)})
    result = json.loads(proc.stdout)
    assert result["reason"] == "unknown_tool"
    assert "failed to load (see pegboard plugins): broken" in result["content"][0]["text"]
