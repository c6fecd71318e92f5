"""The Edit tool on real files: its checks in order, line endings, encodings, symlinks."""

from __future__ import annotations

import codecs
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

import pegboard_edit
from pegboard.testing import check_tool
from tests.builtin.filetools import Files, kind


@pytest.fixture
def files(tmp_path: Path) -> Iterator[Files]:
    f = Files(tmp_path)
    yield f
    f.close()


def read_file(files: Files, name: str, data: bytes) -> Path:
    path = files.root / name
    path.write_bytes(data)
    files.read(path)
    return path


def test_conforms() -> None:
    check_tool(pegboard_edit.edit, {"file_path": "/tmp/x", "old_string": "a", "new_string": "b"})
    check_tool(pegboard_edit.multi_edit, {"file_path": "/tmp/x", "edits": [{"old_string": "a", "new_string": "b"}]})


def test_replaces_one_exact_occurrence(files: Files) -> None:
    path = read_file(files, "a.py", b"def f():\n    return 1\n")
    result = files.call("Edit", file_path=str(path), old_string="return 1", new_string="return 2")
    assert not result.is_error, result.text
    assert path.read_bytes() == b"def f():\n    return 2\n"
    s = result.structured
    assert s is not None
    assert s["filePath"] == str(path) and s["oldString"] == "return 1" and s["newString"] == "return 2"
    assert s["originalFile"] == "def f():\n    return 1\n" and s["replaceAll"] is False
    assert s["userModified"] is False and s["replacements"] == 1
    assert s["structuredPatch"] == [{"oldStart": 1, "oldLines": 2, "newStart": 1, "newLines": 2,
                                     "lines": [" def f():", "-    return 1", "+    return 2"]}]
    assert "     2\t    return 2" in result.text


def test_same_old_and_new_is_checked_first(files: Files) -> None:
    result = files.call("Edit", file_path=str(files.root / "missing"), old_string="a", new_string="a")
    assert kind(result) == "no_change"


def test_missing_file_names_the_cwd_and_a_near_match(files: Files) -> None:
    (files.root / "config.yaml").write_text("x")
    result = files.call("Edit", file_path=str(files.root / "config.yml"), old_string="x", new_string="y")
    assert kind(result) == "file_not_found"
    assert str(files.root) in result.text and "Did you mean" in result.text and "config.yaml" in result.text


def test_empty_old_string_creates_a_file(files: Files) -> None:
    path = files.root / "sub dir" / "néw.txt"
    result = files.call("Edit", file_path=str(path), old_string="", new_string="hello\n")
    assert not result.is_error, result.text
    assert path.read_text() == "hello\n" and result.structured and result.structured["type"] == "create"


def test_empty_old_string_on_an_existing_file_is_file_exists(files: Files) -> None:
    path = files.root / "a.txt"
    path.write_text("content")
    assert kind(files.call("Edit", file_path=str(path), old_string="", new_string="x")) == "file_exists"


def test_empty_old_string_fills_an_existing_empty_file(files: Files) -> None:
    path = files.root / "empty.txt"
    path.write_text("")
    assert not files.call("Edit", file_path=str(path), old_string="", new_string="x\n").is_error
    assert path.read_text() == "x\n"


def test_not_read_partial_and_stale(files: Files) -> None:
    path = files.root / "a.txt"
    path.write_text("one two\n")
    result = files.call("Edit", file_path=str(path), old_string="one", new_string="1")
    assert kind(result) == "not_read"
    files.read(path, partial=True)
    result = files.call("Edit", file_path=str(path), old_string="one", new_string="1")
    assert kind(result) == "not_read" and result.metadata["read_state"] == "partial_read"
    assert "partially" in result.text
    files.read(path)
    path.write_text("one two three\n")
    result = files.call("Edit", file_path=str(path), old_string="one", new_string="1")
    assert kind(result) == "stale_read"
    assert path.read_text() == "one two three\n"


def test_the_read_check_runs_before_matching(files: Files) -> None:
    path = files.root / "a.txt"
    path.write_text("abc\n")
    assert kind(files.call("Edit", file_path=str(path), old_string="zzz", new_string="y")) == "not_read"


