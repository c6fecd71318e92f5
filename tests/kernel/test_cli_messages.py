"""What a new user reads on the command line: every problem in one pass, with what fixes it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def pegboard(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The real command line, run in ``cwd``."""
    return subprocess.run(
        [sys.executable, "-m", "pegboard", *args], capture_output=True, text=True, cwd=cwd, timeout=60
    )


# ------------------------------------------------------------------------------- config validate


def test_a_type_error_does_not_hide_the_other_warnings(tmp_path: Path) -> None:
    config = tmp_path / "settings.toml"
    config.write_text(
        '[tools]\nprofile = 5\nallow = ["Reed"]\ndeny = ["group:webb"]\n'
        '[permissions]\nallow = ["Bash(ls:*"]\n'
    )
    proc = pegboard("config", "validate", str(config), cwd=tmp_path)
    assert proc.returncode == 1 and "invalid (1 error)" in proc.stdout
    assert "key 'tools.profile': expected a valid string" in proc.stderr
    for line in ("'Reed' (no tool or alias by that name; did you mean 'Read'?)", "no group 'webb'",
                 "malformed rule 'Bash(ls:*'"):
        assert line in proc.stderr, line
    data = json.loads(pegboard("config", "validate", str(config), "--json", cwd=tmp_path).stdout)
    assert data["valid"] is False and len(data["errors"]) == 1 and len(data["warnings"]) == 3


def test_a_deny_entry_one_edit_from_a_tool_is_flagged(tmp_path: Path) -> None:
    config = tmp_path / "settings.toml"
    config.write_text('[tools]\ndeny = ["WebSerch", "SomePluginTool"]\n')
    proc = pegboard("config", "validate", str(config), cwd=tmp_path)
    assert proc.returncode == 0 and "valid, 1 warning" in proc.stdout
    assert "tools.deny: unknown entry" in proc.stderr and "did you mean 'WebSearch'?" in proc.stderr
    assert "SomePluginTool" not in proc.stderr, "denying a tool that is not installed is no typo"


def test_tools_json_carries_the_warnings_it_prints(tmp_path: Path) -> None:
    config = tmp_path / "settings.toml"
    config.write_text('[tools]\nalow = ["Read"]\ndeny = ["WebSerch"]\n')
    human = pegboard("tools", "--config", str(config), cwd=tmp_path)
    printed = [line.removeprefix("warning: ") for line in human.stderr.splitlines() if line.startswith("warning: ")]
    assert len(printed) == 2 and any("tools.alow" in w for w in printed) and any("WebSerch" in w for w in printed)
    data = json.loads(pegboard("tools", "--config", str(config), "--json", cwd=tmp_path).stdout)
    assert data["warnings"] == printed


# ------------------------------------------------------------------------------- errors under --json


def test_usage_errors_with_json_print_an_error_object(tmp_path: Path) -> None:
    for args, message in (
        (("call", "--json"), "Missing argument 'TOOL'."),
        (("call", "Read", "--json", "--mode", "bogus"), "Invalid value for '--mode'"),
        (("call", "Read", "--input", "{bad", "--json"), "--input is not valid JSON"),
        (("tools", "--json", "--cwd", str(tmp_path / "missing")), "no such directory"),
        (("config", "validate", "--json"), "Missing argument 'FILE'."),
        (("sessions", "show", "nope", "--json"), "no stored session 'nope'"),
        (("tools", "--json", "--bogus"), "No such option '--bogus'"),
        (("--json", "tools"), "put it after the command (pegboard tools --json)"),
        (("--json", "--bogus"), "put it after the command"),
    ):
        proc = pegboard(*args, cwd=tmp_path)
        data = json.loads(proc.stdout)
        assert set(data) == {"error", "exit_code"} and message in data["error"], args
        assert data["exit_code"] == proc.returncode != 0, args
        assert message in proc.stderr, args
    plain = pegboard("call", cwd=tmp_path)
    assert plain.returncode == 2 and plain.stdout == "" and "Missing argument 'TOOL'." in plain.stderr


def test_a_failing_command_names_why_it_failed(tmp_path: Path) -> None:
    proc = pegboard("call", "Bash", "--yes", "--input", '{"command": "exit 3"}', cwd=tmp_path)
    assert proc.returncode == 1 and "Exit code 3" in proc.stdout
    assert "(None)" not in proc.stderr and proc.stderr.splitlines()[-1] == "(tool_error)"


# ------------------------------------------------------------------------------- Read, then Edit


def test_an_edit_after_a_read_in_another_call_says_to_use_session(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("hello\n")
    edit = ("call", "Edit", "--yes", "--input", json.dumps({"file_path": "notes.txt", "old_string": "hello",
                                                           "new_string": "bye"}))
    read = ("call", "Read", "--input", '{"file_path": "notes.txt"}')
    assert pegboard(*read, cwd=tmp_path).returncode == 0
    refused = pegboard(*edit, cwd=tmp_path)
    assert refused.returncode == 1 and "has not been read yet" in refused.stdout
    assert "run the Read and this call with the same --session NAME" in refused.stderr
    assert pegboard(*read, "--session", "s1", cwd=tmp_path).returncode == 0
    done = pegboard(*edit, "--session", "s1", cwd=tmp_path)
    assert done.returncode == 0 and target.read_text() == "bye\n" and "--session" not in done.stderr


def test_a_grep_refusal_names_its_path_once(tmp_path: Path) -> None:
    project, outside = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    outside.mkdir()
    proc = pegboard("call", "Grep", "--input", json.dumps({"pattern": "x", "path": str(outside)}), cwd=project)
    assert proc.returncode == 1 and f"outside the working directories ({outside}) needs permission" in proc.stdout


def test_config_validate_says_where_a_disabled_profile_comes_from(tmp_path: Path) -> None:
    config = tmp_path / "pegboard.toml"
    config.write_text('[tools]\nprofile = "coding"\n[plugins]\ndisabled = ["pegboard-profile-coding"]\n')
    proc = pegboard("config", "validate", str(config), cwd=tmp_path)
    assert proc.returncode == 1
    expected = "unknown profile 'coding'. Profile 'coding' comes with pegboard-profile-coding, which is installed"
    assert expected in proc.stderr
    assert "see pegboard plugins" in proc.stderr and "Valid profiles: full, messaging, minimal." in proc.stderr
