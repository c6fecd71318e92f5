"""The PowerShell tool: the command line everywhere, real runs where pwsh 7+ exists."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pegboard_powershell
import pegboard_powershell_run
from pegboard_powershell_run import (
    build_ps_script,
    find_pwsh,
    opted_in,
    parse_version,
    powershell_argv,
    respects_policy,
)
from tests.builtin.runtime_support import RUNTIME, runtime_pegboard

PWSH, WHY = find_pwsh()
needs_pwsh = pytest.mark.skipif(PWSH is None, reason=f"PowerShell 7+ is not installed: {WHY}")
MODULES = (*RUNTIME, pegboard_powershell)
ON = {"permissions": {"allow": ["PowerShell"]}, "tools": {"powershell": {"enabled": True}}}


def test_command_line_bypasses_the_policy_unless_respected() -> None:
    argv = powershell_argv("/usr/bin/pwsh", "Get-Date")
    assert argv == ["/usr/bin/pwsh", "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass",
                    "-Command", "Get-Date"]
    assert powershell_argv("pwsh", "x", respect_policy=True) == ["pwsh", "-NoProfile", "-NonInteractive",
                                                                  "-Command", "x"]


def test_script_keeps_the_status_and_writes_the_cwd_when_it_moved(tmp_path: Path) -> None:
    script = build_ps_script("Set-Location ..", tmp_path / "it's.cwd")
    lines = script.splitlines()
    assert lines[1] == "Set-Location .."
    assert lines[2] == "$__pegboard_ok = $?" and lines[3] == "$__pegboard_code = $LASTEXITCODE"
    assert f"-LiteralPath '{tmp_path}/it''s.cwd'" in script
    assert lines[-1].startswith("if ($__pegboard_ok) { exit 0 }")
    assert "Set-Content" not in build_ps_script("Get-Date", None)


@given(st.integers(0, 99), st.integers(0, 99), st.integers(0, 99))
def test_parse_version(major: int, minor: int, patch: int) -> None:
    assert parse_version(f"PowerShell {major}.{minor}.{patch}\n") == (major, minor, patch)


def test_opt_in_and_policy_sources() -> None:
    assert not opted_in({}, {})
    assert opted_in({"FUXI_CODE_USE_POWERSHELL_TOOL": "1"}, {})
    assert opted_in({"PEGBOARD_USE_POWERSHELL_TOOL": "true"}, {})
    assert not opted_in({"PEGBOARD_USE_POWERSHELL_TOOL": "1"}, {"enabled": False})
    assert opted_in({}, {"enabled": True})
    assert respects_policy({"FUXI_CODE_POWERSHELL_RESPECT_EXECUTION_POLICY": "1"}, {})
    assert not respects_policy({}, {})


def _fake_pwsh(directory: Path, version: str) -> None:
    directory.mkdir()
    script = directory / "pwsh"
    script.write_text(f"#!/bin/sh\necho 'PowerShell {version}'\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


def test_find_pwsh_needs_version_7(tmp_path: Path) -> None:
    _fake_pwsh(tmp_path / "new", "7.4.1")
    _fake_pwsh(tmp_path / "old", "6.2.0")
    assert find_pwsh(str(tmp_path / "new")) == (str(tmp_path / "new" / "pwsh"), None)
    binary, why = find_pwsh(str(tmp_path / "old"))
    assert binary is None and why is not None and "needs 7 or later" in why
    assert find_pwsh(str(tmp_path / "none"))[1] == "pwsh (PowerShell 7 or later) is not on PATH"


async def test_tool_is_opt_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_pwsh(tmp_path / "bin", "7.4.1")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    for var in ("PEGBOARD_USE_POWERSHELL_TOOL", "FUXI_CODE_USE_POWERSHELL_TOOL"):
        monkeypatch.delenv(var, raising=False)
    pb = runtime_pegboard(tmp_path, config={"permissions": {"allow": ["PowerShell"]}}, modules=MODULES)
    async with pb.session() as session:
        result = await session.call("PowerShell", {"command": "Get-Date"})
    assert result.is_error and result.metadata.get("error_kind") == "not_enabled"
    assert "PEGBOARD_USE_POWERSHELL_TOOL=1" in result.text


async def test_unavailable_without_pwsh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert pegboard_powershell_run.pwsh_missing() == "pwsh (PowerShell 7 or later) is not on PATH"


@needs_pwsh
async def test_real_run_output_exit_code_and_cwd(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    pb = runtime_pegboard(tmp_path, config=ON, modules=MODULES)
    async with pb.session() as session:
        hello = await session.call("PowerShell", {"command": "Write-Output hello"})
        assert not hello.is_error and hello.text == "hello"
        failed = await session.call("PowerShell", {"command": "bash -c 'exit 3'"})
        assert failed.is_error and failed.text.endswith("Exit code 3")
        await session.call("PowerShell", {"command": "Set-Location sub"})
        where = await session.call("PowerShell", {"command": "(Get-Location).Path"})
        assert where.text == str(tmp_path / "sub")
