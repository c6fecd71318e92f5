"""Grep on real trees, over rg and over the pure-Python search, which must answer the same."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pegboard_grep
from pegboard import ToolResult
from pegboard.testing import check_tool, isolated_pegboard
from pegboard_toolkit import rg_glob_matches
from tests.builtin.files import make_tree

BACKENDS = ["ripgrep", "python"]


def grep(root: Path, backend: str = "ripgrep", config: dict[str, Any] | None = None, /, **input: object) -> ToolResult:
    cfg: dict[str, Any] = {**(config or {})}
    cfg["tools"] = {"grep": {"backend": backend, **((config or {}).get("tools", {}).get("grep", {}))}}
    return isolated_pegboard(pegboard_grep, cwd=root, config=cfg).call_sync("Grep", input)


def rel(result: ToolResult, root: Path) -> list[str]:
    assert result.structured is not None, result.text
    return [os.path.relpath(p, root) for p in result.structured["files"]]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return make_tree(tmp_path / "proj")


def test_conforms_and_takes_the_dash_names() -> None:
    check_tool(pegboard_grep.grep, {"pattern": "x", "-A": 1, "-B": 2, "-C": 3, "-n": False, "-i": True})
    schema = pegboard_grep.grep.input_schema()["properties"]
    assert {"-A", "-B", "-C", "-n", "-i", "head_limit", "offset", "multiline", "context"} <= set(schema)
    assert pegboard_grep.grep.family == "Read" and {"fs", "file"} <= set(pegboard_grep.grep.groups)


@pytest.mark.parametrize("backend", BACKENDS)
def test_files_mode_respects_gitignore_searches_hidden_skips_vcs_and_binaries(tree: Path, backend: str) -> None:
    found = sorted(rel(grep(tree, backend, pattern="needle"), tree))
    assert found == [".hidden.py", "docs with space/ünïcödé naïve.txt", "src/app.py", "src/deep/notes.md"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_sparse_two_gigabyte_file_is_skipped_as_binary(tree: Path, backend: str) -> None:
    with open(tree / "disk.img", "wb") as fh:
        fh.truncate(2 * 1024**3)
    assert "disk.img" not in rel(grep(tree, backend, pattern="needle"), tree)
    assert "No files found" in grep(tree, backend, pattern="needle", path=str(tree / "src" / "deep" / "deeper")).text


@pytest.mark.parametrize("backend", BACKENDS)
def test_gitignored_file_named_directly_is_searched(tree: Path, backend: str) -> None:
    result = grep(tree, backend, pattern="needle", path=str(tree / "debug.log"), output_mode="content")
    assert result.text == f"{tree / 'debug.log'}:1:needle log"


@pytest.mark.parametrize("backend", BACKENDS)
def test_files_mode_newest_first(tmp_path: Path, backend: str) -> None:
    for n, name in enumerate(["old.txt", "mid.txt", "new.txt"]):
        f = tmp_path / name
        f.write_text("hit\n")
        os.utime(f, (1_000_000 + n * 100, 1_000_000 + n * 100))
    assert rel(grep(tmp_path, backend, pattern="hit"), tmp_path) == ["new.txt", "mid.txt", "old.txt"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_content_context_case_and_line_numbers(tmp_path: Path, backend: str) -> None:
    f = tmp_path / "c.txt"
    f.write_text("a\nHit one\nb\nc\nd\nhit two\n")
    p = str(f)
    plain = grep(tmp_path, backend, pattern="hit", output_mode="content")
    assert plain.text == f"{p}:6:hit two"
    loose = grep(tmp_path, backend, pattern="hit", output_mode="content", **{"-i": True, "-C": 1})
    assert loose.text == f"{p}-1-a\n{p}:2:Hit one\n{p}-3-b\n--\n{p}-5-d\n{p}:6:hit two"
    bare = grep(tmp_path, backend, pattern="hit", output_mode="content", **{"-n": False, "-B": 1})
    assert bare.text == f"{p}-d\n{p}:hit two"
    s = loose.structured
    assert s is not None and s["total_matches"] == 2
    assert s["matches"][0] == {"file": p, "line_number": 2, "line": "Hit one", "before_context": ["a"],
                               "after_context": ["b"]}
    assert grep(tmp_path, backend, pattern="hit", output_mode="content", context=1).text.count("--") == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_count_mode(tmp_path: Path, backend: str) -> None:
    (tmp_path / "a.txt").write_text("x\nx\ny\n")
    (tmp_path / "b.txt").write_text("x\n")
    result = grep(tmp_path, backend, pattern="x", output_mode="count")
    assert result.text.startswith(f"{tmp_path / 'a.txt'}:2\n{tmp_path / 'b.txt'}:1")
    assert "Found 3 matching lines in 2 files" in result.text
    assert result.structured is not None and result.structured["total_matches"] == 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_multiline(tmp_path: Path, backend: str) -> None:
    (tmp_path / "m.py").write_text("def f(\n    x,\n):\n    pass\n")
    result = grep(tmp_path, backend, pattern=r"def f\(.*?\):", multiline=True, output_mode="content")
    assert result.structured is not None
    assert [m["line_number"] for m in result.structured["matches"]] == [1, 2, 3]
    assert result.text.splitlines()[2] == f"{tmp_path / 'm.py'}:3:):"
    newline = grep(tmp_path, backend, pattern=r"f\(\n", output_mode="content")
    assert newline.metadata["error_kind"] == "invalid_pattern" and "multiline" in newline.text


@pytest.mark.parametrize("backend", BACKENDS)
def test_head_limit_and_offset_page_with_a_note(tmp_path: Path, backend: str) -> None:
    (tmp_path / "many.txt").write_text("".join(f"hit {i}\n" for i in range(300)))
    first = grep(tmp_path, backend, pattern="hit", output_mode="content")
    assert len(first.text.split("\n\n")[0].splitlines()) == 250 and "Use offset=250" in first.text
    assert first.structured is not None and first.structured["truncated"] is True
    rest = grep(tmp_path, backend, pattern="hit", output_mode="content", offset=250, head_limit=0)
    assert rest.text.splitlines()[0].endswith(":251:hit 250") and rest.structured["numLines"] == 50  # type: ignore[index]
    every = grep(tmp_path, backend, pattern="hit", output_mode="content", head_limit=0)
    assert "Showing" not in every.text and len(every.text.splitlines()) == 300


@pytest.mark.parametrize("backend", BACKENDS)
def test_glob_and_type_filters(tree: Path, backend: str) -> None:
    assert sorted(rel(grep(tree, backend, pattern="needle", glob="*.py"), tree)) == [".hidden.py", "src/app.py"]
    assert sorted(rel(grep(tree, backend, pattern="needle", glob="*.{md,txt}"), tree)) == [
        "docs with space/ünïcödé naïve.txt", "src/deep/notes.md",
    ]
    assert rel(grep(tree, backend, pattern="needle", type="md"), tree) == ["src/deep/notes.md"]
    assert sorted(rel(grep(tree, backend, pattern="needle", glob="!src"), tree)) == [
        ".hidden.py", "docs with space/ünïcödé naïve.txt",
    ]
    ignored_dir = rel(grep(tree, backend, pattern="needle", glob="**/*.py", **{"-i": True}), tree)
    assert "build/out.py" not in ignored_dir and "src/deep/deeper/core.py" in ignored_dir
    (tree / "top.log").write_text("needle\n")
    assert "top.log" in rel(grep(tree, backend, pattern="needle", glob="*.log"), tree)


@pytest.mark.parametrize("backend", BACKENDS)
def test_read_denied_paths_are_excluded(tree: Path, backend: str) -> None:
    config = {"permissions": {"deny": ["Read(src/**)", "Read(.hidden.py)"]}}
    found = rel(grep(tree, backend, config, pattern="needle"), tree)
    assert found == ["docs with space/ünïcödé naïve.txt"]
    denied = grep(tree, backend, config, pattern="needle", path=str(tree / "src" / "app.py"))
    assert denied.is_error
    absolute = {"permissions": {"deny": [f"Read(/{tree}/docs with space/**)", "Read(~/nothing-here/**)"]}}
    assert "docs with space/ünïcödé naïve.txt" not in rel(grep(tree, backend, absolute, pattern="needle"), tree)


@pytest.mark.parametrize("backend", BACKENDS)
def test_long_lines_are_capped_at_500_columns(tmp_path: Path, backend: str) -> None:
    (tmp_path / "min.js").write_text("var a='hit';" + "x" * 3000 + "\n")
    line = grep(tmp_path, backend, pattern="hit", output_mode="content").text
    assert len(line) < 700 and "line cut at 500 columns" in line


@pytest.mark.parametrize("backend", BACKENDS)
def test_encodings_are_searched(tmp_path: Path, backend: str) -> None:
    (tmp_path / "u16.txt").write_bytes("zwölf hit\r\n".encode("utf-16"))
    (tmp_path / "bom.txt").write_bytes("\ufeffhit bom\n".encode())
    (tmp_path / "crlf.txt").write_bytes(b"hit crlf\r\n")
    result = grep(tmp_path, backend, pattern="hit", output_mode="content")
    assert f"{tmp_path / 'u16.txt'}:1:zwölf hit" in result.text.splitlines()
    assert f"{tmp_path / 'bom.txt'}:1:hit bom" in result.text.splitlines()
    assert f"{tmp_path / 'crlf.txt'}:1:hit crlf" in result.text.splitlines()


def test_invalid_regex_glob_and_type_return_rgs_diagnostic(tree: Path) -> None:
    regex = grep(tree, pattern="interface{")
    assert regex.metadata["error_kind"] == "invalid_pattern" and "regex parse error" in regex.text
    assert "unrecognized file type: nosuch" in grep(tree, pattern="x", type="nosuch").text
    assert "glob" in grep(tree, pattern="x", glob="[").text
    for backend in BACKENDS:
        assert grep(tree, backend, pattern="(").metadata["error_kind"] == "invalid_pattern"
        missing = grep(tree, backend, pattern="x", path=str(tree / "nope"))
        assert missing.metadata["error_kind"] == "path_not_found"


def test_escaped_braces_find_literal_text(tmp_path: Path) -> None:
    (tmp_path / "x.go").write_text("var v interface{} = 1\n")
    for backend in BACKENDS:
        assert rel(grep(tmp_path, backend, pattern=r"interface\{\}"), tmp_path) == ["x.go"]


def test_rg_and_python_give_the_same_output(tree: Path) -> None:
    (tree / "src" / "many.py").write_text("".join(f"needle {i}\nother\n" for i in range(20)))
    inputs: list[dict[str, Any]] = [
        {"pattern": "needle"},
        {"pattern": "needle", "output_mode": "content"},
        {"pattern": "needle", "output_mode": "content", "-C": 2},
        {"pattern": "NEEDLE", "-i": True, "output_mode": "count"},
        {"pattern": "needle", "glob": "*.py", "output_mode": "content", "-n": False},
        {"pattern": r"needle \d+\nother", "multiline": True, "output_mode": "content", "head_limit": 7},
        {"pattern": "needle", "output_mode": "content", "head_limit": 5, "offset": 3, "-A": 1},
        {"pattern": "o", "path": "src"},
        {"pattern": "needle", "type": "py", "output_mode": "count"},
        {"pattern": "^$", "output_mode": "count"},
    ]
    for item in inputs:
        rg, py = grep(tree, "ripgrep", **item), grep(tree, "python", **item)
        assert rg.metadata["backend"] == "ripgrep" and py.metadata["backend"] == "python"
        assert rg.text == py.text, item
        assert _without_timing(rg.structured) == _without_timing(py.structured), item


def _without_timing(structured: dict[str, Any] | None) -> dict[str, Any]:
    return {k: v for k, v in (structured or {}).items() if k != "durationMs"}


def test_python_search_streams_a_big_file(tmp_path: Path) -> None:
    import tracemalloc

    with open(tmp_path / "big.log", "w") as fh:
        for block in range(15):
            fh.write("".join(f"line {block * 10000 + i} " + "y" * 60 + "\n" for i in range(10000)))
        fh.write("the needle at the end\n")
    tracemalloc.start()
    result = grep(tmp_path, "python", pattern="needle", output_mode="content", **{"-B": 1})
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert result.text.splitlines()[-1] == f"{tmp_path / 'big.log'}:150001:the needle at the end"
    assert result.text.splitlines()[0].startswith(f"{tmp_path / 'big.log'}-150000-line 149999")
    assert (tmp_path / "big.log").stat().st_size > 10_000_000 and peak < 5_000_000, peak


def test_rg_unavailable_error_text(tree: Path) -> None:
    env = {"PEGBOARD_RG_PATH": str(tree / "no-such-rg")}
    pb = isolated_pegboard(pegboard_grep, cwd=tree, env=env, config={"tools": {"grep": {"backend": "ripgrep"}}})
    result = pb.call_sync("Grep", {"pattern": "x", "path": str(tree / "missing")})
    assert result.text == "ripgrep (rg) is not available and could not be downloaded"
    assert result.metadata["error_kind"] == "rg_unavailable"
    auto = isolated_pegboard(pegboard_grep, cwd=tree, env=env).call_sync("Grep", {"pattern": "needle"})
    assert auto.metadata["backend"] == "python" and "src/app.py" in auto.text


def test_split_globs() -> None:
    assert pegboard_grep.split_globs("*.py *.{ts,tsx}, !vendor") == ["*.py", "*.{ts,tsx}", "!vendor"]
    assert pegboard_grep.split_globs(None) == []


@given(
    st.lists(st.text(alphabet="ab*/!.{},", min_size=1, max_size=6), max_size=4), st.text(alphabet="ab./", max_size=8)
)
def test_rg_glob_matcher_never_raises_unexpectedly(globs: list[str], path: str) -> None:
    from pegboard_toolkit import GlobError

    with contextlib.suppress(GlobError):
        rg_glob_matches(path.strip("/") or "a", globs)
