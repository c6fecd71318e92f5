"""The built-in ``EnterWorktree`` and ``ExitWorktree`` tools.

EnterWorktree runs ``git worktree add`` under ``.pegboard/worktrees/<name>`` of the session's
repository and moves the session's working directory (``session.cwd``, which every tool,
relative path and permission check follows) and its shell into it; ExitWorktree moves both
back and keeps or removes the worktree (refusing to remove one with uncommitted changes or
commits no other branch has unless told). git
runs through the call's execution backend. A worktree session (one already inside a
worktree) and a subagent may only enter an existing worktree by ``path``, under the
repository's ``.pegboard/worktrees/``; a subagent may not exit one.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from pegboard import ExecError, SessionKey, ToolContext, ToolRegister, ToolResult, hookimpl, tool

WORKTREES = Path(".pegboard") / "worktrees"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
GIT_TIMEOUT_S = 60.0
MAX_GIT_OUTPUT = 1 << 20

#: The worktree the session is in: ``{"path", "repo", "branch", "created", "previous_cwd",
#: "previous_shell_cwd"}`` (the session's working directory and shell cwd before EnterWorktree).
WORKTREE: SessionKey[str] = SessionKey("pegboard-worktree-current", str, persist=True)


class GitError(Exception):
    """git failed or could not start; the message has its output."""


async def git(ctx: ToolContext, args: list[str], cwd: Path) -> str:
    """Run ``git args`` in ``cwd`` through the exec backend; its output, or ``GitError``."""
    try:
        from pegboard_toolkit.exec import backend_for, process_env

        backend = await backend_for(ctx)
        proc = await backend.start(["git", *args], cwd=cwd, env=process_env(ctx, {"GIT_TERMINAL_PROMPT": "0"}))
    except (ExecError, OSError) as exc:
        raise GitError(f"cannot run git: {exc}") from exc
    out = bytearray()
    try:
        while chunk := await proc.read():
            if len(out) < MAX_GIT_OUTPUT:
                out += chunk
        status = await proc.wait(GIT_TIMEOUT_S)
    finally:
        if proc.returncode is None:
            await proc.terminate(grace=1.0)
    text = out.decode("utf-8", "replace").strip()
    if status is None:
        raise GitError(f"git {args[0]} did not finish within {GIT_TIMEOUT_S:.0f} s")
    if status != 0:
        raise GitError(f"git {' '.join(args)} failed (exit {status}): {text}")
    return text


def _current(ctx: ToolContext) -> dict[str, Any] | None:
    if ctx.session is None:
        return None
    raw = ctx.session.state.get(WORKTREE)
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _shell_cwd(ctx: ToolContext) -> Path:
    saved: str | None = None
    if ctx.session is not None:
        from pegboard_toolkit.shell import SHELL_CWD

        saved = ctx.session.state.get(SHELL_CWD)
    return Path(saved) if saved and Path(saved).is_dir() else ctx.cwd


async def _main_repository(ctx: ToolContext, cwd: Path) -> Path:
    """The main working tree of the repository ``cwd`` is in (also from inside a worktree)."""
    common = await git(ctx, ["rev-parse", "--path-format=absolute", "--git-common-dir"], cwd)
    return Path(os.path.realpath(Path(common).parent))


def _inside(path: Path, directory: Path) -> bool:
    return path == directory or directory in path.parents


def _same_place(cwd: Path, tree: Path, target: Path) -> Path:
    """The directory of ``target`` that ``cwd`` is in ``tree`` (``src/`` stays ``src/``), when
    it exists there; else ``target`` itself."""
    if not _inside(cwd, tree) or _inside(cwd, tree / WORKTREES):
        return target
    moved = target / cwd.relative_to(tree)
    return moved if moved.is_dir() else target


def _exclude(repo: Path) -> None:
    """Keep ``.pegboard/worktrees/`` out of the main tree's ``git status``."""
    exclude = repo / ".git" / "info" / "exclude"
    line = f"/{WORKTREES.as_posix()}/"
    try:
        text = exclude.read_text() if exclude.exists() else ""
        if line not in text.splitlines():
            exclude.parent.mkdir(parents=True, exist_ok=True)
            with exclude.open("a") as fh:
                fh.write(("" if not text or text.endswith("\n") else "\n") + line + "\n")
    except OSError:
        pass


