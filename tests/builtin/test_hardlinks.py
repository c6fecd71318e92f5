"""The file tools on a tree where ``src/notes.txt`` is a hard link to the Read-denied ``.env``:
none of them reads, lists, greps or edits it (through the one engine check)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import pegboard_apply_patch
import pegboard_bash
import pegboard_edit
import pegboard_glob
import pegboard_grep
import pegboard_ls
import pegboard_notebook_edit
import pegboard_read
import pegboard_write
from pegboard import ToolResult
from pegboard.testing import isolated_pegboard

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX hard links")

PLUGINS = (pegboard_read, pegboard_grep, pegboard_glob, pegboard_ls, pegboard_edit, pegboard_write,
           pegboard_notebook_edit, pegboard_apply_patch, pegboard_bash)


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    root = tmp_path.resolve() / "proj"
    (root / "src").mkdir(parents=True)
    (root / ".env").write_text("SECRET=1\n")
    (root / "src" / "app.py").write_text("SECRET = None\n")
    os.link(root / ".env", root / "src" / "notes.txt")
    return root


def call(root: Path, tool: str, config: dict[str, Any] | None = None, /, **data: Any) -> ToolResult:
    cfg = {"tools": {"alsoAllow": ["ApplyPatch"]}, "permissions": {"deny": ["Read(.env)"]}, **(config or {})}
    pb = isolated_pegboard(*PLUGINS, cwd=root, config=cfg)
    try:
        with pb.session_sync(mode="acceptEdits") as session:
            return session.call_sync(tool, data)
    finally:
        pb.close()


PATCH = "*** Begin Patch\n*** Update File: src/notes.txt\n@@\n-SECRET=1\n+SECRET=2\n*** End Patch\n"
REFUSED: list[tuple[str, dict[str, Any]]] = [
    ("Read", {"file_path": "src/notes.txt"}),
    ("Edit", {"file_path": "src/notes.txt", "old_string": "SECRET=1", "new_string": "SECRET=2"}),
    ("Write", {"file_path": "src/notes.txt", "content": "x"}),
    ("NotebookEdit", {"notebook_path": "src/notes.txt", "new_source": "x", "cell_id": "0"}),
    ("ApplyPatch", {"input": PATCH}),
    ("Grep", {"pattern": "SECRET", "path": "src/notes.txt"}),
    ("Bash", {"command": "cat src/notes.txt"}),
]


@pytest.mark.parametrize(("tool", "data"), REFUSED, ids=[t for t, _ in REFUSED])
def test_the_link_is_refused(proj: Path, tool: str, data: dict[str, Any]) -> None:
    result = call(proj, tool, None, **data)
    assert result.is_error, result.text
    assert "Read(.env)" in result.text, result.text
    assert (proj / ".env").read_text() == "SECRET=1\n"


@pytest.mark.parametrize("mode", ["files_with_matches", "content", "count"])
def test_grep_drops_the_link_from_results(proj: Path, mode: str) -> None:
    result = call(proj, "Grep", None, pattern="SECRET", output_mode=mode)
    assert "app.py" in result.text and "notes.txt" not in result.text and "SECRET=1" not in result.text


def test_glob_and_ls_drop_the_link(proj: Path) -> None:
    globbed = call(proj, "Glob", None, pattern="**/*")
    assert "app.py" in globbed.text and "notes.txt" not in globbed.text
    listed = call(proj, "LS", None, path=str(proj / "src"))
    assert "app.py" in listed.text and "notes.txt" not in listed.text


def test_a_file_with_one_link_is_untouched(proj: Path) -> None:
    result = call(proj, "Read", None, file_path="src/app.py")
    assert not result.is_error and "SECRET = None" in result.text


def test_above_the_cap_searches_drop_every_multi_link_file(proj: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pegboard.core.permissions import inodes

    monkeypatch.setattr(inodes, "MAX_COVERED", 0)
    os.link(proj / "src" / "app.py", proj / "src" / "copy.py")
    (proj / "src" / "single.py").write_text("SECRET = 0\n")
    found = call(proj, "Grep", None, pattern="SECRET").text
    assert "single.py" in found and "copy.py" not in found and "notes.txt" not in found
    read = call(proj, "Read", None, file_path="src/copy.py")
    assert read.is_error and "too many to compare" in read.text
