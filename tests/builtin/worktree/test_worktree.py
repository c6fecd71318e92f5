"""EnterWorktree and ExitWorktree on a real git repository."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

import pegboard_worktree
from tests.builtin.runtime_support import RUNTIME, runtime_pegboard

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
MODULES = (*RUNTIME, pegboard_worktree)


def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    env = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    (root / "a.txt").write_text("one\n")
    subprocess.run(["git", *env, "-C", str(root), "add", "a.txt"], check=True)
    subprocess.run(["git", *env, "-C", str(root), "commit", "-qm", "first"], check=True)
    return root


def board(root: Path) -> Any:
    return runtime_pegboard(root, modules=MODULES)


def branches(root: Path) -> str:
    return subprocess.run(["git", "-C", str(root), "branch"], capture_output=True, text=True, check=True).stdout


async def test_enter_creates_a_worktree_and_moves_the_shell(tmp_path: Path) -> None:
    root = repo(tmp_path)
    async with board(root).session() as session:
        entered = await session.call("EnterWorktree", {"name": "feature"})
        assert not entered.is_error, entered.text
        path = root / ".pegboard" / "worktrees" / "feature"
        assert (path / "a.txt").read_text() == "one\n"
        assert "worktree-feature" in branches(root)
        pwd = await session.call("Bash", {"command": "pwd"})
        assert pwd.text == str(path)
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain"], capture_output=True, text=True)
        assert status.stdout == ""
        kept = await session.call("ExitWorktree", {"action": "keep"})
        assert not kept.is_error and path.is_dir()
        back = await session.call("Bash", {"command": "pwd"})
        assert back.text == str(root)


async def test_remove_refuses_uncommitted_changes_unless_told(tmp_path: Path) -> None:
    root = repo(tmp_path)
    async with board(root).session() as session:
        await session.call("EnterWorktree", {"name": "w"})
        await session.call("Bash", {"command": "echo two >> a.txt"})
        refused = await session.call("ExitWorktree", {"action": "remove"})
        path = root / ".pegboard" / "worktrees" / "w"
        assert refused.is_error and "uncommitted" in refused.text and path.is_dir()
        removed = await session.call("ExitWorktree", {"action": "remove", "discard_changes": True})
        assert not removed.is_error, removed.text
        assert not path.exists() and "worktree-w" not in branches(root)
        again = await session.call("ExitWorktree", {"action": "keep"})
        assert again.is_error and "not in a worktree" in again.text


async def test_a_worktree_session_may_only_use_the_path_form(tmp_path: Path) -> None:
    root = repo(tmp_path)
    async with board(root).session() as session:
        await session.call("EnterWorktree", {"name": "one"})
        await session.call("ExitWorktree", {"action": "keep"})
        await session.call("EnterWorktree", {"name": "two"})
        nested = await session.call("EnterWorktree", {"name": "three"})
        assert nested.is_error and "path" in nested.text
        outside = await session.call("EnterWorktree", {"path": str(tmp_path)})
        assert outside.is_error and ".pegboard/worktrees" in outside.text
        moved = await session.call("EnterWorktree", {"path": str(root / ".pegboard" / "worktrees" / "one")})
        assert not moved.is_error, moved.text
        assert (await session.call("Bash", {"command": "pwd"})).text.endswith("worktrees/one")
        await session.call("ExitWorktree", {"action": "keep"})
        assert (await session.call("Bash", {"command": "pwd"})).text == str(root)


async def test_bad_names_and_no_repository(tmp_path: Path) -> None:
    root = repo(tmp_path)
    async with board(root).session() as session:
        bad = await session.call("EnterWorktree", {"name": "../x"})
        assert bad.is_error and "invalid worktree name" in bad.text
    plain = tmp_path / "plain"
    plain.mkdir()
    async with board(plain).session() as session:
        result = await session.call("EnterWorktree", {"name": "x"})
        assert result.is_error and "not inside a git repository" in result.text


async def test_a_subagent_may_only_enter_by_path_and_may_not_exit(tmp_path: Path) -> None:
    root = repo(tmp_path)
    async with board(root).session() as session:
        await session.call("EnterWorktree", {"name": "shared"})
        await session.call("ExitWorktree", {"action": "keep"})
    async with board(root).session(subagent="helper") as session:
        named = await session.call("EnterWorktree", {"name": "mine"})
        assert named.is_error and "subagent" in named.text
        assert not (root / ".pegboard" / "worktrees" / "mine").exists()
        entered = await session.call("EnterWorktree", {"path": str(root / ".pegboard" / "worktrees" / "shared")})
        assert not entered.is_error, entered.text
        left = await session.call("ExitWorktree", {"action": "keep"})
        assert left.is_error and "not available to a subagent" in left.text


def test_conforms() -> None:
    from pegboard.testing import check_tool

    check_tool(pegboard_worktree.enter_worktree, {"name": "feature"})
    check_tool(pegboard_worktree.exit_worktree, {"action": "keep"})