class EnterWorktreeInput(BaseModel):
    name: str | None = Field(
        default=None, description="Name of the new worktree (letters, digits, '.', '_', '-'); random when omitted."
    )
    path: str | None = Field(
        default=None, description="Enter this existing worktree instead (under .pegboard/worktrees/ of the repository)."
    )


@tool(name="EnterWorktree", groups=["runtime", "pegboard"], usage="Work in an isolated git worktree.")
async def enter_worktree(input: EnterWorktreeInput, ctx: ToolContext) -> ToolResult:
    """Create a git worktree under .pegboard/worktrees/<name> on a new branch from HEAD and move
    the session's shell into it, or enter an existing one with path. Leave it with ExitWorktree."""
    if ctx.session is None:
        return ToolResult.error("EnterWorktree needs a session", error_kind="no_session")
    if input.name is not None and input.path is not None:
        return ToolResult.refusal("invalid_input", "give either name or path, not both")
    current = _current(ctx)
    restricted = current is not None or ctx.subagent is not None
    cwd = _shell_cwd(ctx)
    try:
        repo = await _main_repository(ctx, cwd)
    except GitError as exc:
        return ToolResult.error(f"not inside a git repository: {exc}", error_kind="not_a_repository")
    root = repo / WORKTREES
    if input.path is not None:
        target = Path(os.path.realpath(Path(input.path).expanduser() if Path(input.path).is_absolute()
                                       else cwd / input.path))
        if not _inside(target, root) or target == root:
            return ToolResult.refusal(
                "invalid_input", f"{input.path} is not a worktree under {root}", error_kind="outside_worktrees")
        try:
            top = await git(ctx, ["rev-parse", "--show-toplevel"], target)
        except GitError as exc:
            return ToolResult.error(f"{target} is not a worktree: {exc}", error_kind="not_a_worktree")
        path, branch, created = Path(top), "", False
    else:
        if restricted:
            who = "a subagent" if ctx.subagent is not None else "a worktree session"
            return ToolResult.refusal(
                "invalid_input", f"{who} may only enter an existing worktree: give path (under {root})",
                error_kind="path_form_only")
        name = input.name or f"wt-{secrets.token_hex(3)}"
        if not NAME.match(name) or ".." in name:
            return ToolResult.refusal(
                "invalid_input", f"invalid worktree name {name!r}: use letters, digits, '.', '_' and '-' (at most 64)")
        path, branch, created = root / name, f"worktree-{name}", True
        if path.exists():
            return ToolResult.refusal(
                "invalid_input", f"worktree {name} already exists at {path}; enter it with path",
                error_kind="exists")
        root.mkdir(parents=True, exist_ok=True)
        _exclude(repo)
        try:
            await git(ctx, ["worktree", "add", "-b", branch, str(path), "HEAD"], repo)
        except GitError as exc:
            return ToolResult.error(str(exc), error_kind="git_failed")
    if current is not None:
        previous = current["previous_cwd"]
        previous_shell = current.get("previous_shell_cwd") or previous
    else:
        previous, previous_shell = str(ctx.session.cwd), str(cwd)
    state = {"path": str(path), "repo": str(repo), "branch": branch, "created": created, "previous_cwd": previous,
             "previous_shell_cwd": previous_shell}
    ctx.session.state[WORKTREE] = json.dumps(state)
    from pegboard_toolkit.shell import SHELL_CWD

    start = _same_place(Path(os.path.realpath(ctx.session.cwd)), Path(current["path"]) if current else repo, path)
    ctx.session.cwd = start
    ctx.session.state[SHELL_CWD] = str(start)
    what = f"Created worktree {path} on branch {branch}" if created else f"Entered worktree {path}"
    return ToolResult.from_text(
        f"{what}. Every tool now works in {start} (relative paths, searches, the shell); "
        "leave it with ExitWorktree.",
        structured={"worktreePath": str(path), "worktreeBranch": branch or None, "cwd": str(start)})


