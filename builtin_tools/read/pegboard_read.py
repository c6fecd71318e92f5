"""The built-in ``Read`` tool: a file's lines with line numbers, a page at a time; images
sized for the model; PDFs by page; notebooks with their outputs.

Written only against Pegboard's public API and ``pegboard-toolkit``, like any third-party
tool. Text is never loaded whole: pages come from the toolkit's line index, cached per
file, size and mtime, so later pages of a big log are read directly.
"""

from __future__ import annotations

import difflib
import math
import operator
import os
import re
import stat
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from pegboard import (
    ImageBlock,
    StashKey,
    Subjects,
    TextBlock,
    ToolContext,
    ToolRegister,
    ToolResult,
    hookimpl,
    resolve_path,
    tool,
)
from pegboard_read_images import IMAGE_SUFFIXES, ImageError, ImageLimits, ImageLimitsError, image_limits, process_image
from pegboard_read_lines import LineIndexCache, plain_lines, read_lines, sniff_encoding
from pegboard_toolkit import ReadLedger
from pegboard_toolkit.toolconfig import config_value as _setting
from pegboard_toolkit.toolconfig import tool_failure as _fail

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
DEFAULT_MAX_TOKENS = 25_000
CHARS_PER_TOKEN = 4
PDF_WHOLE_MAX_PAGES = 10
PDF_MAX_PAGES_PER_CALL = 20
SNIFF_BYTES = 8192
#: text up to this size is read whole and decoded at once (see ``_small_page``)
SMALL_TEXT_BYTES = 256 * 1024
#: text up to this size (or with its line index cached) is read on the event loop; a bigger
#: scan, and every image, PDF or notebook, runs in a worker thread
INLINE_BYTES = 4 * 1024 * 1024
MAX_IMAGE_FILE_BYTES = 64 * 1024 * 1024
LINE_INDEX: StashKey[LineIndexCache] = StashKey("pegboard-read-line-index")

PAGES_FORMS = '"3" (one page), "1-5" (a range), "2,4,7-9" (a list)'
_PAGE_SPEC = re.compile(r"[ \t]*[0-9]+[ \t]*(?:-[ \t]*[0-9]+[ \t]*)?(?:,[ \t]*[0-9]+[ \t]*(?:-[ \t]*[0-9]+[ \t]*)?)*")

_MAGIC: list[tuple[bytes, str]] = [
    (b"\x7fELF", "ELF executable or shared library"),
    (b"MZ", "Windows executable (PE)"),
    (b"\xcf\xfa\xed\xfe", "Mach-O executable"),
    (b"\xca\xfe\xba\xbe", "Java class file or Mach-O universal binary"),
    (b"PK\x03\x04", "ZIP archive"),
    (b"\x1f\x8b", "gzip archive"),
    (b"BZh", "bzip2 archive"),
    (b"\xfd7zXZ\x00", "xz archive"),
    (b"\x28\xb5\x2f\xfd", "zstd archive"),
    (b"7z\xbc\xaf\x27\x1c", "7-Zip archive"),
    (b"SQLite format 3\x00", "SQLite database"),
    (b"\x00asm", "WebAssembly module"),
    (b"OggS", "Ogg media"),
    (b"ID3", "MP3 audio"),
    (b"RIFF", "RIFF media (WAV/AVI)"),
    (b"\x00\x00\x00", "binary data"),
]


class ReadInput(BaseModel):
    file_path: str = Field(description="Absolute path of the file to read.")
    offset: int | None = Field(default=None, ge=1, description="Line number to start at (1-based).")
    limit: int | None = Field(default=None, ge=1, description=f"Number of lines to read (default {DEFAULT_LIMIT}).")
    pages: str | None = Field(
        default=None,
        description=f"PDF pages to read, such as {PAGES_FORMS}; at most {PDF_MAX_PAGES_PER_CALL} pages a call.",
    )


def _line_cache(ctx: ToolContext) -> LineIndexCache:
    try:
        return ctx.stash.setdefault(LINE_INDEX, LineIndexCache())
    except RuntimeError:
        return LineIndexCache()


