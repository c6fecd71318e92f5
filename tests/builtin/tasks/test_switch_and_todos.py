"""Exactly one of the Task tools and TodoWrite is enabled; TodoWrite keeps the whole list."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import pegboard_tasks
from pegboard.testing import check_tool, isolated_pegboard
from tests.builtin.tasks.support import Events

TASKS = {"TaskCreate", "TaskGet", "TaskList", "TaskUpdate", "task_complete"}


def enabled(
    tmp_path: Path, env: dict[str, str], config: dict[str, Any] | None = None
) -> tuple[set[str], dict[str, str]]:
    pb = isolated_pegboard(
        pegboard_tasks, cwd=tmp_path, env={"PEGBOARD_DATA_DIR": str(tmp_path), **env}, config=config
    )
    result = pb.tools()
    return set(result.enabled), {d.name: d.reason for d in result.disabled}


def test_conforms() -> None:
    for made in pegboard_tasks.TASK_TOOLS:
        check_tool(made)
    check_tool(pegboard_tasks.todo_write, {"todos": [{"content": "a", "status": "pending", "activeForm": "A-ing"}]})


def test_tasks_by_default(tmp_path: Path) -> None:
    on, off = enabled(tmp_path, {})
    assert on == TASKS and "PEGBOARD_ENABLE_TASKS=0" in off["TodoWrite"]


@pytest.mark.parametrize(
    ("env", "config"),
    [
        ({"PEGBOARD_ENABLE_TASKS": "0"}, None),
        ({"FUXI_CODE_ENABLE_TASKS": "0"}, None),
        ({"PEGBOARD_ENABLE_TASKS": "false"}, {"tools": {"tasks": {"enabled": True}}}),
        ({}, {"tools": {"tasks": {"enabled": False}}}),
    ],
)
def test_switched_to_todowrite(tmp_path: Path, env: dict[str, str], config: dict[str, Any] | None) -> None:
    on, off = enabled(tmp_path, env, config)
    assert on == {"TodoWrite"} and set(off) == TASKS
    assert "TodoWrite is enabled instead" in off["TaskCreate"]


def test_pegboard_spelling_beats_the_seed_variable_and_setting(tmp_path: Path) -> None:
    on, _ = enabled(
        tmp_path, {"PEGBOARD_ENABLE_TASKS": "1", "FUXI_CODE_ENABLE_TASKS": "0"},
        {"tools": {"tasks": {"enabled": False}}},
    )
    assert on == TASKS


async def test_disabled_family_refuses_calls(tmp_path: Path) -> None:
    pb = isolated_pegboard(pegboard_tasks, cwd=tmp_path, env={"PEGBOARD_DATA_DIR": str(tmp_path)})
    refused = await pb.call("TodoWrite", {"todos": []})
    assert refused.is_error and refused.reason == "unavailable"


async def test_todowrite_replaces_the_whole_list(tmp_path: Path) -> None:
    env = {"PEGBOARD_DATA_DIR": str(tmp_path), "PEGBOARD_ENABLE_TASKS": "0"}
    events = Events()
    pb = isolated_pegboard(pegboard_tasks, events, cwd=tmp_path, env=env)
    async with pb.session(persist=False) as s:
        first = [
            {"content": "Run the tests", "status": "in_progress", "activeForm": "Running the tests"},
            {"content": "Fix the bug", "status": "pending", "activeForm": "Fixing the bug"},
        ]
        result = await s.call("TodoWrite", {"todos": first})
        assert not result.is_error and "1 in progress, 1 pending" in result.text
        second = [{"content": "Fix the bug", "status": "completed", "activeForm": "Fixing the bug"}]
        result = await s.call("TodoWrite", {"todos": second})
        assert result.structured is not None and result.structured["oldTodos"] == first
        assert pegboard_tasks.session_tasks(s)["todos"] == second
        assert [e.data["todos"] for e in events.seen] == [first, second]
        bad = await s.call("TodoWrite", {"todos": [{"content": "", "status": "doing", "activeForm": "x"}]})
        assert bad.is_error and "todos.0.status" in bad.text and "todos.0.content" in bad.text


def test_the_switch_names_the_task_tools_in_order() -> None:
    import pegboard_tasks_switch

    assert tuple(t.name for t in pegboard_tasks.TASK_TOOLS) == pegboard_tasks_switch.TASK_TOOL_NAMES
