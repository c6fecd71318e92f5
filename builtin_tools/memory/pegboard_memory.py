"""Durable memory: ``memory`` (add / replace / remove entries of USER.md and MEMORY.md),
``memory_search`` (ranked full-text search) and ``memory_get`` (a file or a line range).

Memory files live in a project directory (``tools.memory.directory``, default
``.pegboard/memory`` under the project) and a user directory
(``tools.memory.userDirectory``, default ``memory`` in Pegboard's data directory).
An entry is one ``- `` line. A change takes a lock file beside the memory file, then replaces
the file atomically (``pegboard_toolkit.write_text``), so two processes never lose an entry
and a reader never sees half a file. Text that Pegboard's credential redaction would change is
refused: memory is for durable facts, never secrets.

``memory_search`` ranks entries of the memory files and paragraphs of the files in
``tools.memory.notes`` directories with SQLite FTS5's BM25, in an index kept in
memory per ``Pegboard``. It is brought up to date from file sizes and times at most every
``tools.memory.refreshSeconds`` (5 by default), and at once after a ``memory`` change.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from pegboard import (
    NEUTRAL,
    ConfigSection,
    ConfigSectionRegister,
    Pegboard,
    StashKey,
    ToolContext,
    ToolRegister,
    ToolResult,
    Widens,
    default_data_dir,
    hookimpl,
    redact,
    resolve_path,
    tool,
)
from pegboard_toolkit import AtomicWriteError, write_text

SETTINGS_KEY = "tools.memory"
FILES = {"memory": "MEMORY.md", "user": "USER.md"}
NOTE_SUFFIXES = (".md", ".markdown", ".txt")
DEFAULT_MAX_CHARS = 8_000
MAX_ENTRY_CHARS = 2_000
LOCK_TIMEOUT = 10.0
DEFAULT_RESULTS = 6
DEFAULT_REFRESH_SECONDS = 5.0
MAX_GET_LINES = 2_000
ENTRY_PREFIX = "- "

Target = Literal["memory", "user"]
Scope = Literal["project", "user"]


class MemoryRefusal(ValueError):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def refusal(exc: MemoryRefusal) -> ToolResult:
    reason = "invalid_input" if exc.kind in ("secret_refused", "no_match", "ambiguous", "too_long") else "tool_error"
    return ToolResult.refusal(reason, str(exc), error_kind=exc.kind)


# -- where memory lives ---------------------------------------------------------------------
@dataclass(frozen=True)
class MemoryRoots:
    project: Path
    user: Path
    notes: tuple[Path, ...]
    base: Path
    max_chars: int
    refresh_seconds: float = DEFAULT_REFRESH_SECONDS

    def directory(self, scope: Scope) -> Path:
        return self.project if scope == "project" else self.user

    def all(self) -> list[Path]:
        return [self.project, self.user, *self.notes]


_READS_AND_WRITES = "memory_get reads and memory writes files in this directory"


class MemorySettings(BaseModel):
    """``tools.memory``: where memory and notes live, and the limits."""

    directory: Annotated[str, Widens.when_set(_READS_AND_WRITES)] = Field(
        default=".pegboard/memory", description="project memory, relative to the project"
    )
    userDirectory: Annotated[str | None, Widens.when_set(_READS_AND_WRITES)] = Field(
        default=None, description="user memory (default: memory in the data dir)"
    )
    notes: Annotated[
        list[str], Widens.when_set("memory_search and memory_get read the files in these directories")
    ] = Field(default_factory=list, description="directories of notes memory_search indexes")
    maxChars: Annotated[int, NEUTRAL] = Field(
        default=DEFAULT_MAX_CHARS, gt=0, description="size limit of one memory file"
    )
    refreshSeconds: Annotated[float, NEUTRAL] = Field(
        default=DEFAULT_REFRESH_SECONDS, ge=0, description="how often notes are rescanned"
    )


SECTION = ConfigSection(SETTINGS_KEY, MemorySettings, description="memory, memory_search and memory_get")


def _settings(ctx: ToolContext) -> MemorySettings:
    if ctx.pegboard is None:
        return MemorySettings()
    found: MemorySettings = ctx.settings(SETTINGS_KEY)
    return found


def _path(value: str, base: Path, home: str | None) -> Path:
    try:
        return Path(resolve_path(value, base, home=home))
    except ValueError as exc:
        raise MemoryRefusal("invalid_input", f"cannot use the path {value!r}: {exc}") from None


def roots(ctx: ToolContext) -> MemoryRoots:
    settings = _settings(ctx)
    base = (ctx.project_dir or ctx.cwd).resolve()
    home = ctx.env.get("HOME")
    pb: Pegboard | None = ctx.pegboard
    data = default_data_dir(pb.data_env() if pb is not None else ctx.env)
    project = _path(settings.directory, base, home)
    user = _path(settings.userDirectory, base, home) if settings.userDirectory else data / "memory"
    notes = tuple(_path(n, base, home) for n in settings.notes)
    return MemoryRoots(project, user, notes, base, settings.maxChars, settings.refreshSeconds)


# -- files: lock, atomic write, entries -----------------------------------------------------
@contextlib.contextmanager
def file_lock(path: Path, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """An exclusive lock on ``path`` (a lock file), shared by every process on this machine."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        deadline = time.monotonic() + timeout
        while True:
            try:
                _lock(handle.fileno())
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise MemoryRefusal("locked", f"{path} stayed locked for {timeout:g} s; try again") from None
                time.sleep(0.01)
        try:
            yield
        finally:
            _unlock(handle.fileno())


