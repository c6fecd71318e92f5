"""The Write tool on real files, through the whole call pipeline."""

from __future__ import annotations

import codecs
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import pegboard_write
from pegboard.testing import check_tool
from tests.builtin.filetools import Files, kind, unprivileged


@pytest.fixture
def files(tmp_path: Path) -> Iterator[Files]:
    f = Files(tmp_path)
    yield f
    f.close()


def test_conforms() -> None:
    check_tool(pegboard_write.write, {"file_path": "/tmp/x.txt", "content": "hi\n"})


def test_is_in_fs_and_file_groups_and_asks_by_default(files: Files) -> None:
    tool = files.pb.tool("write")
    assert tool is not None and tool.name == "Write"
    assert {"fs", "file"} <= set(tool.groups) and tool.family == "Edit"
    assert files.pb.check("Write", {"file_path": str(files.root / "a"), "content": ""}).decision == "ask"


def test_creates_a_file_and_its_parents_with_unicode_and_spaces(files: Files) -> None:
    target = files.root / "new dir" / "ünï cödé.txt"
    result = files.call("Write", file_path=str(target), content="héllo\nwörld\n")
    assert not result.is_error, result.text
    assert target.read_text(encoding="utf-8") == "héllo\nwörld\n"
    s = result.structured
    assert s is not None and s["type"] == "create" and s["filePath"] == str(target)
    assert s["originalFile"] is None and s["bytes_written"] == len("héllo\nwörld\n".encode())
    assert s["structuredPatch"][0]["lines"] == ["+héllo", "+wörld"]
    assert "File created successfully" in result.text


def test_relative_path_is_resolved_against_the_session_cwd(files: Files) -> None:
    assert not files.call("Write", file_path="rel.txt", content="x").is_error
    assert (files.root / "rel.txt").read_text() == "x"


def test_overwriting_an_unread_file_is_refused(files: Files) -> None:
    target = files.root / "a.txt"
    target.write_text("old\n")
    result = files.call("Write", file_path=str(target), content="new\n")
    assert kind(result) == "not_read" and "Read it first" in result.text
    assert target.read_text() == "old\n"


def test_a_partial_view_does_not_count_as_a_read(files: Files) -> None:
    target = files.root / "a.txt"
    target.write_text("old\n")
    files.read(target, partial=True)
    result = files.call("Write", file_path=str(target), content="new\n")
    assert kind(result) == "not_read" and result.metadata["read_state"] == "partial_read"


def test_overwrite_after_read_keeps_the_mode(files: Files) -> None:
    target = files.root / "a.sh"
    target.write_text("echo old\n")
    target.chmod(0o751)
    files.read(target)
    result = files.call("Write", file_path=str(target), content="echo new\n")
    assert not result.is_error, result.text
    assert target.read_text() == "echo new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    s = result.structured
    assert s is not None and s["type"] == "update" and s["originalFile"] == "echo old\n"
    assert s["structuredPatch"] == [
        {"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1, "lines": ["-echo old", "+echo new"]}
    ]


def test_a_file_changed_on_disk_since_the_read_is_refused(files: Files) -> None:
    target = files.root / "a.txt"
    target.write_text("old\n")
    files.read(target)
    target.write_text("changed by someone else\n")
    result = files.call("Write", file_path=str(target), content="new\n")
    assert kind(result) == "stale_read" and "modified since it was read" in result.text
    assert target.read_text() == "changed by someone else\n"


def test_own_writes_count_as_reads(files: Files) -> None:
    target = files.root / "a.txt"
    assert not files.call("Write", file_path=str(target), content="one\n").is_error
    assert not files.call("Write", file_path=str(target), content="two\n").is_error
    assert target.read_text() == "two\n"


def test_directories_and_notebooks_are_refused(files: Files) -> None:
    assert kind(files.call("Write", file_path=str(files.root), content="x")) == "is_directory"
    result = files.call("Write", file_path=str(files.root / "n.ipynb"), content="{}")
    assert kind(result) == "notebook" and "NotebookEdit" in result.text


def test_keeps_utf16_bom_and_crlf(files: Files) -> None:
    target = files.root / "w.txt"
    target.write_bytes(codecs.BOM_UTF16_LE + "a\r\nb\r\n".encode("utf-16-le"))
    files.read(target)
    assert not files.call("Write", file_path=str(target), content="ä\nß\n").is_error
    assert target.read_bytes() == codecs.BOM_UTF16_LE + "ä\r\nß\r\n".encode("utf-16-le")


def test_keeps_a_utf8_bom(files: Files) -> None:
    target = files.root / "b.txt"
    target.write_bytes(codecs.BOM_UTF8 + b"old\n")
    files.read(target)
    assert not files.call("Write", file_path=str(target), content="new\n").is_error
    assert target.read_bytes() == codecs.BOM_UTF8 + b"new\n"


def test_writing_through_a_symlink_replaces_the_target_and_keeps_the_link(files: Files) -> None:
    real = files.root / "real.txt"
    real.write_text("old\n")
    link = files.root / "link.txt"
    link.symlink_to(real)
    files.read(link)
    assert not files.call("Write", file_path=str(link), content="new\n").is_error
    assert link.is_symlink() and real.read_text() == "new\n"


def test_a_parent_that_is_a_file_gives_an_error(files: Files) -> None:
    (files.root / "plain").write_text("x")
    assert kind(files.call("Write", file_path=str(files.root / "plain" / "child.txt"), content="x")) == "io_error"


def test_read_only_directory_gives_a_clear_error_and_leaves_nothing() -> None:
    base = Path(tempfile.mkdtemp(prefix="pegboard-ro-"))
    files = Files(base)
    try:
        base.chmod(0o755)
        locked = base / "locked"
        locked.mkdir()
        (locked / "a.txt").write_text("old\n")
        (locked / "a.txt").chmod(0o666)
        locked.chmod(0o555)
        files.read(locked / "a.txt")
        with unprivileged():
            created = files.call("Write", file_path=str(locked / "new.txt"), content="x")
            replaced = files.call("Write", file_path=str(locked / "a.txt"), content="new\n")
        assert kind(created) == "permission_denied" and str(locked) in created.text
        assert kind(replaced) == "permission_denied"
        assert sorted(os.listdir(locked)) == ["a.txt"] and (locked / "a.txt").read_text() == "old\n"
    finally:
        files.close()
        (base / "locked").chmod(0o755)
        for p in sorted(base.rglob("*"), reverse=True):
            p.unlink() if p.is_file() else p.rmdir()
        base.rmdir()


def test_crlf_file_keeps_crlf_when_content_uses_lf(files: Files) -> None:
    target = files.root / "c.txt"
    target.write_bytes(b"a\r\nb\r\n")
    files.read(target)
    assert not files.call("Write", file_path=str(target), content="x\ny\n").is_error
    assert target.read_bytes() == b"x\r\ny\r\n"
