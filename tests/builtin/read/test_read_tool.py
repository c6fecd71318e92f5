"""Read on real files: budgets, big files, encodings, refusals, images, PDFs, notebooks, the ledger."""

from __future__ import annotations

import base64
import io
import os
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import pegboard_read
from pegboard import ImageBlock, ToolResult
from pegboard.testing import check_tool, isolated_pegboard
from pegboard_toolkit import ReadLedger
from tests.builtin.files import IS_ROOT, image_bytes, notebook, pdf_bytes


def call(tmp_path: Path, config: dict[str, Any] | None = None, **input: object) -> ToolResult:
    return isolated_pegboard(pegboard_read, cwd=tmp_path, config=config).call_sync("Read", input)


def test_conforms_with_pages() -> None:
    check_tool(pegboard_read.read, {"file_path": "/tmp/x.pdf", "pages": "1-3"})
    assert {"fs", "file"} <= set(pegboard_read.read.groups)
    assert pegboard_read.read.family == "Read" and pegboard_read.read.read_only


def test_whole_file_over_the_budget_gets_the_first_page_and_a_partial_notice(tmp_path: Path) -> None:
    f = tmp_path / "wide.txt"
    f.write_text("".join(f"{i:04d} " + "w" * 95 + "\n" for i in range(1, 501)))
    result = call(tmp_path, {"tools": {"read": {"maxOutputTokens": 1000}}}, file_path=str(f))
    assert not result.is_error
    assert "PARTIAL view: lines 1-" in result.text and "output budget" in result.text
    assert len(result.text) < 1000 * 4 + 300
    assert result.structured is not None and result.structured["partial"] is True
    assert result.structured["total_lines"] == 500


def test_explicit_range_over_the_budget_is_an_error(tmp_path: Path) -> None:
    f = tmp_path / "wide.txt"
    f.write_text(("w" * 100 + "\n") * 500)
    result = call(tmp_path, {"tools": {"read": {"maxOutputTokens": 1000}}}, file_path=str(f), offset=1, limit=400)
    assert result.is_error and result.metadata["error_kind"] == "too_large"
    assert "read budget of 1,000 tokens" in result.text and "limit=" in result.text
    small = call(tmp_path, {"tools": {"read": {"maxOutputTokens": 1000}}}, file_path=str(f), offset=1, limit=5)
    assert not small.is_error