if sys.platform == "win32":
    import msvcrt

    def _lock(fd: int) -> None:
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)

    def _unlock(fd: int) -> None:
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8, LF) through the toolkit's atomic write."""
    try:
        write_text(path, text, make_parents=True)
    except AtomicWriteError as exc:
        raise MemoryRefusal(exc.kind, f"cannot write {path}: {exc}") from None


def entries(text: str) -> list[str]:
    return [line[len(ENTRY_PREFIX) :] for line in text.splitlines() if line.startswith(ENTRY_PREFIX)]


def secret_check(text: str, secrets: Sequence[str]) -> None:
    """Refuse text that Pegboard's credential redaction would change."""
    cleaned = redact(text, list(secrets))
    if cleaned != text:
        raise MemoryRefusal(
            "secret_refused",
            "Refused: this looks like a secret (it matches Pegboard's credential detector, the one that redacts "
            f"tool results: {cleaned[:200]!r}). Memory keeps durable facts and preferences, never keys, tokens "
            "or passwords.",
        )


def change_memory(
    path: Path, action: str, content: str | None, old_text: str | None, max_chars: int, title: str
) -> tuple[str, list[str]]:
    """Apply one change to the memory file ``path`` under its lock; return a message and the entries."""
    with file_lock(path.with_name(f".{path.name}.lock")):
        text = path.read_text(encoding="utf-8") if path.exists() else f"# {title}\n\n"
        lines = text.splitlines()
        current = entries(text)
        if action == "add":
            assert content is not None
            if content in current:
                return "Already remembered; nothing changed.", current
            lines.append(ENTRY_PREFIX + content)
            message = "Added."
        else:
            assert old_text is not None
            hits = [i for i, line in enumerate(lines) if line.startswith(ENTRY_PREFIX) and old_text in line[2:]]
            if not hits:
                raise MemoryRefusal("no_match", f"No entry contains {old_text!r}; entries:\n" + _listing(current))
            if len(hits) > 1:
                raise MemoryRefusal(
                    "ambiguous",
                    f"{len(hits)} entries contain {old_text!r}; give more of the entry:\n"
                    + _listing([lines[i][2:] for i in hits]),
                )
            if action == "replace":
                assert content is not None
                lines[hits[0]] = ENTRY_PREFIX + content
                message = "Replaced."
            else:
                del lines[hits[0]]
                message = "Removed."
        new = "\n".join(lines).rstrip("\n") + "\n"
        if len(new) > max_chars:
            raise MemoryRefusal(
                "too_long",
                f"{path.name} would grow to {len(new):,} characters, over its limit of {max_chars:,}; "
                "replace or remove entries that are no longer true first",
            )
        write_atomic(path, new)
        return message, entries(new)


