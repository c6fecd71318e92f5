"""Glob (alias find) on real trees, over rg and over the pure-Python walk."""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pegboard_glob
from pegboard import ToolResult
from pegboard.testing import check_tool, isolated_pegboard
from pegboard_toolkit import GlobError, compile_glob, split_glob
from pegboard_toolkit.ripgrep import RG_UNAVAILABLE, RipgrepUnavailable, find_ripgrep, require_ripgrep
from tests.builtin.files import make_tree, stamp_distinct

BACKENDS = ["ripgrep", "python"]


def glob(root: Path, backend: str = "ripgrep", config: dict[str, Any] | None = None,
         env: dict[str, str] | None = None, **input: object) -> ToolResult:
    cfg = {"tools": {"glob": {"backend": backend}}, **(config or {})}
    with isolated_pegboard(pegboard_glob, cwd=root, config=cfg, env=env) as pb:
        return pb.call_sync("Glob", input)


def names(result: ToolResult, root: Path) -> list[str]:
    assert result.structured is not None, result.text
    return [os.path.relpath(p, root) for p in result.structured["matches"]]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return make_tree(tmp_path / "proj")


def test_conforms_and_is_find() -> None:
    check_tool(pegboard_glob.glob, {"pattern": "**/*.py", "path": "/tmp"})
    assert "find" in pegboard_glob.glob.aliases and {"fs", "file"} <= set(pegboard_glob.glob.groups)
    assert pegboard_glob.glob.family == "Read"


