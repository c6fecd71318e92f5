"""After EnterWorktree every tool works in the worktree: relative paths, searches without a
path, the shell and the working-directory rules; the main checkout stays as it was. Driven
as a harness builder (a stored ``Pegboard.session``) and a CLI user (``pegboard call
--session`` processes) would, with the installed plugins and the default config."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pegboard import Pegboard

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
GIT_ID = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
NOTEBOOK = {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    (root / "a.txt").write_text("one\n")
    (root / "src" / "code.py").write_text("needle = 1\n")
    (root / "n.ipynb").write_text(json.dumps(NOTEBOOK))
    subprocess.run(["git", *GIT_ID, "-C", str(root), "add", "."], check=True)
    subprocess.run(["git", *GIT_ID, "-C", str(root), "commit", "-qm", "first"], check=True)
    return root.resolve()


def status(root: Path) -> str:
    return subprocess.run(["git", "-C", str(root), "status", "--porcelain"], capture_output=True, text=True,
                          check=True).stdout


def branches(root: Path) -> str:
    return subprocess.run(["git", "-C", str(root), "branch"], capture_output=True, text=True, check=True).stdout


def commit_all(where: Path, message: str) -> None:
    subprocess.run(["git", *GIT_ID, "-C", str(where), "add", "-A"], check=True)
    subprocess.run(["git", *GIT_ID, "-C", str(where), "commit", "-qm", message], check=True)


PATCH = "*** Begin Patch\n*** Add File: patched.txt\n+from a patch\n*** End Patch\n"


async def test_every_tool_follows_the_session_into_the_worktree(tmp_path: Path) -> None:
    root = repo(tmp_path)
    tree = root / ".pegboard" / "worktrees" / "iso"
    pb = Pegboard(cwd=root, env={"HOME": os.environ["HOME"]})
    async with pb.session(mode="acceptEdits") as session:
        entered = await session.call("EnterWorktree", {"name": "iso"})
        assert not entered.is_error, entered.text
        assert session.cwd == tree
        wrote = await session.call("Write", {"file_path": "new.txt", "content": "fresh\n"})
        assert not wrote.is_error, wrote.text
        read = await session.call("Read", {"file_path": "a.txt"})
        assert not read.is_error and "one" in read.text, read.text
        edited = await session.call("Edit", {"file_path": "a.txt", "old_string": "one", "new_string": "two"})
        assert not edited.is_error, edited.text
        assert not (await session.call("Read", {"file_path": "n.ipynb"})).is_error
        notebook = await session.call("NotebookEdit", {"notebook_path": "n.ipynb", "new_source": "x = 1",
                                                       "cell_type": "code", "edit_mode": "insert"})
        assert not notebook.is_error, notebook.text
        globbed = await session.call("Glob", {"pattern": "**/*.txt"})
        grepped = await session.call("Grep", {"pattern": "needle"})
        listed = await session.call("LS", {})
        pwd = await session.call("Bash", {"command": "pwd"})
        assert (tree / "new.txt").read_text() == "fresh\n" and (tree / "a.txt").read_text() == "two\n"
        assert str(tree / "new.txt") in globbed.text and str(root / "new.txt") not in globbed.text
        assert str(tree / "src" / "code.py") in grepped.text, grepped.text
        assert "new.txt" in listed.text, listed.text
        assert pwd.text == str(tree)
        assert (await session.call("Read", {"file_path": "a.txt"})).text.strip().endswith("two")
        assert "x = 1" in (tree / "n.ipynb").read_text() and "x = 1" not in (root / "n.ipynb").read_text()
        # the main checkout is outside the working directory now: acceptEdits does not cover it
        outside = await session.call("Write", {"file_path": str(root / "a.txt"), "content": "clobbered\n"})
        assert outside.is_error and outside.reason == "not_approved", outside.text
        assert (root / "a.txt").read_text() == "one\n" and not (root / "new.txt").exists()
        assert status(root) == ""
        checked = session.check("Edit", {"file_path": "a.txt"})
        assert checked.decision == "allow", checked.reason

        refused = await session.call("ExitWorktree", {"action": "remove"})
        assert refused.is_error and "uncommitted" in refused.text and tree.is_dir()
        commit_all(tree, "work")
        unmerged = await session.call("ExitWorktree", {"action": "remove"})
        assert unmerged.is_error, unmerged.text
        assert "1 commit(s) on branch worktree-iso" in unmerged.text and "discard_changes" in unmerged.text
        assert tree.is_dir() and "worktree-iso" in branches(root)
        kept = await session.call("ExitWorktree", {"action": "keep"})
        assert not kept.is_error, kept.text
        assert session.cwd == root
        back = await session.call("Read", {"file_path": "a.txt"})
        assert back.text.strip().endswith("one"), back.text
        assert (await session.call("Bash", {"command": "pwd"})).text == str(root)
        assert str(root / "new.txt") not in (await session.call("Glob", {"pattern": "*.txt"})).text


async def test_apply_patch_paths_are_relative_to_the_worktree(tmp_path: Path) -> None:
    root = repo(tmp_path)
    tree = root / ".pegboard" / "worktrees" / "patch"
    offered = tmp_path / "apply-patch.json"
    offered.write_text(json.dumps({"tools": {"alsoAllow": ["ApplyPatch"]}}))
    pb = Pegboard(cwd=root, env={"HOME": os.environ["HOME"]}, config_files=[offered])
    async with pb.session(mode="acceptEdits") as session:
        assert not (await session.call("EnterWorktree", {"name": "patch"})).is_error
        patched = await session.call("ApplyPatch", {"input": PATCH})
        assert not patched.is_error, patched.text
        assert (tree / "patched.txt").read_text() == "from a patch\n" and not (root / "patched.txt").exists()


async def test_a_resumed_session_is_still_in_its_worktree(tmp_path: Path) -> None:
    root = repo(tmp_path)
    tree = root / ".pegboard" / "worktrees" / "kept"
    env = {"HOME": os.environ["HOME"]}
    async with Pegboard(cwd=root, env=env) as pb, pb.session(mode="acceptEdits") as session:
        sid = session.id
        assert not (await session.call("EnterWorktree", {"name": "kept"})).is_error
    async with Pegboard(cwd=root, env=env) as pb:
        async with pb.session(session_id=sid, cwd=root) as again:  # the directory it was opened in
            assert again.resumed and again.cwd == tree
            wrote = await again.call("Write", {"file_path": "later.txt", "content": "later\n"})
            assert not wrote.is_error, wrote.text
            assert (tree / "later.txt").exists() and not (root / "later.txt").exists()
            left = await again.call("ExitWorktree", {"action": "remove", "discard_changes": True})
            assert not left.is_error, left.text
            assert again.cwd == root and not tree.exists() and "worktree-kept" not in branches(root)
        async with pb.session(session_id=sid) as third:
            assert third.cwd == root
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        async with pb.session(session_id=sid, cwd=elsewhere) as moved:  # another directory: it moves there
            assert moved.cwd == elsewhere.resolve()


async def test_pegboard_call_follows_the_worktree_of_its_default_session(tmp_path: Path) -> None:
    root = repo(tmp_path)
    tree = root / ".pegboard" / "worktrees" / "mem"
    async with Pegboard(cwd=root, env={"HOME": os.environ["HOME"]}) as pb:
        assert not (await pb.call("EnterWorktree", {"name": "mem"})).is_error
        wrote = await pb.call("Write", {"file_path": "m.txt", "content": "m\n"}, mode="acceptEdits")
        assert not wrote.is_error, wrote.text
        assert (tree / "m.txt").exists() and not (root / "m.txt").exists()
        assert not (await pb.call("ExitWorktree", {"action": "keep"})).is_error
        assert (await pb.call("Bash", {"command": "pwd"})).text == str(root)


def cli(root: Path, data: Path, tool: str, tool_input: dict[str, Any], *extra: str) -> dict[str, Any]:
    env = {**os.environ, "PEGBOARD_DATA_DIR": str(data)}
    proc = subprocess.run(
        [sys.executable, "-m", "pegboard", "call", tool, "--input", json.dumps(tool_input), "--session", "wt",
         "--json", *extra],
        capture_output=True, text=True, cwd=root, env=env, timeout=60,
    )
    assert proc.returncode in (0, 1), proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)
    out["text"] = "".join(c.get("text", "") for c in out["content"])
    return out


def test_pegboard_call_session_processes_work_in_the_worktree(tmp_path: Path) -> None:
    root = repo(tmp_path)
    data = tmp_path / "data"
    tree = root / ".pegboard" / "worktrees" / "cli"
    edits = ("--mode", "acceptEdits")

    entered = cli(root, data, "EnterWorktree", {"name": "cli"})
    assert not entered["is_error"], entered["text"]
    assert entered["structured"]["worktreePath"] == str(tree)
    assert not cli(root, data, "Write", {"file_path": "new.txt", "content": "fresh\n"}, *edits)["is_error"]
    assert "one" in cli(root, data, "Read", {"file_path": "a.txt"})["text"]
    edited = cli(root, data, "Edit", {"file_path": "a.txt", "old_string": "one", "new_string": "two"}, *edits)
    assert not edited["is_error"], edited["text"]
    assert str(tree / "new.txt") in cli(root, data, "Glob", {"pattern": "**/*.txt"})["text"]
    assert str(tree / "src" / "code.py") in cli(root, data, "Grep", {"pattern": "needle"})["text"]
    assert "new.txt" in cli(root, data, "LS", {})["text"]
    assert cli(root, data, "Bash", {"command": "pwd"})["text"] == str(tree)
    assert (tree / "a.txt").read_text() == "two\n" and (tree / "new.txt").exists()
    assert (root / "a.txt").read_text() == "one\n" and not (root / "new.txt").exists() and status(root) == ""

    refused = cli(root, data, "ExitWorktree", {"action": "remove"})
    assert refused["is_error"] and "uncommitted change(s)" in refused["text"] and tree.is_dir()
    kept = cli(root, data, "ExitWorktree", {"action": "keep"})
    assert not kept["is_error"] and kept["structured"]["cwd"] == str(root) and tree.is_dir()
    assert cli(root, data, "Read", {"file_path": "a.txt"})["text"].strip().endswith("one")

    again = cli(root, data, "EnterWorktree", {"path": str(tree)})
    assert not again["is_error"], again["text"]
    assert cli(root, data, "Read", {"file_path": "a.txt"})["text"].strip().endswith("two")
    removed = cli(root, data, "ExitWorktree", {"action": "remove", "discard_changes": True})
    assert not removed["is_error"], removed["text"]
    assert not tree.exists() and (root / "a.txt").read_text() == "one\n"


async def test_a_session_in_a_subdirectory_enters_the_same_subdirectory(tmp_path: Path) -> None:
    root = repo(tmp_path)
    tree = root / ".pegboard" / "worktrees" / "sub"
    pb = Pegboard(cwd=root, env={"HOME": os.environ["HOME"]})
    async with pb, pb.session(cwd=root / "src", mode="acceptEdits") as session:
        entered = await session.call("EnterWorktree", {"name": "sub"})
        assert entered.structured == {"worktreePath": str(tree), "worktreeBranch": "worktree-sub",
                                      "cwd": str(tree / "src")}
        assert session.cwd == tree / "src"
        assert str(tree / "src" / "code.py") in (await session.call("Glob", {"pattern": "*.py"})).text
        left = await session.call("ExitWorktree", {"action": "remove"})
        assert not left.is_error, left.text
        assert session.cwd == root / "src" and not tree.exists()


async def test_remove_goes_ahead_once_the_worktree_commits_are_merged(tmp_path: Path) -> None:
    root = repo(tmp_path)
    tree = root / ".pegboard" / "worktrees" / "merged"
    async with Pegboard(cwd=root, env={"HOME": os.environ["HOME"]}) as pb, pb.session(mode="acceptEdits") as session:
        assert not (await session.call("EnterWorktree", {"name": "merged"})).is_error
        assert not (await session.call("Write", {"file_path": "done.txt", "content": "done\n"})).is_error
        commit_all(tree, "done")
        refused = await session.call("ExitWorktree", {"action": "remove"})
        assert refused.is_error and refused.metadata["error_kind"] == "unmerged_commits", refused.text
        subprocess.run(["git", *GIT_ID, "-C", str(root), "merge", "-q", "--ff-only", "worktree-merged"], check=True)
        removed = await session.call("ExitWorktree", {"action": "remove"})
        assert not removed.is_error, removed.text
        assert not tree.exists() and (root / "done.txt").read_text() == "done\n"


def test_the_cli_example_in_the_docs_runs_as_written(tmp_path: Path, repo_root: Path) -> None:
    import re
    import shlex

    docs = (repo_root / "docs" / "tools.md").read_text()
    section = docs[docs.index("## EnterWorktree"):docs.index("## ExitWorktree")]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None
    commands = [shlex.split(line) for line in block.group(1).splitlines() if line.startswith("pegboard ")]
    assert len(commands) == 3
    root = repo(tmp_path)
    env = {**os.environ, "PEGBOARD_DATA_DIR": str(tmp_path / "data")}
    for command in commands:
        proc = subprocess.run([sys.executable, "-m", "pegboard", *command[1:]], capture_output=True, text=True,
                              cwd=root, env=env, timeout=60)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (root / ".pegboard" / "worktrees" / "fix" / "notes.txt").read_text() == "x"
    assert not (root / "notes.txt").exists() and status(root) == ""


async def test_an_mcp_client_works_in_the_worktree_it_entered(tmp_path: Path) -> None:
    import mcp_types as types
    from mcp import Client, StdioServerParameters

    def text(result: types.CallToolResult) -> str:
        return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))

    root = repo(tmp_path)
    tree = root / ".pegboard" / "worktrees" / "mcp"
    pegboard = Path(sys.executable).parent / "pegboard"
    params = StdioServerParameters(command=str(pegboard), args=["serve", "--mode", "acceptEdits"],
                                   env={**os.environ, "PEGBOARD_DATA_DIR": str(tmp_path / "data")}, cwd=str(root))
    async with Client(params, mode="legacy") as client:
        entered = await client.call_tool("EnterWorktree", {"name": "mcp"})
        assert not entered.is_error, text(entered)
        wrote = await client.call_tool("Write", {"file_path": "from-mcp.txt", "content": "m\n"})
        assert not wrote.is_error, text(wrote)
        assert str(tree / "from-mcp.txt") in text(await client.call_tool("Glob", {"pattern": "*.txt"}))
        assert text(await client.call_tool("Bash", {"command": "pwd"})) == str(tree)
        assert (tree / "from-mcp.txt").exists() and not (root / "from-mcp.txt").exists()
        left = await client.call_tool("ExitWorktree", {"action": "keep"})
        assert not left.is_error, text(left)
        assert str(root / "a.txt") in text(await client.call_tool("Glob", {"pattern": "*.txt"}))


async def test_the_projects_anchored_rules_cover_the_worktree_too(tmp_path: Path) -> None:
    root = repo(tmp_path)
    (root / "secrets").mkdir()
    (root / "secrets" / "key").write_text("hunter2\n")
    (root / ".pegboard").mkdir()
    rules = {"permissions": {"deny": ["Read(/secrets/**)"], "allow": ["Edit(/src/**)"]}}
    (root / ".pegboard" / "settings.json").write_text(json.dumps(rules))
    commit_all(root, "secrets and rules")
    tree = root / ".pegboard" / "worktrees" / "iso"
    pb = Pegboard(cwd=root, env={"HOME": os.environ["HOME"], "PEGBOARD_TRUST_PROJECT": "1"})
    async with pb.session(mode="bypassPermissions") as session:
        assert not (await session.call("EnterWorktree", {"name": "iso"})).is_error
        assert (tree / "secrets" / "key").is_file()
        for call in (("Read", {"file_path": "secrets/key"}), ("Bash", {"command": "cat secrets/key"}),
                     ("Grep", {"pattern": "hunter", "path": "secrets"})):
            refused = await session.call(*call)
            assert refused.reason == "denied" and "Read(/secrets/**)" in refused.text, (call, refused.text)
        assert (await session.call("Read", {"file_path": str(root / "secrets" / "key")})).reason == "denied"
    async with pb.session(mode="default") as session:
        assert not (await session.call("EnterWorktree", {"path": str(tree)})).is_error
        assert session.check("Edit", {"file_path": "src/code.py"}).decision == "allow"
        assert session.check("Edit", {"file_path": "a.txt"}).decision == "ask"
