"""The built-in ``Edit`` and ``MultiEdit`` tools: exact string replacement in one file.

Checks run in a fixed order, each with its own ``error_kind``: ``old_string`` differs from
``new_string`` (``no_change``); the file exists, or ``old_string`` is empty and the file is
created (``file_not_found`` / ``file_exists``); it was read in this session and has not
changed since (``not_read`` / ``stale_read``); ``old_string`` occurs (``not_found``), exactly
once unless ``replace_all`` (``not_unique``). MultiEdit applies its edits in order, all or
nothing, and refuses an edit that matches text an earlier one inserted
(``conflicts_with_previous_edit``). Written only against Pegboard's public API and the toolkit.
"""

from __future__ import annotations

import codecs
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from pegboard import Subjects, TextBlock, ToolContext, ToolRegister, ToolResult, hookimpl, resolve_path, tool
from pegboard_edit import bigfile
from pegboard_edit.engine import Applied, EditError, Span, apply_edit, not_found, not_unique
from pegboard_toolkit import (
    AtomicWriteError,
    DecodedText,
    Hunk,
    ReadLedger,
    TextFormat,
    decode,
    is_binary,
    missing_file_message,
    read_bytes,
    snippet,
    structured_patch,
    to_lf,
    write_chunks,
    write_text,
)

#: files larger than this are not edited (the whole file is held in memory, twice)
MAX_EDIT_BYTES = 1 << 30
#: ``originalFile`` in the structured result is left out above this many characters
MAX_ORIGINAL_CHARS = 1_000_000


class EditInput(BaseModel):
    file_path: str = Field(description="Absolute path of the file to modify.")
    old_string: str = Field(description="The exact text to replace (empty to create a new file).")
    new_string: str = Field(description="The text to replace it with (must differ from old_string).")
    replace_all: bool = Field(default=False, description="Replace every occurrence of old_string (default false).")


class EditOperation(BaseModel):
    old_string: str = Field(description="The exact text to replace.")
    new_string: str = Field(description="The text to replace it with.")
    replace_all: bool = Field(default=False, description="Replace every occurrence of old_string (default false).")


class MultiEditInput(BaseModel):
    file_path: str = Field(description="Absolute path of the file to modify.")
    edits: list[EditOperation] = Field(
        min_length=1, description="Edits applied in order, each to the result of the one before; all or none."
    )


def _fail(kind: str, message: str, **metadata: Any) -> ToolResult:
    return ToolResult.error(message, error_kind=kind, **metadata)


@dataclass
class _Loaded:
    """The file as found: its bytes, decoded on first use; ``data`` is ``None`` for a file
    to create."""

    path: Path
    data: bytes | None
    _decoded: DecodedText | None = None

    @property
    def decoded(self) -> DecodedText:
        if self._decoded is None:
            self._decoded = decode(self.data or b"")
        return self._decoded

    @property
    def text(self) -> str | None:
        return None if self.data is None else self.decoded.text


