"""MultiEdit: several edits in order, all or nothing, off unless named."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.builtin.filetools import Files, board, kind


@pytest.fixture
def files(tmp_path: Path) -> Iterator[Files]:
    f = Files(tmp_path)
    yield f
    f.close()


def test_off_by_default_and_enabled_by_name(tmp_path: Path) -> None:
    import pegboard_edit
    from pegboard.testing import isolated_pegboard

    plain = isolated_pegboard(pegboard_edit, cwd=tmp_path)
    assert "MultiEdit" not in plain.tools().enabled and "Edit" in plain.tools().enabled
    grouped = isolated_pegboard(pegboard_edit, cwd=tmp_path, config={"tools": {"allow": ["group:fs"]}})
    assert "MultiEdit" not in grouped.tools().enabled
    assert "MultiEdit" in board(tmp_path).tools().enabled


def test_edits_apply_in_order(files: Files) -> None:
    path = files.root / "a.py"
    path.write_text("alpha = 1\nbeta = 2\n")
    files.read(path)
    result = files.call("MultiEdit", file_path=str(path), edits=[
        {"old_string": "alpha", "new_string": "gamma"},
        {"old_string": "ma", "new_string": "MA"},
    ])
    assert kind(result) == "conflicts_with_previous_edit" and result.metadata["edit_index"] == 1
    assert path.read_text() == "alpha = 1\nbeta = 2\n"
    result = files.call("MultiEdit", file_path=str(path), edits=[
        {"old_string": "alpha = 1", "new_string": "gamma = 1"},
        {"old_string": "beta", "new_string": "delta"},
        {"old_string": "= 2", "new_string": "= 20"},
    ])
    assert not result.is_error, result.text
    assert path.read_text() == "gamma = 1\ndelta = 20\n"
    s = result.structured
    assert s is not None and s["replacements"] == 3 and len(s["edits"]) == 3
    assert s["originalFileContents"] == "alpha = 1\nbeta = 2\n"


def test_all_or_nothing_names_the_failing_edit(files: Files) -> None:
    path = files.root / "a.txt"
    path.write_text("one two three\n")
    files.read(path)
    result = files.call("MultiEdit", file_path=str(path), edits=[
        {"old_string": "one", "new_string": "1"},
        {"old_string": "four", "new_string": "4"},
    ])
    assert kind(result) == "not_found" and result.metadata["edit_index"] == 1 and "edits[1]" in result.text
    assert path.read_text() == "one two three\n"
    result = files.call("MultiEdit", file_path=str(path), edits=[
        {"old_string": "o", "new_string": "0"},
    ])
    assert kind(result) == "not_unique" and "Found 2 matches" in result.text


def test_no_change_edit_is_refused_with_its_index(files: Files) -> None:
    result = files.call("MultiEdit", file_path=str(files.root / "x"), edits=[
        {"old_string": "a", "new_string": "b"},
        {"old_string": "c", "new_string": "c"},
    ])
    assert kind(result) == "no_change" and result.metadata["edit_index"] == 1


def test_first_empty_edit_creates_the_file(files: Files) -> None:
    path = files.root / "new.txt"
    result = files.call("MultiEdit", file_path=str(path), edits=[
        {"old_string": "", "new_string": "hello world\n"},
        {"old_string": "hello", "new_string": "goodbye"},
    ])
    assert kind(result) == "conflicts_with_previous_edit" and result.metadata["edit_index"] == 1
    assert not path.exists()
    result = files.call("MultiEdit", file_path=str(path), edits=[{"old_string": "", "new_string": "hello\n"}])
    assert not result.is_error and path.read_text() == "hello\n"


def test_text_next_to_an_insertion_may_be_edited(files: Files) -> None:
    path = files.root / "a.txt"
    path.write_text("a b c\n")
    files.read(path)
    result = files.call("MultiEdit", file_path=str(path), edits=[
        {"old_string": "b", "new_string": "B"},
        {"old_string": "a ", "new_string": "A "},
        {"old_string": " c", "new_string": " C"},
    ])
    assert not result.is_error, result.text
    assert path.read_text() == "A B C\n"


def test_crlf_multi_edit(files: Files) -> None:
    path = files.root / "w.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    files.read(path)
    result = files.call("MultiEdit", file_path=str(path), edits=[
        {"old_string": "one\ntwo", "new_string": "1\n2"},
        {"old_string": "three", "new_string": "3\n4"},
    ])
    assert not result.is_error, result.text
    assert path.read_bytes() == b"1\r\n2\r\n3\r\n4\r\n"


def test_an_edit_overlapping_an_insertion_partly_edits_the_current_text(files: Files) -> None:
    path = files.root / "a.py"
    path.write_text("alpha = 1\nbeta = 2\n")
    files.read(path)
    result = files.call("MultiEdit", file_path=str(path), edits=[
        {"old_string": "alpha", "new_string": "gamma"},
        {"old_string": "gamma = 1", "new_string": "gamma = 10"},
        {"old_string": "2", "new_string": "20", "replace_all": True},
    ])
    assert not result.is_error, result.text
    assert path.read_text() == "gamma = 10\nbeta = 20\n"


def test_edits_that_undo_each_other_are_no_change(files: Files) -> None:
    path = files.root / "a.txt"
    path.write_text("one two\n")
    files.read(path)
    before = path.stat().st_mtime_ns
    result = files.call("MultiEdit", file_path=str(path), edits=[
        {"old_string": "one", "new_string": "1"},
        {"old_string": "1 two", "new_string": "one two"},
    ])
    assert kind(result) == "no_change" and "exactly as it was" in result.text
    assert path.read_text() == "one two\n" and path.stat().st_mtime_ns == before