def _listing(items: Sequence[str]) -> str:
    return "\n".join(f"- {item}" for item in items) or "(none)"


# -- the memory tool --------------------------------------------------------------------------
class MemoryInput(BaseModel):
    action: Literal["add", "replace", "remove"]
    target: Target = Field(
        default="memory", description="'memory' (MEMORY.md: facts, conventions) or 'user' (USER.md: the user)."
    )
    content: str | None = Field(default=None, description="The entry's text (add, replace): one durable fact.")
    old_text: str | None = Field(default=None, description="A unique part of the entry to replace or remove.")
    scope: Scope = Field(default="project", description="'project' (this project's memory) or 'user' (everywhere).")


@tool(name="memory", groups=["memory", "pegboard"])
async def memory(input: MemoryInput, ctx: ToolContext) -> ToolResult:
    """Add, replace or remove an entry of USER.md (about the user) or MEMORY.md (facts, conventions)
    in the project's or the user's memory. Only durable facts and preferences: not task notes,
    copied references or secrets (text that looks like a credential is refused)."""
    content = " ".join(input.content.split()) if input.content is not None else None
    try:
        where = roots(ctx)
        path = where.directory(input.scope) / FILES[input.target]
        if input.action in ("add", "replace") and not content:
            raise MemoryRefusal("invalid_input", f"{input.action} needs content: the entry's text")
        if input.action in ("replace", "remove") and not input.old_text:
            raise MemoryRefusal("invalid_input", f"{input.action} needs old_text: a unique part of the entry")
        if content is not None and len(content) > MAX_ENTRY_CHARS:
            raise MemoryRefusal("too_long", f"an entry holds at most {MAX_ENTRY_CHARS:,} characters")
        secrets = ctx.pegboard.secrets if ctx.pegboard is not None else []
        if content is not None:
            secret_check(content, secrets)
        message, now = change_memory(
            path, input.action, content, input.old_text, where.max_chars, FILES[input.target].removesuffix(".md")
        )
    except MemoryRefusal as exc:
        return refusal(exc)
    touch_indexes(ctx)
    shown = path.relative_to(where.base) if path.is_relative_to(where.base) else path
    return ToolResult.from_text(
        f"{message} {shown} ({input.scope}) has {len(now)} entries:\n{_listing(now)}",
        structured={"path": str(shown), "scope": input.scope, "entries": now},
    )


# -- search -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Chunk:
    start: int
    end: int
    text: str


def chunks(path: Path, text: str, memory_file: bool) -> list[Chunk]:
    """Entries of a memory file; paragraphs of a note (1-based line ranges)."""
    lines = text.splitlines()
    if memory_file:
        return [Chunk(i + 1, i + 1, line[2:]) for i, line in enumerate(lines) if line.startswith(ENTRY_PREFIX)]
    out: list[Chunk] = []
    start: int | None = None
    for i, line in enumerate([*lines, ""]):
        if line.strip() and start is None:
            start = i
        elif not line.strip() and start is not None:
            out.append(Chunk(start + 1, i, "\n".join(lines[start:i])))
            start = None
    return out


