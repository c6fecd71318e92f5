"""The built-in ``NotebookEdit`` tool: replace, insert or delete one cell of a Jupyter notebook.

A notebook is JSON that Jupyter must still open after the edit, so the tool edits cells, not
text: it finds the cell by its id (or ``cell-N``, the N-th cell counted from 0), changes it,
validates the whole notebook with nbformat and only then writes it, atomically. Replacing a
code cell clears its outputs and execution count (they belonged to the old source). Like
Edit, it needs a read of the notebook in this session and no change on disk since.
Written only against Pegboard's public API, the toolkit and nbformat (imported on first use).
"""

from __future__ import annotations

import os
import re
import stat
import warnings
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from pegboard import Subjects, TextBlock, ToolContext, ToolRegister, ToolResult, hookimpl, resolve_path, tool
from pegboard_toolkit import (
    AtomicWriteError,
    ReadLedger,
    missing_file_message,
    read_text,
    structured_patch,
    write_text,
)

#: ``original_file`` / ``updated_file`` in the structured result are left out above this size
MAX_FILE_CHARS = 1_000_000
_INDEX_ID = re.compile(r"^cell-(\d+)$")


class NotebookEditInput(BaseModel):
    notebook_path: str = Field(description="Absolute path of the .ipynb notebook to edit.")
    cell_id: str | None = Field(
        default=None,
        description="The id of the cell to edit, or cell-N for the N-th cell (from 0). For insert, the new cell "
        "goes after this one; without cell_id it goes first.",
    )
    new_source: str = Field(default="", description="The new source of the cell (not used by delete).")
    cell_type: Literal["code", "markdown"] | None = Field(
        default=None, description="The cell's type: code or markdown. Required for insert; replace keeps the type "
        "unless given."
    )
    edit_mode: Literal["replace", "insert", "delete"] = Field(
        default="replace", description="replace (default) the cell's source, insert a new cell, or delete the cell."
    )


def _fail(kind: str, message: str, **metadata: Any) -> ToolResult:
    return ToolResult.error(message, error_kind=kind, **metadata)


def _subjects(input: NotebookEditInput) -> Subjects:
    return Subjects(paths_written=(input.notebook_path,))


def _find(cells: list[Any], cell_id: str) -> int | None:
    for i, cell in enumerate(cells):
        if cell.get("id") == cell_id:
            return i
    m = _INDEX_ID.match(cell_id.strip())
    if m and int(m.group(1)) < len(cells):
        return int(m.group(1))
    return None


def _new_cell(cell_type: str, source: str, with_id: bool) -> Any:
    from nbformat import v4

    cell = v4.new_code_cell(source) if cell_type == "code" else v4.new_markdown_cell(source)
    if not with_id:
        cell.pop("id", None)
    return cell


def _cap(text: str) -> str | None:
    return text if len(text) <= MAX_FILE_CHARS else None