def _number(n: int, text: str, cut: bool) -> str:
    if len(text) > MAX_LINE_CHARS or cut:
        text = text[:MAX_LINE_CHARS] + f"... [line cut at {MAX_LINE_CHARS} characters]"
    return f"{n:>6}\t{text}"


def _is_device_path(path: Path) -> bool:
    parts = path.parts
    if len(parts) >= 2 and parts[1] == "dev":
        return not (len(parts) >= 3 and parts[2] == "shm")
    return len(parts) >= 4 and parts[1] == "proc" and parts[3] in ("fd", "fdinfo")


def _near_match(path: Path, cwd: Path) -> Path | None:
    if not path.is_absolute():
        return None
    in_cwd = cwd / str(path).lstrip("/")
    if in_cwd != path and in_cwd.exists():
        return in_cwd
    parent = path.parent
    try:
        names = os.listdir(parent)
    except OSError:
        return None
    lowered = {n.casefold(): n for n in names}
    if path.name.casefold() in lowered:
        return parent / lowered[path.name.casefold()]
    stems = [n for n in names if Path(n).stem == path.stem]
    if stems:
        return parent / sorted(stems)[0]
    close = difflib.get_close_matches(path.name, names, n=1, cutoff=0.7)
    return parent / close[0] if close else None


def _binary_kind(head: bytes) -> str | None:
    if sniff_encoding(head)[0].startswith("utf-16"):
        return None
    if b"\x00" not in head:
        return None
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    return "binary data"


def _record(ctx: ToolContext, path: Path, seen: os.stat_result, **kwargs: Any) -> None:
    if ctx.session is None:
        return
    ReadLedger.of(ctx).record_read(path, resolved=True, seen=seen, **kwargs)


@tool(
    name="Read",
    groups=["fs", "file"],
    permission_family="Read",
    read_only=True,
    idempotent=True,
    path_fields=("file_path",),
    permission_subjects=lambda i: Subjects(paths_read=(i.file_path,)),
    max_result_chars=400_000,
    usage="Read a file by absolute path; use offset/limit to page through long files, pages for long PDFs.",
)
async def read(input: ReadInput, ctx: ToolContext) -> ToolResult:
    """Read a file from the local filesystem. Returns its lines numbered from 1 (like `cat -n`),
    up to 2000 lines from the start unless offset/limit say otherwise; lines longer than 2000
    characters are cut. A whole-file read larger than the output budget returns its first
    page with a PARTIAL view notice; read on with offset and limit. Images (PNG, JPEG, GIF,
    WebP, BMP) come back as image content sized for the model; PDFs as text by page (pass
    pages, such as "1-5", for PDFs over 10 pages); notebooks (.ipynb) as cells with their
    outputs. Reads files only: list a directory with LS."""
    import asyncio

    try:
        path = resolve_path(input.file_path, ctx.cwd, ctx.env.get("HOME"))
    except ValueError as exc:
        return _fail(f"Invalid path {input.file_path!r}: {exc}", "invalid_path")
    if _is_device_path(path):
        return _fail(
            f"{path} is a device or process file; Read does not read devices, pipes or /proc file descriptors",
            "device_file",
        )
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return _missing(path, ctx)
    except PermissionError:
        return _fail(f"Permission denied: cannot access {path}", "permission_denied")
    except OSError as exc:
        return _fail(f"Cannot access {path}: {exc.strerror or exc}", "os_error")
    if stat.S_ISDIR(st.st_mode):
        return _fail(f"{path} is a directory; Read reads files only. {_listing_hint(ctx, path)}", "is_directory")
    if not stat.S_ISREG(st.st_mode):
        return _fail(
            f"{path} is not a regular file (a device, pipe or socket); Read does not read those", "device_file"
        )
    try:
        head = _prefix(path, SNIFF_BYTES)
    except PermissionError:
        return _fail(f"Permission denied: cannot read {path}", "permission_denied")
    except OSError as exc:
        return _fail(f"Cannot read {path}: {exc.strerror or exc}", "os_error")
    suffix = path.suffix.lower()
    notes: list[dict[str, Any]] = []
    work: Callable[[], ToolResult]
    inline = False
    if suffix in IMAGE_SUFFIXES or suffix == ".ipynb":
        try:
            limits = image_limits_for(ctx)
        except ImageLimitsError as exc:
            return _fail(f"Invalid image limits in the config: {exc}", "invalid_config")
        if suffix == ".ipynb":
            work = partial(_notebook, path, limits, notes)
        else:
            work = partial(_image, path, st.st_size, limits, notes)
    elif suffix == ".pdf" or head.startswith(b"%PDF-"):
        work = partial(_pdf, path, input.pages, notes)
    elif input.pages is not None:
        return _fail(f"pages applies to PDF files only; {path} is not a PDF. Use offset and limit.", "invalid_input")
    elif (kind := _binary_kind(head)) is not None:
        return _fail(
            f"{path} is a binary file ({kind}); Read shows text files, images, PDFs and notebooks", "binary_file"
        )
    else:
        budget = _budget(ctx)
        if isinstance(budget, ToolResult):
            return budget
        cache = _line_cache(ctx)
        inline = st.st_size <= INLINE_BYTES or cache.has(path, st.st_size, st.st_mtime_ns)
        data = head if len(head) < SNIFF_BYTES else _whole(path) if st.st_size <= SMALL_TEXT_BYTES else None
        work = partial(_text, path, input, budget, cache, notes, data)
    result = work() if inline else await asyncio.to_thread(work)
    for note in notes:
        _record(ctx, path, st, **note)
    return result


