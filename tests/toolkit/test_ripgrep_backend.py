"""Grep's rg starts through the call's execution backend, not a subprocess of its own."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

import pegboard_grep
from pegboard import ExecProcess, ToolContext, hookimpl
from pegboard.testing import isolated_pegboard
from pegboard_toolkit import LocalBackend, find_ripgrep, run_ripgrep


class Recording:
    """A backend that runs everything locally and remembers each argv."""

    name = "recording"

    def __init__(self) -> None:
        self.started: list[list[str]] = []
        self.inner = LocalBackend()

    async def start(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], **kw: Any) -> ExecProcess:
        self.started.append(list(argv))
        return await self.inner.start(argv, cwd=cwd, env=env, **kw)

    @hookimpl
    def exec_backend(self, context: ToolContext) -> Any:
        return self


needs_rg = pytest.mark.skipif(find_ripgrep() is None, reason="ripgrep is not installed")


@needs_rg
def test_grep_runs_rg_through_the_exec_backend(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("needle\nhay\n")
    recording = Recording()
    config = {"tools": {"grep": {"backend": "ripgrep"}}}
    result = isolated_pegboard(pegboard_grep, recording, cwd=tmp_path, config=config).call_sync(
        "Grep", {"pattern": "needle", "output_mode": "content"})
    assert not result.is_error, result.text
    assert "needle" in result.text
    assert recording.started and Path(recording.started[0][0]).name.startswith("rg")


@needs_rg
async def test_max_lines_cuts_the_output_and_ends_rg(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("".join(f"line {i}\n" for i in range(5000)))
    rg = find_ripgrep()
    assert rg is not None
    result = await run_ripgrep(rg, ["--no-heading", "line", "."], cwd=tmp_path, max_lines=3)
    assert result.cut and result.stdout.count(b"\n") == 3
    full = await run_ripgrep(rg, ["-c", "line", "."], cwd=tmp_path, timeout=10)
    assert full.returncode == 0 and full.stdout.strip().endswith(b"5000")