def _load(path: Path, ctx: ToolContext, creating: bool) -> _Loaded | ToolResult:
    """The checks every edit shares, in order: exists (or may be created), is a text file that
    is not a notebook, was read and is unchanged since."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if creating:
            return _Loaded(path, None)
        return _fail("file_not_found", missing_file_message(path, ctx.cwd))
    except OSError as exc:
        return _fail("io_error", f"Cannot access {path}: {exc.strerror}.")
    if stat.S_ISDIR(st.st_mode):
        return _fail("is_directory", f"{path} is a directory; Edit changes files.")
    if not stat.S_ISREG(st.st_mode):
        return _fail("not_a_file", f"{path} is not a regular file; Edit changes regular files only.")
    if path.suffix.lower() == ".ipynb":
        return _fail("notebook", f"{path} is a Jupyter notebook. Use the NotebookEdit tool to edit it.")
    if st.st_size > MAX_EDIT_BYTES:
        return _fail("file_too_large", f"{path} is {st.st_size:,} bytes; Edit changes files up to {MAX_EDIT_BYTES:,}.")
    if creating:
        data = _read(path) if st.st_size else b""
        if isinstance(data, ToolResult):
            return data
        loaded = _Loaded(path, data)
        if loaded.decoded.text:
            return _fail(
                "file_exists",
                f"Cannot create {path}: the file already exists. Give the text to replace as old_string, "
                "or use Write to replace the whole file.",
            )
        return loaded
    stale = ReadLedger.of(ctx).require_fresh(path)
    if stale is not None:
        kind = "stale_read" if stale.kind == "stale_read" else "not_read"
        return _fail(kind, stale.message, read_state=stale.kind)
    data = _read(path)
    if isinstance(data, ToolResult):
        return data
    if is_binary(data):
        return _fail("binary_file", f"{path} is a binary file; Edit changes text files.")
    return _Loaded(path, data)


def _read(path: Path) -> bytes | ToolResult:
    try:
        return read_bytes(path)
    except OSError as exc:
        return _fail("io_error", f"Cannot read {path}: {exc.strerror}.")


def _save(loaded: _Loaded, new_text: str, ctx: ToolContext) -> ToolResult | None:
    fmt = loaded.decoded.format if loaded.data else TextFormat(newline="lf")
    try:
        write_text(loaded.path, new_text, fmt, make_parents=loaded.data is None)
    except AtomicWriteError as exc:
        return _fail(exc.kind, f"{exc}.")
    ReadLedger.of(ctx).record_write(loaded.path)
    return None


def _result(
    loaded: _Loaded,
    hunks: list[Hunk],
    original: str | None,
    replacements: int,
    fields: dict[str, Any],
    encoding: str,
) -> ToolResult:
    created = loaded.data is None
    verb = "created" if created else "updated"
    message = f"The file {loaded.path} has been {verb}"
    message += f" ({replacements} replacement{'s' if replacements != 1 else ''})." if not created else "."
    view = snippet(hunks)
    text = message + (f" Here is the result of running `cat -n` on a snippet of the edited file:\n{view}" if view
                      else "")
    structured = {
        "filePath": str(loaded.path),
        "file_path": str(loaded.path),
        **fields,
        "originalFile": original if original is not None and len(original) <= MAX_ORIGINAL_CHARS else None,
        "structuredPatch": hunks,
        "userModified": False,
        "message": message,
        "replacements": replacements,
        "type": "create" if created else "update",
        "encoding": encoding,
    }
    return ToolResult(content=[TextBlock(text=text)], structured=structured)


def _text_result(loaded: _Loaded, new_text: str, replacements: int, fields: dict[str, Any]) -> ToolResult:
    original = loaded.text or ""
    hunks = structured_patch(to_lf(original), to_lf(new_text))
    label = loaded.decoded.format.label if loaded.data else "utf-8"
    return _result(loaded, hunks, original if loaded.data is not None else None, replacements, fields, label)


def _edit_in_bytes(loaded: _Loaded, old: bytes, input: EditInput, ctx: ToolContext) -> ToolResult:
    """Edit's one replacement in a big UTF-8 file, without decoding it (see ``bigfile``)."""
    data = loaded.data
    assert data is not None
    at = data.find(old)
    if at < 0:
        err = not_found(input.old_string)
        return _fail(err.kind, err.message)
    if data.find(old, at + len(old)) >= 0:
        err = not_unique(data.count(old), input.old_string)
        return _fail(err.kind, err.message)
    new = to_lf(input.new_string).encode("utf-8")
    view = memoryview(data)
    try:
        write_chunks(loaded.path, [view[:at], new, view[at + len(old):]])
    except AtomicWriteError as exc:
        return _fail(exc.kind, f"{exc}.")
    ReadLedger.of(ctx).record_write(loaded.path)
    fields = {"oldString": input.old_string, "newString": input.new_string, "replaceAll": False}
    label = "utf-8 with BOM" if data.startswith(codecs.BOM_UTF8) else "utf-8"
    return _result(loaded, bigfile.window_patch(data, at, len(old), new), None, 1, fields, label)


def _edit_subjects(input: EditInput | MultiEditInput) -> Subjects:
    return Subjects(paths_written=(input.file_path,))


def _path(raw: str, ctx: ToolContext) -> Path | ToolResult:
    try:
        return resolve_path(raw, ctx.cwd, ctx.env.get("HOME"))
    except ValueError as exc:
        return _fail("invalid_path", f"Invalid file_path {raw!r}: {exc}.")


