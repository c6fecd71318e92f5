"""The built-in Read tool on real files."""

from __future__ import annotations

import base64
from pathlib import Path

import pegboard_read
from pegboard import ToolResult
from pegboard.testing import check_tool, isolated_pegboard


def call(tmp_path: Path, **input: object) -> ToolResult:
    return isolated_pegboard(pegboard_read, cwd=tmp_path).call_sync("Read", input)


def test_conforms() -> None:
    check_tool(pegboard_read.read, {"file_path": "/tmp/x", "offset": 2, "limit": 5})


def test_numbered_lines_with_offset_and_limit(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("".join(f"line {i}\n" for i in range(1, 11)))
    result = call(tmp_path, file_path=str(f), offset=3, limit=2)
    assert result.text == "     3\tline 3\n     4\tline 4"
    assert result.metadata["total_lines"] == 10


def test_long_file_gets_a_partial_view_note(tmp_path: Path) -> None:
    f = tmp_path / "long.txt"
    f.write_text("x\n" * 2500)
    text = call(tmp_path, file_path=str(f)).text
    assert "  2000\tx" in text and "  2001\t" not in text
    assert "PARTIAL view: lines 1-2000 of 2500" in text and "offset=2001" in text


def test_long_lines_are_cut(tmp_path: Path) -> None:
    f = tmp_path / "wide.txt"
    f.write_text("y" * 5000)
    assert "[line cut at 2000 characters]" in call(tmp_path, file_path=str(f)).text


def test_relative_paths_resolve_against_cwd(tmp_path: Path) -> None:
    (tmp_path / "rel.txt").write_text("hello")
    assert call(tmp_path, file_path="rel.txt").text == "     1\thello"


def test_errors_are_results(tmp_path: Path) -> None:
    missing = call(tmp_path, file_path=str(tmp_path / "nope"))
    assert missing.is_error and "does not exist" in missing.text
    directory = call(tmp_path, file_path=str(tmp_path))
    assert directory.is_error and "is a directory" in directory.text
    (tmp_path / "bin").write_bytes(b"\x00\x01\x02")
    assert "binary" in call(tmp_path, file_path=str(tmp_path / "bin")).text
    (tmp_path / "short.txt").write_text("a\n")
    past = call(tmp_path, file_path=str(tmp_path / "short.txt"), offset=5)
    assert past.is_error and "past the end" in past.text
    bad = call(tmp_path, file_path=str(tmp_path / "short.txt"), offset=0)
    assert bad.reason == "invalid_input"


def test_empty_file_says_so(tmp_path: Path) -> None:
    (tmp_path / "empty").write_text("")
    assert "is empty" in call(tmp_path, file_path=str(tmp_path / "empty")).text


def test_images_come_back_as_image_blocks(tmp_path: Path) -> None:
    png = base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    )
    (tmp_path / "dot.png").write_bytes(png)
    result = call(tmp_path, file_path=str(tmp_path / "dot.png"))
    block = result.content[0]
    assert block.type == "image" and block.mime_type == "image/png"
    assert base64.b64decode(block.data) == png
