"""Projection of long results and reading them back, across sizes, with every error code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import pegboard_tool_result_read as trr
from pegboard import Pegboard, Session, SQLiteSessionStore
from pegboard.testing import isolated_pegboard
from tests.builtin.tool_result_read.support import LIMIT, EmitPlugin


def board(tmp_path: Path, **kw: Any) -> Pegboard:
    return isolated_pegboard(EmitPlugin(), trr, cwd=tmp_path, **kw)


async def read_all(session: Session, ref: str, limit: int = trr.DEFAULT_LIMIT) -> str:
    out, offset = [], 0
    while True:
        page = await session.call("tool_result_read", {"ref": ref, "offset": offset, "limit": limit})
        assert not page.is_error, page.text
        fields = page.structured
        assert fields is not None
        out.append(page.text.split("\n", 1)[1] if "\n" in page.text else "")
        if fields["eof"]:
            return "".join(out)
        assert fields["next_offset"] > offset
        offset = fields["next_offset"]


@pytest.mark.parametrize("size", [0, LIMIT, LIMIT + 1])
async def test_sizes_around_the_limit(tmp_path: Path, size: int) -> None:
    pb = board(tmp_path)
    async with pb.session(persist=False) as s:
        result = await s.call("Emit", {"text": "a", "repeat": size})
        if size <= LIMIT:
            assert result.text == "a" * size and "details_ref" not in result.metadata
            assert s.results.all() == []
            return
        ref = result.metadata["details_ref"]
        assert result.content[0].text == "a" * LIMIT  # type: ignore[union-attr]
        assert result.content[-1].text.startswith("\n\n[Result cut to 1,000 of 1,001 characters")  # type: ignore[union-attr]
        assert ref in result.text and "tool_result_read" in result.text
        assert await read_all(s, ref) == "a" * size


async def test_multibyte_text_at_the_cut(tmp_path: Path) -> None:
    text = "ä" * (LIMIT - 1) + "😀" + "€" * 50
    pb = board(tmp_path)
    async with pb.session(persist=False) as s:
        result = await s.call("Emit", {"text": text})
        assert result.content[0].text == text[:LIMIT]  # type: ignore[union-attr]
        assert result.content[0].text.endswith("😀")  # type: ignore[union-attr]
        ref = result.metadata["details_ref"]
        page = await s.call("tool_result_read", {"ref": ref, "offset": LIMIT - 1, "limit": 2})
        assert page.text.endswith("😀€") and page.metadata["total_chars"] == len(text)
        assert await read_all(s, ref, limit=7) == text


async def test_five_megabytes_in_a_sqlite_store(tmp_path: Path) -> None:
    text = "".join(f"line {i:07d} ü\n" for i in range(5 * 1024 * 1024 // 16))
    pb = board(tmp_path, store=SQLiteSessionStore(tmp_path / "s.db"))
    async with pb.session() as s:
        ref = (await s.call("Emit", {"text": text})).metadata["details_ref"]
        page = await s.call("tool_result_read", {"ref": ref, "offset": 3_000_000})
        assert page.metadata["storage_kind"] == "inspectable" and page.metadata["content_type"] == "text/plain"
        assert page.text.endswith(text[3_000_000 : 3_000_000 + trr.DEFAULT_LIMIT])
        last = await s.call("tool_result_read", {"ref": ref, "offset": len(text) - 5, "limit": 100})
        assert last.metadata["eof"] is True and last.metadata["next_offset"] is None
        assert last.text.endswith(text[-5:])
        beyond = await s.call("tool_result_read", {"ref": ref, "offset": len(text) + 10})
        assert beyond.metadata["eof"] is True and beyond.metadata["offset"] == len(text)


async def test_limit_bounds(tmp_path: Path) -> None:
    pb = board(tmp_path)
    async with pb.session(persist=False) as s:
        ref = (await s.call("Emit", {"text": "b", "repeat": 100_000})).metadata["details_ref"]
        default = await s.call("tool_result_read", {"ref": ref})
        assert default.metadata["limit"] == 12_000 and default.metadata["next_offset"] == 12_000
        most = await s.call("tool_result_read", {"ref": ref, "limit": 48_000})
        assert most.metadata["next_offset"] == 48_000 and not most.metadata["envelope_clamped"]
        too_many = await s.call("tool_result_read", {"ref": ref, "limit": 48_001})
        assert too_many.is_error and too_many.reason == "invalid_input"


async def test_envelope_clamp(tmp_path: Path) -> None:
    pb = board(tmp_path, config={"tools": {"toolResultRead": {"envelopeChars": 5_000}}})
    async with pb.session(persist=False) as s:
        text = "".join(chr(0x4E00 + i % 500) for i in range(30_000))
        ref = (await s.call("Emit", {"text": text})).metadata["details_ref"]
        page = await s.call("tool_result_read", {"ref": ref, "offset": 10, "limit": 12_000})
        fields = page.metadata
        assert fields["envelope_clamped"] is True and fields["eof"] is False
        assert len(page.text) <= 5_000 and fields["next_offset"] < 10 + 12_000
        assert page.text.endswith(text[10 : fields["next_offset"]])
        after = await s.call("tool_result_read", {"ref": ref, "offset": fields["next_offset"], "limit": 100})
        assert after.metadata["envelope_clamped"] is False


async def test_error_codes(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "s.db")
    pb = board(tmp_path, store=store)
    async with pb.session() as one, pb.session() as two:
        ref = (await one.call("Emit", {"text": "c", "repeat": 2_000})).metadata["details_ref"]
        other = await two.call("tool_result_read", {"ref": ref})
        assert other.is_error and other.metadata["error_kind"] == "out_of_scope" and other.reason == "out_of_scope"
        for bad in ["/tmp/x.txt", "tr_", "tr_XYZ", ref + "!", "result-1"]:
            got = await one.call("tool_result_read", {"ref": bad})
            assert got.metadata["error_kind"] == "invalid_ref", bad
        missing = await one.call("tool_result_read", {"ref": "tr_" + "f" * 20})
        assert missing.metadata["error_kind"] == "not_found"
        prefix = await one.call("tool_result_read", {"ref": ref[:12]})
        assert not prefix.is_error and prefix.metadata["total_chars"] == 2_000
        one.results.put("Emit", "x", ref="tr_abcdef0123456789aaaa")
        one.results.put("Emit", "y", ref="tr_abcdef0123456789bbbb")
        ambiguous = await one.call("tool_result_read", {"ref": "tr_abcdef012345"})
        assert ambiguous.metadata["error_kind"] == "invalid_ref" and "ambiguous" in ambiguous.text
        partial = one.results.put("Emit", "half of it", complete=False)
        assert (await one.call("tool_result_read", {"ref": partial})).metadata["error_kind"] == "not_available"
        projected = one.results.put("Emit", "a bounded preview", storage_kind="projected")
        got = await one.call("tool_result_read", {"ref": projected})
        assert got.metadata["error_kind"] == "not_available" and "preview" not in got.text
        artifact = one.results.put("Emit", "gone.log", storage_kind="artifact")
        assert (await one.call("tool_result_read", {"ref": artifact})).metadata["error_kind"] == "not_available"
        no_raw = await one.call("tool_result_read", {"ref": ref + "_raw"})
        assert no_raw.metadata["error_kind"] == "not_found"


async def test_earlier_run_and_resumed_session(tmp_path: Path) -> None:
    pb = board(tmp_path, store=SQLiteSessionStore(tmp_path / "s.db"))
    async with pb.session() as s:
        ref = (await s.call("Emit", {"text": "d", "repeat": 3_000})).metadata["details_ref"]
        sid = s.id
        await s.call("Emit", {"text": "later run"})
    again = board(tmp_path, store=SQLiteSessionStore(tmp_path / "s.db"))
    async with again.session(session_id=sid) as s:
        assert await read_all(s, ref) == "d" * 3_000


async def test_raw_and_artifact_records(tmp_path: Path) -> None:
    pb = board(tmp_path)
    async with pb.session(persist=False) as s:
        ref = s.results.put("WebFetch", "# Title\n", content_type="text/markdown", raw="<h1>Title</h1>")
        raw = await s.call("tool_result_read", {"ref": trr.raw_ref(ref)})
        assert raw.text.endswith("<h1>Title</h1>") and raw.metadata["source_tool"] == "WebFetch"
        details = await s.call("tool_result_read", {"ref": ref})
        assert details.text.endswith("# Title\n") and details.metadata["content_type"] == "text/markdown"
        (s.directory / "spill.log").write_text("spilled bytes\n")
        spilled = s.results.put("Bash", "spill.log", storage_kind="artifact")
        got = await s.call("tool_result_read", {"ref": spilled})
        assert got.text.endswith("spilled bytes\n") and got.metadata["storage_kind"] == "artifact"
        outside = s.results.put("Bash", "../../etc/passwd", storage_kind="artifact")
        assert (await s.call("tool_result_read", {"ref": outside})).metadata["error_kind"] == "not_available"
        summary = trr.results_summary(s)
        assert {r["ref"] for r in summary} == {ref, spilled, outside}
        assert next(r for r in summary if r["ref"] == ref)["raw_ref"] == ref + "_raw"


async def test_without_reader_the_note_says_to_narrow(tmp_path: Path) -> None:
    pb = isolated_pegboard(EmitPlugin(), cwd=tmp_path)
    result = await pb.call("Emit", {"text": "e", "repeat": 1_500})
    ref = result.metadata["details_ref"]
    assert ref in result.text and "narrow the request" in result.text
