"""The built-in ``LS`` tool: one directory's entries with type, size and modification time."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from pegboard import Subjects, ToolContext, ToolRegister, ToolResult, hookimpl, resolve_path, tool
from pegboard_toolkit import GlobError, ReadFilter, compile_glob
from pegboard_toolkit.toolconfig import directory_failure
from pegboard_toolkit.toolconfig import tool_failure as _fail

MAX_ENTRIES = 1000


class LSInput(BaseModel):
    path: str = Field(default=".", description="Directory to list (absolute is best; default: the working directory).")
    ignore: list[str] = Field(
        default_factory=list, description='Glob patterns of entries to leave out, such as "*.pyc".'
    )


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "other"


def _entry(path: Path) -> dict[str, Any] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    kind = _kind(st.st_mode)
    entry: dict[str, Any] = {
        "name": path.name,
        "type": kind,
        "size": st.st_size if kind != "dir" else None,
        "mtime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(st.st_mtime)),
    }
    if kind == "symlink":
        try:
            entry["target"] = os.readlink(path)
        except OSError:
            entry["target"] = None
        try:
            entry["target_type"] = _kind(os.stat(path).st_mode)
        except OSError:
            entry["target_type"] = "broken"
    return entry


def _line(e: dict[str, Any]) -> str:
    name = e["name"] + ("/" if e["type"] == "dir" or e.get("target_type") == "dir" else "")
    if e["type"] == "symlink":
        name += f" -> {e.get('target')}" + (" (broken)" if e.get("target_type") == "broken" else "")
    size = "-" if e["size"] is None else f"{e['size']:,}"
    return f"{e['type']:<7} {size:>14}  {e['mtime']}  {name}"


@tool(
    name="LS",
    groups=["fs", "file"],
    permission_family="Read",
    read_only=True,
    idempotent=True,
    path_fields=("path",),
    permission_subjects=lambda i: Subjects(paths_read=(i.path,)),
    usage="List one directory: entries with type, size and modification time; directories end in /.",
)
async def ls(input: LSInput, ctx: ToolContext) -> ToolResult:
    """List one directory's entries (not recursive): type (file, dir, symlink, ...), size in
    bytes, modification time (UTC) and name, directories first and marked with a trailing
    `/`. Leave entries out with ignore globs such as "*.pyc" or "node_modules". At most 1000
    entries. Use Glob to find files by pattern across directories."""
    try:
        root = resolve_path(input.path, ctx.cwd, ctx.env.get("HOME"))
    except ValueError as exc:
        return _fail(f"Invalid path: {exc}", "invalid_path")
    try:
        matchers = [compile_glob(g.rstrip("/")) for g in input.ignore if g.strip()]
    except GlobError as exc:
        return _fail(str(exc), "invalid_pattern")
    if (failure := directory_failure(root, ctx, "use Read to read a file")) is not None:
        return failure
    try:
        names = os.listdir(root)
    except PermissionError:
        return _fail(f"Permission denied: cannot list {root}", "permission_denied")
    except OSError as exc:
        return _fail(f"Cannot list {root}: {exc.strerror or exc}", "os_error")
    filt = ReadFilter(ctx)
    entries: list[dict[str, Any]] = []
    for name in names:
        if any(m.match(name) for m in matchers):
            continue
        path = root / name
        if not filt.keep(path):
            continue
        entry = _entry(path)
        if entry is not None:
            entries.append(entry)
    entries.sort(key=lambda e: (e["type"] != "dir" and e.get("target_type") != "dir", e["name"]))
    total = len(entries)
    shown = entries[:MAX_ENTRIES]
    truncated = total > MAX_ENTRIES
    body = f"{str(root).rstrip('/')}/ ({total} entr{'y' if total == 1 else 'ies'})"
    if shown:
        body += "\n" + "\n".join(_line(e) for e in shown)
    if truncated:
        body += (
            f"\n(Listing truncated: {MAX_ENTRIES} of {total} entries shown. Use Glob with a pattern, or ignore "
            "globs, to narrow it.)"
        )
    return ToolResult.from_text(
        body,
        structured={"path": str(root), "entries": shown, "count": len(shown), "total": total, "truncated": truncated},
        metadata={"truncated": truncated},
    )


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(ls)