def test_not_found_and_not_unique(files: Files) -> None:
    path = read_file(files, "a.txt", b"x = 1\nx = 1\n")
    result = files.call("Edit", file_path=str(path), old_string="y = 1", new_string="y = 2")
    assert kind(result) == "not_found" and "String: y = 1" in result.text
    result = files.call("Edit", file_path=str(path), old_string="x = 1", new_string="x = 2")
    assert kind(result) == "not_unique" and "Found 2 matches" in result.text and "replace_all" in result.text
    assert path.read_text() == "x = 1\nx = 1\n"


def test_matching_is_literal_and_case_sensitive(files: Files) -> None:
    path = read_file(files, "a.txt", b"Hello (world).*\n")
    assert kind(files.call("Edit", file_path=str(path), old_string="hello", new_string="x")) == "not_found"
    assert kind(files.call("Edit", file_path=str(path), old_string="Hello  (world)", new_string="x")) == "not_found"
    assert not files.call("Edit", file_path=str(path), old_string="(world).*", new_string="[w]").is_error
    assert path.read_text() == "Hello [w]\n"


def test_replace_all_counts_replacements(files: Files) -> None:
    path = read_file(files, "a.txt", b"a-a-a\n")
    result = files.call("Edit", file_path=str(path), old_string="a", new_string="bb", replace_all=True)
    assert not result.is_error and result.structured and result.structured["replacements"] == 3
    assert path.read_text() == "bb-bb-bb\n"


def test_consecutive_edits_need_no_new_read(files: Files) -> None:
    path = read_file(files, "a.txt", b"one\n")
    assert not files.call("Edit", file_path=str(path), old_string="one", new_string="two").is_error
    assert not files.call("Edit", file_path=str(path), old_string="two", new_string="three").is_error
    assert path.read_text() == "three\n"


def test_crlf_file_is_matched_with_lf_and_stays_crlf(files: Files) -> None:
    path = read_file(files, "w.txt", b"first\r\nsecond\r\nthird\r\n")
    result = files.call("Edit", file_path=str(path), old_string="first\nsecond", new_string="1\n2\n2b")
    assert not result.is_error, result.text
    assert path.read_bytes() == b"1\r\n2\r\n2b\r\nthird\r\n"


def test_mixed_endings_keep_every_untouched_ending(files: Files) -> None:
    path = read_file(files, "m.txt", b"a\r\nb\nc\r\nd\n")
    assert not files.call("Edit", file_path=str(path), old_string="c", new_string="C").is_error
    assert path.read_bytes() == b"a\r\nb\nC\r\nd\n"
    assert not files.call("Edit", file_path=str(path), old_string="a\nb", new_string="A\nB").is_error
    assert path.read_bytes() == b"A\r\nB\nC\r\nd\n"


def test_utf8_bom_is_kept_and_not_needed_in_old_string(files: Files) -> None:
    path = read_file(files, "bom.txt", codecs.BOM_UTF8 + b"start here\n")
    assert not files.call("Edit", file_path=str(path), old_string="start", new_string="begin").is_error
    assert path.read_bytes() == codecs.BOM_UTF8 + b"begin here\n"


