"""Hard links on real trees: another name of a covered file is covered by the same rule."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from pegboard.core.pathnames import CALL_PATHS, CallPaths
from pegboard.core.permissions import PermissionEngine
from tests.permissions.support import engine

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX hard links")


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    root = tmp_path.resolve() / "proj"
    (root / "src").mkdir(parents=True)
    (root / ".env").write_text("SECRET=1\n")
    (root / "vendor").mkdir()
    (root / "vendor" / "lib.py").write_text("x = 1\n")
    (root / "plain.txt").write_text("plain\n")
    os.link(root / ".env", root / "src" / "notes.txt")
    return root


def make(proj: Path, **rules: Any) -> PermissionEngine:
    return engine(cwd=proj, home=proj.parent / "home", **rules)


EDIT = {"old_string": "a", "new_string": "b"}
PATCH = "*** Begin Patch\n*** Update File: {p}\n@@\n-a\n+b\n*** End Patch"

# (tool, input, expected) for a hard link src/notes.txt to .env, with Read(.env) denied
CASES: list[tuple[str, dict[str, Any], str]] = [
    ("Read", {"file_path": "src/notes.txt"}, "deny"),
    ("Grep", {"pattern": "x", "path": "src/notes.txt"}, "deny"),
    ("Edit", {"file_path": "src/notes.txt", **EDIT}, "deny"),
    ("Write", {"file_path": "src/notes.txt", "content": "x"}, "deny"),
    ("NotebookEdit", {"notebook_path": "src/notes.txt", "new_source": "x"}, "deny"),
    ("ApplyPatch", {"input": PATCH.format(p="src/notes.txt")}, "deny"),
    ("Bash", {"command": "cat src/notes.txt"}, "deny"),
    ("Bash", {"command": "head -1 src/*.txt"}, "deny"),
    ("Bash", {"command": "echo x > src/notes.txt"}, "deny"),
    ("Bash", {"command": "grep -r SECRET src"}, "ask"),
    ("Read", {"file_path": "plain.txt"}, "allow"),
    ("Bash", {"command": "cat plain.txt"}, "allow"),
]


@pytest.mark.parametrize(("tool", "data", "want"), CASES, ids=[f"{t}-{i}" for i, (t, _, _) in enumerate(CASES)])
def test_every_tool_sees_the_other_name(proj: Path, tool: str, data: dict[str, Any], want: str) -> None:
    e = make(proj, deny=["Read(.env)"], mode="acceptEdits")
    d = e.check(tool, data)
    assert d.decision == want, d.reason
    if want == "deny":
        assert d.rule == "Read(.env)"
    if want == "deny" and tool not in ("Bash",):
        assert f"hard link to {proj}/.env" in d.reason


def test_a_single_link_file_costs_no_walk(proj: Path) -> None:
    e = make(proj, deny=["Read(.env)"])
    assert e.check("Read", {"file_path": "plain.txt"}).decision == "allow"
    assert e.decisions.links.walks == 0
    assert e.check("Read", {"file_path": "src/notes.txt"}).decision == "deny"
    assert e.decisions.links.walks == 1


def test_an_unrelated_link_is_allowed(proj: Path) -> None:
    os.link(proj / "plain.txt", proj / "src" / "plain-copy.txt")
    e = make(proj, deny=["Read(.env)"])
    assert e.check("Read", {"file_path": "src/plain-copy.txt"}).decision == "allow"


def test_ask_rules_ask_for_the_other_name(proj: Path) -> None:
    e = make(proj, ask=["Read(.env)"])
    d = e.check("Read", {"file_path": "src/notes.txt"})
    assert d.decision == "ask" and d.rule == "Read(.env)" and "hard link" in d.reason


def test_edit_deny_blocks_edits_of_the_other_name_not_reads(proj: Path) -> None:
    os.link(proj / "vendor" / "lib.py", proj / "src" / "lib.py")
    e = make(proj, deny=["Edit(vendor/**)"])
    assert e.check("Read", {"file_path": "src/lib.py"}).decision == "allow"
    d = e.check("Edit", {"file_path": "src/lib.py", **EDIT})
    assert d.decision == "deny" and d.rule == "Edit(vendor/**)"
    assert e.check("Bash", {"command": "touch src/lib.py"}).decision == "deny"


def test_deny_patterns_are_case_folded_for_the_covered_set(proj: Path) -> None:
    (proj / "KEYS.PEM").write_text("k")
    os.link(proj / "KEYS.PEM", proj / "src" / "keys.txt")
    e = make(proj, deny=["Read(*.pem)"])
    assert e.check("Read", {"file_path": "src/keys.txt"}).decision == "deny"


def test_a_covered_file_made_later_is_found(proj: Path) -> None:
    e = make(proj, deny=["Read(*.key)"])
    assert e.check("Read", {"file_path": "src/notes.txt"}).decision == "allow"  # the set is built now
    (proj / "src" / "id.key").write_text("k")
    os.link(proj / "src" / "id.key", proj / "other.txt")
    assert e.check("Read", {"file_path": "other.txt"}).decision == "deny"


def test_a_covered_name_given_to_a_file_later_is_found(proj: Path) -> None:
    e = make(proj, deny=["Read(*.key)"])
    assert e.check("Read", {"file_path": "plain.txt"}).decision == "allow"  # kept by the read cache
    assert e.check("Read", {"file_path": "src/notes.txt"}).decision == "allow"
    os.link(proj / "plain.txt", proj / "deep.key")
    d = e.check("Read", {"file_path": "plain.txt"})
    assert d.decision == "deny" and "deep.key" in d.reason


def test_a_removed_covered_name_frees_the_other(proj: Path) -> None:
    e = make(proj, deny=["Read(.env)"])
    assert e.check("Read", {"file_path": "src/notes.txt"}).decision == "deny"
    os.link(proj / "src" / "notes.txt", proj / "src" / "third.txt")  # still two names left
    (proj / ".env").unlink()
    assert e.check("Read", {"file_path": "src/notes.txt"}).decision == "allow"


def test_a_replaced_directory_is_read_again(proj: Path) -> None:
    e = make(proj, deny=["Read(secrets/**)"])
    assert e.check("Read", {"file_path": "src/notes.txt"}).decision == "allow"
    (proj / "secrets").mkdir()
    os.link(proj / "plain.txt", proj / "secrets" / "p.txt")
    assert e.check("Read", {"file_path": "plain.txt"}).decision == "deny"


def test_one_refresh_per_tool_call(proj: Path) -> None:
    e = make(proj, deny=["Read(*.key)"])
    links = e.decisions.links
    links.clock = lambda: 10**20  # every directory looks settled: only a moved time is read again
    paths = CallPaths()
    token = CALL_PATHS.set(paths)
    try:
        assert e.check("Read", {"file_path": "src/notes.txt"}).decision == "allow"
        (proj / "late.key").write_text("k")
        os.link(proj / "late.key", proj / "src" / "late.txt")
        # the same call: the set is not read again
        assert e.check("Read", {"file_path": "src/late.txt"}).decision == "allow"
    finally:
        CALL_PATHS.reset(token)
        paths.close()
    assert e.check("Read", {"file_path": "src/late.txt"}).decision == "deny"


def test_a_directory_changed_just_before_it_was_read_is_read_again(proj: Path) -> None:
    e = make(proj, deny=["Read(*.key)"])
    links = e.decisions.links
    assert e.check("Read", {"file_path": "src/notes.txt"}).decision == "allow"
    # pretend the same timestamp tick: a change that leaves the directory's time as it was
    mtime = os.stat(proj).st_mtime_ns
    (proj / "same.key").write_text("k")
    os.link(proj / "same.key", proj / "src" / "same.txt")
    os.utime(proj, ns=(mtime, mtime))
    ino, recorded, _seen = links._dirs[str(proj)]
    assert recorded == mtime
    links._dirs[str(proj)] = (ino, recorded, mtime + 1)  # read within the racy window
    assert e.check("Read", {"file_path": "src/same.txt"}).decision == "deny"


def test_above_the_cap_every_multi_link_file_asks(proj: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pegboard.core.permissions import inodes

    for i in range(5):
        (proj / f"k{i}.key").write_text("k")
    monkeypatch.setattr(inodes, "MAX_COVERED", 3)
    e = make(proj, deny=["Read(*.key)"])
    d = e.check("Read", {"file_path": "src/notes.txt"})
    assert d.decision == "ask" and "too many to compare" in d.reason and d.rule == "Read(*.key)"
    assert e.check("Read", {"file_path": "plain.txt"}).decision == "allow"
    assert e.is_read_denied(str(proj / "src" / "notes.txt"))
    assert not e.is_read_denied(str(proj / "plain.txt"))


def test_a_rule_directory_outside_the_working_dirs_is_walked(proj: Path) -> None:
    ssh = proj.parent / "home" / ".ssh"
    ssh.mkdir(parents=True)
    (ssh / "id_ed25519").write_text("key")
    os.link(ssh / "id_ed25519", proj / "src" / "id.txt")
    e = make(proj, deny=["Read(~/.ssh/**)"])
    d = e.check("Read", {"file_path": "src/id.txt"})
    assert d.decision == "deny" and "id_ed25519" in d.reason


def test_is_read_denied_sees_the_other_name(proj: Path) -> None:
    e = make(proj, deny=["Read(.env)"])
    assert e.is_read_denied(str(proj / "src" / "notes.txt"))
    assert not e.is_read_denied(str(proj / "plain.txt"))


def test_without_path_rules_nothing_is_stat_ed(proj: Path) -> None:
    e = make(proj, deny=["Bash(rm *)"])
    assert not e.decisions.links.active
    assert e.check("Read", {"file_path": "src/notes.txt"}).decision == "allow"


def test_a_rule_naming_one_file_outside_looks_at_that_file_only(proj: Path) -> None:
    outside = proj.parent / "etc"
    outside.mkdir()
    (outside / "shadow").write_text("root:x")
    (outside / "other").write_text("o")
    e = make(proj, deny=[f"Read(/{outside}/shadow)"])
    assert str(outside / "shadow") in e.decisions.links.roots and str(outside) not in e.decisions.links.roots
    os.link(outside / "shadow", proj / "src" / "s.txt")
    assert e.check("Read", {"file_path": "src/s.txt"}).decision == "deny"
    # the file replaced by a new one (as passwd does): the new inode is the covered one
    (outside / "shadow.new").write_text("root:y")
    os.replace(outside / "shadow.new", outside / "shadow")
    os.link(outside / "shadow", proj / "src" / "s2.txt")
    assert e.check("Read", {"file_path": "src/s2.txt"}).decision == "deny"
    assert e.check("Read", {"file_path": "src/s.txt"}).decision == "allow"


def test_threads_share_one_engine(proj: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    e = make(proj, deny=["Read(.env)"])
    for i in range(20):
        os.link(proj / "plain.txt", proj / "src" / f"p{i}.txt")

    def decide(i: int) -> str:
        if i % 5 == 0:
            (proj / "src" / f"new{i}.key").write_text("k")
        return e.check("Read", {"file_path": "src/notes.txt" if i % 2 else f"src/p{i % 20}.txt"}).decision

    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(decide, range(200)))
    assert got == ["deny" if i % 2 else "allow" for i in range(200)]
