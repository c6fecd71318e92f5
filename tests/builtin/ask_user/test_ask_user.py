"""AskUserQuestion: validation, the ask_user host hook, the idle timeout, the terminal prompt."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pegboard_ask_user as ask
from pegboard import Pegboard, QuestionRequest, hookimpl
from pegboard.testing import check_tool, isolated_pegboard

QUESTION: dict[str, Any] = {
    "question": "Which database should we use?",
    "header": "Database",
    "options": [
        {"label": "SQLite", "description": "A file, no server"},
        {"label": "Postgres", "description": "A server"},
    ],
}
MULTI: dict[str, Any] = {**QUESTION, "question": "Which features?", "header": "Features", "multiSelect": True}


class FakeClock:
    """Time advances only when someone sleeps, so idle timeouts pass in microseconds."""

    def __init__(self) -> None:
        self.t = 1000.0

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(0)
        self.t += seconds


class Host:
    def __init__(
        self, answers: dict[str, Any] | None = None, *, hang: bool = False, partial: dict[str, Any] | None = None
    ) -> None:
        self.answers = answers
        self.hang = hang
        self.partial = partial or {}
        self.seen: list[QuestionRequest] = []

    @hookimpl
    async def ask_user(self, request: QuestionRequest) -> dict[str, Any] | None:
        self.seen.append(request)
        request.partial.update(self.partial)
        if self.hang:
            await asyncio.Event().wait()
        return self.answers


def board(tmp_path: Path, *plugins: object, config: dict[str, Any] | None = None) -> Pegboard:
    return isolated_pegboard(ask, *plugins, cwd=tmp_path, config=config, env={"PEGBOARD_DATA_DIR": str(tmp_path / "d")})


def test_conforms() -> None:
    check_tool(ask.ask_user_question, {"questions": [QUESTION]})


async def test_host_answers_single_and_multi(tmp_path: Path) -> None:
    host = Host({QUESTION["question"]: "SQLite", MULTI["question"]: ["SQLite", "my own"], "unasked": "x"})
    pb = board(tmp_path, host)
    async with pb.session(persist=False) as s:
        result = await s.call("AskUserQuestion", {"questions": [QUESTION, MULTI]})
    assert not result.is_error, result.text
    assert result.structured == {
        "answers": {QUESTION["question"]: "SQLite", MULTI["question"]: ["SQLite", "my own"]},
        "timed_out": False,
    }
    assert '"Which database should we use?"="SQLite"' in result.text
    request = host.seen[0]
    assert request.timeout is None and request.questions[1].multi_select
    assert request.questions[0].options[0].description == "A file, no server"


async def test_invalid_input_names_the_field(tmp_path: Path) -> None:
    pb = board(tmp_path, Host({}))
    bad = {**QUESTION, "options": [{"label": "only one"}]}
    async with pb.session(persist=False) as s:
        one = await s.call("AskUserQuestion", {"questions": [bad]})
        five = await s.call("AskUserQuestion", {"questions": [QUESTION] * 5})
        dup = await s.call("AskUserQuestion", {"questions": [QUESTION, QUESTION]})
    assert one.is_error and "options" in one.text
    assert five.is_error and "questions" in five.text
    assert dup.is_error and "unique" in dup.text


async def test_without_a_host_it_is_unavailable(tmp_path: Path) -> None:
    pb = board(tmp_path)
    disabled = {d.name: d.reason for d in pb.tools().disabled}
    assert "ask_user" in disabled["AskUserQuestion"]
    assert "AskUserQuestion" in board(tmp_path, Host({})).tools().enabled


async def test_idle_timeout_continues_with_what_was_chosen(tmp_path: Path) -> None:
    host = Host(hang=True, partial={QUESTION["question"]: "Postgres"})
    pb = board(tmp_path, host, config={"askUserQuestionTimeout": "5m"})
    pb.stash[ask.CLOCK] = FakeClock()
    async with pb.session(persist=False) as s:
        result = await asyncio.wait_for(s.call("AskUserQuestion", {"questions": [QUESTION]}), 5)
    assert not result.is_error
    assert result.structured == {"answers": {QUESTION["question"]: "Postgres"}, "timed_out": True}
    assert "300 seconds" in result.text and "away" in result.text
    assert host.seen[0].timeout == 300.0


async def test_activity_pushes_the_deadline_back() -> None:
    clock = FakeClock()
    request = QuestionRequest(questions=(), timeout=60.0, clock=clock)
    request.touch()

    async def typing_user() -> dict[str, Any]:
        for _ in range(5):
            await asyncio.sleep(0)
            clock.t += 50
            request.touch()
        return {"q": "done"}

    answer = asyncio.ensure_future(typing_user())
    assert await ask.wait_for_answers(answer, request) == {"q": "done"}


async def test_bad_timeout_setting_is_a_clear_error(tmp_path: Path) -> None:
    pb = board(tmp_path, Host({}), config={"askUserQuestionTimeout": "7 hours"})
    async with pb.session(persist=False) as s:
        result = await s.call("AskUserQuestion", {"questions": [QUESTION]})
    assert result.is_error and result.metadata["error_kind"] == "bad_setting"


@given(st.one_of(st.none(), st.sampled_from(["60s", "5m", "10m", "off", "0", " 5M "]), st.text(max_size=8)))
def test_parse_timeout_accepts_only_the_documented_values(value: str | None) -> None:
    try:
        seconds = ask.parse_timeout(value)
    except ask.TimeoutSettingError:
        assert value is not None and value.strip().lower() not in {*ask.TIMEOUTS, *ask.NO_TIMEOUT}
        return
    assert seconds in {None, 60.0, 300.0, 600.0}


def test_terminal_prompt_reads_numbers_lists_and_free_text() -> None:
    from pegboard import Question, QuestionOption

    options = (QuestionOption("A", "first"), QuestionOption("B"))
    request = QuestionRequest(
        questions=(
            Question("One?", "h1", options), Question("Many?", "h2", options, True), Question("Own?", "h3", options)
        ),
    )
    lines = iter(["2\n", "1, 3\n", "my words\n", "3\n", "typed\n"])
    out = io.StringIO()
    answers = ask.prompt_on(request, lambda: next(lines), out)
    assert answers == {"One?": "B", "Many?": ["A", "my words"], "Own?": "typed"}
    assert "1. A — first" in out.getvalue() and "3. Other" in out.getvalue()
    assert request.partial == answers


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_pegboard_call_asks_on_a_real_terminal(tmp_path: Path) -> None:
    import pty

    env = {**os.environ, "PEGBOARD_DATA_DIR": str(tmp_path / "d"), "HOME": str(tmp_path / "home")}
    payload = json.dumps({"questions": [QUESTION]})
    argv = [sys.executable, "-m", "pegboard", "call", "AskUserQuestion", "--input", payload, "--json"]
    main, sub = pty.openpty()
    proc = subprocess.Popen(argv, stdin=sub, stderr=sub, stdout=subprocess.PIPE, cwd=tmp_path, env=env)
    os.close(sub)
    seen = b""
    while b"Choose:" not in seen:
        chunk = os.read(main, 4096)
        assert chunk, seen
        seen += chunk
    os.write(main, b"2\n")
    out, _ = proc.communicate(timeout=60)
    os.close(main)
    result = json.loads(out)
    assert result["structured"]["answers"] == {QUESTION["question"]: "Postgres"}, result
