"""LS on real directories."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pegboard_ls
from pegboard import ToolResult
from pegboard.testing import check_tool, isolated_pegboard
from tests.builtin.files import IS_ROOT, make_tree


def ls(root: Path, config: dict[str, Any] | None = None, **input: object) -> ToolResult:
    return isolated_pegboard(pegboard_ls, cwd=root, config=config).call_sync("ls", input)


def entries(result: ToolResult) -> dict[str, dict[str, Any]]:
    assert result.structured is not None, result.text
    return {e["name"]: e for e in result.structured["entries"]}


def test_conforms() -> None:
    check_tool(pegboard_ls.ls, {"path": "/tmp", "ignore": ["*.pyc"]})
    assert pegboard_ls.ls.family == "Read" and {"fs", "file"} <= set(pegboard_ls.ls.groups)


def test_entries_with_type_size_and_mtime(tmp_path: Path) -> None:
    tree = make_tree(tmp_path / "proj")
    os.utime(tree / "README.md", (1_700_000_000, 1_700_000_000))
    result = ls(tree)
    got = entries(result)
    assert got["src"]["type"] == "dir" and got["src"]["size"] is None
    assert got["README.md"] == {"name": "README.md", "type": "file", "size": 22, "mtime": "2023-11-14T22:13:20Z"}
    assert got["link-out"]["type"] == "symlink" and got["link-out"]["target_type"] == "dir"
    assert got["broken-link"]["target_type"] == "broken"
    assert ".git" in got and ".hidden.py" in got and "docs with space" in got
    lines = result.text.splitlines()
    assert lines[0] == f"{tree}/ ({len(got)} entries)"
    dirs_first = [line.split()[-1] for line in lines[1:]]
    assert dirs_first.index("src/") < dirs_first.index("README.md")
    assert any(line.endswith("broken-link -> " + str(tree / "nowhere") + " (broken)") for line in lines)
    assert any("docs with space/" in line for line in lines)


def test_ignore_globs_and_relative_path(tmp_path: Path) -> None:
    tree = make_tree(tmp_path / "proj")
    got = entries(ls(tree, path="src", ignore=["*.py", "deep"]))
    assert got == {}
    assert set(entries(ls(tree, path="src", ignore=["util*"]))) == {"app.py", "deep"}


def test_read_denied_entries_are_left_out(tmp_path: Path) -> None:
    tree = make_tree(tmp_path / "proj")
    got = entries(ls(tree, {"permissions": {"deny": ["Read(README.md)", "Read(src/**)"]}}))
    assert "README.md" not in got and "src" not in got and "build" in got


def test_cap_with_a_truncation_note(tmp_path: Path) -> None:
    for n in range(1005):
        (tmp_path / f"f{n:04d}").write_text("")
    result = ls(tmp_path)
    assert result.structured is not None and result.structured["truncated"] is True
    assert result.structured["count"] == 1000 and result.structured["total"] == 1005
    assert "Listing truncated: 1000 of 1005" in result.text


def test_errors(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x")
    assert ls(tmp_path, path="nope").metadata["error_kind"] == "path_not_found"
    assert ls(tmp_path, path="f.txt").metadata["error_kind"] == "not_a_directory"
    assert ls(tmp_path, ignore=["[x"]).metadata["error_kind"] == "invalid_pattern"
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    assert ls(tmp_path, path="loop").is_error


def test_unreadable_directory(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0)
    try:
        result = ls(tmp_path, path="locked")
        if IS_ROOT:
            assert not result.is_error
        else:
            assert result.metadata["error_kind"] == "permission_denied"
    finally:
        locked.chmod(0o700)
