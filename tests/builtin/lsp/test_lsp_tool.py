"""LSP against real language servers on small real projects."""

from __future__ import annotations

import dataclasses
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pegboard_edit
import pegboard_lsp
import pegboard_permissions_paths
import pegboard_read
import pegboard_write
from pegboard import Pegboard, Session
from pegboard.testing import check_tool, isolated_pegboard
from pegboard_lsp_servers import DEFAULT_SERVERS, POOL, LspSettings, resolve_command
from tests.builtin.lsp.projects import make_python_package, make_ts_project

PLUGINS = (pegboard_lsp, pegboard_edit, pegboard_read, pegboard_write, pegboard_permissions_paths)


def _pb(root: Path, config: dict[str, Any] | None = None) -> Pegboard:
    return isolated_pegboard(*PLUGINS, cwd=root, config=config or {})


#: A loaded machine (the suite runs on every core) can take seconds to analyse a new file.
EDITS = {"permissions": {"defaultMode": "acceptEdits"}, "tools": {"lsp": {"diagnosticsTimeout": 30}}}


@pytest.fixture
def pkg(tmp_path: Path) -> Path:
    return make_python_package(tmp_path / "pkg")


def _ts_available() -> str | None:
    found = resolve_command(DEFAULT_SERVERS["typescript"], LspSettings(), os.environ)
    return found if isinstance(found, str) else None


def test_conforms_and_answers_to_read_rules() -> None:
    check_tool(pegboard_lsp.lsp, {"operation": "hover", "filePath": "a.py", "line": 1, "character": 1})
    assert pegboard_lsp.lsp.family == "Read"


async def test_definition_references_hover_symbols_on_a_python_package(pkg: Path) -> None:
    async with _pb(pkg).session() as s:
        found = await s.call("LSP", {"operation": "goToDefinition", "filePath": "demo/use.py", "line": 5,
                                     "character": 11})
        assert not found.is_error, found.text
        assert found.structured is not None
        assert found.structured["results"][0] | {} == {"file": "demo/core.py", "line": 4, "character": 5,
                                                     "text": "def greet(name: str) -> str:"}
        refs = await s.call("LSP", {"operation": "findReferences", "filePath": "demo/core.py", "line": 4,
                                    "character": 5})
        assert refs.structured is not None
        assert {(r["file"], r["line"]) for r in refs.structured["results"]} == {
            ("demo/core.py", 4), ("demo/use.py", 1), ("demo/use.py", 5)}
        hover = await s.call("LSP", {"operation": "hover", "filePath": "demo/use.py", "line": 5, "character": 11})
        assert "greet" in hover.text
        symbols = await s.call("LSP", {"operation": "documentSymbol", "filePath": "demo/core.py"})
        names = [r["name"] for r in (symbols.structured or {})["results"]]
        assert {"greet", "Shape", "Square"} <= set(names)
        unsupported = await s.call("LSP", {"operation": "incomingCalls", "filePath": "demo/core.py", "line": 4,
                                           "character": 5})
        if unsupported.is_error:
            assert unsupported.metadata["error_kind"] == "unsupported"
            assert "does not support incomingCalls" in unsupported.text


async def test_positions_past_the_file_and_unknown_languages_are_clear_errors(pkg: Path) -> None:
    (pkg / "notes.txt").write_text("text\n")
    async with _pb(pkg).session() as s:
        past = await s.call("LSP", {"operation": "hover", "filePath": "demo/use.py", "line": 99, "character": 1})
        assert past.is_error and past.metadata["error_kind"] == "invalid_position" and "past the end" in past.text
        missing = await s.call("LSP", {"operation": "hover", "filePath": "nope.py"})
        assert missing.is_error and missing.metadata["error_kind"] == "path_not_found"
        other = await s.call("LSP", {"operation": "hover", "filePath": "notes.txt"})
        assert other.is_error and other.metadata["error_kind"] == "no_server"
        assert "tools.lsp.servers" in other.text
        bad = await s.call("LSP", {"operation": "rename", "filePath": "demo/use.py"})
        assert bad.is_error and "operation" in bad.text


async def test_read_deny_rules_refuse_the_file_and_hide_results(pkg: Path) -> None:
    config = {"permissions": {"deny": ["Read(demo/core.py)"]}}
    async with _pb(pkg, config).session() as s:
        denied = await s.call("LSP", {"operation": "documentSymbol", "filePath": "demo/core.py"})
        assert denied.is_error and denied.reason == "denied"
        refs = await s.call("LSP", {"operation": "goToDefinition", "filePath": "demo/use.py", "line": 5,
                                    "character": 11})
        assert refs.structured is not None and refs.structured["results"] == [] and refs.structured["hidden"] == 1
        assert "hidden by Read rules" in refs.text


async def test_a_crashed_server_is_restarted_once_then_reported(pkg: Path) -> None:
    async with _pb(pkg).session() as s:
        ask = {"operation": "goToDefinition", "filePath": "demo/use.py", "line": 5, "character": 11}
        assert not (await s.call("LSP", ask)).is_error
        pool = s.state[POOL]
        (entry,) = pool.entries.values()
        assert entry.client._proc is not None
        os.kill(entry.client._proc.pid, signal.SIGKILL)
        await entry.client._proc.wait()
        again = await s.call("LSP", ask)
        assert not again.is_error, again.text
        (entry,) = pool.entries.values()
        assert entry.restarts == 1
        assert entry.client._proc is not None
        os.kill(entry.client._proc.pid, signal.SIGKILL)
        await entry.client._proc.wait()
        failed = await s.call("LSP", ask)
        assert failed.is_error and failed.metadata["error_kind"] == "server_failed"
        assert "crashed again" in failed.text