class ExitWorktreeInput(BaseModel):
    action: str = Field(default="keep", pattern="^(keep|remove)$", description="keep the worktree, or remove it.")
    discard_changes: bool = Field(
        default=False,
        description="With remove: remove it even with uncommitted changes or commits no other branch has "
                    "(they are lost).",
    )


@tool(name="ExitWorktree", groups=["runtime", "pegboard"], destructive=True,
      usage="Leave the worktree EnterWorktree entered.")
async def exit_worktree(input: ExitWorktreeInput, ctx: ToolContext) -> ToolResult:
    """Move the session's working directory and shell back to where they were before
    EnterWorktree, keeping the worktree or removing it (and the branch it created). Removing
    one with uncommitted changes, or with commits no other branch has, is refused unless
    discard_changes is true."""
    if ctx.subagent is not None:
        return ToolResult.refusal("invalid_input", "ExitWorktree is not available to a subagent",
                                  error_kind="not_available")
    current = _current(ctx)
    if ctx.session is None or current is None:
        return ToolResult.refusal("invalid_input", "the session is not in a worktree (use EnterWorktree first)",
                                  error_kind="not_in_worktree")
    path, repo = Path(current["path"]), Path(current["repo"])
    if input.action == "remove" and path.is_dir():
        try:
            dirty = await git(ctx, ["status", "--porcelain"], path)
        except GitError as exc:
            return ToolResult.error(str(exc), error_kind="git_failed")
        if dirty and not input.discard_changes:
            count = len(dirty.splitlines())
            return ToolResult.error(
                f"worktree {path} has {count} uncommitted change(s); commit them, exit with action keep, "
                "or set discard_changes to remove it anyway", error_kind="uncommitted_changes")
        deletes = bool(current.get("created") and current.get("branch"))
        if not input.discard_changes:
            try:
                unmerged = await _unmerged_commits(ctx, path, current["branch"] if deletes else None)
            except GitError as exc:
                return ToolResult.error(str(exc), error_kind="git_failed")
            if unmerged:
                where = f"branch {current['branch']}" if deletes else "its HEAD"
                return ToolResult.error(
                    f"worktree {path} has {unmerged} commit(s) on {where} that no other branch has; merge them "
                    "(or push them), exit with action keep, or set discard_changes to remove it anyway",
                    error_kind="unmerged_commits")
        try:
            await git(ctx, ["worktree", "remove", *(["--force"] if input.discard_changes else []), str(path)],
                      repo)
            if deletes:
                await git(ctx, ["branch", "-D", current["branch"]], repo)
        except GitError as exc:
            return ToolResult.error(str(exc), error_kind="git_failed")
    previous = current.get("previous_cwd") or str(ctx.project_dir or ctx.cwd)
    previous_shell = current.get("previous_shell_cwd") or previous
    from pegboard_toolkit.shell import SHELL_CWD

    ctx.session.cwd = previous
    ctx.session.state[SHELL_CWD] = previous_shell
    del ctx.session.state[WORKTREE]
    done = "Removed" if input.action == "remove" else "Kept"
    return ToolResult.from_text(f"{done} worktree {path}. The working directory is back in {previous}.",
                                structured={"action": input.action, "worktreePath": str(path), "cwd": previous})


async def _unmerged_commits(ctx: ToolContext, path: Path, branch: str | None) -> int:
    """How many commits of the worktree's HEAD no branch, tag or remote ref has (``branch``,
    the one removal deletes, does not count as keeping them)."""
    keep = [f"--exclude={branch}"] if branch else []  # --branches takes names without refs/heads/
    out = await git(ctx, ["rev-list", "--count", "HEAD", "--not", *keep, "--branches", "--tags", "--remotes"], path)
    try:
        return int(out or "0")
    except ValueError:
        return 0


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(enter_worktree)
    register(exit_worktree)
