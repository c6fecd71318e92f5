"""The hook contract: how each hook is called, wrappers refused, and what each stage may return."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest
from pydantic import ValidationError

from pegboard import (
    HookDecision,
    PostToolUseDecision,
    PreToolUseDecision,
    ToolResult,
    hookimpl,
    hookspecs,
)
from pegboard.core.hookrunner import HookError
from pegboard.testing import isolated_pegboard
from tests.kernel.toolkit import ALL_TOOLS, ToolsPlugin, plugin_with_hooks

#: the hooks where one answer wins; every other hook uses all answers
ONE_ANSWER_WINS = {
    "approve_plan",
    "ask_user",
    "complete",
    "deliver_message",
    "exec_backend",
    "request_approval",
    "run_subagent",
    "session_store",
}


def board(*hook_plugins: object) -> Any:
    return isolated_pegboard(ToolsPlugin(*ALL_TOOLS, name="tools"), *hook_plugins)


@pytest.mark.parametrize("name", sorted(hookspecs.__all__))
def test_each_hookspec_declares_how_it_is_called(name: str) -> None:
    pb = board()
    assert pb.hooks.firstresult(name) is (name in ONE_ANSWER_WINS)


async def test_first_wins_hook_stops_at_the_first_answer() -> None:
    calls: list[str] = []

    class First:
        @hookimpl
        def request_approval(self) -> bool:
            calls.append("first")
            return True

    class Second:
        @hookimpl
        def request_approval(self) -> bool:
            calls.append("second")
            return False

    result = await board(First(), Second()).call("Guarded", {"text": "x"})
    assert (result.text, calls) == ("ran x", ["first"])


async def test_a_call_site_cannot_call_a_hook_against_its_declaration() -> None:
    pb = board(plugin_with_hooks(request_approval=lambda: True, pre_tool_use=lambda: None))
    errors: list[HookError] = []
    with pytest.raises(TypeError, match="declared firstresult=True; call it with first"):
        await pb.hooks.all("request_approval", errors)
    with pytest.raises(TypeError, match="not declared firstresult=True"):
        await pb.hooks.first("pre_tool_use", errors)
    assert errors == []


class OldStyleWrapper:
    @hookimpl(hookwrapper=True)
    def pre_tool_use(self) -> Generator[None, None, None]:
        yield


class NewStyleWrapper:
    @hookimpl(wrapper=True)
    def post_tool_use(self) -> Generator[None, Any, Any]:
        return (yield)


@pytest.mark.parametrize(
    ("plugin", "hook", "flag"),
    [(OldStyleWrapper(), "pre_tool_use", "hookwrapper"), (NewStyleWrapper(), "post_tool_use", "wrapper")],
)
async def test_hook_wrappers_are_refused_at_registration(plugin: object, hook: str, flag: str) -> None:
    pb = board(plugin)
    info = next(p for p in pb.plugins if p.name == type(plugin).__name__)
    assert info.status == "failed"
    assert info.error is not None
    assert f"plugin {type(plugin).__name__!r} implements {hook} as a hook wrapper ({flag}=True)" in info.error
    assert not pb.hooks.has(hook)
    assert f"plugin {type(plugin).__name__} failed to load; see pegboard plugins" in pb.warnings
    result = await pb.call("Echo", {"text": "x"})
    assert (result.is_error, result.text) == (False, "x")


def test_a_pre_decision_cannot_carry_an_output_nor_a_post_decision_an_input() -> None:
    with pytest.raises(ValidationError, match="updated_output"):
        PreToolUseDecision(updated_output="x")  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="updated_input"):
        PostToolUseDecision(updated_input={"text": "x"})  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        PostToolUseDecision(decision="allow")  # type: ignore[arg-type]


async def test_pre_hook_output_is_reported_not_silently_dropped() -> None:
    pb = board(plugin_with_hooks(pre_tool_use=lambda: HookDecision(updated_output="never shown", reason="r")))
    result = await pb.call("Echo", {"text": "x"})
    assert result.text == "x"
    [error] = result.metadata["hook_errors"]
    assert error["hook"] == "pre_tool_use" and error["plugin"] == "HookPlugin"
    assert "updated_output ignored" in error["error"] and "PreToolUseDecision" in error["error"]


async def test_post_hook_input_is_reported_and_its_output_applied() -> None:
    answer = {"updated_input": {"text": "y"}, "updated_output": "replaced"}
    result = await board(plugin_with_hooks(post_tool_use=lambda: answer)).call("Echo", {"text": "x"})
    assert result.text == "replaced"
    [error] = result.metadata["hook_errors"]
    assert error["hook"] == "post_tool_use" and "updated_input ignored" in error["error"]


async def test_stage_decisions_work_in_their_own_stage() -> None:
    pre = plugin_with_hooks(pre_tool_use=lambda call: PreToolUseDecision(updated_input={"text": "pre"}))
    post = plugin_with_hooks(post_tool_use=lambda: PostToolUseDecision(updated_output="post", additional_context="c"))
    result = await board(pre).call("Echo", {"text": "x"})
    assert (result.text, result.metadata.get("hook_errors")) == ("pre", None)
    result = await board(post).call("Echo", {"text": "x"})
    assert (result.text, result.metadata["additional_context"]) == ("post", ["c"])


async def test_post_decision_deny_blocks_the_result() -> None:
    post = plugin_with_hooks(post_tool_use=lambda: PostToolUseDecision(decision="deny", reason="leaks"))
    result = await board(post).call("Echo", {"text": "x"})
    assert result.is_error and result.reason == "hook_blocked" and "leaks" in result.text


def test_tool_result_error_is_a_tool_error_with_its_kind() -> None:
    result = ToolResult.error("the disk is full", error_kind="write_failed", path="/tmp/x")
    assert (result.is_error, result.reason, result.text) == (True, "tool_error", "the disk is full")
    assert result.metadata == {"error_kind": "write_failed", "path": "/tmp/x"}
