"""Applying a parsed patch: every hunk located first, then every file written, or nothing.

An updated file ends with a newline, as Codex leaves it. A context line keeps its own line
ending (``\r\n`` in a file of mixed endings); a line the patch adds gets the file's usual one.

Context is located in passes, each tried over the whole file before the next: exact, then
ignoring trailing whitespace, then ignoring leading and trailing whitespace, then with
Unicode punctuation (dashes, curly quotes, unusual spaces) read as ASCII. Models copy
context imperfectly in exactly these ways; anything looser would edit the wrong place.

Operations run in order on an in-memory picture of the files they touch, so a patch may
touch one file twice or add a file that a later hunk updates. Only when all of them
succeed are the files written (atomically, one by one); if a write fails, the files
written before it are put back.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pegboard_apply_patch.parser import AddFile, Chunk, DeleteFile, Operation, PatchError, UpdateFile
from pegboard_toolkit import (
    UTF8_LF,
    AtomicWriteError,
    TextFormat,
    decode,
    dominant_newline,
    is_binary,
    read_bytes,
    remove,
    structured_patch,
    to_lf,
    write_bytes,
    write_text,
)

_PUNCTUATION = str.maketrans({
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
    **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
    **dict.fromkeys("\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "),
})

_PASSES: tuple[Callable[[str], str], ...] = (
    lambda s: s,
    str.rstrip,
    str.strip,
    lambda s: s.strip().translate(_PUNCTUATION),
)


def seek(lines: list[str], pattern: list[str], start: int, end_of_file: bool = False) -> int | None:
    """Where ``pattern`` begins in ``lines`` at or after ``start`` (the pass order above), or
    ``None``. ``end_of_file`` anchors it at the end of ``lines``."""
    if not pattern:
        return len(lines) if end_of_file else start
    size = len(pattern)
    if size > len(lines):
        return None
    last = len(lines) - size
    candidates = [last] if end_of_file else range(start, last + 1)
    for norm in _PASSES:
        want = [norm(p) for p in pattern]
        for i in candidates:
            if i < start:
                continue
            if all(norm(lines[i + k]) == want[k] for k in range(size)):
                return i
    return None


@dataclass
class FileText:
    """One file's lines (without endings) and the ending of each, so untouched lines keep theirs."""

    lines: list[str]
    endings: list[str]
    format: TextFormat

    @classmethod
    def parse(cls, text: str, fmt: TextFormat) -> FileText:
        pieces = text.split("\n")
        lines: list[str] = []
        endings: list[str] = []
        for piece in pieces[:-1]:
            if piece.endswith("\r"):
                lines.append(piece[:-1])
                endings.append("\r\n")
            else:
                lines.append(piece)
                endings.append("\n")
        if pieces[-1]:
            lines.append(pieces[-1])
            endings.append("")
        return cls(lines, endings, fmt)

    def text(self) -> str:
        return "".join(line + end for line, end in zip(self.lines, self.endings, strict=True))


@dataclass
class Change:
    """What happened to one file, for the result."""

    action: str  # added | updated | deleted | moved
    path: Path
    shown: str
    move_path: Path | None = None
    shown_move: str | None = None
    before: str = ""
    after: str = ""

    def as_dict(self) -> dict[str, object]:
        return {
            "path": str(self.path),
            "action": self.action,
            "movePath": str(self.move_path) if self.move_path else None,
            "structuredPatch": structured_patch(to_lf(self.before), to_lf(self.after)),
        }


@dataclass
class Workspace:
    """The files a patch touches, as they are on disk and as the patch leaves them."""

    resolve: Callable[[str], Path]
    original: dict[Path, bytes | None] = field(default_factory=dict)
    current: dict[Path, FileText | None] = field(default_factory=dict)

    def load(self, path: Path, shown: str) -> FileText | None:
        if path not in self.current:
            if path.is_dir():
                raise PatchError("is_directory", f"{shown} is a directory, not a file")
            try:
                data: bytes | None = read_bytes(path)
            except FileNotFoundError:
                data = None
            except OSError as exc:
                raise PatchError("io_error", f"cannot read {shown}: {exc.strerror}") from None
            self.original[path] = data
            if data is None:
                self.current[path] = None
            elif is_binary(data):
                raise PatchError("binary_file", f"{shown} is a binary file; ApplyPatch changes text files")
            else:
                decoded = decode(data)
                self.current[path] = FileText.parse(decoded.text, decoded.format)
        return self.current[path]


