"""``pegboard check``: JSON shape, one-line human output, diagnostics on stderr."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from pegboard.core.cli import cli


def _config(tmp_path: Path, permissions: dict[str, object]) -> Path:
    path = tmp_path / "team.json"
    path.write_text(json.dumps({"permissions": permissions}), "utf-8")
    return path


def test_json_shape_and_source(tmp_path: Path) -> None:
    cfg = _config(tmp_path, {"deny": ["Bash(rm *)"], "allow": ["Bash(git log *)"]})
    result = CliRunner().invoke(cli, ["check", "Bash", "--input", '{"command": "git log -1; rm -rf build"}',
                                      "--config", str(cfg), "--cwd", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out == {"decision": "deny", "rule": "Bash(rm *)", "source": str(cfg.resolve()),
                   "reason": out["reason"]}
    assert "rm -rf build" in out["reason"]


def test_human_output_is_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["check", "Read", "--input", '{"file_path": "/etc/hosts"}',
                                      "--cwd", str(tmp_path)])
    assert result.exit_code == 0
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ask: ")


def test_diagnostics_go_to_stderr(tmp_path: Path) -> None:
    cfg = _config(tmp_path, {"allow": ["*"], "deny": ["Bash(rm"]})
    result = CliRunner().invoke(cli, ["check", "Bash", "--input", '{"command": "ls"}', "--config", str(cfg),
                                      "--cwd", str(tmp_path), "--json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["decision"] == "deny"
    assert "permissions.allow[0]" in result.stderr and "permissions.deny[0]" in result.stderr


def test_mode_add_dir_and_bad_input(tmp_path: Path) -> None:
    args = ["check", "Write", "--input", json.dumps({"file_path": "/data/x.txt", "content": ""}),
            "--cwd", str(tmp_path), "--mode", "acceptEdits", "--add-dir", "/data", "--json"]
    result = CliRunner().invoke(cli, args)
    assert json.loads(result.stdout)["decision"] == "allow"
    bad = CliRunner().invoke(cli, ["check", "Bash", "--input", "[1]"])
    assert bad.exit_code == 2