@tool(
    name="Edit",
    groups=["fs", "file", "pegboard"],
    permission_family="Edit",
    requires_permission=True,
    destructive=True,
    path_fields=("file_path",),
    permission_subjects=_edit_subjects,
    usage="Change a file by exact string replacement; Read it first, and give enough context for a unique match.",
)
async def edit(input: EditInput, ctx: ToolContext) -> ToolResult:
    """Perform an exact string replacement in a file. The file must have been read in this
    session (with Read) and not changed since. old_string must match the file exactly (every
    space and indentation character) and occur exactly once, unless replace_all is true; add
    surrounding lines to make it unique. Line endings are kept: write \\n even in a CRLF file.
    An empty old_string creates a new file containing new_string."""
    if input.old_string == input.new_string:
        return _fail("no_change", "No changes to make: old_string and new_string are exactly the same.")
    path = _path(input.file_path, ctx)
    if isinstance(path, ToolResult):
        return path
    loaded = _load(path, ctx, creating=input.old_string == "")
    if isinstance(loaded, ToolResult):
        return loaded
    if loaded.data is not None and input.old_string:
        old = bigfile.usable(loaded.data, input.old_string, input.new_string, input.replace_all)
        if old is not None:
            return _edit_in_bytes(loaded, old, input, ctx)
    if loaded.text is None or input.old_string == "":
        applied = Applied(input.new_string, 1)
    else:
        try:
            applied = apply_edit(loaded.text, input.old_string, input.new_string, input.replace_all)
        except EditError as exc:
            return _fail(exc.kind, exc.message)
    failed = _save(loaded, applied.text, ctx)
    if failed is not None:
        return failed
    fields = {"oldString": input.old_string, "newString": input.new_string, "replaceAll": input.replace_all}
    return _text_result(loaded, applied.text, applied.replacements, fields)


def apply_edits(
    text: str, edits: list[EditOperation], first_index: int = 0, protected: list[Span] | None = None
) -> tuple[str, int]:
    """Apply ``edits`` in order to ``text``; raises :class:`EditError` naming the failing index
    (counted from ``first_index``). ``protected`` spans count as inserted by an earlier edit."""
    protected = list(protected or [])
    total = 0
    for i, op in enumerate(edits, start=first_index):
        if op.old_string == "":
            raise EditError("not_found", f"edits[{i}]: old_string is empty; only the first edit of a new file "
                            "may be empty (it creates the file).", i)
        applied = apply_edit(text, op.old_string, op.new_string, op.replace_all, protected=protected, index=i)
        text, protected = applied.text, applied.inserted
        total += applied.replacements
    return text, total


@tool(
    name="MultiEdit",
    groups=["fs", "file", "pegboard"],
    optional=True,
    permission_family="Edit",
    requires_permission=True,
    destructive=True,
    path_fields=("file_path",),
    permission_subjects=_edit_subjects,
    usage="Several exact replacements in one file in one call, applied in order; all or none.",
)
async def multi_edit(input: MultiEditInput, ctx: ToolContext) -> ToolResult:
    """Make several edits to one file in one call. Each edit is an exact string replacement
    (as Edit) applied to the result of the edits before it; if any edit fails, none is
    applied. Read the file first. The first edit may have an empty old_string to create a
    new file."""
    for i, op in enumerate(input.edits):
        if op.old_string == op.new_string:
            return _fail("no_change", f"edits[{i}]: No changes to make: old_string and new_string are exactly the "
                         "same.", edit_index=i)
    path = _path(input.file_path, ctx)
    if isinstance(path, ToolResult):
        return path
    first, rest = input.edits[0], input.edits[1:]
    loaded = _load(path, ctx, creating=first.old_string == "")
    if isinstance(loaded, ToolResult):
        return loaded
    try:
        if first.old_string == "":
            created = [(0, len(first.new_string))] if first.new_string else []
            text, total = apply_edits(first.new_string, rest, first_index=1, protected=created)
            total += 1
        else:
            assert loaded.text is not None
            text, total = apply_edits(loaded.text, input.edits)
    except EditError as exc:
        return _fail(exc.kind, exc.message + "\nNo edit was applied.", edit_index=exc.index)
    if loaded.text is not None and text == loaded.text:
        return _fail("no_change", "No changes to make: together the edits leave the file exactly as it was "
                     "(a later edit undoes an earlier one). Nothing was written.")
    failed = _save(loaded, text, ctx)
    if failed is not None:
        return failed
    fields = {
        "edits": [op.model_dump() for op in input.edits],
        "originalFileContents": loaded.text if loaded.text is not None and len(loaded.text) <= MAX_ORIGINAL_CHARS
        else None,
    }
    return _text_result(loaded, text, total, fields)


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(edit)
    register(multi_edit)


__all__ = ["EditInput", "EditOperation", "MultiEditInput", "apply_edits", "edit", "multi_edit"]
