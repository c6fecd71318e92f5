"""``pegboard serve`` as the host: questions and plans through elicitation, subagents and
messages through sampling, skills as prompts; each with the official client against the real server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from .conftest import PEGBOARD, http_serving, serve_env

TRANSPORTS = ["stdio", "http"]
QUESTIONS = [
    {
        "question": "Which database?",
        "header": "Database",
        "options": [{"label": "SQLite", "description": "A file"}, {"label": "Postgres", "description": "A server"}],
    },
    {
        "question": "Which features?",
        "header": "Features",
        "multiSelect": True,
        "options": [{"label": "Auth", "description": ""}, {"label": "Search", "description": ""}],
    },
]


def names(listed: types.ListToolsResult) -> set[str]:
    return {t.name for t in listed.tools}


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


def reason_of(result: types.CallToolResult) -> str | None:
    meta = result.meta or {}
    return (meta.get("pegboard") or {}).get("reason")


@asynccontextmanager
async def connect(
    transport: str, args: list[str], cwd: Path, env: dict[str, str] | None = None, **callbacks: Any
) -> AsyncIterator[Client]:
    """The official client against ``pegboard serve ARGS`` over ``transport``."""
    if transport == "stdio":
        params = StdioServerParameters(command=PEGBOARD, args=args, cwd=str(cwd), env=serve_env(env))
        async with Client(params, **callbacks) as client:
            yield client
    else:
        with http_serving(args, cwd, env=env) as server:
            async with Client(server.url, mode="legacy", **callbacks) as client:
                yield client


class Elicitations:
    """An elicitation callback that records each request and answers from a queue."""

    def __init__(self, *answers: types.ElicitResult) -> None:
        self.answers = list(answers)
        self.seen: list[Any] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        self.seen.append(params)
        return self.answers.pop(0)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_ask_user_question_is_an_elicitation_form(serve_args, workdir, transport):
    form = Elicitations(
        types.ElicitResult(action="accept", content={"q1": "Postgres", "q2": ["Auth"], "q2_other": "Billing"}),
        types.ElicitResult(action="decline"),
        types.ElicitResult(action="cancel"),
    )
    async with connect(transport, serve_args, workdir, elicitation_callback=form) as client:
        assert "AskUserQuestion" in names(await client.list_tools())
        answered = await client.call_tool("AskUserQuestion", {"questions": QUESTIONS})
        declined = await client.call_tool("AskUserQuestion", {"questions": QUESTIONS[:1]})
        cancelled = await client.call_tool("AskUserQuestion", {"questions": QUESTIONS[:1]})
    assert not answered.is_error, text_of(answered)
    assert answered.structured_content == {
        "answers": {"Which database?": "Postgres", "Which features?": ["Auth", "Billing"]},
        "timed_out": False,
    }
    schema = form.seen[0].requested_schema
    assert schema["properties"]["q1"]["enum"] == ["SQLite", "Postgres"]
    assert schema["properties"]["q2"]["type"] == "array" and schema["properties"]["q2"]["items"]["enum"] == [
        "Auth",
        "Search",
    ]
    assert "q1_other" in schema["properties"] and "A server" in schema["properties"]["q1"]["description"]
    assert "Which database?" in form.seen[0].message
    assert not declined.is_error and "declined to answer" in text_of(declined)
    assert declined.structured_content and declined.structured_content["outcome"] == "declined"
    assert "without answering" in text_of(cancelled)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_without_elicitation_questions_and_plans_are_unavailable_with_the_reason(
    serve_args, workdir, transport
):
    async with connect(transport, serve_args, workdir) as client:
        listed = names(await client.list_tools())
        refused = await client.call_tool("AskUserQuestion", {"questions": QUESTIONS[:1]})
        plan = await client.call_tool("ExitPlanMode", {"plan": "do it"})
    assert "AskUserQuestion" not in listed and "ExitPlanMode" not in listed and "EnterPlanMode" in listed
    assert refused.is_error and reason_of(refused) == "unavailable"
    assert "elicitation" in text_of(refused)
    assert plan.is_error and reason_of(plan) == "unavailable" and "elicitation" in text_of(plan)


async def test_the_question_timeout_still_applies_while_the_client_is_asked(serve_args, workdir):
    (workdir / "timeout.json").write_text(json.dumps({"askUserQuestionTimeout": "60s"}), encoding="utf-8")
    args = [*serve_args, "--config", str(workdir / "timeout.json"), "--plugin", "pegboard_mcp_hostclock"]
    asked = asyncio.Event()

    async def never_answers(context: Any, params: Any) -> types.ElicitResult:
        asked.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async with connect("stdio", args, workdir, elicitation_callback=never_answers) as client:
        result = await client.call_tool("AskUserQuestion", {"questions": QUESTIONS[:1]})
    assert asked.is_set()
    assert not result.is_error and "did not respond for 60 seconds" in text_of(result)
    assert result.structured_content == {"answers": {}, "timed_out": True}


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_plan_mode_is_approved_through_elicitation(serve_args, workdir, transport):
    form = Elicitations(
        types.ElicitResult(action="decline"),
        types.ElicitResult(action="accept", content={"approve": False, "feedback": "smaller steps"}),
        types.ElicitResult(action="accept", content={"approve": True, "mode": "acceptEdits", "feedback": "go"}),
    )
    async with connect(transport, serve_args, workdir, elicitation_callback=form) as client:
        entered = await client.call_tool("EnterPlanMode", {})
        declined = await client.call_tool("ExitPlanMode", {"plan": "1. read\n2. edit"})
        refused = await client.call_tool("ExitPlanMode", {"plan": "1. read\n2. edit"})
        approved = await client.call_tool("ExitPlanMode", {"plan": "1. read\n2. edit in small steps"})
        again = await client.call_tool("ExitPlanMode", {"plan": "x"})
    assert not entered.is_error, text_of(entered)
    assert declined.is_error and "did not approve" in text_of(declined)
    assert refused.is_error and "smaller steps" in text_of(refused)
    assert not approved.is_error and approved.structured_content
    assert approved.structured_content["mode"] == "acceptEdits" and "go" in text_of(approved)
    assert again.is_error and "not in plan mode" in text_of(again)
    assert "2. edit in small steps" in form.seen[2].message
    assert form.seen[0].requested_schema["properties"]["approve"]["type"] == "boolean"


def write_skill(root: Path, name: str, description: str, body: str, allowed: str = "") -> None:
    directory = root / name
    directory.mkdir(parents=True)
    front = f"---\nname: {name}\ndescription: {description}\n" + (f"allowed-tools: {allowed}\n" if allowed else "")
    (directory / "SKILL.md").write_text(f"{front}---\n{body}\n", encoding="utf-8")


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_skills_are_prompts_and_loading_one_grants_its_tools(serve_args, workdir, transport, tmp_path):
    config_dir = tmp_path / "user-config"
    write_skill(config_dir / "skills", "guard-echo", "Echo through the guarded tool", "Call Guarded.", "Guarded")
    write_skill(workdir / ".pegboard" / "skills", "proj", "A project skill", "Project steps.", "Guarded")
    env = {"PEGBOARD_CONFIG_DIR": str(config_dir)}
    async with connect(transport, serve_args, workdir, env=env) as client:
        assert client.server_capabilities is not None and client.server_capabilities.prompts is not None
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        before = await client.call_tool("Guarded", {"text": "x"})
        untrusted = await client.get_prompt("proj")
        still = await client.call_tool("Guarded", {"text": "x"})
        got = await client.get_prompt("guard-echo", {"args": "loudly"})
        after = await client.call_tool("Guarded", {"text": "x"})
        with pytest.raises(Exception, match="Unknown prompt"):
            await client.get_prompt("nope")
    assert set(prompts) == {"guard-echo", "proj"}
    assert prompts["guard-echo"].description == "Echo through the guarded tool"
    assert "untrusted" in (prompts["proj"].description or "")
    assert prompts["guard-echo"].arguments and prompts["guard-echo"].arguments[0].name == "args"
    text = got.messages[0].content
    assert isinstance(text, types.TextContent) and "Call Guarded." in text.text and "ARGUMENTS: loudly" in text.text
    assert before.is_error and still.is_error  # an untrusted skill grants nothing
    assert isinstance(untrusted.messages[0].content, types.TextContent)
    assert "not granted" in untrusted.messages[0].content.text
    assert not after.is_error and text_of(after) == "guarded ran with x"


async def test_a_skill_a_rule_denies_is_no_prompt(serve_args, workdir, tmp_path):
    config_dir = tmp_path / "user-config"
    write_skill(config_dir / "skills", "ok", "Fine", "Fine.")
    write_skill(config_dir / "skills", "banned", "Not here", "No.")
    (workdir / "deny.json").write_text(json.dumps({"permissions": {"deny": ["Skill(banned)"]}}), encoding="utf-8")
    args = [*serve_args, "--config", str(workdir / "deny.json")]
    async with connect("stdio", args, workdir, env={"PEGBOARD_CONFIG_DIR": str(config_dir)}) as client:
        listed = [p.name for p in (await client.list_prompts()).prompts]
        with pytest.raises(Exception, match=r"denied|deny"):
            await client.get_prompt("banned")
    assert listed == ["ok"]


class ScriptedModel:
    """A sampling callback playing the client's model: reads ``hello.txt`` with Read, then
    answers with what the tool returned; records every request."""

    def __init__(self) -> None:
        self.requests: list[types.CreateMessageRequestParams] = []

    async def __call__(self, context: Any, params: types.CreateMessageRequestParams) -> Any:
        self.requests.append(params)
        last = params.messages[-1]
        results = [b for b in last.content_as_list if isinstance(b, types.ToolResultContent)]
        if params.tools and not results:
            use = types.ToolUseContent(id="use-1", name="Read", input={"file_path": "hello.txt"})
            return types.CreateMessageResultWithTools(
                role="assistant", content=[use], model="scripted", stop_reason="toolUse"
            )
        seen = " ".join(b.text for r in results for b in r.content if isinstance(b, types.TextContent))
        prompt = " ".join(b.text for b in params.messages[0].content_as_list if isinstance(b, types.TextContent))
        reply = f"report: {'world' in seen} for {prompt[:40]}"
        return types.CreateMessageResultWithTools(
            role="assistant", content=[types.TextContent(type="text", text=reply)], model="scripted"
        )


SAMPLING_TOOLS = types.SamplingCapability(tools=types.SamplingToolsCapability())


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_agent_runs_a_sampling_loop_with_the_clients_model(serve_args, workdir, transport):
    model = ScriptedModel()
    async with connect(
        transport, serve_args, workdir, sampling_callback=model, sampling_capabilities=SAMPLING_TOOLS
    ) as client:
        assert {"Agent", "sessions_spawn"} <= names(await client.list_tools())
        result = await client.call_tool(
            "Agent", {"description": "look", "prompt": "Find what hello.txt says", "subagent_type": "general-purpose"}
        )
    assert not result.is_error, text_of(result)
    assert text_of(result) == "report: True for Find what hello.txt says"
    first = model.requests[0]
    offered = {t.name for t in first.tools or []}
    assert "Read" in offered and "Agent" not in offered  # the subagent's tool set, not the parent's
    assert len(model.requests) == 2


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_without_sampling_subagents_and_messages_are_unavailable_with_the_reason(
    serve_args, workdir, transport
):
    async with connect(transport, serve_args, workdir) as client:
        listed = names(await client.list_tools())
        refused = await client.call_tool("Agent", {"description": "x", "prompt": "y"})
        send = await client.call_tool("sessions_send", {"sessionKey": "main", "message": "hi"})
    assert not {"Agent", "sessions_spawn", "SendMessage", "sessions_send"} & listed
    assert {"sessions_list", "sessions_history"} <= listed
    assert refused.is_error and reason_of(refused) == "unavailable" and "sampling" in text_of(refused)
    assert send.is_error and reason_of(send) == "unavailable" and "sampling" in text_of(send)


async def test_the_turn_limit_bounds_the_sampling_loop(serve_args, workdir, tmp_path):
    (workdir / "agents.json").write_text(
        json.dumps({"subagents": {"looper": {"description": "loops", "maxTurns": 3}}}),
        encoding="utf-8",
    )
    calls = 0

    async def always_reads(context: Any, params: types.CreateMessageRequestParams) -> Any:
        nonlocal calls
        calls += 1
        use = types.ToolUseContent(id=f"u{calls}", name="Read", input={"file_path": "hello.txt"})
        return types.CreateMessageResultWithTools(role="assistant", content=[use], model="m", stop_reason="toolUse")

    args = [*serve_args, "--config", str(workdir / "agents.json")]
    async with connect(
        "stdio", args, workdir, sampling_callback=always_reads, sampling_capabilities=SAMPLING_TOOLS
    ) as client:
        result = await client.call_tool("Agent", {"description": "x", "prompt": "loop", "subagent_type": "looper"})
    assert not result.is_error, text_of(result)
    assert "turn limit" in text_of(result) and calls == 3


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_session_tools_work_through_serve(serve_args, workdir, transport):
    model = ScriptedModel()
    async with connect(
        transport, serve_args, workdir, sampling_callback=model, sampling_capabilities=SAMPLING_TOOLS
    ) as client:
        listed = await client.call_tool("sessions_list", {})
        history = await client.call_tool("sessions_history", {"sessionKey": "main"})
        sent = await client.call_tool("sessions_send", {"sessionKey": "main", "message": "what does hello say?"})
    assert not listed.is_error, text_of(listed)
    assert not history.is_error, text_of(history)
    assert not sent.is_error, text_of(sent)
    assert sent.structured_content and sent.structured_content["status"] == "ok"
    assert "report: True for Message from" in (sent.structured_content["reply"] or "")
    assert "not the user's approval" in json.dumps([m.model_dump() for m in model.requests[0].messages])


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_prompt_delivered_outside_any_request_reaches_the_clients_model(serve_args, workdir, transport):
    model = ScriptedModel()
    args = [*serve_args, "--plugin", "pegboard_mcp_schedule"]
    async with connect(
        transport, args, workdir, sampling_callback=model, sampling_capabilities=SAMPLING_TOOLS
    ) as client:
        assert text_of(await client.call_tool("PromptLater", {"text": "Check hello.txt"})) == "scheduled"
        reply = await client.call_tool("PromptReply", {})
    assert text_of(reply) == "report: True for Check hello.txt"


class SeeingModel:
    """A sampling callback playing a vision model: records each request, says what it saw."""

    def __init__(self) -> None:
        self.requests: list[types.CreateMessageRequestParams] = []

    async def __call__(self, context: Any, params: types.CreateMessageRequestParams) -> Any:
        self.requests.append(params)
        pictures = [b for m in params.messages for b in m.content_as_list if isinstance(b, types.ImageContent)]
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=f"saw {len(pictures)} picture(s)"),
            model="eyes")


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_image_is_answered_by_the_clients_model_with_image_content(serve_args, workdir, transport):
    import base64

    from tests.builtin.files import image_bytes

    (Path(workdir) / "dot.png").write_bytes(image_bytes(12, 12))
    model = SeeingModel()
    async with connect(transport, serve_args, workdir, sampling_callback=model,
                       sampling_capabilities=types.SamplingCapability()) as client:
        result = await client.call_tool("image", {"image": "dot.png", "prompt": "What is it?"})
    assert not result.is_error, text_of(result)
    assert text_of(result) == "saw 1 picture(s)"
    (picture,) = [b for m in model.requests[0].messages for b in m.content_as_list
                  if isinstance(b, types.ImageContent)]
    assert picture.mime_type == "image/png" and base64.b64decode(picture.data)[:4] == b"\x89PNG"