@pytest.mark.parametrize("backend", BACKENDS)
def test_patterns(tree: Path, backend: str) -> None:
    assert sorted(names(glob(tree, backend, pattern="**/*.py"), tree)) == [
        ".hidden.py", "build/out.py", "src/app.py", "src/deep/deeper/core.py", "src/util.py",
    ]
    assert sorted(names(glob(tree, backend, pattern="*.py"), tree)) == [".hidden.py"]
    assert sorted(names(glob(tree, backend, pattern="src/*.py"), tree)) == ["src/app.py", "src/util.py"]
    assert sorted(names(glob(tree, backend, pattern="src/**/*.{md,py}"), tree)) == [
        "src/app.py", "src/deep/deeper/core.py", "src/deep/notes.md", "src/util.py",
    ]
    assert names(glob(tree, backend, pattern="src/???.py"), tree) == ["src/app.py"]
    assert names(glob(tree, backend, pattern="src/[u]*.py"), tree) == ["src/util.py"]
    assert names(glob(tree, backend, pattern="**/ünïcödé*"), tree) == ["docs with space/ünïcödé naïve.txt"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_absolute_patterns_and_path(tree: Path, backend: str) -> None:
    result = glob(tree, backend, pattern=f"{tree}/src/**/*.py")
    assert result.structured is not None and result.structured["search_path"] == str(tree / "src")
    assert sorted(names(result, tree)) == ["src/app.py", "src/deep/deeper/core.py", "src/util.py"]
    assert sorted(names(glob(tree, backend, pattern="*.py", path=str(tree / "src")), tree)) == [
        "src/app.py", "src/util.py",
    ]
    assert names(glob(tree, backend, pattern="*.md", path="docs with space/.."), tree) == ["README.md"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_never_vcs_never_symlinks_and_loops_do_not_hang(tree: Path, backend: str) -> None:
    found = names(glob(tree, backend, pattern="**/*"), tree)
    assert not any(p.startswith(".git/") for p in found)
    assert ".gitignore" in found and "debug.log" in found
    assert not any(p.startswith(("link-out", "src/deep/loop")) or p in ("app-link.py", "broken-link") for p in found)


@pytest.mark.parametrize("backend", BACKENDS)
def test_newest_first_capped_at_100(tmp_path: Path, backend: str) -> None:
    for n in range(130):
        f = tmp_path / f"f{n:03d}.txt"
        f.write_text("x")
        os.utime(f, (1_000_000 + n, 1_000_000 + n))
    result = glob(tmp_path, backend, pattern="*.txt")
    assert result.structured is not None
    assert result.structured["truncated"] is True and result.structured["count"] == 100
    assert result.structured["total_matches"] == 130
    matches = result.structured["matches"]
    assert matches[0].endswith("f129.txt") and matches[99].endswith("f030.txt")
    assert "truncated" in result.text and "more specific pattern" in result.text


@pytest.mark.parametrize("backend", BACKENDS)
def test_gitignore_switch(tree: Path, backend: str) -> None:
    assert "build/out.py" in names(glob(tree, backend, pattern="**/*.py"), tree)
    for env in ({"PEGBOARD_GLOB_NO_IGNORE": "false"}, {"FUXI_CODE_GLOB_NO_IGNORE": "FALSE"}):
        respected = names(glob(tree, backend, env=env, pattern="**/*"), tree)
        assert "build/out.py" not in respected and "debug.log" not in respected and "src/app.py" in respected
    by_config = names(glob(tree, backend, config={"tools": {"glob": {"backend": backend, "respectGitignore": True}}},
                           pattern="**/*.py"), tree)
    assert "build/out.py" not in by_config
    env_wins = names(glob(tree, backend, config={"tools": {"glob": {"backend": backend, "respectGitignore": True}}},
                          env={"PEGBOARD_GLOB_NO_IGNORE": "true"}, pattern="**/*.py"), tree)
    assert "build/out.py" in env_wins


@pytest.mark.parametrize("backend", BACKENDS)
def test_read_denied_paths_are_never_listed(tree: Path, backend: str) -> None:
    config = {"permissions": {"deny": ["Read(src/deep/**)", "Read(.hidden.py)"]}}
    found = names(glob(tree, backend, config=config, pattern="**/*.py"), tree)
    assert sorted(found) == ["build/out.py", "src/app.py", "src/util.py"]
    absolute = {"permissions": {"deny": [f"Read(/{tree}/src/**)"]}}
    outside_src = sorted(names(glob(tree, backend, config=absolute, pattern="**/*.py"), tree))
    assert outside_src == [".hidden.py", "build/out.py"]
    assert glob(tree, backend, config=absolute, pattern="src/**").reason == "denied"


def test_rg_and_the_walk_agree(tree: Path) -> None:
    (tree / "src" / "ignored.log").write_text("x")
    (tree / "src" / "deep" / ".git").write_text("gitdir: /elsewhere\n")
    stamp_distinct(tree)
    for pattern in ("**/*", "**/*.py", "src/**", "*", "**/*.{md,txt}", "**/deep*/**"):
        for env in ({}, {"PEGBOARD_GLOB_NO_IGNORE": "false"}):
            unindexed = {**env, "PEGBOARD_GLOB_INDEX": "0"}
            rg = glob(tree, "ripgrep", env=unindexed, pattern=pattern)
            py = glob(tree, "python", env=unindexed, pattern=pattern)
            indexed = glob(tree, "ripgrep", env=env, pattern=pattern)
            assert rg.metadata["backend"] == "ripgrep" and py.metadata["backend"] == "python"
            assert indexed.metadata["index"] in ("built", "building"), indexed.metadata
            assert rg.text == py.text == indexed.text, (pattern, env)


def test_errors(tree: Path) -> None:
    missing = glob(tree, pattern="*.py", path=str(tree / "nope"))
    assert missing.metadata["error_kind"] == "path_not_found" and "does not exist" in missing.text
    assert glob(tree, pattern="*", path=str(tree / "README.md")).metadata["error_kind"] == "not_a_directory"
    assert glob(tree, pattern="src/[abc").metadata["error_kind"] == "invalid_pattern"
    bad = glob(tree, config={"tools": {"glob": {"timeout": -1}}}, pattern="*")
    assert bad.metadata["error_kind"] == "invalid_config" and "tools.glob.timeout" in bad.text
    assert glob(tree, "sometimes", pattern="*").metadata["error_kind"] == "invalid_config"
    empty = glob(tree, pattern="**/*.nothing")
    assert not empty.is_error and empty.text == "No files found"


def test_timeout(tmp_path: Path) -> None:
    for n in range(400):
        (tmp_path / f"d{n}").mkdir()
        (tmp_path / f"d{n}" / "f.txt").write_text("x")
    result = glob(tmp_path, "python", config={"tools": {"glob": {"backend": "python", "timeout": 1e-9}}},
                  pattern="**/*")
    assert result.metadata["error_kind"] == "timeout" and "timed out" in result.text


def test_unreadable_directory_is_skipped(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "a.txt").write_text("x")
    (tmp_path / "b.txt").write_text("x")
    locked.chmod(0)
    try:
        for backend in BACKENDS:
            assert "b.txt" in names(glob(tmp_path, backend, pattern="**/*.txt"), tmp_path)
    finally:
        locked.chmod(stat.S_IRWXU)


def test_ripgrep_resolution(tmp_path: Path) -> None:
    assert find_ripgrep() is not None
    empty = tmp_path / "empty"
    empty.mkdir()
    assert find_ripgrep({"PATH": str(empty)}, use_wheel=False) is None
    with pytest.raises(RipgrepUnavailable) as info:
        require_ripgrep({"PATH": str(empty)}, use_wheel=False)
    assert str(info.value) == "ripgrep (rg) is not available and could not be downloaded" == RG_UNAVAILABLE
    failing = tmp_path / "failing"
    failing.mkdir()
    (failing / "rg").write_text("#!/bin/sh\nexit 3\n")
    (failing / "rg").chmod(0o755)
    assert find_ripgrep({"PATH": str(failing)}, use_wheel=False) == str(failing / "rg")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "rg").write_text("#!/no/such/interpreter\n")
    (broken / "rg").chmod(0o755)
    assert find_ripgrep({"PATH": str(broken)}, use_wheel=False) is None


def test_split_glob() -> None:
    assert split_glob("/abs/src/**/*.py") == ("/abs/src", "**/*.py")
    assert split_glob("*.py") == ("", "*.py")
    assert split_glob("src/lib/x.py") == ("src/lib", "x.py")
    assert split_glob("/*.py") == ("/", "*.py")
    assert split_glob("a/{b,c}/d") == ("a", "{b,c}/d")


def test_compile_glob_semantics() -> None:
    assert compile_glob("**/*.py").match("a/b/c.py") and compile_glob("**/*.py").match("c.py")
    assert not compile_glob("*.py").match("a/c.py")
    assert compile_glob("a/**").match("a/b/c") and compile_glob("{a,b{c,d}}.x").match("bd.x")
    assert compile_glob("[!a]*").match("b") and not compile_glob("[!a]*").match("a")
    with pytest.raises(GlobError):
        compile_glob("{a,b")


@given(st.text(alphabet="ab*?.-_ ", max_size=8), st.text(alphabet="ab.-_ ", max_size=8))
def test_simple_globs_match_like_fnmatch(pattern: str, name: str) -> None:
    assert bool(compile_glob(pattern).match(name)) == fnmatch.fnmatchcase(name, pattern)


@given(st.text(max_size=30))
def test_any_pattern_compiles_or_says_why(pattern: str) -> None:
    with contextlib.suppress(GlobError):
        compile_glob(pattern)


def test_the_index_serves_repeat_calls_and_follows_changes(tree: Path) -> None:
    with isolated_pegboard(pegboard_glob, cwd=tree) as pb:
        first = pb.call_sync("Glob", {"pattern": "**/*.py"})
        assert first.metadata["index"] in ("built", "building")
        again = pb.call_sync("Glob", {"pattern": "**/*.py"})
        assert again.metadata["index"] == "served" and again.text == first.text
        (tree / "src" / "fresh.py").write_text("x")
        (tree / "src" / "util.py").unlink()

        async def in_session() -> ToolResult:
            async with pb.session() as session:
                return await session.call("Glob", {"pattern": "**/*.py"})

        changed = asyncio.run(in_session())
        assert changed.metadata["index"] == "served"
        walked = glob(tree, env={"PEGBOARD_GLOB_INDEX": "off"}, pattern="**/*.py")
        assert changed.text == walked.text and names(changed, tree)[0] == "src/fresh.py"
    assert pb.stash.get(pegboard_glob.INDEXES) is None


def test_index_setting_environment_and_fallback(tree: Path) -> None:
    off = {"tools": {"glob": {"backend": "ripgrep", "index": False}}}
    assert glob(tree, config=off, pattern="**/*.py").metadata["index"] == "off"
    assert glob(tree, env={"PEGBOARD_GLOB_INDEX": "0"}, pattern="**/*.py").metadata["index"] == "off"
    assert glob(tree, config=off, env={"PEGBOARD_GLOB_INDEX": "1"}, pattern="**/*.py").metadata["index"] != "off"
    bad = glob(tree, config={"tools": {"glob": {"backend": "ripgrep", "index": "yes"}}}, pattern="*")
    assert bad.metadata["error_kind"] == "invalid_config" and "tools.glob.index" in bad.text
    from pegboard_glob_index import FileIndexes

    for backend in BACKENDS:
        with isolated_pegboard(pegboard_glob, cwd=tree, config={"tools": {"glob": {"backend": backend}}}) as pb:
            pb.stash[pegboard_glob.INDEXES] = FileIndexes(max_dirs=1)
            limited = pb.call_sync("Glob", {"pattern": "**/*"})
            assert limited.metadata["backend"] == backend and limited.metadata["index"] != "built"
            if backend == "python":
                assert limited.metadata["index"] == "fallback: more than 1 directories"
            assert limited.text == glob(tree, config=off, pattern="**/*").text
            again = pb.call_sync("Glob", {"pattern": "**/*"})
            assert again.metadata["index"] == "fallback: more than 1 directories"
