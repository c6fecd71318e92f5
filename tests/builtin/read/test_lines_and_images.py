"""The toolkit's line index and image sizing, on real files and Pillow images."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

import pegboard_read
import pegboard_result_images
from pegboard import ImageBlock, TextBlock, ToolContext, ToolResult, hookimpl, tool
from pegboard.testing import isolated_pegboard
from pegboard_read_images import (
    ImageLimits,
    ImageLimitsError,
    fit_base64_image,
    image_limits,
    process_image,
    validate_resize,
)
from pegboard_read_lines import LineIndexCache, build_index, plain_lines, read_lines
from tests.builtin.files import image_bytes

pieces = st.lists(
    st.one_of(st.text(alphabet="ab ✓\t", max_size=12), st.sampled_from(["\n", "\r\n", "\n\n"])), max_size=40
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=pieces, block=st.integers(min_value=1, max_value=9), first=st.integers(0, 30), count=st.integers(1, 30))
def test_index_pages_match_a_plain_split(tmp_path: Path, parts: list[str], block: int, first: int, count: int) -> None:
    text = "".join(parts)
    f = tmp_path / "t.txt"
    f.write_bytes(text.encode())
    index = build_index(f, chunk=block)
    expected = [line.removesuffix("\r") for line in text.split("\n")]
    if expected and expected[-1] == "":
        expected.pop()
    assert index.total_lines == len(expected)
    got = [line.text for line in read_lines(index, first, count)]
    assert got == expected[first : first + count]


raw_pieces = st.lists(
    st.one_of(
        st.binary(max_size=6),
        st.sampled_from([b"\n", b"\r\n", b"\r", "\u2713\u2028".encode(), b"\xef\xbb\xbf", b"\xff\xfe"]),
    ),
    max_size=30,
)


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=raw_pieces)
def test_plain_lines_are_the_lines_read_lines_gives(tmp_path: Path, parts: list[bytes]) -> None:
    data = b"".join(parts)
    f = tmp_path / "t.bin"
    f.write_bytes(data)
    lines = plain_lines(data)
    if lines is None:
        return
    index = build_index(f)
    read = list(read_lines(index, 0, 1_000_000))
    assert lines == [line.text for line in read]
    assert {line.encoding for line in read} <= {index.encoding} == {"utf-8"}


small_files = st.lists(
    st.one_of(st.text(alphabet="ab \t\u2713", max_size=30), st.sampled_from(["\n", "\n\n", "x" * 2001, "\r\n"])),
    max_size=60,
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    parts=small_files,
    offset=st.one_of(st.none(), st.integers(1, 70)),
    limit=st.one_of(st.none(), st.integers(1, 70)),
    budget=st.sampled_from([25_000, 60, 200]),
)
def test_small_file_page_is_the_line_index_page(
    tmp_path: Path, parts: list[str], offset: int | None, limit: int | None, budget: int
) -> None:
    data = "".join(parts).encode()
    f = tmp_path / "t.txt"
    f.write_bytes(data)
    args = pegboard_read.ReadInput(file_path=str(f), offset=offset, limit=limit)
    fast_notes: list[dict[str, Any]] = []
    slow_notes: list[dict[str, Any]] = []
    fast = pegboard_read._text(f, args, budget, LineIndexCache(), fast_notes, data)
    slow = pegboard_read._text(f, args, budget, LineIndexCache(), slow_notes, None)
    assert fast.model_dump() == slow.model_dump()
    assert fast_notes == slow_notes


def test_long_lines_are_cut_without_holding_them(tmp_path: Path) -> None:
    f = tmp_path / "one-long-line"
    f.write_bytes(b"y" * 5_000_000 + b"\nnext\n")
    lines = list(read_lines(build_index(f), 0, 5, max_line_bytes=1000))
    assert [(len(x.text), x.cut) for x in lines] == [(1000, True), (4, False)]


def test_cache_is_bounded_and_keyed_by_mtime(tmp_path: Path) -> None:
    cache = LineIndexCache(max_entries=2)
    files = []
    for n in range(3):
        f = tmp_path / f"{n}.txt"
        f.write_text("a\n" * (n + 1))
        files.append(f)
        cache.get(f)
    assert len(cache) == 2 and cache.scans == 3
    cache.get(files[2])
    assert cache.scans == 3
    files[2].write_text("changed\n" * 9)
    assert cache.get(files[2]).total_lines == 9 and cache.scans == 4 and len(cache) == 2


def test_process_image_keeps_an_image_within_limits() -> None:
    data = image_bytes(20, 10)
    out = process_image(data)
    assert out.data == data and not out.changed and out.mime_type == "image/png"


def test_gif_and_webp_keep_their_format_when_resized() -> None:
    for fmt, mime in (("GIF", "image/gif"), ("WEBP", "image/webp")):
        out = process_image(image_bytes(300, 100, fmt), ImageLimits(max_width=150))
        assert out.mime_type == mime and (out.width, out.height) == (150, 50)


def test_max_bytes_counts_base64_and_shrinks_until_it_fits() -> None:
    out = process_image(image_bytes(800, 800, noisy=True), ImageLimits(max_bytes=40_000))
    assert len(out.base64) <= 40_000 and out.mime_type == "image/jpeg" and out.width < 800


def test_garbage_images_are_kept_as_they_came_in_results() -> None:
    assert fit_base64_image(base64.b64encode(b"nope").decode(), "image/png") is None
    assert fit_base64_image("!!!not base64", "image/png") is None


@given(st.dictionaries(st.text(max_size=12), st.one_of(st.integers(), st.text(max_size=4), st.booleans(),
                                                        st.none(), st.floats(allow_nan=False))))
def test_resize_validation_never_raises_anything_else(raw: dict[str, Any]) -> None:
    try:
        limits = validate_resize(raw, "m")
    except ImageLimitsError as exc:
        assert str(exc).startswith("m")
    else:
        assert all(v > 0 for v in (limits.max_width, limits.max_height, limits.max_bytes, limits.jpeg_quality))
        assert limits.jpeg_quality <= 100


def test_limits_lookup_by_provider_and_model() -> None:
    config = {"providers": {"acme": {"models": [{"id": "m1", "input_limits": {"images": {"resize": {
        "maxWidth": 10, "maxHeight": 20, "maxBytes": 3000, "jpegQuality": 50}}}}, {"id": "m2"}]}}}
    assert image_limits(config, "acme", "m1") == ImageLimits(10, 20, 3000, 50)
    assert image_limits(config, "acme", "m2") == ImageLimits()
    assert image_limits(config, "other", "m1") == ImageLimits()
    assert image_limits(None, "acme", "m1") == ImageLimits()
    with pytest.raises(ImageLimitsError, match=r"providers\['acme'\]\.models\[id='m1'\]\.input_limits\.images"):
        image_limits({"providers": {"acme": {"models": [{"id": "m1", "input_limits": {"images": 3}}]}}}, "acme", "m1")


class PictureInput(BaseModel):
    width: int


@tool(name="Picture")
async def picture(input: PictureInput, ctx: ToolContext) -> ToolResult:
    """Return a picture of the given width, as an MCP tool might."""
    return ToolResult(
        content=[ImageBlock(data=base64.b64encode(image_bytes(input.width, 100)).decode()), TextBlock(text="pic")],
        structured={"kept": True},
    )


@tool(name="BadPicture")
async def bad_picture(input: PictureInput, ctx: ToolContext) -> ToolResult:
    """Return an image Pillow cannot decode."""
    return ToolResult(content=[ImageBlock(data=base64.b64encode(b"garbage").decode())])


picture_plugin = SimpleNamespace(register_tools=hookimpl(lambda register: [register(picture), register(bad_picture)]))


def _size(result: ToolResult) -> tuple[int, int]:
    from PIL import Image

    block = next(b for b in result.content if isinstance(b, ImageBlock))
    size: tuple[int, int] = Image.open(io.BytesIO(base64.b64decode(block.data))).size
    return size


def test_every_tools_images_are_fitted_to_the_model_before_they_go_out(tmp_path: Path) -> None:
    config = {"providers": [{"id": "p", "models": [{"id": "small", "input_limits": {"images": {"resize": {
        "maxWidth": 50}}}}]}]}
    pb = isolated_pegboard(pegboard_read, pegboard_result_images, picture_plugin, cwd=tmp_path, config=config)
    default = pb.call_sync("Picture", {"width": 3000})
    assert _size(default) == (2000, 67) and default.structured == {"kept": True}
    small = pb.call_sync("Picture", {"width": 300}, provider="p", model="small")
    assert _size(small) == (50, 17) and small.text == "pic"
    untouched = pb.call_sync("Picture", {"width": 300})
    assert _size(untouched) == (300, 100)
    bad = pb.call_sync("BadPicture", {"width": 1})
    assert not bad.is_error and base64.b64decode(bad.content[0].data) == b"garbage"  # type: ignore[union-attr]

