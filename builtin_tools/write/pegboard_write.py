"""The built-in ``Write`` tool: create a file, or replace an existing one's whole content.

Overwriting needs a read of the file in this session and no change on disk since (the read
ledger), so the model never clobbers what it has not seen. The write is atomic and keeps
the old file's mode, owner, encoding and BOM; content written with ``\\n`` into a file that
used ``\\r\\n`` throughout stays ``\\r\\n``. Written only against Pegboard's public API and
the toolkit.
"""

from __future__ import annotations

import os
import stat
from typing import Any

from pydantic import BaseModel, Field

from pegboard import Subjects, TextBlock, ToolContext, ToolRegister, ToolResult, hookimpl, resolve_path, tool
from pegboard_toolkit import (
    AtomicWriteError,
    ReadLedger,
    TextFormat,
    encode,
    read_text,
    snippet,
    structured_patch,
    to_lf,
    write_bytes,
)

#: ``originalFile`` in the structured result is left out above this many characters
MAX_ORIGINAL_CHARS = 1_000_000


class WriteInput(BaseModel):
    file_path: str = Field(description="Absolute path of the file to write (parent directories are created).")
    content: str = Field(description="The complete new content of the file.")


def _fail(kind: str, message: str, **metadata: Any) -> ToolResult:
    return ToolResult.error(message, error_kind=kind, **metadata)


def _subjects(input: WriteInput) -> Subjects:
    return Subjects(paths_written=(input.file_path,))


def _format_for(content: str, old: TextFormat | None) -> tuple[str, TextFormat]:
    if old is None:
        return content, TextFormat(newline="lf")
    if old.newline == "crlf" and "\r" not in content:
        content = content.replace("\n", "\r\n")
    return content, old


@tool(
    name="Write",
    groups=["fs", "file", "pegboard"],
    permission_family="Edit",
    requires_permission=True,
    destructive=True,
    idempotent=True,
    path_fields=("file_path",),
    permission_subjects=_subjects,
    usage="Create a file or replace a whole file; Read an existing file first. Prefer Edit for partial changes.",
)
async def write(input: WriteInput, ctx: ToolContext) -> ToolResult:
    """Write a file to the local filesystem, creating it (and its parent directories) or
    overwriting it with the full content given. An existing file must have been read in this
    session first and not changed since. Prefer Edit to change part of an existing file.
    Jupyter notebooks are changed with NotebookEdit."""
    try:
        path = resolve_path(input.file_path, ctx.cwd, ctx.env.get("HOME"))
    except ValueError as exc:
        return _fail("invalid_path", f"Invalid file_path {input.file_path!r}: {exc}.")
    if path.suffix.lower() == ".ipynb":
        return _fail("notebook", f"{path} is a Jupyter notebook. Use the NotebookEdit tool to change it.")
    try:
        st: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        return _fail("io_error", f"Cannot write {path}: a parent of it is a file, not a directory.")
    except OSError as exc:
        return _fail("io_error", f"Cannot access {path}: {exc.strerror}.")
    original: str | None = None
    old_format: TextFormat | None = None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            return _fail("is_directory", f"{path} is a directory; Write writes files.")
        if not stat.S_ISREG(st.st_mode):
            return _fail("not_a_file", f"{path} is not a regular file; Write writes regular files only.")
        stale = ReadLedger.of(ctx).require_fresh(path)
        if stale is not None:
            kind = "stale_read" if stale.kind == "stale_read" else "not_read"
            return _fail(kind, stale.message, read_state=stale.kind)
        try:
            decoded = read_text(path)
        except OSError as exc:
            return _fail("io_error", f"Cannot read {path}: {exc.strerror}.")
        original, old_format = decoded.text, decoded.format
    content, fmt = _format_for(input.content, old_format)
    data = encode(content, fmt)
    try:
        write_bytes(path, data, make_parents=True)
    except AtomicWriteError as exc:
        return _fail(exc.kind, f"{exc}.")
    ReadLedger.of(ctx).record_write(path)
    created = original is None
    hunks = structured_patch(to_lf(original or ""), to_lf(content))
    if created:
        message = f"File created successfully at: {path}"
        text = message
    else:
        message = f"The file {path} has been updated."
        view = snippet(hunks)
        text = message + (f" Here is the result of running `cat -n` on a snippet of the edited file:\n{view}"
                          if view else " The content is unchanged.")
    structured = {
        "type": "create" if created else "update",
        "filePath": str(path),
        "file_path": str(path),
        "content": input.content,
        "structuredPatch": hunks,
        "originalFile": original if original is None or len(original) <= MAX_ORIGINAL_CHARS else None,
        "message": message,
        "bytes_written": len(data),
        "success": True,
        "encoding": fmt.label,
    }
    return ToolResult(content=[TextBlock(text=text)], structured=structured)


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(write)


__all__ = ["WriteInput", "write"]
