"""Project trust: a cloned project's config runs no commands until the user trusts it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pegboard.core.config import discover_layers
from pegboard.core.projecttrust import TRUST_ENV, is_trusted, set_trusted, trust_file, trusted_projects


def pegboard(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != TRUST_ENV}
    return subprocess.run(
        [sys.executable, "-m", "pegboard", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


def test_trust_store_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TRUST_ENV, raising=False)
    project = tmp_path / "proj"
    project.mkdir()
    assert not is_trusted(project)
    set_trusted(project)
    assert is_trusted(project) and trusted_projects() == [str(project.resolve())]
    set_trusted(project, False)
    assert not is_trusted(project)
    trust_file().write_text("{not json")
    assert trusted_projects() == [], "a broken trust file trusts nothing"
    monkeypatch.setenv(TRUST_ENV, "1")
    assert is_trusted(project)


def test_project_layers_carry_their_trust(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TRUST_ENV, raising=False)
    (tmp_path / ".pegboard").mkdir()
    (tmp_path / ".pegboard" / "settings.json").write_text("{}")
    extra = tmp_path / "extra.json"
    extra.write_text("{}")
    layers = discover_layers(tmp_path, [extra])
    assert {ly.scope: ly.trusted for ly in layers} == {"default": True, "project": False, "cli": True}
    set_trusted(tmp_path)
    assert all(ly.trusted for ly in discover_layers(tmp_path))


def test_an_untrusted_projects_hooks_do_not_run_until_trusted(tmp_path: Path) -> None:
    (tmp_path / ".pegboard").mkdir()
    hook = {"matcher": "Read", "hooks": [{"type": "command", "command": "echo no >&2; exit 2"}]}
    (tmp_path / ".pegboard" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [hook]}}))
    (tmp_path / "a.txt").write_text("hello")
    ran = pegboard("call", "Read", "--input", '{"file_path": "a.txt"}', cwd=tmp_path)
    assert ran.returncode == 0 and "hello" in ran.stdout
    assert "not trusted" in ran.stderr and "pegboard trust" in ran.stderr
    assert pegboard("trust", cwd=tmp_path).returncode == 0
    assert str(tmp_path.resolve()) in pegboard("trust", "--list", cwd=tmp_path).stdout
    blocked = pegboard("call", "Read", "--input", '{"file_path": "a.txt"}', "--json", cwd=tmp_path)
    assert blocked.returncode == 1 and json.loads(blocked.stdout)["reason"] == "hook_blocked"
    assert pegboard("trust", "--revoke", cwd=tmp_path).returncode == 0
    assert pegboard("call", "Read", "--input", '{"file_path": "a.txt"}', cwd=tmp_path).returncode == 0
