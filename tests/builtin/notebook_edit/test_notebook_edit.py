"""NotebookEdit on real notebooks: replace, insert, delete; ids and cell-N; validity kept."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

import pegboard_notebook_edit
from pegboard.testing import check_tool
from tests.builtin.filetools import Files, kind


@pytest.fixture
def files(tmp_path: Path) -> Iterator[Files]:
    f = Files(tmp_path)
    yield f
    f.close()


def notebook(files: Files, name: str = "nb.ipynb", minor: int = 5) -> Path:
    nb = new_notebook(cells=[
        new_code_cell("x = 1", id="first", execution_count=3,
                      outputs=[new_output("stream", name="stdout", text="1\n")]),
        new_markdown_cell("# Title", id="second"),
    ])
    nb.nbformat_minor = minor
    if minor < 5:
        for cell in nb.cells:
            cell.pop("id")
    path = files.root / name
    nbformat.write(nb, path)
    files.read(path)
    return path


def cells(path: Path) -> list[dict[str, Any]]:
    nb = nbformat.read(path, as_version=nbformat.NO_CONVERT)
    nbformat.validate(nb)
    return list(nb.cells)


def test_conforms() -> None:
    check_tool(pegboard_notebook_edit.notebook_edit, {"notebook_path": "/tmp/a.ipynb", "cell_id": "cell-0",
                                                      "new_source": "x", "edit_mode": "replace"})


def test_replace_clears_outputs_of_a_code_cell(files: Files) -> None:
    path = notebook(files)
    result = files.call("NotebookEdit", notebook_path=str(path), cell_id="first", new_source="x = 2")
    assert not result.is_error, result.text
    first = cells(path)[0]
    assert first["source"] == "x = 2" and first["outputs"] == [] and first["execution_count"] is None
    s = result.structured
    assert s is not None and s["edit_type"] == "replace" and s["cell_id"] == "first" and s["total_cells"] == 2
    assert s["language"] == "python" and s["error"] == "" and s["notebook_path"] == str(path)
    assert json.loads(s["original_file"])["cells"][0]["source"] == ["x = 1"]


def test_cell_n_names_the_nth_cell(files: Files) -> None:
    path = notebook(files)
    assert not files.call("NotebookEdit", notebook_path=str(path), cell_id="cell-1", new_source="## New").is_error
    assert cells(path)[1]["source"] == "## New" and cells(path)[1]["cell_type"] == "markdown"


def test_replace_can_change_the_cell_type(files: Files) -> None:
    path = notebook(files)
    result = files.call("NotebookEdit", notebook_path=str(path), cell_id="second", new_source="y = 1",
                        cell_type="code")
    assert not result.is_error, result.text
    second = cells(path)[1]
    assert second["cell_type"] == "code" and second["id"] == "second" and second["outputs"] == []


def test_insert_after_a_cell_and_at_the_top(files: Files) -> None:
    path = notebook(files)
    result = files.call("NotebookEdit", notebook_path=str(path), cell_id="first", new_source="middle",
                        cell_type="markdown", edit_mode="insert")
    assert not result.is_error, result.text
    assert [c["source"] for c in cells(path)] == ["x = 1", "middle", "# Title"]
    new_id = result.structured and result.structured["cell_id"]
    assert new_id and cells(path)[1]["id"] == new_id
    assert not files.call("NotebookEdit", notebook_path=str(path), new_source="top", cell_type="code",
                          edit_mode="insert").is_error
    assert cells(path)[0]["source"] == "top"


def test_insert_needs_a_cell_type(files: Files) -> None:
    path = notebook(files)
    result = files.call("NotebookEdit", notebook_path=str(path), new_source="x", edit_mode="insert")
    assert kind(result) == "cell_type_required"


def test_delete(files: Files) -> None:
    path = notebook(files)
    result = files.call("NotebookEdit", notebook_path=str(path), cell_id="first", edit_mode="delete")
    assert not result.is_error and result.structured and result.structured["total_cells"] == 1
    assert [c["id"] for c in cells(path)] == ["second"]


def test_older_notebooks_get_no_cell_ids(files: Files) -> None:
    path = notebook(files, minor=4)
    result = files.call("NotebookEdit", notebook_path=str(path), cell_id="cell-0", new_source="z",
                        cell_type="code", edit_mode="insert")
    assert not result.is_error, result.text
    assert all("id" not in c for c in cells(path)) and len(cells(path)) == 3


def test_errors(files: Files) -> None:
    path = notebook(files)
    assert kind(files.call("NotebookEdit", notebook_path=str(path), cell_id="nope", new_source="x")) == \
        "cell_not_found"
    assert kind(files.call("NotebookEdit", notebook_path=str(files.root / "a.py"), cell_id="x",
                           new_source="x")) == "not_a_notebook"
    assert kind(files.call("NotebookEdit", notebook_path=str(files.root / "missing.ipynb"), cell_id="x",
                           new_source="x")) == "file_not_found"
    assert kind(files.call("NotebookEdit", notebook_path=str(path), new_source="x")) == "cell_id_required"
    broken = files.root / "broken.ipynb"
    broken.write_text("{not json")
    files.read(broken)
    assert kind(files.call("NotebookEdit", notebook_path=str(broken), cell_id="x", new_source="x")) == \
        "invalid_notebook"


def test_read_before_edit(files: Files) -> None:
    path = notebook(files)
    path.write_text(path.read_text().replace("x = 1", "x = 9"))
    result = files.call("NotebookEdit", notebook_path=str(path), cell_id="first", new_source="y")
    assert kind(result) == "stale_read"
    other = files.root / "other.ipynb"
    other.write_text(path.read_text())
    assert kind(files.call("NotebookEdit", notebook_path=str(other), cell_id="first", new_source="y")) == "not_read"


def test_an_edit_that_would_break_the_notebook_writes_nothing(files: Files) -> None:
    path = files.root / "odd.ipynb"
    nb = new_notebook(cells=[new_code_cell("x", id="a")])
    nb.metadata["kernelspec"] = {"name": 3}  # invalid: the schema wants strings
    path.write_text(json.dumps(nb))
    files.read(path)
    before = path.read_bytes()
    result = files.call("NotebookEdit", notebook_path=str(path), cell_id="a", new_source="y")
    assert kind(result) == "invalid_notebook" and path.read_bytes() == before


def test_edit_rules_cover_notebooks(tmp_path: Path) -> None:
    files = Files(tmp_path, config={"permissions": {"deny": ["Edit(locked/**)"]}})
    try:
        (tmp_path / "locked").mkdir()
        path = notebook(files, "locked/n.ipynb")
        result = files.call("NotebookEdit", notebook_path=str(path), cell_id="first", new_source="y")
        assert result.is_error and result.reason == "denied"
    finally:
        files.close()
