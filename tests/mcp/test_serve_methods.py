"""Both transports answer methods alike: what ``initialize`` declares works, the rest is -32601."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .conftest import RawHttpSession, RawStdioSession, http_serving

UNDECLARED: list[tuple[str, dict[str, Any] | None]] = [
    ("resources/list", {}),
    ("resources/templates/list", {}),
    ("resources/read", {"uri": "file:///etc/hosts"}),
    ("completion/complete", {"ref": {"type": "ref/prompt", "name": "x"}, "argument": {"name": "a", "value": ""}}),
    ("no/such/method", None),
]


DECLARED: list[tuple[str, dict[str, Any] | None]] = [
    ("logging/setLevel", {"level": "info"}),
    ("prompts/list", {}),
    ("prompts/get", {"name": "x"}),
]


def summary(answers: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """What must be the same on both transports: error code and data, or the result."""
    out: dict[str, Any] = {}
    for method, answer in answers.items():
        if "error" in answer:
            out[method] = ("error", answer["error"]["code"], answer["error"].get("data"))
        else:
            out[method] = ("result", answer["result"])
    return out


async def stdio_answers(args: list[str], cwd: Path) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    session = await RawStdioSession.start(args, cwd)
    try:
        answers = {m: await session.request(m, p) for m, p in [*UNDECLARED, ("ping", None), *DECLARED]}
    finally:
        assert await session.close() == 0
    return session.initialize_result, answers


def http_answers(args: list[str], cwd: Path) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    with http_serving(args, cwd, host="127.0.0.2") as server:
        session = RawHttpSession(server.url)
        try:
            answers = {m: session.request(m, p) for m, p in [*UNDECLARED, ("ping", None), *DECLARED]}
        finally:
            session.close()
    return session.initialize_result, answers


async def test_undeclared_methods_are_method_not_found_on_both_transports(serve_args: list[str], workdir: Path) -> None:
    both = {"stdio": await stdio_answers(serve_args, workdir), "http": http_answers(serve_args, workdir)}
    for transport, (init, answers) in both.items():
        assert set(init["capabilities"]) == {"tools", "prompts", "logging"}, transport  # nothing else is declared...
        for method, _params in UNDECLARED:  # ...so nothing else is answered
            error = answers[method]["error"]
            assert error["code"] == -32601 and error["data"] == method, (transport, method, error)
        assert answers["ping"]["result"] == {}
        assert answers["logging/setLevel"]["result"] == {}, (transport, answers["logging/setLevel"])
        assert answers["prompts/list"]["result"] == {"prompts": []}, (transport, answers["prompts/list"])
        assert answers["prompts/get"]["error"]["code"] == -32602, (transport, answers["prompts/get"])
        assert "Unknown prompt 'x'" in answers["prompts/get"]["error"]["message"]
        assert init["capabilities"]["prompts"] == {"listChanged": False}, transport
    assert summary(both["stdio"][1]) == summary(both["http"][1])
