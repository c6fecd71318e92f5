"""Within one call each existing path is resolved once; after the call, afresh.

The pipeline makes path fields absolute, the rules resolve the paths they judge and the tool
resolves its own input: all three must name the same file, even if a link is swapped while
the call runs. A task the call started and that outlives it resolves against the disk again.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from pydantic import BaseModel

from pegboard import Tool, ToolContext, resolve_path
from pegboard.core.pathnames import CALL_PATHS, CallPaths, resolve_existing
from pegboard.testing import isolated_pegboard
from tests.kernel.toolkit import ToolsPlugin


def _link(tmp_path: Path) -> tuple[Path, Path, Path]:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    (first / "f.txt").write_text("first")
    (second / "f.txt").write_text("second")
    link = tmp_path / "link"
    link.symlink_to(first)
    return first, second, link


def _swap(link: Path, target: Path) -> None:
    tmp = link.with_name("link.new")
    tmp.symlink_to(target)
    os.replace(tmp, link)


def test_inside_a_call_scope_a_path_keeps_its_first_resolution(tmp_path: Path) -> None:
    first, second, link = _link(tmp_path)
    paths = CallPaths()
    scope = CALL_PATHS.set(paths)
    try:
        assert resolve_path(link / "f.txt", "/") == first / "f.txt"
        _swap(link, second)
        assert resolve_path(str(link / "f.txt"), "/") == first / "f.txt"
        assert resolve_existing(str(link / "f.txt")) == str(first / "f.txt")
    finally:
        paths.close()
        CALL_PATHS.reset(scope)
    assert resolve_path(str(link / "f.txt"), "/") == second / "f.txt"


def test_a_closed_scope_resolves_afresh_and_keeps_nothing(tmp_path: Path) -> None:
    _first, second, link = _link(tmp_path)
    paths = CallPaths()
    token = CALL_PATHS.set(paths)
    try:
        resolve_path(str(link / "f.txt"), "/")
        paths.close()
        assert paths.known == {}
        _swap(link, second)
        assert resolve_path(str(link / "f.txt"), "/") == second / "f.txt"
    finally:
        CALL_PATHS.reset(token)


def test_a_missing_path_is_not_kept(tmp_path: Path) -> None:
    paths = CallPaths()
    token = CALL_PATHS.set(paths)
    try:
        missing = tmp_path / "later.txt"
        assert resolve_path(str(missing), "/") == missing
        missing.parent.joinpath("real").mkdir()
        missing.symlink_to(tmp_path / "real")
        assert resolve_path(str(missing), "/") == tmp_path / "real"
    finally:
        paths.close()
        CALL_PATHS.reset(token)


class Target(BaseModel):
    file_path: str


async def test_the_tool_acts_on_the_file_the_call_was_checked_for_and_a_later_task_resolves_anew(
    tmp_path: Path,
) -> None:
    first, second, link = _link(tmp_path)
    later: list[asyncio.Task[Path]] = []

    async def run(input: Target, ctx: ToolContext) -> str:
        _swap(link, second)  # swapped after the rules judged the call
        seen = resolve_path(str(link / "f.txt"), ctx.cwd)

        async def afterwards() -> Path:
            await asyncio.sleep(0.01)
            return resolve_path(str(link / "f.txt"), ctx.cwd)

        later.append(asyncio.get_running_loop().create_task(afterwards()))
        return str(seen)

    tool = Tool(name="Peek", description="Resolve a path.", input_model=Target, run=run, path_fields=("file_path",))
    async with isolated_pegboard(ToolsPlugin(tool), cwd=tmp_path, config={"permissions": {"allow": ["Peek"]}}) as pb:
        result = await pb.call("Peek", {"file_path": str(link / "f.txt")})
    assert result.text == str(first / "f.txt")
    assert await later[0] == second / "f.txt"