def _prefix(path: Path, size: int) -> bytes:
    """The first ``size`` bytes of ``path`` (all of a smaller file), read with plain system
    calls: a Read of a small file needs no buffered file object."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        data = os.read(fd, size)
        while data and len(data) < size and (more := os.read(fd, size - len(data))):
            data += more  # a short read is not the end of the file; an empty one is
        return data
    finally:
        os.close(fd)


def _whole(path: Path) -> bytes | None:
    """A small file's bytes; ``None`` when it grew past ``SMALL_TEXT_BYTES`` or cannot be read."""
    try:
        data = _prefix(path, SMALL_TEXT_BYTES + 1)
    except OSError:
        return None  # the line index reports it
    return data if len(data) <= SMALL_TEXT_BYTES else None


def _missing(path: Path, ctx: ToolContext) -> ToolResult:
    message = f"File does not exist: {path}. The current working directory is {ctx.cwd}."
    near = _near_match(path, Path(ctx.cwd))
    if near is not None:
        message += f" Did you mean {near}?"
    return _fail(message, "file_not_found", **({"did_you_mean": str(near)} if near else {}))


def _budget(ctx: ToolContext) -> int | ToolResult:
    value = _setting(ctx, "tools", "read", "maxOutputTokens")
    if value is None:
        return DEFAULT_MAX_TOKENS
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return _fail(
            f"config key tools.read.maxOutputTokens: expected a positive integer, found {value!r}", "invalid_config"
        )
    return value