def test_bad_budget_setting_names_the_key(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    result = call(tmp_path, {"tools": {"read": {"maxOutputTokens": "lots"}}}, file_path=str(tmp_path / "a.txt"))
    assert result.metadata["error_kind"] == "invalid_config" and "tools.read.maxOutputTokens" in result.text


def test_structured_fields_hooks_expect(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("one\ntwo\nthree\n")
    s = call(tmp_path, file_path=str(f), offset=2).structured
    assert s is not None
    assert s["content"] == "two\nthree" and s["total_lines"] == 3 and s["lines_returned"] == 2


def test_last_lines_of_a_big_file_keep_memory_bounded_and_reuse_the_index(tmp_path: Path) -> None:
    f = tmp_path / "big.log"
    with open(f, "w") as fh:
        for chunk in range(40):
            fh.write("".join(f"log line {chunk * 10000 + i} " + "x" * 60 + "\n" for i in range(10000)))
    size = f.stat().st_size
    assert size > 25_000_000
    pb = isolated_pegboard(pegboard_read, cwd=tmp_path)
    tracemalloc.start()
    first = pb.call_sync("Read", {"file_path": str(f), "offset": 399_901, "limit": 100})
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert first.text.splitlines()[0] == f"399901\tlog line 399900 {'x' * 60}"
    assert first.text.splitlines()[-1].startswith("400000\tlog line 399999")
    assert peak < 8_000_000, peak
    again = pb.call_sync("Read", {"file_path": str(f), "offset": 200_000, "limit": 3})
    assert again.text.splitlines()[0].startswith("200000\tlog line 199999")
    cache = pb.stash[pegboard_read.LINE_INDEX]
    assert cache.scans == 1
    with open(f, "a") as fh:
        fh.write("appended\n")
    grown = pb.call_sync("Read", {"file_path": str(f), "offset": 400_001})
    assert grown.text == "400001\tappended" and cache.scans == 2


def test_sparse_two_gigabyte_file_is_refused_as_binary_without_reading_it(tmp_path: Path) -> None:
    f = tmp_path / "sparse.img"
    with open(f, "wb") as fh:
        fh.truncate(2 * 1024**3)
    result = call(tmp_path, file_path=str(f))
    assert result.is_error and result.metadata["error_kind"] == "binary_file"


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"a\r\nb\r\n", ["a", "b"]),
        ("\ufeffbom ✓\nnext\n".encode(), ["bom ✓", "next"]),
        ("utf16 ✓\r\nzwei\r\n".encode("utf-16"), ["utf16 ✓", "zwei"]),
        ("be\nzwei".encode("utf-16-be").join([b"\xfe\xff", b""]), ["be", "zwei"]),
        (b"caf\xe9 latin\nok\n", ["café latin", "ok"]),
    ],
)
def test_encodings(tmp_path: Path, data: bytes, expected: list[str]) -> None:
    f = tmp_path / "enc.txt"
    f.write_bytes(data)
    result = call(tmp_path, file_path=str(f))
    assert not result.is_error, result.text
    assert [line.split("\t", 1)[1] for line in result.text.splitlines()] == expected


def test_unicode_and_space_names_and_symlinks(tmp_path: Path) -> None:
    d = tmp_path / "dir with space"
    d.mkdir()
    f = d / "ünï cödé.txt"
    f.write_text("hello ✓\n")
    assert call(tmp_path, file_path=str(f)).text == "     1\thello ✓"
    outside = tmp_path.parent / f"{tmp_path.name}-out.txt"
    outside.write_text("outside\n")
    (tmp_path / "link.txt").symlink_to(f)
    assert call(tmp_path, file_path="link.txt").text == "     1\thello ✓"
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    loop = call(tmp_path, file_path=str(tmp_path / "loop"))
    assert loop.is_error and loop.metadata["error_kind"] == "os_error"


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/stdin", "/dev/null", "/proc/self/fd/0", "/dev/urandom"])
def test_device_files_are_refused(tmp_path: Path, device: str) -> None:
    result = call(tmp_path, file_path=device, config={"permissions": {"allow": ["Read"]}})
    assert result.is_error and result.metadata["error_kind"] == "device_file", result.text


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result = call(tmp_path, file_path=str(fifo))
    assert result.metadata["error_kind"] == "device_file"


def test_directory_names_a_listing_tool_that_is_enabled(tmp_path: Path) -> None:
    import pegboard_ls

    alone = call(tmp_path, file_path=str(tmp_path))
    assert alone.metadata["error_kind"] == "is_directory" and "No tool to list directories" in alone.text
    pb = isolated_pegboard(pegboard_read, pegboard_ls, cwd=tmp_path)
    with_ls = pb.call_sync("Read", {"file_path": str(tmp_path)})
    assert with_ls.metadata["error_kind"] == "is_directory" and "List it with LS." in with_ls.text