class MemoryIndex:
    """An FTS5 index of memory files and notes, brought up to date from file sizes and times.

    A search rescans the directories at most every ``refresh_seconds`` (``clock`` is
    injectable); a change made through the ``memory`` tool is seen at once (:meth:`touch`).
    """

    def __init__(self, refresh_seconds: float = 0.0, clock: Callable[[], float] = time.monotonic) -> None:
        import sqlite3

        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.execute(
            "CREATE VIRTUAL TABLE chunks USING fts5(path UNINDEXED, start UNINDEXED, end UNINDEXED, body, "
            "tokenize = 'unicode61 remove_diacritics 2')"
        )
        self.seen: dict[str, tuple[int, int]] = {}
        self.rows: dict[str, list[int]] = {}
        self.lock = threading.Lock()
        self.refresh_seconds = refresh_seconds
        self.clock = clock
        self.checked: float | None = None

    def touch(self) -> None:
        """Rescan before the next search (a memory file changed)."""
        self.checked = None

    def files(self, where: MemoryRoots) -> dict[str, tuple[Path, os.stat_result, bool]]:
        found: dict[str, tuple[Path, os.stat_result, bool]] = {}
        for directory in (where.project, where.user):
            for name in FILES.values():
                path = directory / name
                with contextlib.suppress(OSError):
                    found[str(path)] = (path, path.stat(), True)
        for root in where.notes:
            for path, stat in _walk(root):
                found.setdefault(str(path), (path, stat, False))
        return found

    def _drop(self, key: str) -> None:
        rows = self.rows.pop(key, [])
        if rows:
            self.db.executemany("DELETE FROM chunks WHERE rowid = ?", [(r,) for r in rows])

    def refresh(self, where: MemoryRoots) -> None:
        now = self.clock()
        if self.checked is not None and now - self.checked < self.refresh_seconds:
            return
        self.checked = now
        files = self.files(where)
        with self.db:
            for key in [k for k in self.seen if k not in files]:
                self._drop(key)
                del self.seen[key]
            for key, (path, stat, memory_file) in files.items():
                mark = (stat.st_mtime_ns, stat.st_size)
                if self.seen.get(key) == mark:
                    continue
                try:
                    text = path.read_bytes().decode("utf-8", errors="replace")
                except OSError:
                    continue
                self._drop(key)
                rows = []
                for c in chunks(path, text, memory_file):
                    cursor = self.db.execute(
                        "INSERT INTO chunks (path, start, end, body) VALUES (?, ?, ?, ?)", (key, c.start, c.end, c.text)
                    )
                    rows.append(cursor.lastrowid or 0)
                self.rows[key] = rows
                self.seen[key] = mark

    def search(self, where: MemoryRoots, query: str, limit: int) -> list[tuple[str, int, int, str, float]]:
        words = re.findall(r"\w+", query.lower())
        if not words:
            return []
        match = " OR ".join('"' + w.replace('"', "") + '"' for w in dict.fromkeys(words))
        with self.lock:
            self.refresh(where)
            rows = self.db.execute(
                "SELECT path, start, end, body, bm25(chunks) AS rank FROM chunks WHERE chunks MATCH ? "
                "ORDER BY rank LIMIT ?",
                (match, limit),
            ).fetchall()
        return [(p, int(s), int(e), b, -float(r)) for p, s, e, b, r in rows]


def _walk(root: Path) -> Iterator[tuple[Path, os.stat_result]]:
    stack = [root]
    while stack:
        directory = stack.pop()
        try:
            with os.scandir(directory) as found:
                for entry in found:
                    if entry.name.startswith("."):
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(Path(entry.path))
                    elif entry.name.endswith(NOTE_SUFFIXES) and entry.is_file():
                        yield Path(entry.path), entry.stat()
        except OSError:
            continue


INDEXES: StashKey[dict[tuple[str, ...], MemoryIndex]] = StashKey("pegboard-memory-indexes")


def index_for(ctx: ToolContext, where: MemoryRoots) -> MemoryIndex:
    key = tuple(str(p) for p in where.all())
    if ctx.pegboard is None:
        return MemoryIndex()
    indexes = ctx.stash.setdefault(INDEXES, {})
    if key not in indexes:
        indexes[key] = MemoryIndex(where.refresh_seconds)
    return indexes[key]


def touch_indexes(ctx: ToolContext) -> None:
    """A memory file changed: every index of this ``Pegboard`` rescans before its next search."""
    if ctx.pegboard is not None:
        for index in ctx.stash.get(INDEXES, {}).values():
            index.touch()


