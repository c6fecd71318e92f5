"""What the call path keeps between calls is worked out again when what it rests on changes.

A session reuses its last call's policy and context while the registry version, the tools'
availability, the selection, cwd, mode and extra directories stay the same; a rule engine
keeps the decision of a tool whose rules never read the input; the hook runner keeps which
hooks have implementations. Each test changes one of those inputs between two calls.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from pegboard import HookDecision, PermissionUpdate, Reason, Tool, ToolContext, active_when, event_kinds, hookimpl
from pegboard.testing import isolated_pegboard
from tests.kernel.toolkit import ALL_TOOLS, ToolsPlugin, plugin_with_hooks


class Empty(BaseModel):
    pass


class Said(BaseModel):
    text: str = ""


async def _where(input: Empty, ctx: ToolContext) -> str:
    dirs = ",".join(str(d) for d in ctx.additional_dirs)
    return f"{ctx.cwd}|{ctx.mode}|{dirs}|{ctx.agent}|{ctx.tool_use_id}|{ctx.tool}|{ctx.requested_name}"


async def _said(input: Said, ctx: ToolContext) -> str:
    return f"said {input.text}"


def where_tool() -> Tool:
    return Tool(name="Where", description="Report the call's context.", input_model=Empty, run=_where,
                aliases=("here",))


def asking_tool(name: str = "Ask") -> Tool:
    return Tool(name=name, description="A tool that asks by default.", input_model=Said, run=_said,
                requires_permission=True)


def board(*tools: Tool, config: dict[str, Any] | None = None, cwd: Path | None = None) -> Any:
    return isolated_pegboard(ToolsPlugin(*ALL_TOOLS, *tools, name="tools"), config=config, cwd=cwd)


async def test_a_tool_added_or_removed_between_calls_is_seen_by_the_next_call() -> None:
    pb = board()
    assert (await pb.call("Echo", {"text": "a"})).text == "a"
    assert (await pb.call("Where", {})).reason == Reason.UNKNOWN_TOOL
    pb.add_tool(where_tool(), owner="late")
    assert not (await pb.call("Where", {})).is_error
    pb.remove_tools("late")
    assert (await pb.call("Where", {})).reason == Reason.UNKNOWN_TOOL
    assert (await pb.call("Echo", {"text": "b"})).text == "b"


async def test_a_tool_that_becomes_unavailable_is_refused_and_comes_back() -> None:
    missing: list[str] = []
    tool = where_tool()
    tool.availability = lambda: missing[0] if missing else None
    pb = board(tool)
    assert not (await pb.call("Where", {})).is_error
    missing.append("the binary is gone")
    refused = await pb.call("Where", {})
    assert refused.reason == Reason.UNAVAILABLE and "the binary is gone" in refused.text
    missing.clear()
    assert not (await pb.call("Where", {})).is_error


async def test_each_call_gets_its_own_context(tmp_path: Path) -> None:
    pb = board(where_tool(), cwd=tmp_path)
    first = (await pb.call("here", {}, tool_use_id="t1")).text.split("|")
    second = (await pb.call("Where", {})).text.split("|")
    assert first[4:] == ["t1", "Where", "here"]
    assert second[4:] == ["None", "Where", "Where"]


async def test_cwd_mode_and_directories_of_a_session_reach_the_next_call(tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    pb = board(where_tool(), cwd=tmp_path)
    async with pb.session() as s:
        assert (await s.call("Where", {})).text.split("|")[:3] == [str(tmp_path), "default", ""]
        s.cwd = other
        s.mode = "acceptEdits"
        assert (await s.call("Where", {})).text.split("|")[:3] == [str(other), "acceptEdits", ""]
    async with pb.session(additional_dirs=[other]) as s:
        assert (await s.call("Where", {})).text.split("|")[2] == str(other)
    assert (await pb.call("Where", {}, cwd=other)).text.split("|")[0] == str(other)
    assert (await pb.call("Where", {})).text.split("|")[0] == str(tmp_path)


async def test_a_changed_selection_changes_the_tool_set_of_the_next_call() -> None:
    config = {"agents": {"list": [{"id": "reader", "tools": {"deny": ["Where"]}}]}}
    pb = board(where_tool(), config=config)
    async with pb.session() as s:
        assert not (await s.call("Where", {})).is_error
        s.select(agent="reader")
        assert (await s.call("Where", {})).reason == Reason.DENIED
        s.select(agent=None)
        assert not (await s.call("Where", {})).is_error
    assert (await pb.call("Where", {}, agent="reader")).reason == Reason.DENIED
    assert not (await pb.call("Where", {})).is_error


async def test_a_mode_change_changes_the_decision_of_the_next_call() -> None:
    pb = board(asking_tool())
    async with pb.session() as s:
        assert (await s.call("Ask", {"text": "x"})).reason == Reason.NOT_APPROVED
        s.mode = "bypassPermissions"
        assert (await s.call("Ask", {"text": "x"})).text == "said x"
        s.mode = "dontAsk"
        assert (await s.call("Ask", {"text": "x"})).reason == Reason.DENIED
        s.mode = "default"
        assert (await s.call("Ask", {"text": "x"})).reason == Reason.NOT_APPROVED


async def test_rules_remembered_in_a_session_apply_from_its_next_call() -> None:
    answers = [PermissionUpdate(rules=["Ask"]), PermissionUpdate(rules=["Ask(text:y*)"], behavior="deny")]
    asked: list[str] = []

    def approver(call: Any, decision: Any) -> Any:
        asked.append(call.input["text"])
        return answers.pop(0) if answers else False

    pb = board(asking_tool())
    async with pb.session(approver=approver) as s:
        assert (await s.call("Ask", {"text": "x"})).text == "said x"
        assert (await s.call("Ask", {"text": "y"})).text == "said y"
        assert asked == ["x"]
    async with pb.session(approver=approver) as s:
        assert (await s.call("Ask", {"text": "x"})).text == "said x"
        assert (await s.call("Ask", {"text": "y"})).reason == Reason.DENIED
        assert (await s.call("Ask", {"text": "x"})).reason == Reason.NOT_APPROVED
        assert asked == ["x", "x", "x"]


async def test_a_tool_changed_in_place_is_decided_again() -> None:
    tool = asking_tool()
    pb = board(tool)
    assert (await pb.call("Ask", {"text": "x"})).reason == Reason.NOT_APPROVED
    tool.requires_permission = False
    assert (await pb.call("Ask", {"text": "x"})).text == "said x"
    assert pb.check("Ask", {"text": "x"}).decision == "allow"
    tool.requires_permission = True
    assert pb.check("Ask", {"text": "x"}).decision == "ask"


async def test_a_rule_on_an_input_field_is_checked_on_every_call() -> None:
    pb = board(asking_tool(), config={"permissions": {"allow": ["Ask"], "deny": ["Ask(text:bad*)"]}})
    for text, reason in (("fine", None), ("bad one", Reason.DENIED), ("fine", None), ("bad", Reason.DENIED)):
        assert (await pb.call("Ask", {"text": text})).reason == reason


async def test_a_specifier_matcher_is_asked_on_every_call() -> None:
    seen: list[str] = []

    def matcher(spec: str, data: Any) -> bool:
        seen.append(data.get("text", ""))
        return str(data.get("text", "")).startswith(spec)

    tool = asking_tool("Custom")
    tool.specifier_matcher = matcher
    pb = board(tool, config={"permissions": {"allow": ["Custom(ok)"]}})
    assert (await pb.call("Custom", {"text": "ok go"})).text == "said ok go"
    assert (await pb.call("Custom", {"text": "no"})).reason == Reason.NOT_APPROVED
    assert (await pb.call("Custom", {"text": "ok again"})).text == "said ok again"
    assert seen == ["ok go", "no", "ok again"]


async def test_a_plugin_registered_between_calls_has_its_hooks_run() -> None:
    pb = board()
    assert (await pb.call("Echo", {"text": "a"})).text == "a"
    rewrite = plugin_with_hooks(
        pre_tool_use=lambda call: HookDecision(updated_input={**call.input, "text": call.input["text"] + "!"})
    )
    pb._pm.register(rewrite, name="late-hooks")
    assert (await pb.call("Echo", {"text": "a"})).text == "a!"
    pb._pm.unregister(name="late-hooks")
    assert (await pb.call("Echo", {"text": "a"})).text == "a"


async def test_an_event_reader_that_starts_between_calls_sees_the_next_call() -> None:
    pb = board()
    async with pb.session() as s:
        await s.call("Echo", {"text": "quiet"})
        events = s.events()
        first = asyncio.ensure_future(events.__anext__())
        await asyncio.sleep(0)  # the reader starts listening
        assert s.has_listeners()
        await s.call("Echo", {"text": "heard"}, tool_use_id="t2")
        started = await asyncio.wait_for(first, 5)
        finished = await asyncio.wait_for(events.__anext__(), 5)
        assert (started.kind, started.tool_use_id, started.data) == ("call_started", "t2", {"name": "Echo"})
        assert finished.kind == "call_finished" and finished.data["is_error"] is False
        await events.aclose()


class OnEvent:
    def __init__(self) -> None:
        self.kinds: list[str] = []

    @hookimpl
    def on_event(self, event: Any) -> None:
        self.kinds.append(event.kind)


async def test_an_on_event_plugin_registered_between_calls_hears_the_next_call() -> None:
    pb = board()
    await pb.call("Echo", {"text": "quiet"})
    listener = OnEvent()
    pb._pm.register(listener, name="listener")
    await pb.call("Echo", {"text": "heard"})
    assert listener.kinds == ["call_started", "call_finished"]


class ProgressOnly:
    def __init__(self) -> None:
        self.kinds: list[str] = []

    @hookimpl
    @event_kinds("progress", "tool_note")
    def on_event(self, event: Any) -> None:
        self.kinds.append(event.kind)


async def test_an_on_event_plugin_that_names_kinds_hears_only_those() -> None:
    async def noting(input: Said, ctx: ToolContext) -> str:
        ctx.emit("tool_note", {"n": 1})
        ctx.emit("other", {"n": 2})
        return "noted"

    pb = board(Tool(name="Note", description="Emit two events.", input_model=Said, run=noting))
    narrow, wide = ProgressOnly(), OnEvent()
    pb._pm.register(narrow, name="narrow")
    async with pb.session() as session:
        await session.call("Note", {})
        assert narrow.kinds == ["tool_note"]
        assert not session.has_listeners("call_started") and session.has_listeners("progress")
        pb._pm.register(wide, name="wide")
        assert session.has_listeners("call_started")
        await session.call("Note", {})
    assert narrow.kinds == ["tool_note", "tool_note"]
    assert wide.kinds == ["call_started", "tool_note", "other", "call_finished"]


def test_event_kinds_needs_kind_names() -> None:
    for bad in ((), ("",), (3,)):
        with pytest.raises(ValueError, match="event kind"):
            event_kinds(*bad)


async def test_an_implementation_marked_active_when_runs_only_where_its_predicate_holds() -> None:
    class Off:
        calls = 0

        @hookimpl
        @active_when(lambda pegboard: "audit" in pegboard.config.model_extra)
        def pre_tool_use(self, call: Any) -> None:
            type(self).calls += 1

    quiet = board()
    quiet._pm.register(Off(), name="off")
    assert not quiet.hooks.has("pre_tool_use")
    await quiet.call("Echo", {"text": "a"})
    assert Off.calls == 0
    loud = board(config={"audit": {"on": True}})
    loud._pm.register(Off(), name="off")
    assert loud.hooks.has("pre_tool_use")
    await loud.call("Echo", {"text": "b"})
    assert Off.calls == 1


async def test_a_predicate_that_raises_keeps_the_implementation() -> None:
    pb = board()
    plugin = Broken()
    pb._pm.register(plugin, name="broken")
    await pb.call("Echo", {"text": "a"})
    assert plugin.calls == 1


class Broken:
    def __init__(self) -> None:
        self.calls = 0

    @hookimpl
    @active_when(lambda pegboard: 1 / 0 > 0)
    def pre_tool_use(self, call: Any) -> None:
        self.calls += 1


def test_active_when_needs_a_function() -> None:
    with pytest.raises(TypeError, match="function"):
        active_when("yes")  # type: ignore[arg-type]


def test_command_hooks_cost_nothing_where_no_handler_is_set(tmp_path: Path) -> None:
    import pegboard_command_hooks

    quiet = isolated_pegboard(pegboard_command_hooks, cwd=tmp_path)
    assert not quiet.hooks.has("pre_tool_use") and not quiet.hooks.has("post_tool_use")
    handler = {"matcher": "*", "hooks": [{"type": "command", "command": "true"}]}
    loud = isolated_pegboard(pegboard_command_hooks, cwd=tmp_path, config={"hooks": {"PreToolUse": [handler]}})
    assert loud.hooks.has("pre_tool_use") and not loud.hooks.has("post_tool_use")
