"""Property and example tests for the shell helpers: one-file views, exit-code heads, output capture."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pegboard_toolkit.output import OutputCapture, read_text_slice
from pegboard_toolkit.shell import exit_meaning, last_command_head
from pegboard_toolkit.views import FileView, single_file_view

WORDS = st.text(max_size=40)


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    f = tmp_path / "notes.txt"
    f.write_text("".join(f"{i}\n" for i in range(1, 51)))
    return f


@pytest.mark.parametrize(
    ("command", "whole", "first", "last"),
    [
        ("cat {f}", True, None, None),
        ("head {f}", False, 1, 10),
        ("head -n 5 {f}", False, 1, 5),
        ("head -3 {f}", False, 1, 3),
        ("tail {f}", False, 41, 50),
        ("tail -n 100 {f}", True, 1, 50),
        ("sed -n '4,9p' {f}", False, 4, 9),
        ("sed -n 7p {f}", False, 7, 7),
        ("grep -n needle {f}", True, None, None),
        ("egrep -e a -e b {f}", True, None, None),
        ("fgrep -A 2 x {f}", True, None, None),
    ],
)
def test_recognised_views(notes: Path, command: str, whole: bool, first: int | None, last: int | None) -> None:
    view = single_file_view(command.format(f=notes), notes.parent)
    assert view == FileView(notes, whole, first, last)


@pytest.mark.parametrize(
    "command",
    [
        "cat {f} | head",
        "cat {f} > out",
        "cat {f} {f}",
        "cat -n {f}",
        "head -c 5 {f}",
        "sed -i 's/a/b/' {f}",
        "sed -n '9,4p' {f}",
        "grep -r x {f}",
        "grep x {f} {f}",
        "cat $(echo {f})",
        "cat {f}; rm {f}",
        "cat *.txt",
        "python3 {f}",
        "cat missing.txt",
    ],
)
def test_not_views(notes: Path, command: str) -> None:
    assert single_file_view(command.format(f=notes), notes.parent) is None


def test_relative_paths_resolve_against_the_cwd(notes: Path) -> None:
    assert single_file_view("cat notes.txt", notes.parent) == FileView(notes, True)


@given(WORDS)
@settings(max_examples=300)
def test_single_file_view_never_raises(command: str) -> None:
    single_file_view(command, Path("/nonexistent-dir"))


@given(st.lists(WORDS, min_size=1, max_size=4), st.sampled_from(["|", ";", "&&", "||", ">", "<", "&"]))
def test_shell_syntax_is_never_a_view(words: list[str], op: str) -> None:
    command = f"cat /etc/hostname {op} " + " ".join(shlex.quote(w) for w in words)
    assert single_file_view(command, Path("/")) is None


@pytest.mark.parametrize(
    ("command", "head"),
    [
        ("grep x f", ("grep",)),
        ("LC_ALL=C grep -q x f", ("grep",)),
        ("cat f | rg x", ("rg",)),
        ("make && git diff --stat", ("git", "diff")),
        ("git -c color.ui=never grep x", ("git", "color.ui=never")),
        ("/usr/bin/diff a b", ("diff",)),
        ("echo 'unterminated", ()),
        ("", ()),
    ],
)
def test_last_command_head(command: str, head: tuple[str, ...]) -> None:
    assert last_command_head(command) == head


def test_exit_meaning() -> None:
    assert exit_meaning("grep x f", 1) == "no matches found"
    assert exit_meaning("git diff", 1) == "differences found"
    assert exit_meaning("grep x f", 2) is None
    assert exit_meaning("ls nothere", 1) is None


@given(WORDS, st.integers(min_value=0, max_value=255))
def test_exit_meaning_never_raises(command: str, code: int) -> None:
    exit_meaning(command, code)


@given(st.lists(st.binary(max_size=300), max_size=30), st.integers(min_value=1, max_value=400))
@settings(max_examples=100, deadline=None)
def test_capture_keeps_every_byte_and_at_most_the_cap(tmp_path_factory: pytest.TempPathFactory,
                                                      chunks: list[bytes], cap: int) -> None:
    spill = tmp_path_factory.mktemp("spill") / "out.txt"
    capture = OutputCapture(cap, lambda: spill)
    for chunk in chunks:
        capture.feed(chunk)
    result = capture.finish()
    data = b"".join(chunks)
    text = data.decode("utf-8", errors="replace")
    assert result.total_bytes == len(data)
    assert result.total_chars == len(text)
    if len(text) > cap:
        assert result.truncated and result.spill_path == spill
        assert spill.read_bytes() == data
        assert result.text == text[:cap]
    else:
        assert not result.truncated and result.text == text and not spill.exists()


@given(st.text(max_size=200), st.integers(min_value=1, max_value=50))
@settings(deadline=None)
def test_slices_rejoin_to_the_whole_text(tmp_path_factory: pytest.TempPathFactory, text: str, size: int) -> None:
    path = tmp_path_factory.mktemp("slice") / "f.txt"
    path.write_bytes(text.encode("utf-8"))
    out, offset = "", 0
    for _ in range(1000):
        piece, offset = read_text_slice(path, offset, max(size, 4))
        if not piece:
            break
        out += piece
    assert out == text
