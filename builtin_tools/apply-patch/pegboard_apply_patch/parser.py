"""The patch format ApplyPatch reads, parsed into operations; any text gives a result or a
:class:`PatchError`, never another exception.

::

    *** Begin Patch
    *** Add File: path/new.txt
    +every line of the new file starts with +
    *** Delete File: path/old.txt
    *** Update File: path/file.py
    *** Move to: path/renamed.py          (optional)
    @@ class Outer                        (optional context headers, nested ones in order)
    @@     def method(self):
     context line (a leading space)
    -line removed
    +line added
    *** End of File                       (optional: the hunk ends at the end of the file)
    *** End Patch

A blank line inside a hunk counts as a blank context line. A file header may be padded with
spaces or tabs (`` *** Update File: a.py``), as Codex reads it. ``\\r\\n`` line ends are read as
``\\n``. A patch wrapped in a shell heredoc (``<<'EOF'`` ... ``EOF``) is unwrapped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File: "
DELETE = "*** Delete File: "
UPDATE = "*** Update File: "
MOVE = "*** Move to: "
EOF_MARK = "*** End of File"

FORMAT_HELP = (
    "ApplyPatch expects this format:\n"
    "*** Begin Patch\n"
    "*** Update File: path/to/file.py\n"
    "@@ def some_function():\n"
    " context line\n"
    "-removed line\n"
    "+added line\n"
    "*** Add File: path/to/new.txt\n"
    "+content of the new file\n"
    "*** Delete File: path/to/old.txt\n"
    "*** End Patch"
)

_HEREDOC = re.compile(r"""^(?:apply_patch\s+)?(?:cat\s+)?<<-?\s*(['"]?)(\w+)\1\s*$""")
_HEADER = re.compile(r"^[ \t]*\*\*\* (?:Add|Delete|Update) File: (.*)$|^[ \t]*\*\*\* Move to: (.*)$", re.MULTILINE)
_PAD = " \t"


class PatchError(Exception):
    """A patch that cannot be used; ``kind`` is the stable ``error_kind`` code."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


@dataclass
class Chunk:
    """One hunk of an Update: the ``@@`` headers to find first, the lines it expects and the
    lines it puts in their place, and whether it must end at the end of the file."""

    contexts: list[str] = field(default_factory=list)
    old_lines: list[str] = field(default_factory=list)
    new_lines: list[str] = field(default_factory=list)
    end_of_file: bool = False
    #: for each new line that is a context line, its index in ``old_lines`` (else ``None``):
    #: the file's own spelling of a context line is kept, not the patch's approximation
    kept: list[int | None] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.old_lines and not self.new_lines


@dataclass
class AddFile:
    path: str
    lines: list[str]


@dataclass
class DeleteFile:
    path: str


@dataclass
class UpdateFile:
    path: str
    move_to: str | None = None
    chunks: list[Chunk] = field(default_factory=list)


Operation = AddFile | DeleteFile | UpdateFile


def _dialect(text: str) -> str | None:
    """Name the other patch format ``text`` is written in, if it looks like a known one."""
    if re.search(r"^diff --git ", text, re.MULTILINE):
        return "a git diff"
    if re.search(r"^<<<<<<< SEARCH\s*$", text, re.MULTILINE):
        return "a search/replace block"
    if re.search(r"^--- .*\n\+\+\+ ", text, re.MULTILINE) or re.search(r"^@@ -\d+(,\d+)? \+\d+", text, re.MULTILINE):
        return "a unified diff"
    return None


def _unwrap(text: str) -> list[str]:
    lines = [line[:-1] if line.endswith("\r") else line for line in text.strip().split("\n")]
    if len(lines) >= 2:
        m = _HEREDOC.match(lines[0].strip())
        if m and lines[-1].strip() == m.group(2):
            lines = lines[1:-1]
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def _header(line: str) -> str:
    """A line as a file header reads it: padding of spaces and tabs does not count."""
    return line.strip(_PAD)


def _is_header(line: str) -> bool:
    head = _header(line)
    return head.startswith((ADD, DELETE, UPDATE)) or head == END


def _path(rest: str, number: int) -> str:
    path = rest.strip()
    if not path:
        raise PatchError("invalid_patch", f"line {number}: the file path is missing")
    return path


def parse_patch(text: str) -> list[Operation]:
    """The operations of ``text`` in order; raises :class:`PatchError` saying what is wrong."""
    if not isinstance(text, str) or not text.strip():
        raise PatchError("invalid_patch", "The patch is empty.\n" + FORMAT_HELP)
    lines = _unwrap(text)
    if not lines or lines[0].strip() != BEGIN:
        other = _dialect(text)
        if other is not None:
            raise PatchError("wrong_format", f"This patch is {other}, which ApplyPatch does not read.\n" + FORMAT_HELP)
        raise PatchError("invalid_patch", f"The first line of the patch must be '{BEGIN}'.\n" + FORMAT_HELP)
    if lines[-1].strip() != END:
        raise PatchError("invalid_patch", f"The last line of the patch must be '{END}'.")
    ops: list[Operation] = []
    i = 1
    last = len(lines) - 1
    while i < last:
        line = _header(lines[i])
        number = i + 1
        if line.startswith(ADD):
            path = _path(line[len(ADD):], number)
            i += 1
            content: list[str] = []
            while i < last and not lines[i].startswith("*** ") and not _is_header(lines[i]):
                if not lines[i].startswith("+"):
                    raise PatchError("invalid_patch", f"line {i + 1}: every line of an Add File section starts with "
                                     f"'+' (adding {path}), got {lines[i][:80]!r}")
                content.append(lines[i][1:])
                i += 1
            ops.append(AddFile(path, content))
        elif line.startswith(DELETE):
            ops.append(DeleteFile(_path(line[len(DELETE):], number)))
            i += 1
        elif line.startswith(UPDATE):
            op = UpdateFile(_path(line[len(UPDATE):], number))
            i += 1
            if i < last and _header(lines[i]).startswith(MOVE):
                op.move_to = _path(_header(lines[i])[len(MOVE):], i + 1)
                i += 1
            i = _chunks(lines, i, last, op)
            ops.append(op)
        elif not line.strip():
            i += 1
        else:
            raise PatchError("invalid_patch", f"line {number}: expected '{ADD.strip()}', '{DELETE.strip()}' or "
                             f"'{UPDATE.strip()}', got {line[:80]!r}")
    if not ops:
        raise PatchError("invalid_patch", "The patch changes no file.\n" + FORMAT_HELP)
    return ops


def _chunks(lines: list[str], i: int, last: int, op: UpdateFile) -> int:
    chunk = Chunk()
    while i < last and not (lines[i].startswith("*** ") and lines[i].strip() != EOF_MARK) and not _is_header(lines[i]):
        line = lines[i]
        if line.strip() == EOF_MARK:
            chunk.end_of_file = True
        elif line.startswith("@@"):
            if not chunk.empty or chunk.end_of_file:
                op.chunks.append(chunk)
                chunk = Chunk()
            chunk.contexts.append(line[2:].strip())
        elif line.startswith(" ") or line == "":
            chunk.kept.append(len(chunk.old_lines))
            chunk.old_lines.append(line[1:])
            chunk.new_lines.append(line[1:])
        elif line.startswith("-"):
            chunk.old_lines.append(line[1:])
        elif line.startswith("+"):
            chunk.kept.append(None)
            chunk.new_lines.append(line[1:])
        else:
            raise PatchError("invalid_patch", f"line {i + 1}: a hunk line starts with ' ', '-' or '+' (updating "
                             f"{op.path}), got {line[:80]!r}")
        i += 1
    if not chunk.empty:
        op.chunks.append(chunk)
    elif chunk.contexts or chunk.end_of_file:
        raise PatchError("invalid_patch", f"a hunk of {op.path} has a header but no lines")
    if not op.chunks:
        if op.move_to is not None:
            raise PatchError("invalid_patch", f"the Update File section for {op.path} moves it to {op.move_to} but "
                             "has no hunks; a move needs at least one hunk (a context line is enough)")
        raise PatchError("invalid_patch", f"the Update File section for {op.path} has no hunks")
    return i


def patch_paths(text: str) -> list[str]:
    """Every path a patch names (added, deleted, updated, moved to), without parsing it
    strictly: the permission subjects of a call, even of a malformed patch."""
    if not isinstance(text, str):
        return []
    out: list[str] = []
    for m in _HEADER.finditer(text.replace("\r\n", "\n")):
        path = (m.group(1) if m.group(1) is not None else m.group(2)).strip()
        if path and path not in out:
            out.append(path)
    return out


__all__ = [
    "FORMAT_HELP",
    "AddFile",
    "Chunk",
    "DeleteFile",
    "Operation",
    "PatchError",
    "UpdateFile",
    "parse_patch",
    "patch_paths",
]