def shown_path(path: str, where: MemoryRoots) -> str:
    p = Path(path)
    return str(p.relative_to(where.base)) if p.is_relative_to(where.base) else str(p)


class MemorySearchInput(BaseModel):
    query: str = Field(min_length=1, description="Words to look for; results are ranked by relevance (BM25).")
    maxResults: int = Field(default=DEFAULT_RESULTS, ge=1, le=50)
    minScore: float | None = Field(default=None, description="Leave out results scoring below this.")


@tool(name="memory_search", groups=["memory", "pegboard"], read_only=True, idempotent=True)
async def memory_search(input: MemorySearchInput, ctx: ToolContext) -> ToolResult:
    """Search the memory files (USER.md, MEMORY.md of the project and the user) and the configured
    note directories; the best matches first, each with its path and line range for memory_get."""
    try:
        where = roots(ctx)
    except MemoryRefusal as exc:
        return refusal(exc)
    hits = index_for(ctx, where).search(where, input.query, input.maxResults)
    results = [
        {"path": shown_path(p, where), "startLine": s, "endLine": e, "score": round(score, 4), "snippet": body[:700]}
        for p, s, e, body, score in hits
        if input.minScore is None or round(score, 4) >= input.minScore
    ]
    if not results:
        return ToolResult.from_text(f"No memory matches {input.query!r}.", structured={"results": []})
    text = "\n\n".join(
        f"{r['path']}:{r['startLine']}-{r['endLine']} (score {r['score']})\n{r['snippet']}" for r in results
    )
    return ToolResult.from_text(text, structured={"results": results})


class MemoryGetInput(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    path: str = Field(min_length=1, description="A path memory_search gave (or USER.md / MEMORY.md).")
    start: int | None = Field(default=None, ge=1, alias="from", description="First line (1-based).")
    lines: int | None = Field(default=None, ge=1, le=MAX_GET_LINES, description="How many lines.")
    scope: Scope = Field(default="project", description="Which memory directory a bare USER.md / MEMORY.md means.")


@tool(name="memory_get", groups=["memory", "pegboard"], read_only=True, idempotent=True)
async def memory_get(input: MemoryGetInput, ctx: ToolContext) -> ToolResult:
    """Read a memory file or note, whole or a line range (from, lines), by the path memory_search gave."""
    try:
        where = roots(ctx)
        if input.path in FILES.values():
            path = where.directory(input.scope) / input.path
        else:
            path = _path(input.path, where.base, ctx.env.get("HOME"))
    except MemoryRefusal as exc:
        return refusal(exc)
    allowed = [where.directory("project") / n for n in FILES.values()] + [where.user / n for n in FILES.values()]
    inside_notes = any(path.is_relative_to(root) for root in where.notes) and path.name.endswith(NOTE_SUFFIXES)
    if path not in allowed and not inside_notes:
        return ToolResult.refusal(
            "invalid_input",
            f"{input.path} is not a memory file or a note; memory_get reads USER.md, MEMORY.md and files in "
            "the configured note directories",
            error_kind="not_memory",
        )
    if not path.is_file():
        return ToolResult.refusal("invalid_input", f"{input.path} does not exist (yet)", error_kind="not_found")
    lines = path.read_bytes().decode("utf-8", errors="replace").splitlines()
    first = (input.start or 1) - 1
    count = input.lines or MAX_GET_LINES
    picked = lines[first : first + count]
    structured = {
        "path": shown_path(str(path), where),
        "from": first + 1,
        "lines": len(picked),
        "totalLines": len(lines),
    }
    return ToolResult.from_text("\n".join(picked), structured=structured)


@hookimpl
def register_config_sections(register: ConfigSectionRegister) -> None:
    register(SECTION)


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(memory)
    register(memory_search)
    register(memory_get)


__all__ = ["MemoryIndex", "file_lock", "memory", "memory_get", "memory_search", "write_atomic"]
