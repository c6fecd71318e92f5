"""Paging through a cut result with tool_result_read."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from pydantic import BaseModel

import pegboard_tool_result_read
from pegboard import ToolContext, hookimpl, tool
from pegboard.testing import check_tool, isolated_pegboard


class DumpInput(BaseModel):
    file_path: str


@tool(name="Dump")
async def dump(input: DumpInput, ctx: ToolContext) -> str:
    """Return a file's whole text, however long (a tool without its own output budget)."""
    return Path(input.file_path).read_text()


dump_plugin = SimpleNamespace(register_tools=hookimpl(lambda register: register(dump)))


def test_conforms() -> None:
    check_tool(pegboard_tool_result_read.tool_result_read, {"ref": "result-x", "offset": 5})


async def test_pages_through_a_cut_read(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_text("".join(f"{i:05d} " + "x" * 90 + "\n" for i in range(2000)))
    pb = isolated_pegboard(dump_plugin, pegboard_tool_result_read, cwd=tmp_path)
    first = await pb.call("Dump", {"file_path": str(big)})
    assert first.metadata["truncated"] is True
    ref = first.metadata["full_result_ref"]
    assert f"read more with tool_result_read(ref={ref!r}, offset=100000)" in first.text
    page = await pb.call("tool_result_read", {"ref": ref, "offset": 100_000, "limit": 500})
    assert not page.is_error
    stored = pb.session(persist=False, session_id="default").results.get(ref)
    assert stored is not None
    expected = stored.text[100_000:100_500]
    assert expected and page.text.startswith(expected)
    assert "continue with offset=100500" in page.text
    missing = await pb.call("tool_result_read", {"ref": "result-nope"})
    assert missing.is_error and "No stored result" in missing.text
