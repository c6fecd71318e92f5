"""The built-in ``Read`` tool: a file's lines with line numbers, a page at a time.

Written only against Pegboard's public API, like any third-party tool.
"""

from __future__ import annotations

import base64
from pathlib import Path

from pydantic import BaseModel, Field

from pegboard import ImageBlock, TextBlock, ToolContext, ToolRegister, ToolResult, hookimpl, tool

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
MAX_IMAGE_BYTES = 5 * 1024 * 1024
IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}


class ReadInput(BaseModel):
    file_path: str = Field(description="Absolute path of the file to read.")
    offset: int | None = Field(default=None, ge=1, description="Line number to start at (1-based).")
    limit: int | None = Field(default=None, ge=1, description=f"Number of lines to read (default {DEFAULT_LIMIT}).")


def _resolve(path: str, ctx: ToolContext) -> Path:
    p = Path(path).expanduser()
    return p if p.is_absolute() else (ctx.cwd / p)


def _number(lines: list[str], first: int) -> str:
    out = []
    for n, line in enumerate(lines, start=first):
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f"... [line cut at {MAX_LINE_CHARS} characters]"
        out.append(f"{n:>6}\t{line}")
    return "\n".join(out)


@tool(
    name="Read",
    groups=["fs", "pegboard"],
    permission_family="Read",
    read_only=True,
    idempotent=True,
    usage="Read a file by absolute path; use offset/limit to page through long files.",
)
async def read(input: ReadInput, ctx: ToolContext) -> ToolResult:
    """Read a file from the local filesystem. Returns its lines numbered from 1 (like `cat -n`),
    up to 2000 lines from the start unless offset/limit say otherwise; lines longer than 2000
    characters are cut. Images (PNG, JPEG, GIF, WebP) come back as image content. Reads files only,
    not directories."""
    path = _resolve(input.file_path, ctx)
    if not path.exists():
        return ToolResult.refusal("tool_error", f"File does not exist: {path}")
    if path.is_dir():
        return ToolResult.refusal(
            "tool_error", f"{path} is a directory; Read reads files only (list a directory with `ls` via Bash)"
        )
    mime = IMAGE_TYPES.get(path.suffix.lower())
    if mime:
        size = path.stat().st_size
        if size > MAX_IMAGE_BYTES:
            return ToolResult.refusal("tool_error", f"Image {path} is {size:,} bytes; the limit is {MAX_IMAGE_BYTES:,}")
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        return ToolResult(content=[ImageBlock(data=data, mime_type=mime)])
    raw = path.read_bytes()
    if b"\x00" in raw[:8192]:
        return ToolResult.refusal("tool_error", f"{path} looks like a binary file; Read shows text and images")
    text = raw.decode("utf-8", errors="replace")
    if not text:
        return ToolResult.from_text(f"<system-reminder>{path} exists but is empty.</system-reminder>")
    lines = text.splitlines()
    start = (input.offset or 1) - 1
    if start >= len(lines):
        return ToolResult.refusal(
            "tool_error", f"offset {input.offset} is past the end of {path}, which has {len(lines)} lines"
        )
    limit = input.limit or DEFAULT_LIMIT
    page = lines[start : start + limit]
    body = _number(page, start + 1)
    end = start + len(page)
    if end < len(lines) and input.limit is None and input.offset is None:
        body += f"\n\n[PARTIAL view: lines 1-{end} of {len(lines)}. Read more with offset={end + 1} and limit.]"
    return ToolResult(
        content=[TextBlock(text=body)],
        metadata={"path": str(path), "first_line": start + 1, "last_line": end, "total_lines": len(lines)},
    )


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(read)
