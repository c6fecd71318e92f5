"""Paging through a cut Read result with tool_result_read."""

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
    check_tool(pegboard_tool_result_read.tool_result_read, {"ref": "tr_0123456789abcdef0123", "offset": 5})


async def test_pages_through_a_cut_read(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_text("".join(f"{i:05d} " + "x" * 90 + "\n" for i in range(2000)))
    pb = isolated_pegboard(dump_plugin, pegboard_tool_result_read, cwd=tmp_path)
    async with pb.session(persist=False) as session:
        first = await session.call("Dump", {"file_path": str(big)})
        assert first.metadata["truncated"] is True
        ref = first.metadata["details_ref"]
        assert ref.startswith("tr_") and ref in first.text and str(tmp_path) not in first.text.splitlines()[-1]
        assert f'tool_result_read {{"ref": "{ref}", "offset": 100000' in first.text
        page = await session.call("tool_result_read", {"ref": ref, "offset": 100_000, "limit": 500})
        assert not page.is_error
        stored = session.results.get(ref)
        assert stored is not None
        expected = stored.text[100_000:100_500]
        assert page.text.endswith(expected)
        assert page.structured is not None and page.structured["next_offset"] == 100_500
        assert page.structured["source_tool"] == "Dump" and page.structured["eof"] is False
        missing = await session.call("tool_result_read", {"ref": "tr_00000000000000000000"})
        assert missing.is_error and missing.metadata["error_kind"] == "not_found"