def test_missing_file_names_the_cwd_and_a_near_match(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("a: 1\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("x\n")
    typo = call(tmp_path, file_path=str(tmp_path / "confg.yaml"))
    assert typo.metadata["error_kind"] == "file_not_found"
    assert "does not exist" in typo.text and str(tmp_path) in typo.text
    assert f"Did you mean {tmp_path / 'config.yaml'}?" in typo.text
    other_suffix = call(tmp_path, file_path=str(tmp_path / "config.yml"))
    assert "Did you mean" in other_suffix.text
    rooted = call(tmp_path, file_path="/src/main.py", config={"permissions": {"allow": ["Read"]}})
    assert f"Did you mean {tmp_path / 'src' / 'main.py'}?" in rooted.text
    nothing = call(tmp_path, file_path=str(tmp_path / "zzzzzz.qqq"))
    assert "Did you mean" not in nothing.text


def test_binary_files_name_their_type(tmp_path: Path) -> None:
    (tmp_path / "prog").write_bytes(b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 64)
    (tmp_path / "data.sqlite").write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    assert "ELF" in call(tmp_path, file_path=str(tmp_path / "prog")).text
    assert "SQLite" in call(tmp_path, file_path=str(tmp_path / "data.sqlite")).text


@pytest.mark.skipif(IS_ROOT, reason="root reads every file")
def test_unreadable_file(tmp_path: Path) -> None:
    f = tmp_path / "locked.txt"
    f.write_text("secret\n")
    f.chmod(0)
    try:
        assert call(tmp_path, file_path=str(f)).metadata["error_kind"] == "permission_denied"
    finally:
        f.chmod(0o600)


def test_pages_only_for_pdfs(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    result = call(tmp_path, file_path=str(tmp_path / "a.txt"), pages="1")
    assert result.metadata["error_kind"] == "invalid_input"


async def test_the_ledger_records_whole_partial_and_range_reads(tmp_path: Path) -> None:
    whole, long_file = tmp_path / "whole.txt", tmp_path / "long.txt"
    whole.write_text("a\nb\n")
    long_file.write_text("x\n" * 3000)
    pb = isolated_pegboard(pegboard_read, cwd=tmp_path)
    async with pb.session() as session:
        await session.call("Read", {"file_path": str(whole)})
        await session.call("Read", {"file_path": str(long_file)})
        ledger = ReadLedger(session)
        assert ledger.require_fresh(whole) is None
        partial = ledger.require_fresh(long_file)
        assert partial is not None and partial.kind == "partial_read"
        await session.call("Read", {"file_path": str(long_file), "offset": 2001, "limit": 1000})
        assert ledger.require_fresh(long_file) is None
        entry = ledger.entry(long_file)
        assert entry is not None and [2001, 3000] in entry.ranges


async def test_reading_an_unchanged_file_again_keeps_its_entry_and_a_change_is_recorded(tmp_path: Path) -> None:
    f = tmp_path / "f.txt"
    f.write_text("one\n")
    pb = isolated_pegboard(pegboard_read, cwd=tmp_path)
    async with pb.session() as session:
        ledger = ReadLedger(session)
        await session.call("Read", {"file_path": str(f), "offset": 1, "limit": 1})
        first = ledger.entry(f)
        assert first is not None
        await session.call("Read", {"file_path": str(f), "offset": 1, "limit": 1})
        assert ledger.entry(f) == first
        await session.call("Read", {"file_path": str(f)})
        again = ledger.entry(f)
        assert again is not None and again.whole and again.time == first.time
        f.write_text("two lines\nnow\n")
        os.utime(f, ns=(1, 1))
        await session.call("Read", {"file_path": str(f), "offset": 2, "limit": 1})
        changed = ledger.entry(f)
        assert changed is not None and not changed.whole and changed.ranges == [[2, 2]]
        assert changed.mtime_ns == 1 and changed.size == f.stat().st_size


# ------------------------------------------------------------------ images


def _image_of(result: ToolResult) -> Any:
    from PIL import Image

    block = next(b for b in result.content if isinstance(b, ImageBlock))
    return Image.open(io.BytesIO(base64.b64decode(block.data))), block.mime_type


def test_large_png_is_resized_to_the_default_limits(tmp_path: Path) -> None:
    (tmp_path / "wide.png").write_bytes(image_bytes(3000, 1500))
    result = call(tmp_path, file_path=str(tmp_path / "wide.png"))
    image, mime = _image_of(result)
    assert image.size == (2000, 1000) and mime == "image/png"
    assert result.structured is not None and result.structured["file_size"] > 0
    assert result.structured["mime_type"] == "image/png" and result.structured["image"]["resized"]


def test_small_image_comes_back_byte_for_byte(tmp_path: Path) -> None:
    data = image_bytes(10, 10, "JPEG")
    (tmp_path / "small.jpg").write_bytes(data)
    block = call(tmp_path, file_path=str(tmp_path / "small.jpg")).content[0]
    assert isinstance(block, ImageBlock) and base64.b64decode(block.data) == data and block.mime_type == "image/jpeg"


def test_bmp_becomes_png(tmp_path: Path) -> None:
    (tmp_path / "pic.bmp").write_bytes(image_bytes(50, 40, "BMP"))
    image, mime = _image_of(call(tmp_path, file_path=str(tmp_path / "pic.bmp")))
    assert mime == "image/png" and image.format == "PNG" and image.size == (50, 40)


def test_image_over_500_kb_becomes_jpeg_of_the_same_size(tmp_path: Path) -> None:
    (tmp_path / "noise.png").write_bytes(image_bytes(700, 700, noisy=True))
    assert (tmp_path / "noise.png").stat().st_size > 500 * 1024
    image, mime = _image_of(call(tmp_path, file_path=str(tmp_path / "noise.png")))
    assert mime == "image/jpeg" and image.size == (700, 700)


def test_model_limits_from_config(tmp_path: Path) -> None:
    config = {
        "providers": [
            {"id": "acme", "models": [{"id": "tiny", "input_limits": {"images": {"resize": {"maxWidth": 100,
                                                                                           "maxHeight": 80}}}}]}
        ]
    }
    (tmp_path / "p.png").write_bytes(image_bytes(400, 400))
    pb = isolated_pegboard(pegboard_read, cwd=tmp_path, config=config)
    limited = pb.call_sync("Read", {"file_path": str(tmp_path / "p.png")}, provider="acme", model="tiny")
    assert _image_of(limited)[0].size == (80, 80)
    other = pb.call_sync("Read", {"file_path": str(tmp_path / "p.png")}, provider="acme", model="big")
    assert _image_of(other)[0].size == (400, 400)


def test_invalid_model_limits_name_the_key(tmp_path: Path) -> None:
    config = {"providers": [{"id": "acme", "models": [{"id": "m", "input_limits": {"images": {"resize": {
        "jpegQuality": 101}}}}]}]}
    (tmp_path / "p.png").write_bytes(image_bytes(4, 4))
    pb = isolated_pegboard(pegboard_read, cwd=tmp_path, config=config)
    result = pb.call_sync("Read", {"file_path": str(tmp_path / "p.png")}, provider="acme", model="m")
    assert result.metadata["error_kind"] == "invalid_config"
    assert "input_limits.images.resize.jpegQuality" in result.text


def test_broken_image_is_an_omission_notice(tmp_path: Path) -> None:
    (tmp_path / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    result = call(tmp_path, file_path=str(tmp_path / "bad.png"))
    assert result.metadata["error_kind"] == "image_error" and "omitted" in result.text


# ------------------------------------------------------------------ PDFs and notebooks


def test_short_pdf_is_read_whole(tmp_path: Path) -> None:
    (tmp_path / "short.pdf").write_bytes(pdf_bytes(3))
    result = call(tmp_path, file_path=str(tmp_path / "short.pdf"))
    assert not result.is_error, result.text
    assert "Page 1" in result.text and "Page 3" in result.text and "--- Page 2 of 3 ---" in result.text


def test_long_pdf_needs_pages(tmp_path: Path) -> None:
    (tmp_path / "long.pdf").write_bytes(pdf_bytes(25))
    path = str(tmp_path / "long.pdf")
    refused = call(tmp_path, file_path=path)
    assert refused.metadata["error_kind"] == "pdf_too_long" and '"1-5"' in refused.text
    some = call(tmp_path, file_path=path, pages="3-5")
    assert "Page 3" in some.text and "Page 5" in some.text and "Page 6" not in some.text
    assert some.structured is not None and some.structured["pages"] == [3, 4, 5]
    assert call(tmp_path, file_path=path, pages="7").structured["pages"] == [7]  # type: ignore[index]


@pytest.mark.parametrize("pages", ["abc", "5-3", "0", "1-21", "30", "1-", ""])
def test_bad_page_ranges_show_the_valid_forms(tmp_path: Path, pages: str) -> None:
    (tmp_path / "long.pdf").write_bytes(pdf_bytes(25))
    result = call(tmp_path, file_path=str(tmp_path / "long.pdf"), pages=pages)
    assert result.is_error and result.metadata["error_kind"] == "invalid_pages"
    assert '"1-5"' in result.text or "has 25 pages" in result.text or "more than 20" in result.text


@given(st.text(max_size=20), st.integers(min_value=1, max_value=60))
@example("0\x1f", 1)
@example("1\n", 3)
@example("\u0661", 3)
def test_page_ranges_never_raise(spec: str, count: int) -> None:
    parsed = pegboard_read.parse_pages(spec, count)
    if isinstance(parsed, list):
        assert 0 < len(parsed) <= 20 and all(1 <= p <= count for p in parsed)
    else:
        assert "pages" in parsed


def test_not_a_pdf(tmp_path: Path) -> None:
    (tmp_path / "fake.pdf").write_bytes(b"%PDF-1.4 garbage")
    assert call(tmp_path, file_path=str(tmp_path / "fake.pdf")).metadata["error_kind"] == "invalid_pdf"


def test_notebook_cells_with_outputs_and_images(tmp_path: Path) -> None:
    path = notebook(tmp_path / "nb with space.ipynb")
    result = call(tmp_path, file_path=str(path))
    assert not result.is_error, result.text
    text = result.text
    assert "# Title" in text and "print('hello')" in text and "hello" in text
    assert "ZeroDivisionError: division by zero" in text and "\x1b[" not in text
    assert 'type="markdown"' in text and 'type="code"' in text
    images = [b for b in result.content if isinstance(b, ImageBlock)]
    assert len(images) == 1 and images[0].mime_type == "image/png"
    assert result.structured is not None and result.structured["total_cells"] == 4


def test_broken_notebook(tmp_path: Path) -> None:
    (tmp_path / "bad.ipynb").write_text("{not json")
    assert call(tmp_path, file_path=str(tmp_path / "bad.ipynb")).metadata["error_kind"] == "invalid_notebook"


def test_a_credential_in_the_file_is_redacted_in_the_text_and_in_the_structured_content(tmp_path: Path) -> None:
    key = "sk-proj-" + "abcdefghijklmnopqrstuvwxyz0123456789ABCD"
    f = tmp_path / "env.txt"
    f.write_text(f"OPENAI_API_KEY={key}\n")
    result = call(tmp_path, file_path=str(f))
    assert key not in result.text and "[REDACTED]" in result.text
    assert result.structured is not None and key not in str(result.structured)
    assert "[REDACTED]" in result.structured["content"]


async def test_a_file_changed_between_its_stat_and_its_read_counts_as_stale(tmp_path: Path) -> None:
    f = tmp_path / "f.txt"
    f.write_text("before\n")
    before = os.stat(f)
    f.write_text("after, longer\n")
    pb = isolated_pegboard(pegboard_read, cwd=tmp_path)
    async with pb.session() as session:
        ledger = ReadLedger(session)
        ledger.record_read(f, whole=True, seen=before)
        stale = ledger.require_fresh(f)
        assert stale is not None and stale.kind == "stale_read"
        ledger.record_read(f, whole=True)
        assert ledger.require_fresh(f) is None
