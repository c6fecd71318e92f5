"""Linked git worktrees: where a project's ``/path`` rules are anchored once a session moves.

A project's settings anchor ``Read(/secrets/**)`` at the project root. A linked worktree of
the same repository holds the same files under another root, so after ``EnterWorktree`` the
rule must cover them there too, or a deny rule would stop at the main checkout's copy.
"""

from __future__ import annotations

import os
from pathlib import Path


def _common_git_dir(checkout: Path) -> Path | None:
    """The repository's shared ``.git`` directory for a checkout, or ``None`` when it is not one."""
    dot_git = checkout / ".git"
    if dot_git.is_dir():
        return dot_git.resolve()
    try:
        text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    gitdir = (checkout / text.removeprefix("gitdir:").strip()).resolve()
    try:
        common = (gitdir / "commondir").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return gitdir
    return (gitdir / common).resolve()


def checkout_root(path: Path) -> Path | None:
    """The nearest directory at or above ``path`` holding ``.git`` (a checkout's root)."""
    for candidate in (path, *path.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def sibling_checkout(project_root: str, cwd: str) -> str | None:
    """The root of the checkout ``cwd`` is in when it is another worktree of the repository
    ``project_root`` is a checkout of; ``None`` when ``cwd`` is in that same checkout or in
    none of the repository's."""
    if os.name == "nt" or not project_root or not cwd:
        return None
    here = checkout_root(Path(cwd))
    if here is None or here.resolve() == Path(project_root).resolve():
        return None
    mine, theirs = _common_git_dir(Path(project_root)), _common_git_dir(here)
    if mine is None or theirs is None or mine != theirs:
        return None
    return str(here)