def _apply_chunks(file: FileText, chunks: list[Chunk], shown: str) -> FileText:
    lines = file.lines
    usual = dominant_newline("".join(file.endings)) if file.endings else "\n"
    cursor = 0
    edits: list[tuple[int, int, list[str], list[str | None]]] = []
    for number, chunk in enumerate(chunks, start=1):
        for header in chunk.contexts:
            if not header:
                continue
            at = seek(lines, [header], cursor)
            if at is None:
                raise PatchError("hunk_not_found", f"Failed to apply hunk {number} of {shown}: could not find the "
                                 f"context line '@@ {header}' (searched from line {cursor + 1}).")
            cursor = at + 1
        old, new, kept = chunk.old_lines, chunk.new_lines, chunk.kept
        if not old:
            at = cursor if any(chunk.contexts) and not chunk.end_of_file else len(lines)
            edits.append((at, 0, new, [None] * len(new)))
            continue
        at = seek(lines, old, cursor, chunk.end_of_file)
        if at is None and old[-1] == "":
            old = old[:-1]
            if new and new[-1] == "":
                new, kept = new[:-1], kept[:-1]
            at = seek(lines, old, cursor, chunk.end_of_file) if old else None
        if at is None:
            where = " at the end of the file" if chunk.end_of_file else f" (searched from line {cursor + 1})"
            shown_lines = "\n".join(chunk.old_lines)
            raise PatchError("hunk_not_found", f"Failed to apply hunk {number} of {shown}: could not find the "
                             f"lines it changes{where}:\n{shown_lines}")
        size = len(old)
        own = [k is not None and k < size for k in kept]
        edits.append((at, size,
                      [lines[at + k] if mine and k is not None else text
                       for text, k, mine in zip(new, kept, own, strict=True)],
                      [file.endings[at + k] if mine and k is not None else None
                       for k, mine in zip(kept, own, strict=True)]))
        cursor = at + len(old)
    out_lines = list(lines)
    out_endings = list(file.endings)
    for at, size, new, endings in sorted(edits, key=lambda e: e[0], reverse=True):
        out_lines[at:at + size] = new
        out_endings[at:at + size] = [end or usual for end in endings]
    return FileText(out_lines, [end or usual for end in out_endings], file.format)


def plan(ops: list[Operation], resolve: Callable[[str], Path]) -> tuple[Workspace, list[Change]]:
    """Run ``ops`` on the in-memory workspace; raises :class:`PatchError` at the first that
    does not apply. Nothing on disk changes."""
    ws = Workspace(resolve)
    changes: list[Change] = []
    for op in ops:
        path = resolve(op.path)
        before = ws.load(path, op.path)
        if isinstance(op, AddFile):
            if before is not None:
                raise PatchError("file_exists", f"Cannot add {op.path}: it already exists. Use '*** Update File: "
                                 f"{op.path}' to change it.")
            added = FileText(list(op.lines), ["\n"] * len(op.lines), UTF8_LF)
            ws.current[path] = added
            changes.append(Change("added", path, op.path, after=added.text()))
        elif isinstance(op, DeleteFile):
            if before is None:
                raise PatchError("file_not_found", f"Cannot delete {op.path}: it does not exist.")
            ws.current[path] = None
            changes.append(Change("deleted", path, op.path, before=before.text()))
        elif isinstance(op, UpdateFile):
            if before is None:
                raise PatchError("file_not_found", f"Cannot update {op.path}: it does not exist. Use '*** Add File: "
                                 f"{op.path}' to create it.")
            after = _apply_chunks(before, op.chunks, op.path)
            if op.move_to is not None:
                dest = resolve(op.move_to)
                if dest != path and ws.load(dest, op.move_to) is not None:
                    raise PatchError("file_exists", f"Cannot move {op.path} to {op.move_to}: it already exists.")
                ws.current[path] = None
                ws.current[dest] = after
                changes.append(Change("moved", path, op.path, dest, op.move_to, before.text(), after.text()))
            else:
                ws.current[path] = after
                changes.append(Change("updated", path, op.path, before=before.text(), after=after.text()))
    return ws, changes


def commit(ws: Workspace) -> None:
    """Write the planned state; on an error, put back what was already written and raise."""
    done: list[Path] = []
    try:
        for path, state in ws.current.items():
            original = ws.original.get(path)
            if state is None:
                if original is not None:
                    remove(path)
                    done.append(path)
                continue
            write_text(path, state.text(), state.format, make_parents=True)
            done.append(path)
    except OSError as exc:
        for path in reversed(done):
            original = ws.original.get(path)
            with contextlib.suppress(OSError):
                if original is None:
                    os.unlink(path)
                else:
                    write_bytes(path, original, make_parents=True)
        failed = exc if isinstance(exc, AtomicWriteError) else AtomicWriteError(
            exc.errno, f"{exc.filename}: {exc.strerror}"
        )
        kind, message = failed.kind, str(failed)
        raise PatchError(kind, f"Writing the patch failed, so no file was changed: {message}") from None


__all__ = ["Change", "FileText", "Workspace", "commit", "plan", "seek"]
