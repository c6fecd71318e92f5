"""Symlinks on a real temporary tree: allow needs link and target, deny needs either."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.permissions.support import engine

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX symlinks")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path.resolve()
    (root / "proj" / "src").mkdir(parents=True)
    (root / "outside").mkdir()
    (root / "outside" / "secret.txt").write_text("s")
    (root / "proj" / "src" / "ok.txt").write_text("ok")
    (root / "proj" / "secret.key").write_text("k")
    os.symlink(root / "outside" / "secret.txt", root / "proj" / "link.txt")
    os.symlink(root / "proj" / "secret.key", root / "proj" / "innocent.txt")
    os.symlink(root / "outside", root / "proj" / "sub")
    os.symlink(root / "proj", root / "proj-link")
    return root


def test_read_through_link_to_outside_asks(tree: Path) -> None:
    e = engine(cwd=tree / "proj")
    assert e.check("Read", {"file_path": str(tree / "proj" / "link.txt")}).decision == "ask"
    assert e.check("Read", {"file_path": str(tree / "proj" / "src" / "ok.txt")}).decision == "allow"


def test_deny_matches_the_target(tree: Path) -> None:
    e = engine(deny=[f"Read(//{str(tree / 'outside').lstrip('/')}/**)"], cwd=tree / "proj")
    d = e.check("Read", {"file_path": str(tree / "proj" / "link.txt")})
    assert d.decision == "deny"


def test_deny_matches_the_target_name_inside_cwd(tree: Path) -> None:
    e = engine(deny=["Read(*.key)"], cwd=tree / "proj")
    assert e.check("Read", {"file_path": str(tree / "proj" / "innocent.txt")}).decision == "deny"
    assert e.check("Bash", {"command": "cat innocent.txt"}).decision == "deny"


def test_deny_matches_the_link_name(tree: Path) -> None:
    e = engine(deny=["Read(link.txt)"], cwd=tree / "proj")
    assert e.check("Read", {"file_path": str(tree / "proj" / "link.txt")}).decision == "deny"


def test_allow_needs_link_and_target(tree: Path) -> None:
    proj = str(tree / "proj").lstrip("/")
    e = engine(allow=[f"Read(//{proj}/**)"], cwd=tree)
    assert e.check("Read", {"file_path": str(tree / "proj" / "src" / "ok.txt")}).decision == "allow"
    # From a cwd elsewhere (so the working-dir default does not apply): the link matches the
    # allow rule but its target does not, so the call prompts.
    e2 = engine(allow=[f"Read(//{proj}/**)"], cwd=tree / "elsewhere")
    assert e2.check("Read", {"file_path": str(tree / "proj" / "link.txt")}).decision == "ask"
    assert e2.check("Read", {"file_path": str(tree / "proj" / "src" / "ok.txt")}).decision == "allow"


def test_edit_allow_needs_link_and_target(tree: Path) -> None:
    e = engine(allow=["Edit(**)"], cwd=tree / "proj")
    assert e.check("Edit", {"file_path": str(tree / "proj" / "src" / "ok.txt")}).decision == "allow"
    assert e.check("Edit", {"file_path": str(tree / "proj" / "link.txt")}).decision == "ask"


def test_symlinked_parent_escapes_accept_edits_scope(tree: Path) -> None:
    e = engine(mode="acceptEdits", cwd=tree / "proj")
    assert e.check("Write", {"file_path": str(tree / "proj" / "src" / "new.txt")}).decision == "allow"
    assert e.check("Write", {"file_path": str(tree / "proj" / "sub" / "new.txt")}).decision == "ask"
    assert e.check("Bash", {"command": "echo hi > sub/new.txt"}).decision == "ask"
    assert e.check("Bash", {"command": "echo hi > src/new.txt"}).decision == "allow"


def test_working_dir_given_through_a_link(tree: Path) -> None:
    e = engine(cwd=tree / "proj-link")
    assert e.check("Read", {"file_path": str(tree / "proj-link" / "src" / "ok.txt")}).decision == "allow"
    assert e.check("Read", {"file_path": "src/ok.txt"}).decision == "allow"
    assert e.check("Read", {"file_path": str(tree / "outside" / "secret.txt")}).decision == "ask"


def test_protected_target_behind_a_link(tree: Path) -> None:
    (tree / "proj" / ".git").mkdir()
    os.symlink(tree / "proj" / ".git" / "config", tree / "proj" / "cfg")
    e = engine(mode="acceptEdits", cwd=tree / "proj")
    assert e.check("Write", {"file_path": str(tree / "proj" / "cfg")}).decision == "ask"


def test_dotdot_after_a_link_follows_the_link(tree: Path) -> None:
    # proj/sub -> <tree>/outside, so the OS reads proj/sub/../secret.key as <tree>/secret.key
    # ('..' of the link's target), while the lexical spelling says proj/secret.key.
    (tree / "secret.key").write_text("top")
    e = engine(deny=[f"Read(//{str(tree).lstrip('/')}/secret.key)"], cwd=tree / "proj")
    d = e.check("Read", {"file_path": str(tree / "proj" / "sub" / ".." / "secret.key")})
    assert d.decision == "deny"
    assert e.check("Bash", {"command": "cat sub/../secret.key"}).decision == "deny"


def test_a_kept_read_decision_follows_a_link_that_moved(tree: Path) -> None:
    """An engine keeps read decisions by where the paths resolve: the same input through a
    link retargeted between two calls is decided for the new target."""
    from tests.permissions.support import installed_tools

    read = installed_tools()("Read")
    assert read is not None
    e = engine(deny=[f"Read(//{str(tree / 'outside').lstrip('/')}/**)"], cwd=tree / "proj")
    link = tree / "proj" / "moving"
    os.symlink(tree / "proj" / "src", link)
    call = {"file_path": str(link / "ok.txt")}
    (tree / "outside" / "ok.txt").write_text("o")
    assert e.check("Read", call, read).decision == "allow"
    assert e.check("Read", call, read).decision == "allow"
    link.unlink()
    os.symlink(tree / "outside", link)
    assert e.check("Read", call, read).decision == "deny"
    link.unlink()
    os.symlink(tree / "proj" / "src", link)
    assert e.check("Read", call, read).decision == "allow"
    assert e.check("Read", {**call, "offset": 3}, read).decision == "allow"
