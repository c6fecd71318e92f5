"""The inotify file index on real trees: after every change its answer is a fresh walk's."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pegboard_glob_index import FileIndex, FileIndexes, IndexUnavailable
from pegboard_toolkit import compile_glob, walk_files
from tests.builtin.files import make_tree

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")

EVERYTHING = compile_glob("**")


def fresh(root: Path, ignore: bool, pattern: str = "**") -> list[str]:
    """What a walk answers now: the files ``pattern`` matches, newest first, then by path."""
    matcher = compile_glob(pattern)
    stamped = []
    for rel in walk_files(root, ignore=ignore):
        if matcher.match(rel):
            stamped.append((-os.lstat(root / rel).st_mtime_ns, rel))
    return [rel for _, rel in sorted(stamped)]


@pytest.fixture
def index(tmp_path: Path) -> Iterator[tuple[Path, FileIndex]]:
    root = make_tree(tmp_path / "proj")
    found = FileIndex(str(root), ignore=False)
    yield root, found
    found.close()


def served(index: FileIndex, root: Path, pattern: str = "**", how: str = "served") -> list[str]:
    answer, got = index.newest_first(compile_glob(pattern))
    assert got == how
    assert answer == fresh(root, index.ignore, pattern)
    return answer


def test_first_query_builds_and_later_ones_are_served(index: tuple[Path, FileIndex]) -> None:
    root, found = index
    first = served(found, root, "**/*.py", how="built")
    assert "src/app.py" in first and "build/out.py" in first and ".hidden.py" in first
    everything = served(found, root)
    assert not any(p.startswith((".git/", "link-out", "src/deep/loop")) or p == "app-link.py" for p in everything)
    assert served(found, root, "**/*.py") == first
    assert found.builds == 1


def test_files_and_directories_changing_between_queries(index: tuple[Path, FileIndex]) -> None:
    root, found = index
    served(found, root, how="built")
    steps = [
        lambda: (root / "src" / "new.py").write_text("x"),
        lambda: os.utime(root / "README.md", (2_000_000_000, 2_000_000_000)),
        lambda: (root / "src" / "util.py").write_text("changed"),
        lambda: os.utime(root / "src" / "util.py", (1_000, 1_000)),
        lambda: (root / "src" / "app.py").unlink(),
        lambda: (root / "src" / "new.py").rename(root / "docs with space" / "moved.py"),
        lambda: (root / "src" / "deep").rename(root / "deep-renamed"),
        lambda: (root / "a" / "b" / "c").mkdir(parents=True),
        lambda: (root / "a" / "b" / "c" / "leaf.txt").write_text("x"),
        lambda: shutil.move(str(root / "a"), str(root.parent / "outside-a")),
        lambda: shutil.move(str(root.parent / "outside-a"), str(root / "back")),
        lambda: shutil.rmtree(root / "back" / "b"),
        lambda: os.symlink(root / "README.md", root / "readme-link"),
        lambda: os.mkfifo(root / "pipe"),
        lambda: os.unlink(root / "README.md"),
        lambda: os.mkdir(root / "README.md"),
        lambda: (root / "README.md" / "inside.md").write_text("x"),
        lambda: (root / ".git" / "ignored-by-vcs-rule").write_text("x"),
        lambda: (root / "blob.bin").rename(root / "debug.log"),
    ]
    for step in steps:
        step()
        served(found, root)
    assert found.builds == 1


def test_hard_linked_files_are_stat_each_time(index: tuple[Path, FileIndex]) -> None:
    root, found = index
    outside = root.parent / "twin.txt"
    os.link(root / "README.md", outside)
    served(found, root, how="built")
    os.utime(outside, (2_100_000_000, 2_100_000_000))
    assert served(found, root)[0] == "README.md"


def test_a_replaced_root_is_rebuilt(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    (root / "one.txt").write_text("1")
    found = FileIndex(str(root), ignore=False)
    try:
        served(found, root, how="built")
        root.rename(tmp_path / "gone")
        root.mkdir()
        (root / "two.txt").write_text("2")
        assert served(found, root, how="rebuilt") == ["two.txt"]
    finally:
        found.close()


def test_event_overflow_rebuilds(index: tuple[Path, FileIndex]) -> None:
    root, _ = index
    small = FileIndex(str(root), ignore=False, max_events=3)
    try:
        served(small, root, how="built")
        for n in range(10):
            (root / f"burst{n}.txt").write_text("x")
        served(small, root, how="rebuilt")
        (root / "one-more.txt").write_text("x")
        served(small, root)
    finally:
        small.close()


def test_watch_and_size_limits_decline_and_the_registry_remembers(index: tuple[Path, FileIndex]) -> None:
    root, _ = index
    with pytest.raises(IndexUnavailable, match="more than 2 directories"):
        FileIndex(str(root), ignore=False, max_dirs=2).newest_first(EVERYTHING)
    with pytest.raises(IndexUnavailable, match="more than 3 files"):
        FileIndex(str(root), ignore=False, max_files=3).newest_first(EVERYTHING)
    registry = FileIndexes(max_dirs=2)
    assert registry.newest_first(str(root), ignore=False, pattern=EVERYTHING) is None
    assert "directories" in registry.last_reason
    assert registry.newest_first(str(root), ignore=False, pattern=EVERYTHING) is None
    registry.close()


def test_registry_keeps_a_bounded_number_of_trees(tmp_path: Path) -> None:
    roots = []
    for n in range(4):
        roots.append(tmp_path / f"t{n}")
        roots[-1].mkdir()
        (roots[-1] / "f.txt").write_text(str(n))
    registry = FileIndexes(max_trees=2)
    try:
        for root in roots:
            answer = registry.newest_first(str(root), ignore=False, pattern=EVERYTHING)
            assert answer == (["f.txt"], "built")
        assert registry.newest_first(str(roots[-1]), ignore=False, pattern=EVERYTHING) == (["f.txt"], "served")
        assert registry.newest_first(str(roots[0]), ignore=False, pattern=EVERYTHING) == (["f.txt"], "built")
        assert len(registry._indexes) == 2
    finally:
        registry.close()


def test_ignore_rules_follow_their_files(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "proj")
    (root / "src" / "gen").mkdir()
    (root / "src" / "gen" / "made.py").write_text("x")
    found = FileIndex(str(root), ignore=True)
    try:
        first = served(found, root, how="built")
        assert "build/out.py" not in first and "debug.log" not in first
        (root / ".gitignore").write_text("*.md\n")
        assert "build/out.py" in served(found, root, how="rebuilt")
        (root / "src" / ".gitignore").write_text("gen/\n")
        assert "src/gen/made.py" not in served(found, root)
        (root / "src" / "gen" / "later.py").write_text("x")
        served(found, root)
        (root / "src" / ".gitignore").write_text("util.py\n")
        assert "src/gen/later.py" in served(found, root)
        (root / "src" / ".gitignore").unlink()
        served(found, root)
        (root / "src" / ".ignore").write_text("*.py\n")
        assert not any(p.startswith("src/") and p.endswith(".py") for p in served(found, root))
        (root / ".git" / "info").mkdir()
        (root / ".git" / "info" / "exclude").write_text("*.txt\n")
        assert not any(p.endswith(".txt") for p in served(found, root, how="rebuilt"))
    finally:
        found.close()


def test_registry_falls_back_where_inotify_cannot_be_had(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x")
    missing = tmp_path / "nope"
    registry = FileIndexes()
    assert registry.newest_first(str(missing), ignore=False, pattern=EVERYTHING) is None
    assert registry.newest_first(str(tmp_path), ignore=False, pattern=EVERYTHING) == (["f.txt"], "built")
    registry.close()
    assert registry.newest_first(str(tmp_path), ignore=False, pattern=EVERYTHING) == (["f.txt"], "built")
    registry.close()


NAMES = ["a", "b.py", ".gitignore", ".ignore", ".git", "d"]
PATHS = [*NAMES, *(f"d/{n}" for n in NAMES), *(f"d/e/{n}" for n in NAMES[:3]), "x/y"]
IGNORES = ["*.py\n", "d/\n", "e\n", "!b.py\n", "a\n"]

operations = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(PATHS), st.sampled_from(IGNORES)),
    st.tuples(st.just("touch"), st.sampled_from(PATHS), st.integers(1, 5)),
    st.tuples(st.just("mkdir"), st.sampled_from(PATHS), st.none()),
    st.tuples(st.just("remove"), st.sampled_from(PATHS), st.none()),
    st.tuples(st.just("rename"), st.sampled_from(PATHS), st.sampled_from(PATHS)),
    st.tuples(st.just("link"), st.sampled_from(PATHS), st.sampled_from(PATHS)),
    st.tuples(st.just("away"), st.sampled_from(PATHS), st.none()),
)


def apply(root: Path, op: tuple[str, str, object]) -> None:
    kind, rel, arg = op
    path = root / rel
    try:
        if kind == "write":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(str(arg))
        elif kind == "touch":
            os.utime(path, (1_600_000_000 + int(str(arg)), 1_600_000_000 + int(str(arg))))
        elif kind == "mkdir":
            path.mkdir(parents=True)
        elif kind == "remove":
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
        elif kind == "rename":
            target = root / str(arg)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, target)
        elif kind == "link":
            os.symlink(root / str(arg), path)
        elif kind == "away":
            os.replace(path, root.parent / "away")
            shutil.rmtree(root.parent / "away") if (root.parent / "away").is_dir() else None
    except OSError:
        pass
    finally:
        away = root.parent / "away"
        if away.is_dir() and not away.is_symlink():
            shutil.rmtree(away)
        elif away.exists() or away.is_symlink():
            away.unlink()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.booleans(), st.lists(operations, max_size=12))
def test_any_sequence_of_changes_matches_a_fresh_walk(ignore: bool, ops: list[tuple[str, str, object]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "tree"
        (root / "d" / "e").mkdir(parents=True)
        (root / ".git").mkdir()
        (root / "d" / "b.py").write_text("x")
        found = FileIndex(str(root), ignore=ignore)
        try:
            assert found.newest_first(EVERYTHING)[0] == fresh(root, ignore)
            for op in ops:
                apply(root, op)
                answer, _how = found.newest_first(EVERYTHING)
                assert answer == fresh(root, ignore), op
        finally:
            found.close()


def test_a_build_aside_serves_the_next_query(index: tuple[Path, FileIndex]) -> None:
    root, _ = index
    registry = FileIndexes()
    try:
        assert registry.state(str(root), ignore=False) == "new"
        assert registry.build_aside(str(root), ignore=False, pattern=compile_glob("**/*.py"), timeout=20)
        assert registry.state(str(root), ignore=False) == "live"
        assert not registry.build_aside(str(root), ignore=False, pattern=EVERYTHING, timeout=20)
        (root / "later.txt").write_text("x")
        answer = registry.newest_first(str(root), ignore=False, pattern=EVERYTHING)
        assert answer is not None and answer[1] == "served" and answer[0] == fresh(root, False)
    finally:
        registry.close()
    limited = FileIndexes(max_dirs=1)
    assert limited.build_aside(str(root), ignore=False, pattern=EVERYTHING, timeout=20)
    assert limited.newest_first(str(root), ignore=False, pattern=EVERYTHING) is None
    assert limited.state(str(root), ignore=False) == "declined"


def test_open_indexes_are_bounded_per_process(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = FileIndexes(max_live=1), FileIndexes(max_live=1)
    try:
        assert first.newest_first(str(tmp_path / "a"), ignore=False, pattern=EVERYTHING) == ([], "built")
        assert second.newest_first(str(tmp_path / "b"), ignore=False, pattern=EVERYTHING) == ([], "built")
        assert first.state(str(tmp_path / "a"), ignore=False) == "new"
        (tmp_path / "a" / "f.txt").write_text("x")
        assert first.newest_first(str(tmp_path / "a"), ignore=False, pattern=EVERYTHING) == (["f.txt"], "built")
    finally:
        first.close()
        second.close()