def _text(
    path: Path,
    input: ReadInput,
    budget: int,
    cache: LineIndexCache,
    notes: list[dict[str, Any]],
    data: bytes | None = None,
) -> ToolResult:
    """Runs in a worker thread for a big file: its scan must not stall the event loop.

    ``data``, the whole file when it is small, is decoded once and numbered in one join;
    anything that needs care (another encoding, a cut line, the budget) takes the line index.
    """
    if data is not None and (page := _small_page(path, input, budget, data, notes)) is not None:
        return page
    try:
        index = cache.get(path)
    except OSError as exc:
        return _fail(f"Cannot read {path}: {exc.strerror or exc}", "os_error")
    total = index.total_lines
    if total == 0:
        notes.append(dict(whole=True))
        return ToolResult(
            content=[TextBlock(text=f"<system-reminder>{path} exists but is empty.</system-reminder>")],
            structured={"content": "", "total_lines": 0, "lines_returned": 0, "file_path": str(path)},
            metadata={"path": str(path), "first_line": 0, "last_line": 0, "total_lines": 0},
        )
    explicit = input.offset is not None or input.limit is not None
    start = (input.offset or 1) - 1
    if start >= total:
        return _fail(
            f"offset {input.offset} is past the end of {path}, which has {total} lines",
            "offset_past_end",
            total_lines=total,
        )
    limit = input.limit or DEFAULT_LIMIT
    max_chars = budget * CHARS_PER_TOKEN
    rendered: list[str] = []
    raw: list[str] = []
    used = 0
    over = False
    encodings: set[str] = set()
    for line in read_lines(index, start, limit):
        text = _number(line.number, line.text, line.cut)
        used += len(text) + 1
        if used > max_chars and rendered:
            over = True
            break
        rendered.append(text)
        raw.append(line.text)
        encodings.add(line.encoding)
    if over and explicit:
        tokens = math.ceil(used / CHARS_PER_TOKEN)
        fits = max(1, int(len(rendered) * max_chars / max(used, 1)))
        return _fail(
            f"Lines {start + 1}-{min(start + limit, total)} of {path} exceed the read budget of "
            f"{budget:,} tokens (at least {tokens:,} estimated; setting tools.read.maxOutputTokens). Read fewer "
            f"lines: offset={start + 1} with limit={fits}.",
            "too_large",
            total_lines=total,
        )
    encoding = "latin-1" if "latin-1" in encodings else index.encoding
    body, content = "\n".join(rendered), "\n".join(raw)
    return _page(path, input, start, len(rendered), total, body, content, over, encoding, notes)


_PREFIXES: list[str] = []


def _prefixes(start: int, count: int) -> list[str]:
    """The ``"     n\t"`` of lines ``start+1`` .. ``start+count``, those of a first page kept."""
    global _PREFIXES
    end = start + count
    if end > DEFAULT_LIMIT:
        return [f"{n:>6}\t" for n in range(start + 1, end + 1)]
    if not _PREFIXES:
        _PREFIXES = [f"{n:>6}\t" for n in range(DEFAULT_LIMIT + 1)]
    return _PREFIXES[start + 1 : end + 1]


def _small_page(
    path: Path, input: ReadInput, budget: int, data: bytes, notes: list[dict[str, Any]]
) -> ToolResult | None:
    """The page ``_text`` gives, from a small file's bytes; ``None`` when the line index must
    decide (no plain UTF-8 lines, a line to cut, the offset past the end, over the budget)."""
    lines = plain_lines(data)
    if lines is None:
        return None
    total = len(lines)
    start = (input.offset or 1) - 1
    if start >= total:
        return None
    shown = lines[start : start + (input.limit or DEFAULT_LIMIT)]
    if max(map(len, shown)) > MAX_LINE_CHARS:
        return None
    body = "\n".join(map(operator.add, _prefixes(start, len(shown)), shown))
    if len(body) + 1 > budget * CHARS_PER_TOKEN:
        return None
    return _page(path, input, start, len(shown), total, body, "\n".join(shown), False, "utf-8", notes)


def _page(
    path: Path,
    input: ReadInput,
    start: int,
    count: int,
    total: int,
    body: str,
    content: str,
    over: bool,
    encoding: str,
    notes: list[dict[str, Any]],
) -> ToolResult:
    """``count`` numbered lines from line ``start`` (0-based) as the tool's result, with the
    PARTIAL notice of a whole-file read that stopped early, and the ledger note."""
    explicit = input.offset is not None or input.limit is not None
    end = start + count
    partial = not explicit and end < total
    if partial:
        why = " (the output budget was reached)" if over else ""
        body += f"\n\n[PARTIAL view: lines 1-{end} of {total}{why}. Read more with offset={end + 1} and limit.]"
        notes.append(dict(whole=False, first_line=1, last_line=end, partial_view=True))
    else:
        notes.append(dict(whole=start == 0 and end >= total, first_line=start + 1, last_line=end))
    name = str(path)
    return ToolResult(
        content=[TextBlock(text=body)],
        structured={
            "content": content,
            "total_lines": total,
            "lines_returned": count,
            "file_path": name,
            "start_line": start + 1,
            "num_lines": count,
            "partial": partial,
            "encoding": encoding,
        },
        metadata={"path": name, "first_line": start + 1, "last_line": end, "total_lines": total},
    )