async def test_servers_start_lazily_per_root_and_stop_at_session_close(pkg: Path) -> None:
    other = make_python_package(pkg / "vendor" / "other")
    session: Session
    async with _pb(pkg).session() as session:
        assert session.state.get(POOL) is None
        for root in (pkg, other):
            await session.call("LSP", {"operation": "documentSymbol", "filePath": str(root / "demo" / "core.py")})
        pool = session.state[POOL]
        assert {root for _, root in pool.entries} == {pkg, other}
        procs = [e.client._proc for e in pool.entries.values()]
    assert all(p is not None and p.returncode is not None for p in procs)


async def test_diagnostics_are_appended_after_write_and_edit(pkg: Path) -> None:
    async with _pb(pkg, EDITS).session() as s:
        target = pkg / "demo" / "broken.py"
        wrote = await s.call("Write", {"file_path": str(target), "content": "def f():\n    return undefined_name\n"})
        assert not wrote.is_error, wrote.text
        assert "<new-diagnostics>" in wrote.text and "undefined_name" in wrote.text
        assert "demo/broken.py:2:12" in wrote.text
        await s.call("Read", {"file_path": str(target)})
        fixed = await s.call("Edit", {"file_path": str(target), "old_string": "undefined_name", "new_string": "1"})
        assert not fixed.is_error, fixed.text
        assert "undefined_name" not in fixed.text.split("<new-diagnostics>")[-1]


async def test_no_diagnostics_when_turned_off_or_no_server_covers_the_file(pkg: Path) -> None:
    async with _pb(pkg, {**EDITS, "tools": {"lsp": {"diagnosticsOnEdit": False}}}).session() as s:
        wrote = await s.call("Write", {"file_path": str(pkg / "x.py"), "content": "y = undefined_name\n"})
        assert "<new-diagnostics>" not in wrote.text
    async with _pb(pkg, EDITS).session() as s:
        wrote = await s.call("Write", {"file_path": str(pkg / "x.txt"), "content": "undefined_name\n"})
        assert "<new-diagnostics>" not in wrote.text and s.state.get(POOL) is None


def test_unavailable_with_the_reason_when_no_server_is_installed(pkg: Path) -> None:
    config = {"tools": {"lsp": {"servers": {"python": {"command": ["no-such-lsp-server"]},
                                            "typescript": {"enabled": False}}}}}
    pb = _pb(pkg, config)
    tool = pb.tool("LSP")
    assert tool is not None
    assert "no-such-lsp-server is not installed" in (tool.unavailable_reason() or "")


@pytest.mark.skipif(_ts_available() is not None, reason=f"typescript-language-server: {_ts_available()}")
async def test_typescript_definition_and_diagnostics(tmp_path: Path) -> None:
    proj = make_ts_project(tmp_path / "ts")
    async with _pb(proj, EDITS).session() as s:
        found = await s.call("LSP", {"operation": "goToDefinition", "filePath": "src/main.ts", "line": 1,
                                     "character": 10})
        assert not found.is_error, found.text
        assert [(r["file"], r["line"]) for r in (found.structured or {})["results"]] == [("src/lib.ts", 1)]
        wrote = await s.call("Write", {"file_path": str(proj / "src" / "bad.ts"),
                                       "content": 'const n: number = "text";\nexport { n };\n'})
        assert "<new-diagnostics>" in wrote.text and "not assignable" in wrote.text


@given(st.text(), st.integers(min_value=0, max_value=50))
def test_utf16_columns_round_trip(text: str, column: int) -> None:
    column = min(column, len(text))
    units = pegboard_lsp._to_utf16(text, column)
    assert pegboard_lsp._from_utf16(text, units) == column
    assert units >= column


async def test_workspace_symbol_and_apply_patch_paths(pkg: Path) -> None:
    async with _pb(pkg).session() as s:
        found = await s.call("LSP", {"operation": "workspaceSymbol", "filePath": "demo/use.py", "query": "Square"})
        if found.is_error:  # python-lsp-server has no workspace/symbol
            assert found.metadata["error_kind"] == "unsupported" and "workspaceSymbolProvider" in found.text
        else:
            assert any(r["name"] == "Square" for r in (found.structured or {})["results"])
    from pegboard import ToolCall, ToolResult
    from pegboard_write import write

    patch = "*** Begin Patch\n*** Update File: demo/core.py\n@@\n-x\n+y\n*** Add File: demo/new.py\n+z\n*** End Patch\n"
    (pkg / "demo" / "new.py").write_text("z\n")
    call = ToolCall(tool=dataclasses.replace(write, name="ApplyPatch"), input={"input": patch})
    paths = pegboard_lsp._edited_paths(call, ToolResult.from_text("ok"), pkg)
    assert paths == [pkg / "demo" / "core.py", pkg / "demo" / "new.py"]
