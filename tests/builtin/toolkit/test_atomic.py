"""pegboard_toolkit.atomic: the old file or the new one, never a mix, with mode and owner kept."""

from __future__ import annotations

import codecs
import os
import stat
from pathlib import Path

import pytest

from pegboard_toolkit import AtomicWriteError, TextFormat, decode, write_bytes, write_text


def leftovers(directory: Path) -> list[str]:
    return [p.name for p in directory.iterdir() if p.name.endswith(".tmp")]


def test_creates_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    assert write_bytes(target, b"one") == target
    write_bytes(target, b"two")
    assert target.read_bytes() == b"two" and leftovers(tmp_path) == []


def test_new_files_get_the_umask_mode(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        write_bytes(tmp_path / "n.txt", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "n.txt").stat().st_mode) == 0o640


def test_keeps_mode_and_owner(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_bytes(b"old")
    target.chmod(0o604)
    if os.geteuid() == 0:
        os.chown(target, 65534, 65534)
    write_bytes(target, b"new")
    st = target.stat()
    assert stat.S_IMODE(st.st_mode) == 0o604
    if os.geteuid() == 0:
        assert (st.st_uid, st.st_gid) == (65534, 65534)


def test_follows_symlinks_and_keeps_the_link(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_bytes(b"old")
    link = tmp_path / "link"
    link.symlink_to(real)
    assert write_bytes(link, b"new") == real
    assert link.is_symlink() and real.read_bytes() == b"new"


def test_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "later.txt")
    write_bytes(link, b"x")
    assert (tmp_path / "later.txt").read_bytes() == b"x" and link.is_symlink()


def test_a_directory_is_not_replaced(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(AtomicWriteError) as info:
        write_bytes(tmp_path / "d", b"x")
    assert "not a regular file" in str(info.value) and (tmp_path / "d").is_dir()


def test_missing_parent_is_an_error_unless_asked_for(tmp_path: Path) -> None:
    with pytest.raises(AtomicWriteError):
        write_bytes(tmp_path / "no" / "such" / "f", b"x")
    write_bytes(tmp_path / "no" / "such" / "f", b"x", make_parents=True)
    assert (tmp_path / "no" / "such" / "f").read_bytes() == b"x"


def test_write_text_keeps_the_format(tmp_path: Path) -> None:
    target = tmp_path / "u.txt"
    fmt = TextFormat("utf-16-le", codecs.BOM_UTF16_LE, "strict", "crlf")
    write_text(target, "ä\r\n", fmt)
    assert target.read_bytes() == codecs.BOM_UTF16_LE + "ä\r\n".encode("utf-16-le")
    assert decode(target.read_bytes()).format == fmt


def test_a_failed_write_leaves_the_target_and_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_bytes(b"old")
    with pytest.raises(TypeError):
        write_bytes(target, "not bytes")  # type: ignore[arg-type]
    assert target.read_bytes() == b"old" and leftovers(tmp_path) == []