def image_limits_for(ctx: ToolContext) -> ImageLimits:
    """The image limits of the model this call is for (``input_limits.images.resize``)."""
    selection = ctx.selection
    data = ctx.config.data if ctx.config is not None else {}
    return image_limits(data, ctx.provider or selection.provider, ctx.model or selection.model)


def _image(path: Path, size: int, limits: ImageLimits, notes: list[dict[str, Any]]) -> ToolResult:
    if size > MAX_IMAGE_FILE_BYTES:
        return _fail(
            f"Image {path} was omitted: it is {size:,} bytes, over the {MAX_IMAGE_FILE_BYTES:,} bytes Read processes",
            "image_error",
            file_size=size,
        )
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        processed = process_image(data, limits)
    except ImageError as exc:
        return _fail(f"Image {path} was omitted: {exc}", "image_error", file_size=size)
    except OSError as exc:
        return _fail(f"Cannot read {path}: {exc.strerror or exc}", "os_error")
    notes.append(dict(whole=True))
    note = f"Image {path.name}: {processed.original_width}x{processed.original_height}" + (
        f", sent as {processed.width}x{processed.height} {processed.mime_type}" if processed.changed else ""
    )
    return ToolResult(
        content=[ImageBlock(data=processed.base64, mime_type=processed.mime_type), TextBlock(text=note)],
        structured={
            "image": {
                "width": processed.width,
                "height": processed.height,
                "original_width": processed.original_width,
                "original_height": processed.original_height,
                "resized": processed.changed,
            },
            "mime_type": processed.mime_type,
            "file_size": size,
            "file_path": str(path),
        },
        metadata={"path": str(path), "image_resized": processed.changed},
    )


def parse_pages(spec: str, count: int) -> list[int] | str:
    """1-based page numbers from ``spec`` (``"3"``, ``"1-5"``, ``"2,4-6"``), or an error message."""
    if not _PAGE_SPEC.fullmatch(spec):
        return f"pages {spec!r} is not a valid page range; valid forms: {PAGES_FORMS}"
    pages: list[int] = []
    for part in re.sub(r"[ \t]", "", spec).split(","):
        first, _, last = part.partition("-")
        lo, hi = int(first), int(last or first)
        if lo < 1 or hi < lo:
            return f"pages {spec!r}: a range must start at 1 or later and not run backwards; valid forms: {PAGES_FORMS}"
        if hi > count:
            return f"pages {spec!r}: the PDF has {count} page{'s' if count != 1 else ''}"
        if hi - lo + 1 + len(pages) > PDF_MAX_PAGES_PER_CALL:
            return f"pages {spec!r} asks for more than {PDF_MAX_PAGES_PER_CALL} pages; read at most that many a call"
        pages.extend(p for p in range(lo, hi + 1) if p not in pages)
    return pages


