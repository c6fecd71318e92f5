"""``pegboard.protected_paths``: the engine's protected names as concrete paths under roots."""

from __future__ import annotations

import json
from pathlib import Path

import pegboard
from pegboard import ConfigLayer, ProtectedPath, load_config, protected_paths
from pegboard.core.config import load_layers
from pegboard.core.permissions.paths import PROTECTED_DIRS, PROTECTED_FILES, is_protected


def _relative(root: Path, found: pegboard.ProtectedPaths) -> dict[str, bool]:
    return {p.path.relative_to(root).as_posix(): p.directory for p in found.paths if p.path.is_relative_to(root)}


def test_every_protected_name_at_the_top_of_a_root_existing_or_not(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".envrc").write_text("x")
    (tmp_path / ".config").mkdir()
    found = _relative(tmp_path, protected_paths([tmp_path]))
    assert {name for name, directory in found.items() if directory} >= {*PROTECTED_DIRS, ".config/git"}
    assert {name for name, directory in found.items() if not directory} >= PROTECTED_FILES
    assert all(is_protected("/" + name) for name in found)


def test_existing_protected_entries_deeper_down_and_the_worktree_exception(tmp_path: Path) -> None:
    (tmp_path / "sub" / "deep").mkdir(parents=True)
    (tmp_path / "sub" / "deep" / ".ENVRC").write_text("x")
    (tmp_path / "sub" / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / "sub" / ".config" / "git").mkdir(parents=True)
    (tmp_path / "sub" / "plain.txt").write_text("x")
    worktree = tmp_path / ".pegboard" / "worktrees" / "wt"
    worktree.mkdir(parents=True)
    (worktree / ".git").write_text("gitdir: elsewhere\n")
    found = protected_paths([tmp_path])
    names = _relative(tmp_path, found)
    assert {"sub/deep/.ENVRC", "sub/.git", "sub/.config/git", ".pegboard", ".pegboard/worktrees/wt/.git"} <= set(names)
    assert "sub/.git/hooks" not in names and "sub/plain.txt" not in names  # a protected dir is bound whole
    assert found.unprotected == (tmp_path / ".pegboard" / "worktrees",)
    assert found.complete


def test_the_walk_stops_at_its_bound_and_says_so(tmp_path: Path) -> None:
    for i in range(20):
        (tmp_path / f"d{i}").mkdir()
    (tmp_path / "d19" / ".envrc").write_text("x")
    found = protected_paths([tmp_path], limit=5)
    assert not found.complete
    assert tmp_path / "d19" / ".envrc" not in {p.path for p in found.paths}
    assert ProtectedPath(tmp_path / ".envrc", False) in found.paths  # the top of a root is always complete


def test_config_directories_and_every_layer_file(tmp_path: Path) -> None:
    extra = tmp_path / "extra.json"
    extra.write_text(json.dumps({"permissions": {"allow": ["Read"]}}))
    env = {"PEGBOARD_CONFIG_DIR": str(tmp_path / "user"), "PEGBOARD_MANAGED_CONFIG_DIR": str(tmp_path / "managed")}
    loaded = load_config(tmp_path, [extra], env=env)
    found = {p.path: p.directory for p in protected_paths([], config=loaded, env=env).paths}
    assert found[tmp_path / "user"] is True and found[tmp_path / "managed"] is True
    assert found[extra] is False
    local = tmp_path / ".pegboard" / "settings.local.json"
    layered = load_layers([ConfigLayer("project-local", {}, local, tmp_path)])
    assert local in {p.path for p in protected_paths([], config=layered).paths}


def test_it_is_public() -> None:
    assert {"protected_paths", "ProtectedPath", "ProtectedPaths"} <= set(pegboard.__all__)
    assert pegboard.protected_paths.__module__ == "pegboard"
