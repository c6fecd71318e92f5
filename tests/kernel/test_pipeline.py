"""The call pipeline: every refusal is a result with a stable reason; hooks run in order."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pegboard import HookDecision, PermissionDecision, Reason, ToolResult
from pegboard.testing import isolated_pegboard
from tests.kernel.toolkit import ALL_TOOLS, ToolsPlugin, plugin_with_hooks


def board(*hook_plugins: object, config: dict[str, Any] | None = None) -> Any:
    return isolated_pegboard(ToolsPlugin(*ALL_TOOLS, name="tools"), *hook_plugins, config=config)


async def test_happy_path_through_alias_and_case() -> None:
    result = await board().call("SAY", {"text": "hi", "times": 2})
    assert (result.is_error, result.text, result.reason) == (False, "hi hi", None)


async def test_unknown_tool_lists_the_available_ones() -> None:
    result = await board().call("Nope", {})
    assert result.is_error and result.reason == Reason.UNKNOWN_TOOL
    assert "Unknown tool 'Nope'" in result.text and "Echo" in result.text


async def test_invalid_input_names_each_field() -> None:
    result = await board().call("Echo", {"text": 5, "times": 99})
    assert result.reason == Reason.INVALID_INPUT
    assert "- text:" in result.text and "- times:" in result.text and "Expected fields: text, times?" in result.text


@pytest.mark.parametrize("raw", ["{broken", "[1, 2]", "42", b"\xff\xfe", 3.5])
async def test_malformed_input_is_a_result(raw: Any) -> None:
    result = await board().call("Echo", raw)
    assert result.is_error and result.reason == Reason.INVALID_INPUT


async def test_tool_exception_becomes_error_and_fires_failure_hook() -> None:
    seen: list[str] = []

    def post_tool_use_failure(call: Any, error: BaseException) -> HookDecision:
        seen.append(f"{call.name}: {error}")
        return HookDecision(additional_context="look at the logs")

    result = await board(plugin_with_hooks(post_tool_use_failure=post_tool_use_failure)).call("Boom", {})
    assert result.reason == Reason.TOOL_ERROR and "RuntimeError: kaboom" in result.text
    assert seen == ["Boom: kaboom"]
    assert result.metadata["additional_context"] == ["look at the logs"]


async def test_timeout_cancels_the_tool() -> None:
    result = await board().call("Sleep", {"seconds": 5})
    assert result.reason == Reason.TIMEOUT and "0.2 s" in result.text


async def test_pre_tool_use_deny_blocks_and_names_the_plugin() -> None:
    def pre_tool_use(call: Any) -> HookDecision | None:
        return HookDecision(decision="deny", reason="not today") if call.name == "Echo" else None

    result = await board(plugin_with_hooks(pre_tool_use=pre_tool_use)).call("Echo", {"text": "x"})
    assert result.reason == Reason.HOOK_BLOCKED and "not today" in result.text and "HookPlugin" in result.text


async def test_async_hooks_rewrite_input_in_registration_order_and_revalidate() -> None:
    async def first(call: Any) -> HookDecision:
        return HookDecision(updated_input={**call.input, "text": call.input["text"] + "-a"})

    def second(call: Any) -> HookDecision:
        return HookDecision(updated_input={**call.input, "text": call.input["text"] + "-b"})

    pb = board(plugin_with_hooks(pre_tool_use=first), plugin_with_hooks(pre_tool_use=second))
    assert (await pb.call("Echo", {"text": "x"})).text == "x-a-b"

    bad = plugin_with_hooks(pre_tool_use=lambda call: HookDecision(updated_input={"text": 1}))
    result = await board(bad).call("Echo", {"text": "x"})
    assert result.reason == Reason.INVALID_INPUT and "rewrote the input" in result.text


async def test_hook_that_raises_is_reported_not_fatal() -> None:
    def pre_tool_use(call: Any) -> None:
        raise KeyError("oops")

    result = await board(plugin_with_hooks(pre_tool_use=pre_tool_use)).call("Echo", {"text": "x"})
    assert result.text == "x"
    assert result.metadata["hook_errors"][0]["hook"] == "pre_tool_use"


async def test_needs_permission_without_approver_is_refused_with_a_fix() -> None:
    result = await board().call("Guarded", {"text": "x"})
    assert result.reason == Reason.NOT_APPROVED
    assert "no approver" in result.text and "permissions.allow" in result.text


async def test_request_approval_and_caller_approver() -> None:
    yes = plugin_with_hooks(request_approval=lambda call, decision: True)
    assert (await board(yes).call("Guarded", {"text": "x"})).text == "ran x"
    no = plugin_with_hooks(request_approval=lambda call, decision: False)
    assert (await board(no).call("Guarded", {"text": "x"})).reason == Reason.NOT_APPROVED

    async def approver(call: Any, decision: Any) -> bool:
        return True

    assert (await board().call("Guarded", {"text": "x"}, approver=approver)).text == "ran x"


async def test_permission_request_hook_settles_an_ask() -> None:
    seen: list[str] = []

    def permission_request(call: Any, decision: PermissionDecision) -> HookDecision:
        seen.append(decision.decision)
        return HookDecision(decision="allow")

    result = await board(plugin_with_hooks(permission_request=permission_request)).call("Guarded", {"text": "x"})
    assert result.text == "ran x" and seen == ["ask"]


async def test_check_permission_can_tighten_but_not_loosen() -> None:
    deny = plugin_with_hooks(check_permission=lambda call: PermissionDecision(decision="deny", reason="nope"))
    result = await board(deny).call("Echo", {"text": "x"})
    assert result.reason == Reason.DENIED and "nope" in result.text
    allow = plugin_with_hooks(check_permission=lambda call: PermissionDecision(decision="allow"))
    assert (await board(allow).call("Guarded", {"text": "x"})).reason == Reason.NOT_APPROVED


async def test_hook_allow_does_not_override_a_deny_rule() -> None:
    allow = plugin_with_hooks(pre_tool_use=lambda call: HookDecision(decision="allow"))
    result = await board(allow, config={"permissions": {"deny": ["Echo"]}}).call("Echo", {"text": "x"})
    assert result.reason == Reason.DENIED


async def test_post_tool_use_replaces_and_blocks() -> None:
    replace = plugin_with_hooks(post_tool_use=lambda call, result: ToolResult.from_text(result.text.upper()))
    assert (await board(replace).call("Echo", {"text": "x"})).text == "X"
    block = plugin_with_hooks(post_tool_use=lambda call: HookDecision(decision="deny", reason="leaks secrets"))
    result = await board(block).call("Echo", {"text": "x"})
    assert result.is_error and result.reason == Reason.HOOK_BLOCKED and "leaks secrets" in result.text


async def test_image_and_structured_results_pass_through() -> None:
    result = await board().call("Picture", {})
    assert result.content[0].type == "image" and result.structured == {"w": 1}


async def test_long_results_are_cut_on_a_character_boundary_and_kept() -> None:
    pb = board()
    result = await pb.call("Big", {"size": 500})
    assert result.metadata["truncated"] is True
    assert result.content[0].text == "é" * 100
    ref = result.metadata["full_result_ref"]
    assert ref in result.text and "narrow the request" in result.text, "no reader tool is registered here"
    stored = pb.session(session_id="default", persist=False).results.get(ref)
    assert stored is not None and stored.text[100:1100] == "é" * 400


async def test_credentials_are_redacted() -> None:
    secret = "sk-ant-" + "a" * 30
    result = await board().call("Echo", {"text": f"key={secret}"})
    assert secret not in result.text and "[REDACTED]" in result.text


async def test_session_events_fire() -> None:
    def session_start(session_id: str, source: str) -> HookDecision:
        return HookDecision(additional_context=f"{session_id}/{source}")

    ended: list[str] = []
    pb = board(
        plugin_with_hooks(session_start=session_start, session_end=lambda session_id, reason: ended.append(reason))
    )
    answers = await pb.fire("session_start", session_id="s1", source="startup")
    assert [a.additional_context for a in answers] == ["s1/startup"]
    await pb.fire("session_end", session_id="s1", reason="exit")
    assert ended == ["exit"]
    with pytest.raises(ValueError, match="unknown event"):
        await pb.fire("nope")


async def test_concurrent_calls_are_independent() -> None:
    pb = board()
    results = await asyncio.gather(*(pb.call("Echo", {"text": str(i)}) for i in range(50)))
    assert [r.text for r in results] == [str(i) for i in range(50)]


def test_call_sync_works_inside_a_running_loop() -> None:
    async def inner() -> str:
        return board().call_sync("Echo", {"text": "sync"}).text

    assert asyncio.run(inner()) == "sync"


@settings(max_examples=60, deadline=None)
@given(
    name=st.one_of(st.text(max_size=80), st.none(), st.integers()),
    raw=st.one_of(
        st.none(), st.text(max_size=200), st.dictionaries(st.text(max_size=10), st.integers()), st.lists(st.integers())
    ),
)
def test_nothing_a_caller_sends_raises(name: Any, raw: Any) -> None:
    result = board().call_sync(name, raw)
    assert isinstance(result, ToolResult)
    if result.is_error:  # a refusal says why: a reason code and a text naming the problem
        assert result.reason and result.text.strip()


async def test_invalid_updated_output_is_reported_and_the_result_kept() -> None:
    bad = plugin_with_hooks(post_tool_use=lambda call: HookDecision(updated_output=[1, 2]))
    result = await board(bad).call("Echo", {"text": "kept"})
    assert result.text == "kept" and not result.is_error
    assert "invalid updated_output" in result.metadata["hook_errors"][0]["error"]


async def test_session_hooks_see_the_session_id_in_their_context() -> None:
    seen: list[str | None] = []
    pb = board(plugin_with_hooks(session_start=lambda context: seen.append(context.session_id)))
    await pb.fire("session_start", session_id="s-42", source="startup")
    assert seen == ["s-42"]


async def test_null_for_an_optional_field_means_not_given() -> None:
    result = await board().call("Echo", {"text": "x", "times": None})
    assert (result.is_error, result.text) == (False, "x")
    assert (await board().call("Echo", {"text": None})).reason == Reason.INVALID_INPUT


async def test_a_disabled_tool_that_is_unavailable_says_unavailable() -> None:
    from pegboard import Tool
    from tests.kernel.toolkit import EchoInput

    async def run(input: EchoInput, ctx: object) -> str:
        return input.text

    gone = Tool("Gone", "A tool whose server is down.", EchoInput, run, availability=lambda: "server 'x' is down")
    result = await isolated_pegboard(ToolsPlugin(gone)).call("Gone", {"text": "x"})
    assert result.reason == Reason.UNAVAILABLE and "server 'x' is down" in result.text


async def test_deny_rules_also_judge_the_input_before_a_rewrite() -> None:
    from tests.kernel.test_subagent_call_rules import bash

    launder = plugin_with_hooks(pre_tool_use=lambda call: HookDecision(updated_input={"command": "echo fine"}))
    config = {"permissions": {"deny": ["Bash(rm *)"], "allow": ["Bash"]}}
    pb = isolated_pegboard(ToolsPlugin(bash), launder, config=config)
    refused = await pb.call("Bash", {"command": "rm -rf /"})
    assert refused.reason == Reason.DENIED and "before a hook rewrote it" in refused.text
    assert (await pb.call("Bash", {"command": "ls"})).text == "ran: echo fine"


async def test_hook_allow_cannot_approve_what_only_a_person_may() -> None:
    from tests.kernel.test_subagent_call_rules import bash

    allow_all = plugin_with_hooks(
        pre_tool_use=lambda call: HookDecision(decision="allow"),
        permission_request=lambda call: HookDecision(decision="allow"),
    )
    pb = isolated_pegboard(ToolsPlugin(bash), allow_all)
    critical = await pb.call("Bash", {"command": "rm -rf /"})
    assert critical.reason == Reason.NOT_APPROVED, critical.text
    assert any("cannot approve" in n for n in critical.metadata["hook_notices"])
    assert (await pb.call("Bash", {"command": "touch notes.txt"})).text == "ran: touch notes.txt"
    yes = await pb.call("Bash", {"command": "rm -rf /"}, approver=lambda call, decision: True)
    assert yes.text == "ran: rm -rf /", "a person (the approver) still can"


async def test_a_session_hook_that_raises_is_reported_as_a_notice() -> None:
    def session_end(session_id: str) -> None:
        raise RuntimeError("cleanup failed")

    answers = await board(plugin_with_hooks(session_end=session_end)).fire("session_end", session_id="s", reason="exit")
    assert [a.notices for a in answers] == [("session_end hook of HookPlugin failed: RuntimeError: cleanup failed",)]


async def test_call_and_session_share_their_options_and_refuse_unknown_ones() -> None:
    pb = board()
    result = await pb.call("Echo", {"text": "hi"}, agent=None, provider="openai", mode="default", additional_dirs=())
    assert result.text == "hi"
    async with pb.session(provider="openai", mode="default", persist=False) as session:
        assert session.selection.provider == "openai"
    with pytest.raises(TypeError, match="'providr'"):
        await pb.call("Echo", {"text": "hi"}, providr="openai")
    with pytest.raises(TypeError, match="'providr'"):
        pb.session(providr="openai")


async def test_a_tool_that_becomes_available_can_be_called_and_listed() -> None:
    from pegboard import Tool
    from tests.kernel.toolkit import EchoInput

    async def run(input: EchoInput, ctx: object) -> str:
        return input.text

    down: dict[str, str | None] = {"Late": "not installed", "Other": "not installed"}
    late = Tool("Late", "Installed later.", EchoInput, run, availability=lambda: down["Late"])
    other = Tool("Other", "Installed later too.", EchoInput, run, availability=lambda: down["Other"])
    pb = isolated_pegboard(ToolsPlugin(late, other))
    assert (await pb.call("Late", {"text": "x"})).reason == Reason.UNAVAILABLE
    down["Late"] = down["Other"] = None
    assert (await pb.call("Late", {"text": "x"})).text == "x"
    assert "Other" in pb.tools().enabled
    assert (await pb.call("Other", {"text": "y"})).text == "y"
    down["Late"] = "uninstalled again"
    refused = await pb.call("Late", {"text": "x"})
    assert refused.reason == Reason.UNAVAILABLE and "uninstalled again" in refused.text
    assert "Late" not in pb.tools().enabled