@tool(
    name="NotebookEdit",
    groups=["fs", "file", "pegboard"],
    permission_family="Edit",
    requires_permission=True,
    destructive=True,
    path_fields=("notebook_path",),
    permission_subjects=_subjects,
    usage="Replace, insert or delete one Jupyter notebook cell by cell_id; Read the notebook first.",
)
async def notebook_edit(input: NotebookEditInput, ctx: ToolContext) -> ToolResult:
    """Edit one cell of a Jupyter notebook (.ipynb). edit_mode replace (default) sets the
    cell's source (a code cell's outputs are cleared), insert adds a new cell after cell_id
    (or at the top without one) and needs cell_type, delete removes the cell. Cells are named
    by their id, or as cell-N for the N-th cell counted from 0. Read the notebook first."""
    try:
        path = resolve_path(input.notebook_path, ctx.cwd, ctx.env.get("HOME"))
    except ValueError as exc:
        return _fail("invalid_path", f"Invalid notebook_path {input.notebook_path!r}: {exc}.")
    if path.suffix.lower() != ".ipynb":
        return _fail("not_a_notebook", "File must be a Jupyter notebook (.ipynb file). For editing other file types, "
                     "use the Edit tool.")
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return _fail("file_not_found", missing_file_message(path, ctx.cwd))
    except OSError as exc:
        return _fail("io_error", f"Cannot access {path}: {exc.strerror}.")
    if not stat.S_ISREG(st.st_mode):
        return _fail("not_a_file", f"{path} is not a regular file.")
    if input.edit_mode == "insert" and input.cell_type is None:
        return _fail("cell_type_required", "Cell type is required when using edit_mode=insert.")
    if input.edit_mode != "insert" and not input.cell_id:
        return _fail("cell_id_required", f"cell_id is required for edit_mode={input.edit_mode}.")
    stale = ReadLedger.of(ctx).require_fresh(path)
    if stale is not None:
        kind = "stale_read" if stale.kind == "stale_read" else "not_read"
        return _fail(kind, stale.message, read_state=stale.kind)
    try:
        decoded = read_text(path)
    except OSError as exc:
        return _fail("io_error", f"Cannot read {path}: {exc.strerror}.")
    outcome = _edit(decoded.text, input, path)
    if isinstance(outcome, ToolResult):
        return outcome
    new_text, fields = outcome
    try:
        write_text(path, new_text, decoded.format)
    except AtomicWriteError as exc:
        return _fail(exc.kind, f"{exc}.")
    ReadLedger.of(ctx).record_write(path)
    structured = {
        **fields,
        "notebook_path": str(path),
        "original_file": _cap(decoded.text),
        "updated_file": _cap(new_text),
        "structuredPatch": structured_patch(decoded.text, new_text),
        "error": "",
    }
    return ToolResult(content=[TextBlock(text=fields["message"])], structured=structured)


def _edit(text: str, input: NotebookEditInput, path: Path) -> tuple[str, dict[str, Any]] | ToolResult:
    import nbformat

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nb = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
    except Exception as exc:
        return _fail("invalid_notebook", f"Notebook is not valid JSON: {path}: {exc}")
    if nb.get("nbformat", 0) < 4 or not isinstance(nb.get("cells"), list):
        return _fail("invalid_notebook", f"{path} uses notebook format {nb.get('nbformat')}; NotebookEdit edits "
                     "format 4 notebooks (open and save it in Jupyter to convert it).")
    cells: list[Any] = nb.cells
    with_ids = (nb.nbformat, nb.get("nbformat_minor", 0)) >= (4, 5)
    index: int | None = None
    if input.cell_id:
        index = _find(cells, input.cell_id)
        if index is None:
            return _fail("cell_not_found", f'Cell with ID "{input.cell_id}" not found in notebook.')
    cell_id = input.cell_id
    cell_type = input.cell_type
    if input.edit_mode == "insert":
        assert cell_type is not None
        cell = _new_cell(cell_type, input.new_source, with_ids)
        at = 0 if index is None else index + 1
        cells.insert(at, cell)
        cell_id = cell.get("id") or f"cell-{at}"
        message = f"Inserted cell {cell_id} with {input.new_source}"
    elif input.edit_mode == "delete":
        assert index is not None
        cell_type = cells[index].get("cell_type")
        del cells[index]
        message = f"Deleted cell {cell_id}"
    else:
        assert index is not None
        old = cells[index]
        cell_type = cell_type or old.get("cell_type")
        if cell_type != old.get("cell_type"):
            cell = _new_cell(cell_type or "code", input.new_source, False)
            if "id" in old:
                cell["id"] = old["id"]
            cell["metadata"] = old.get("metadata", {})
            cells[index] = cell
        else:
            old["source"] = input.new_source
            if old.get("cell_type") == "code":
                old["outputs"] = []
                old["execution_count"] = None
        message = f"Updated cell {cell_id} with {input.new_source}"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nbformat.validate(nb)
    except Exception as exc:
        return _fail("invalid_notebook", f"The edit would leave {path} invalid, so nothing was written: {exc}")
    new_text = nbformat.writes(nb)
    if text.endswith("\n") and not new_text.endswith("\n"):
        new_text += "\n"
    language = (nb.get("metadata", {}).get("language_info") or {}).get("name") or "python"
    fields = {
        "message": message,
        "new_source": input.new_source,
        "cell_id": cell_id,
        "cell_type": cell_type,
        "language": language,
        "edit_mode": input.edit_mode,
        "edit_type": input.edit_mode,
        "total_cells": len(cells),
    }
    return new_text, fields


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(notebook_edit)


__all__ = ["NotebookEditInput", "notebook_edit"]