@pytest.mark.parametrize("bom,codec", [(codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")])
def test_utf16_files_stay_utf16(files: Files, bom: bytes, codec: str) -> None:
    path = read_file(files, "u16.txt", bom + "größe = 1\r\nzwei\r\n".encode(codec))
    result = files.call("Edit", file_path=str(path), old_string="größe = 1\nzwei", new_string="größe = 2\ndrei")
    assert not result.is_error, result.text
    assert path.read_bytes() == bom + "größe = 2\r\ndrei\r\n".encode(codec)


def test_invalid_utf8_elsewhere_in_the_file_survives(files: Files) -> None:
    path = read_file(files, "latin.txt", b"caf\xe9\nvalue = 1\n")
    assert not files.call("Edit", file_path=str(path), old_string="value = 1", new_string="value = 2").is_error
    assert path.read_bytes() == b"caf\xe9\nvalue = 2\n"


def test_edit_through_a_symlink_changes_the_target(files: Files) -> None:
    real = files.root / "real.txt"
    real.write_text("old\n")
    link = files.root / "link.txt"
    link.symlink_to(real)
    files.read(link)
    assert not files.call("Edit", file_path=str(link), old_string="old", new_string="new").is_error
    assert link.is_symlink() and real.read_text() == "new\n"


def test_mode_is_kept(files: Files) -> None:
    path = read_file(files, "run.sh", b"echo 1\n")
    path.chmod(0o700)
    files.read(path)
    assert not files.call("Edit", file_path=str(path), old_string="1", new_string="2").is_error
    assert stat.S_IMODE(path.stat().st_mode) == 0o700


def test_notebooks_directories_and_binaries_are_refused(files: Files) -> None:
    nb = read_file(files, "n.ipynb", b"{}")
    assert kind(files.call("Edit", file_path=str(nb), old_string="{", new_string="[")) == "notebook"
    assert kind(files.call("Edit", file_path=str(files.root), old_string="a", new_string="b")) == "is_directory"
    binary = read_file(files, "b.bin", b"\x00\x01abc")
    assert kind(files.call("Edit", file_path=str(binary), old_string="abc", new_string="x")) == "binary_file"


def test_default_mode_asks_and_no_approver_refuses(tmp_path: Path) -> None:
    files = Files(tmp_path, mode="default")
    try:
        path = tmp_path / "a.txt"
        path.write_text("a\n")
        files.read(path)
        result = files.call("Edit", file_path=str(path), old_string="a", new_string="b")
        assert result.is_error and result.reason == "not_approved"
        assert path.read_text() == "a\n"
    finally:
        files.close()


def test_an_edit_deny_rule_blocks_the_call(tmp_path: Path) -> None:
    files = Files(tmp_path, config={"permissions": {"deny": ["Edit(secret/**)"]}})
    try:
        path = tmp_path / "secret" / "a.txt"
        path.parent.mkdir()
        path.write_text("a\n")
        files.read(path)
        result = files.call("Edit", file_path=str(path), old_string="a", new_string="b")
        assert result.is_error and result.reason == "denied"
    finally:
        files.close()


def test_a_symlink_loop_is_an_error_not_a_crash(files: Files) -> None:
    (files.root / "loop-a").symlink_to(files.root / "loop-b")
    (files.root / "loop-b").symlink_to(files.root / "loop-a")
    result = files.call("Edit", file_path=str(files.root / "loop-a"), old_string="a", new_string="b")
    assert kind(result) == "io_error"
    result = files.call("Write", file_path=str(files.root / "loop-a"), content="x")
    assert kind(result) == "io_error"
    result = files.call("ApplyPatch", input="*** Begin Patch\n*** Update File: loop-a\n-a\n+b\n*** End Patch")
    assert kind(result) == "io_error"


def test_read_only_directory_edit_fails_cleanly() -> None:
    import shutil
    import tempfile

    from tests.builtin.filetools import unprivileged

    base = Path(tempfile.mkdtemp(prefix="pegboard-ro-edit-"))
    files = Files(base)
    try:
        base.chmod(0o755)
        path = base / "a.txt"
        path.write_text("one\n")
        path.chmod(0o666)
        files.read(path)
        base.chmod(0o555)
        with unprivileged():
            result = files.call("Edit", file_path=str(path), old_string="one", new_string="two")
        assert kind(result) == "permission_denied" and str(base) in result.text
        assert path.read_text() == "one\n" and [p.name for p in base.iterdir()] == ["a.txt"]
    finally:
        files.close()
        base.chmod(0o755)
        shutil.rmtree(base)


def test_a_big_file_is_edited_in_place_of_its_bytes(files: Files) -> None:
    lines = [f"{i:07d} caf\xe9 ünïcode\n".encode() for i in range(60_000)]
    lines[100] = b"invalid \xff byte\n"
    data = b"".join(lines)
    assert len(data) > (1 << 20)
    path = read_file(files, "big.txt", data)
    result = files.call("Edit", file_path=str(path), old_string="0030000 café", new_string="0030000 CAFÉ")
    assert not result.is_error, result.text
    assert path.read_bytes() == data.replace("0030000 café".encode(), "0030000 CAFÉ".encode())
    s = result.structured
    assert s is not None and s["originalFile"] is None and s["replacements"] == 1
    row = "{:07d} café ünïcode".format
    assert s["structuredPatch"] == [{
        "oldStart": 29998, "oldLines": 7, "newStart": 29998, "newLines": 7,
        "lines": [" " + row(29997), " " + row(29998), " " + row(29999), "-" + row(30000),
                  "+0030000 CAFÉ ünïcode", " " + row(30001), " " + row(30002), " " + row(30003)],
    }]
    assert kind(files.call("Edit", file_path=str(path), old_string="ünïcode", new_string="x")) == "not_unique"
    assert kind(files.call("Edit", file_path=str(path), old_string="nowhere", new_string="x")) == "not_found"
    assert path.read_bytes()[:len(lines[0])] == lines[0]
