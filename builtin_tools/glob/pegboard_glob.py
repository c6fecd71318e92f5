"""The built-in ``Glob`` tool (alias ``find``): files whose path matches a pattern, newest first.

Listing is the toolkit's file index (kept current by inotify) when it can answer, else
``rg --files`` when an rg can be had, else the toolkit's walk; all are filtered by one glob
matcher, so they answer the same on the same tree.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from pegboard import Pegboard, StashKey, Subjects, ToolContext, ToolRegister, ToolResult, hookimpl, resolve_path, tool
from pegboard_toolkit import (
    GlobError,
    ReadFilter,
    RipgrepUnavailable,
    WalkTimeout,
    choose_backend,
    compile_glob,
    run_ripgrep,
    split_glob,
    walk_files,
)
from pegboard_toolkit.toolconfig import config_value as _setting
from pegboard_toolkit.toolconfig import directory_failure, seconds_setting
from pegboard_toolkit.toolconfig import tool_failure as _fail
from pegboard_toolkit.walk import deny_globs, vcs_exclude_globs

if TYPE_CHECKING:
    from pegboard_glob_index import FileIndexes

MAX_RESULTS = 100
DEFAULT_TIMEOUT = 20.0
IGNORE_ENV = ("PEGBOARD_GLOB_NO_IGNORE", "FUXI_CODE_GLOB_NO_IGNORE")
INDEX_ENV = "PEGBOARD_GLOB_INDEX"
SERVED = ("built", "served", "rebuilt")
#: the file indexes of one Pegboard, shared by its sessions, closed with it
INDEXES: StashKey[FileIndexes] = StashKey("pegboard-glob.indexes")
_FALSE = {"0", "false", "no", "off"}
_TRUE = {"1", "true", "yes", "on"}


class GlobInput(BaseModel):
    pattern: str = Field(min_length=1, description='Glob pattern such as "**/*.py" or "src/*.{ts,tsx}".')
    path: str | None = Field(
        default=None, description="Directory to search in (default: the working directory); absolute is best."
    )


def respect_gitignore(ctx: ToolContext) -> bool:
    """Whether Glob skips gitignored files: the environment (``PEGBOARD_GLOB_NO_IGNORE``, then
    ``FUXI_CODE_GLOB_NO_IGNORE``; ``false`` means "respect .gitignore"), else the setting
    ``tools.glob.respectGitignore``, else no."""
    for name in IGNORE_ENV:
        value = (ctx.env.get(name) or "").strip().lower()
        if value in _FALSE:
            return True
        if value in _TRUE:
            return False
    return _setting(ctx, "tools", "glob", "respectGitignore") is True


def index_setting(ctx: ToolContext) -> bool | ToolResult:
    """Whether Glob may answer from the file index: ``PEGBOARD_GLOB_INDEX`` in the environment,
    else ``tools.glob.index`` (default true), else the ``invalid_config`` failure for a
    value that is not a boolean."""
    value = (ctx.env.get(INDEX_ENV) or "").strip().lower()
    if value in _FALSE:
        return False
    if value in _TRUE:
        return True
    setting = _setting(ctx, "tools", "glob", "index")
    if setting is None:
        return True
    if not isinstance(setting, bool):
        return _fail(f"config key tools.glob.index: expected true or false, found {setting!r}", "invalid_config")
    return setting


async def indexed_files(
    ctx: ToolContext,
    root: Path,
    *,
    ignore: bool,
    matcher: re.Pattern[str],
    deadline: float,
    timeout: float = DEFAULT_TIMEOUT,
    listing: Callable[[], Awaitable[tuple[list[str], str]]] | None = None,
) -> tuple[list[str], str, tuple[list[str], str] | None]:
    """The matches newest first from this Pegboard's file index and how they were had
    (``built``, ``served``, ``rebuilt``; ``fallback: <reason>`` with no matches: list instead).

    When the tree has no index yet and ``listing`` (rg) is given, rg answers this call as it
    did before there was an index (the third value) and the index is built in a thread of its
    own once the call has returned (``building``): a first call costs what it did, and later
    calls are served from memory (one that comes before the build ends waits for it)."""
    import asyncio
    import threading

    from pegboard_glob_index import FileIndexes

    indexes = ctx.stash.get(INDEXES)
    if indexes is None:
        indexes = ctx.stash.setdefault(INDEXES, FileIndexes())

    def query(until: float) -> tuple[list[str], str]:
        answer = indexes.newest_first(str(root), ignore=ignore, pattern=matcher, deadline=until)
        return answer if answer is not None else ([], f"fallback: {indexes.last_reason}")

    if listing is None or indexes.state(str(root), ignore=ignore) != "new":
        rels, how = await asyncio.to_thread(query, deadline)
        return rels, how, None
    listed = await listing()
    answered = threading.Event()
    task = asyncio.current_task()
    if task is not None:
        task.add_done_callback(lambda _task: answered.set())
    indexes.build_aside(str(root), ignore=ignore, pattern=matcher, timeout=timeout, after=answered)
    declined = indexes.state(str(root), ignore=ignore) == "declined"
    return [], f"fallback: {indexes.last_reason}" if declined else "building", listed


def _subjects(input: GlobInput) -> Subjects:
    base, _ = split_glob(input.pattern)
    paths = [input.path or "."]
    if input.pattern.startswith(("/", "~")):
        paths = [base or "/"]
    return Subjects(paths_read=tuple(paths))


def _root_and_rest(input: GlobInput, ctx: ToolContext) -> tuple[Path, str]:
    home = ctx.env.get("HOME")
    pattern = input.pattern.replace("\\", "/") if os.sep == "\\" else input.pattern
    if pattern.startswith("~"):
        pattern = str(resolve_path(pattern, ctx.cwd, home)) + ("/" if pattern.endswith("/") else "")
    start = resolve_path(input.path, ctx.cwd, home) if input.path else Path(ctx.cwd)
    base, rest = split_glob(pattern.removeprefix("./"))
    if pattern.startswith("/"):
        return resolve_path(base or "/", "/", home), rest
    return (resolve_path(base, start, home) if base else start), rest


async def list_files(
    root: Path, *, ignore: bool, timeout: float, ctx: ToolContext, rg_glob: str | None = None, backend: str | None
) -> tuple[list[str], str]:
    """Relative paths of the files under ``root``, newest first; raises ``TimeoutError`` past
    ``timeout``. rg sorts by modification time itself (``--sortr=modified``); the walk's list
    is stamped and sorted here, ties by path.

    ``rg_glob`` only narrows what rg prints (it is not given with ignore files on, where rg
    would let it override them); the caller filters with its own matcher either way."""
    import asyncio

    if backend is not None:
        args = ["--files", "--hidden", "--no-config", "--no-messages", "--sortr=modified"]
        args += ["--no-ignore"] if not ignore else ["--no-ignore-global"]
        if rg_glob:
            args += ["-g", rg_glob]
        for glob in vcs_exclude_globs():
            args += ["-g", glob]
        filt = ReadFilter(ctx)
        for glob in deny_globs(filt.specs, root, ctx.cwd, ctx.env.get("HOME")):
            args += ["-g", glob]
        result = await run_ripgrep(backend, args, cwd=root, timeout=timeout, env=dict(ctx.env) or None, ctx=ctx)
        if result.timed_out:
            raise TimeoutError
        if result.failed:
            raise GlobError(result.diagnostic)
        text = result.stdout.decode("utf-8", "surrogateescape")
        return [line for line in text.split("\n") if line], "ripgrep"
    deadline = time.monotonic() + timeout

    def walk() -> list[str]:
        return newest_first(root, list(walk_files(root, ignore=ignore, deadline=deadline)))

    try:
        return await asyncio.to_thread(walk), "python"
    except WalkTimeout:
        raise TimeoutError from None


def newest_first(root: Path, rels: list[str]) -> list[str]:
    """``rels`` sorted by modification time, newest first, then by path."""
    prefix = str(root).rstrip("/") + "/"
    stamped: list[tuple[int, str]] = []
    for rel in rels:
        try:
            stamped.append((-os.stat(prefix + rel).st_mtime_ns, rel))
        except OSError:
            continue
    stamped.sort()
    return [rel for _, rel in stamped]


@tool(
    name="Glob",
    groups=["fs", "file"],
    aliases=["find"],
    permission_family="Read",
    read_only=True,
    idempotent=True,
    path_fields=("path",),
    permission_subjects=_subjects,
    usage="Find files by name pattern (**/*.py); results newest first, at most 100.",
)
async def glob(input: GlobInput, ctx: ToolContext) -> ToolResult:
    """Find files whose path matches a glob pattern: `**` crosses directories, `*` and `?`
    match within a name, `[...]` a character class, `{a,b}` alternatives. A pattern without
    a leading directory matches from the search path (`*.py` only at its top level,
    `**/*.py` at any depth). Returns absolute paths sorted by modification time, newest
    first, at most 100. Includes dotfiles and gitignored files, never VCS directories."""
    started = time.monotonic()
    try:
        root, rest = _root_and_rest(input, ctx)
    except ValueError as exc:
        return _fail(f"Invalid path: {exc}", "invalid_path")
    timeout = seconds_setting(ctx, "glob", DEFAULT_TIMEOUT)
    if isinstance(timeout, ToolResult):
        return timeout
    try:
        matcher = compile_glob(rest)
    except GlobError as exc:
        return _fail(str(exc), "invalid_pattern")
    if (failure := directory_failure(root, ctx, "Glob searches directories (Read reads one file)")) is not None:
        return failure
    try:
        backend = choose_backend(_setting(ctx, "tools", "glob", "backend"), ctx.env or None)
    except RipgrepUnavailable as exc:
        return _fail(str(exc), "rg_unavailable")
    except ValueError as exc:
        return _fail(f"config key tools.glob.backend: {exc}", "invalid_config")
    ignore = respect_gitignore(ctx)
    use_index = index_setting(ctx)
    if isinstance(use_index, ToolResult):
        return use_index
    timed_out = f"Glob timed out after {timeout:g} s searching {root}; narrow the pattern or the path"

    def listing() -> Awaitable[tuple[list[str], str]]:
        return list_files(
            root,
            ignore=ignore,
            timeout=max(float(timeout) - (time.monotonic() - started), 1e-3),
            ctx=ctx,
            rg_glob=None if ignore else "/" + rest,
            backend=backend,
        )

    index = "off"
    rels: list[str] = []
    listed: tuple[list[str], str] | None = None
    prefix = str(root).rstrip("/") + "/"
    try:
        if use_index and ctx.pegboard is not None:
            rels, index, listed = await indexed_files(
                ctx, root, ignore=ignore, matcher=matcher, deadline=started + float(timeout), timeout=float(timeout),
                listing=listing if backend is not None else None,
            )
        if index in SERVED:
            used = "index"
            found = [prefix + rel for rel in rels]
        else:
            rels, used = listed if listed is not None else await listing()
            found = [prefix + rel for rel in rels if matcher.match(rel)]
    except (TimeoutError, WalkTimeout):
        return _fail(timed_out, "timeout")
    except GlobError as exc:
        return _fail(str(exc), "invalid_pattern")
    filt = ReadFilter(ctx)
    if filt.active:
        found = [p for p in found if filt.keep(p)]
    total = len(found)
    shown = found[:MAX_RESULTS]
    truncated = total > MAX_RESULTS
    if not shown:
        body = "No files found"
    else:
        body = "\n".join(shown)
        if truncated:
            body += (
                f"\n(Results are truncated: the {MAX_RESULTS} most recently modified of {total} matches are shown. "
                "Use a more specific pattern or path to narrow the search.)"
            )
    millis = int((time.monotonic() - started) * 1000)
    return ToolResult.from_text(
        body,
        structured={
            "matches": shown,
            "count": len(shown),
            "search_path": str(root),
            "truncated": truncated,
            "total_matches": total,
            "filenames": shown,
            "numFiles": len(shown),
            "durationMs": millis,
        },
        metadata={"backend": used, "truncated": truncated, "index": index},
    )


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(glob)


@hookimpl
def pegboard_close(pegboard: Pegboard) -> None:
    indexes = pegboard.stash.pop(INDEXES, None)
    if indexes is not None:
        indexes.close()
