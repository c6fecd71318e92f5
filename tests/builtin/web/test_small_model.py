"""The small-model hook: a test implementation, the OpenAI-compatible plugin on a local
chat-completions server, and WebFetch's prompt running through both."""

from __future__ import annotations

import json
from typing import Any

import pegboard_model_openai_compatible as openai_compat
import pegboard_web_fetch
from pegboard import CompletionRequest, Pegboard, ToolContext, hookimpl, request_completion
from pegboard.core.config import ConfigLayer
from pegboard.testing import isolated_pegboard
from tests.builtin.web.server import LocalServer, Reply, Seen
from tests.builtin.web.support import board, local

PAGE = b"<html><body><main><h1>Opening hours</h1><p>We open at 9 and close at 17.</p></main></body></html>"


class EchoModel:
    """Answers ``complete`` by saying what it was asked."""

    def __init__(self) -> None:
        self.requests: list[CompletionRequest] = []

    @hookimpl
    def complete(self, request: CompletionRequest, context: ToolContext) -> str:
        self.requests.append(request)
        return f"ANSWER to {request.prompt!r} over {len(request.text)} chars"


class Silent:
    @hookimpl
    def complete(self, request: CompletionRequest) -> None:
        return None


def chat_server(server: LocalServer, answer: str = "They close at 17.", status: int = 200) -> list[dict[str, Any]]:
    bodies: list[dict[str, Any]] = []

    def reply(seen: Seen) -> Reply:
        bodies.append({"json": json.loads(seen.body), "headers": seen.headers})
        if status != 200:
            return Reply(status, b'{"error": "overloaded"}', content_type="application/json")
        data = {"id": "c1", "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}}]}
        return Reply(body=json.dumps(data).encode(), content_type="application/json")

    server.route("/v1/chat/completions", reply)
    return bodies


def small_model(server: LocalServer, **extra: Any) -> dict[str, Any]:
    return {"models": {"small": {"base_url": server.url("/v1"), "model": "tiny-1", **extra}}}


async def test_request_completion_without_a_model_is_none() -> None:
    pb = isolated_pegboard()
    assert await request_completion(pb.context(), CompletionRequest("p", "t")) is None


async def test_first_answer_wins_and_is_cut_to_the_budget() -> None:
    echo = EchoModel()
    pb = isolated_pegboard(Silent(), echo)
    answer = await request_completion(pb.context(), CompletionRequest("Summarise", "x" * 50, purpose="summary",
                                                                      max_chars=12))
    assert answer == "ANSWER to 'S"
    assert echo.requests[0].purpose == "summary"


def test_webfetch_prompt_is_answered_by_the_model(server: LocalServer) -> None:
    server.route("/hours", Reply(body=PAGE))
    echo = EchoModel()
    result = board(echo).call_sync("WebFetch", {"url": server.url("/hours"), "prompt": "When do they close?"})
    assert result.text.startswith("ANSWER to 'When do they close?'") and result.metadata["model_answer"] is True
    request = echo.requests[0]
    assert request.purpose == "web_fetch" and "close at 17" in request.text


def test_webfetch_prompt_without_a_model_returns_the_page_and_says_so(server: LocalServer) -> None:
    server.route("/hours", Reply(body=PAGE))
    result = board().call_sync("WebFetch", {"url": server.url("/hours"), "prompt": "When do they close?"})
    assert "close at 17" in result.text and "The prompt was not run" in result.text
    assert result.metadata["model_answer"] is False


def test_openai_compatible_endpoint_answers(server: LocalServer) -> None:
    server.route("/hours", Reply(body=PAGE))
    bodies = chat_server(server)
    pb = board(openai_compat, config=small_model(server, api_key_env="SMALL_KEY"), env={"SMALL_KEY": "sk-test"})
    result = pb.call_sync("WebFetch", {"url": server.url("/hours"), "prompt": "When do they close?"})
    assert result.text == "They close at 17." and not result.is_error
    sent = bodies[0]
    assert sent["headers"]["authorization"] == "Bearer sk-test"
    assert sent["json"]["model"] == "tiny-1" and sent["json"]["temperature"] == 0
    user = sent["json"]["messages"][-1]["content"]
    assert "When do they close?" in user and "close at 17" in user


def test_a_failing_endpoint_falls_back_to_the_page(server: LocalServer) -> None:
    server.route("/hours", Reply(body=PAGE))
    chat_server(server, status=503)
    pb = board(openai_compat, config=small_model(server))
    result = pb.call_sync("WebFetch", {"url": server.url("/hours"), "prompt": "When?"})
    assert not result.is_error and "close at 17" in result.text
    assert "503" in result.metadata["model_error"] and "503" in result.text


def test_missing_key_variable_is_a_clear_model_error(server: LocalServer) -> None:
    server.route("/hours", Reply(body=PAGE))
    chat_server(server)
    pb = board(openai_compat, config=small_model(server, api_key_env="NOT_SET_HERE"))
    result = pb.call_sync("WebFetch", {"url": server.url("/hours"), "prompt": "When?"})
    assert "NOT_SET_HERE" in result.metadata["model_error"]


def test_unconfigured_plugin_passes() -> None:
    pb = isolated_pegboard(openai_compat)
    import asyncio

    assert asyncio.run(request_completion(pb.context(), CompletionRequest("p", "t"))) is None


def test_an_untrusted_project_cannot_point_the_model_elsewhere(server: LocalServer, tmp_path: Any) -> None:
    chat_server(server)
    project = ConfigLayer("project", small_model(server, api_key_env="HOME"), root=tmp_path, trusted=False)
    user = ConfigLayer("user", {"tools": {"web": {"fetch": local()}}})
    pb = Pegboard(plugins=[openai_compat, pegboard_web_fetch], load_entrypoints=False, layers=[user, project],
                  env={}, cwd=tmp_path)
    settings = pb.settings("models.small")
    assert settings.base_url is None and settings.api_key_env is None and settings.model is None
    notices = [w for w in pb.warnings if "models.small" in w]
    assert len(notices) == 3 and all("pegboard trust" in n for n in notices)
