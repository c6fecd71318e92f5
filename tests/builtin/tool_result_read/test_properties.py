"""Properties of reading stored results: pages rebuild any text; any ref gets a clear answer."""

from __future__ import annotations

import asyncio
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import pegboard_tool_result_read as trr
from pegboard.testing import isolated_pegboard

ERROR_KINDS = {"invalid_ref", "not_found", "out_of_scope", "not_available"}


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=3_000), limit=st.integers(min_value=1, max_value=900))
def test_pages_rebuild_the_text(text: str, limit: int) -> None:
    async def run() -> tuple[str, str]:
        pb = isolated_pegboard(trr, cwd=Path.cwd())
        async with pb.session(persist=False) as s:
            ref = s.results.put("T", text)
            stored = s.results.get(ref)
            assert stored is not None
            out, offset = [], 0
            while True:
                page = await s.call("tool_result_read", {"ref": ref, "offset": offset, "limit": limit})
                assert not page.is_error, page.text
                header, _, body = page.text.partition("\n")
                assert header.startswith(f"[{ref} from T")
                out.append(body)
                if page.metadata["eof"]:
                    assert page.metadata["total_chars"] == len(stored.text)
                    return "".join(out), stored.text
                assert page.metadata["next_offset"] == offset + len(body)
                offset = page.metadata["next_offset"]

    rebuilt, stored = asyncio.run(run())
    assert rebuilt == stored


@settings(max_examples=100, deadline=None)
@given(ref=st.text(max_size=40) | st.from_regex(r"tr_[0-9a-f]{0,30}(_raw)?", fullmatch=True))
def test_any_ref_gets_a_clear_answer(ref: str) -> None:
    async def run() -> None:
        pb = isolated_pegboard(trr, cwd=Path.cwd())
        async with pb.session(persist=False) as s:
            s.results.put("T", "kept")
            result = await s.call("tool_result_read", {"ref": ref})
            if result.is_error:
                assert result.metadata.get("error_kind") in ERROR_KINDS or result.reason == "invalid_input"
            else:
                assert result.text.endswith("kept")

    asyncio.run(run())