def _pdf(path: Path, pages_spec: str | None, notes: list[dict[str, Any]]) -> ToolResult:
    try:
        from pypdf import PdfReader
        from pypdf.errors import PdfReadError
    except ImportError:
        return _fail("Reading PDFs needs the pypdf package, which is not installed", "unavailable")
    try:
        reader = PdfReader(str(path))
        count = len(reader.pages)
    except (PdfReadError, OSError, ValueError) as exc:
        return _fail(f"{path} cannot be read as a PDF: {exc}", "invalid_pdf")
    if pages_spec is None:
        if count > PDF_WHOLE_MAX_PAGES:
            return _fail(
                f"{path} has {count} pages; PDFs over {PDF_WHOLE_MAX_PAGES} pages are read in ranges. Pass pages "
                f"({PAGES_FORMS}), at most {PDF_MAX_PAGES_PER_CALL} pages a call.",
                "pdf_too_long",
                total_pages=count,
            )
        wanted = list(range(1, count + 1))
    else:
        parsed = parse_pages(pages_spec, count)
        if isinstance(parsed, str):
            return _fail(parsed, "invalid_pages", total_pages=count)
        wanted = parsed
    parts: list[str] = []
    for number in wanted:
        try:
            text = reader.pages[number - 1].extract_text() or ""
        except Exception as exc:  # a damaged page must not hide the others
            text = f"[page {number} cannot be read: {type(exc).__name__}]"
        parts.append(f"--- Page {number} of {count} ---\n{text.strip() or '[no extractable text on this page]'}")
    whole = len(wanted) == count
    notes.append(dict(whole=whole))
    body = "\n\n".join(parts)
    return ToolResult(
        content=[TextBlock(text=body)],
        structured={"content": body, "file_path": str(path), "total_pages": count, "pages": wanted},
        metadata={"path": str(path), "total_pages": count, "pages": wanted},
    )


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _joined(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


def _notebook(path: Path, limits: ImageLimits, notes: list[dict[str, Any]]) -> ToolResult:
    try:
        import nbformat
    except ImportError:
        return _fail("Reading notebooks needs the nbformat package, which is not installed", "unavailable")
    try:
        nb = nbformat.read(str(path), as_version=4)
    except Exception as exc:
        return _fail(f"{path} is not a valid notebook: {exc}", "invalid_notebook")
    blocks: list[TextBlock | ImageBlock] = []
    text: list[str] = []
    cells_out: list[dict[str, Any]] = []

    def flush() -> None:
        if text:
            blocks.append(TextBlock(text="\n".join(text)))
            text.clear()

    language = (nb.metadata.get("kernelspec") or {}).get("language") or "python"
    for n, cell in enumerate(nb.cells):
        cell_id = cell.get("id") or f"cell-{n}"
        text.append(f'<cell id="{cell_id}" index="{n}" type="{cell.cell_type}">')
        source = _joined(cell.source)
        text.append(f"```{language}\n{source}\n```" if cell.cell_type == "code" else source)
        outputs: list[str] = []
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            kind = output.get("output_type")
            if kind == "stream":
                outputs.append(_joined(output.get("text")))
            elif kind == "error":
                trace = "\n".join(_ANSI.sub("", t) for t in output.get("traceback", []))
                outputs.append(f"{output.get('ename')}: {output.get('evalue')}\n{trace}".rstrip())
            elif kind in ("execute_result", "display_data"):
                data = output.get("data", {})
                image_mime = next((m for m in ("image/png", "image/jpeg", "image/gif") if m in data), None)
                if image_mime:
                    import base64

                    try:
                        processed = process_image(base64.b64decode(_joined(data[image_mime])), limits)
                    except (ImageError, ValueError) as exc:
                        outputs.append(f"[image output omitted: {exc}]")
                    else:
                        text.append("<output>\n" + "\n".join(outputs) + "\n</output>" if outputs else "")
                        outputs.clear()
                        flush()
                        blocks.append(ImageBlock(data=processed.base64, mime_type=processed.mime_type))
                elif "text/plain" in data:
                    outputs.append(_joined(data["text/plain"]))
                elif "text/html" in data:
                    outputs.append(_joined(data["text/html"]))
        if outputs:
            text.append("<output>\n" + "\n".join(o.rstrip("\n") for o in outputs) + "\n</output>")
        text.append("</cell>")
        cells_out.append({"id": cell_id, "cell_type": cell.cell_type, "source": source})
    flush()
    notes.append(dict(whole=True))
    blocks = [b for b in blocks if not isinstance(b, TextBlock) or b.text.strip()]
    return ToolResult(
        content=blocks or [TextBlock(text=f"<system-reminder>{path} has no cells.</system-reminder>")],
        structured={"file_path": str(path), "cells": cells_out, "total_cells": len(cells_out)},
        metadata={"path": str(path), "total_cells": len(cells_out)},
    )


def _listing_hint(ctx: ToolContext, path: object) -> str:
    """How to list a directory with a tool this caller has (LS, Glob, Bash), or nothing."""
    names = {t.name for t in ctx.visible_tools()}
    for name, how in (
        ("LS", "List it with LS"),
        ("Glob", "List it with Glob"),
        ("Bash", f"List it with `ls {path}` in Bash"),
    ):
        if name in names:
            return f"{how}."
    return "No tool to list directories is enabled here."


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(read)
