"""``AskUserQuestion``: the model asks the user 1-4 multiple-choice questions.

The host answers through the ``ask_user`` hook. By default a question waits for ever; the
``askUserQuestionTimeout`` setting (``60s``, ``5m``, ``10m``) continues after that much idle
time with whatever was already chosen, and tells the model the user may be away. When the
process runs on a terminal (stdin and stderr are TTYs) and no host answers, this plugin asks
on the terminal itself, so ``pegboard call AskUserQuestion`` works interactively.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from pydantic import BaseModel, Field, model_validator

from pegboard import (
    Pegboard,
    Question,
    QuestionOption,
    QuestionRequest,
    StashKey,
    SystemClock,
    ToolContext,
    ToolRegister,
    ToolResult,
    ask_host,
    hookimpl,
    host_service_reason,
    tool,
)

if TYPE_CHECKING:
    import asyncio

CLOCK: StashKey[Any] = StashKey("pegboard-ask-user-clock")
TIMEOUTS = {"60s": 60.0, "5m": 300.0, "10m": 600.0}
NO_TIMEOUT = {"", "0", "off", "none", "never"}


class OptionInput(BaseModel):
    label: str = Field(min_length=1, description="The choice as shown to the user (1-5 words).")
    description: str = Field(default="", description="What this choice means or implies.")


class QuestionInput(BaseModel):
    question: str = Field(min_length=1, description="The full question, ending with a question mark.")
    header: str = Field(min_length=1, max_length=30, description="A very short label for the question (a chip).")
    options: list[OptionInput] = Field(
        min_length=2, max_length=4, description="2-4 choices; 'Other' is always offered."
    )
    multiSelect: bool = Field(default=False, description="Whether several options may be chosen.")

    @model_validator(mode="after")
    def _labels_unique(self) -> QuestionInput:
        labels = [o.label.strip().lower() for o in self.options]
        if len(set(labels)) != len(labels):
            raise ValueError("option labels must be unique within a question")
        return self


class AskUserQuestionInput(BaseModel):
    questions: list[QuestionInput] = Field(min_length=1, max_length=4, description="1-4 questions to ask.")
    answers: dict[str, Any] | None = Field(
        default=None, description="Answers supplied by a hook instead of the user; not for the model."
    )

    @model_validator(mode="after")
    def _questions_unique(self) -> AskUserQuestionInput:
        texts = [q.question.strip() for q in self.questions]
        if len(set(texts)) != len(texts):
            raise ValueError("question texts must be unique")
        return self


class TimeoutSettingError(ValueError):
    pass


def parse_timeout(value: Any) -> float | None:
    """``askUserQuestionTimeout`` in seconds, ``None`` for no timeout."""
    if value is None or value is False:
        return None
    text = str(value).strip().lower()
    if text in NO_TIMEOUT:
        return None
    if text in TIMEOUTS:
        return TIMEOUTS[text]
    raise TimeoutSettingError(f"askUserQuestionTimeout must be one of 60s, 5m, 10m (got {value!r})")


def _to_request(data: AskUserQuestionInput, timeout: float | None, clock: Any) -> QuestionRequest:
    questions = tuple(
        Question(
            question=q.question,
            header=q.header,
            options=tuple(QuestionOption(o.label, o.description) for o in q.options),
            multi_select=q.multiSelect,
        )
        for q in data.questions
    )
    request = QuestionRequest(questions=questions, timeout=timeout, clock=clock)
    request.touch()
    return request


async def wait_for_answers(answer: asyncio.Future[Any] | asyncio.Task[Any], request: QuestionRequest) -> Any | None:
    """The host's answer, or ``None`` when the user stayed idle for ``request.timeout``.
    Every ``request.touch()`` pushes the deadline back."""
    import asyncio

    if request.timeout is None:
        return await answer
    clock = request.clock
    while True:
        remaining = request.last_activity + request.timeout - clock.now()
        if remaining <= 0:
            answer.cancel()
            return None
        sleeper = asyncio.ensure_future(clock.sleep(remaining))
        done, _ = await asyncio.wait({answer, sleeper}, return_when=asyncio.FIRST_COMPLETED)
        if answer in done:
            sleeper.cancel()
            return answer.result()
        if answer.done():
            return answer.result()


def _format(answers: dict[str, Any]) -> str:
    parts = []
    for question, value in answers.items():
        shown = ", ".join(str(v) for v in value) if isinstance(value, list | tuple) else str(value)
        parts.append(f'"{question}"="{shown}"')
    return "User has answered your questions: " + ". ".join(parts) + ". Continue with these answers in mind."


def _normalise(answers: Any, data: AskUserQuestionInput) -> dict[str, Any]:
    if not isinstance(answers, dict):
        raise ValueError(f"the host answered with {type(answers).__name__}, not a dict of answers")
    known = {q.question for q in data.questions}
    return {str(k): v for k, v in answers.items() if k in known}


def unavailable(pegboard: Pegboard) -> str | None:
    """Why no one can be asked: no terminal here, and no other plugin answers ``ask_user``
    (this module's own terminal fallback does not count for that)."""
    if on_terminal():
        return None
    reason = host_service_reason(pegboard, "ask_user", "ask the user", ignore=[sys.modules[__name__]])
    if reason is None:
        return None
    if reason.startswith("the host does not"):
        return "the host cannot ask the user (no plugin implements the ask_user hook and there is no terminal)"
    return reason


@tool(
    name="AskUserQuestion",
    availability=unavailable,
    groups=["pegboard"],
    read_only=True,
    asks_user=True,
    usage="Ask the user 1-4 multiple-choice questions when a choice is theirs to make.",
)
async def ask_user_question(input: AskUserQuestionInput, ctx: ToolContext) -> ToolResult:
    """Ask the user multiple-choice questions to gather preferences, clarify ambiguous instructions or
    decide between implementation choices. Each question has a short header and 2-4 options with
    descriptions; the user can always answer "Other" in their own words. Use multiSelect when choices
    are not exclusive. Put a recommended option first and add "(Recommended)" to its label."""
    import asyncio

    if input.answers:
        answers = _normalise(input.answers, input)
        return ToolResult.from_text(_format(answers), structured={"answers": answers, "timed_out": False})
    raw = (ctx.config.data.get("askUserQuestionTimeout") if ctx.config is not None else None)
    try:
        timeout = parse_timeout(raw)
    except TimeoutSettingError as exc:
        return ToolResult.error(str(exc), error_kind="bad_setting")
    clock = ctx.stash.get(CLOCK, None) if ctx.pegboard is not None else None
    request = _to_request(input, timeout, clock or SystemClock())
    answer = asyncio.ensure_future(ask_host(ctx, "ask_user", request=request))
    try:
        got = await wait_for_answers(answer, request)
    except Exception as exc:
        return ToolResult.error(f"asking the user failed: {exc}", error_kind="host_error")
    if got is None and not answer.cancelled() and answer.done():
        return ToolResult.error("no host answered the questions", error_kind="not_available")
    if got is None:
        partial = _normalise(dict(request.partial), input)
        chosen = f" So far they chose: {_format(partial)}" if partial else " They chose nothing yet."
        text = (
            f"The user did not respond for {int(timeout or 0)} seconds and may be away from the keyboard."
            f"{chosen} Proceed at your own discretion with reasonable defaults, and ask again later if needed."
        )
        return ToolResult.from_text(text, structured={"answers": partial, "timed_out": True})
    try:
        answers = _normalise(got, input)
    except ValueError as exc:
        return ToolResult.error(str(exc), error_kind="host_error")
    if request.outcome in ("declined", "cancelled") and not answers:
        how = "declined to answer" if request.outcome == "declined" else "dismissed the questions without answering"
        text = (
            f"The user {how}. Do not assume an answer: continue without one if you can, or ask again "
            "differently (or in plain text) if the choice is theirs to make."
        )
        return ToolResult.from_text(text, structured={"answers": {}, "timed_out": False, "outcome": request.outcome})
    return ToolResult.from_text(_format(answers), structured={"answers": answers, "timed_out": False})


# --------------------------------------------------------------------------- terminal host


def on_terminal() -> bool:
    """Whether a person can answer here: stdin and stderr are both TTYs."""
    try:
        return sys.stdin.isatty() and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def prompt_on(request: QuestionRequest, read: Callable[[], str], out: TextIO) -> dict[str, Any]:
    """Ask each question on ``out`` and read choices with ``read``: a number, several numbers
    separated by commas (multi-select), or any other text as the user's own answer."""
    answers: dict[str, Any] = {}
    for q in request.questions:
        out.write(f"\n[{q.header}] {q.question}\n")
        for i, option in enumerate(q.options, 1):
            extra = f" — {option.description}" if option.description else ""
            out.write(f"  {i}. {option.label}{extra}\n")
        out.write(f"  {len(q.options) + 1}. Other (type your answer)\n")
        out.write("Choose several, separated by commas: " if q.multi_select else "Choose: ")
        out.flush()
        line = read().strip()
        request.touch()
        picks = [p.strip() for p in line.split(",")] if q.multi_select else [line]
        labels: list[str] = []
        for pick in picks:
            if pick.isdigit() and 1 <= int(pick) <= len(q.options):
                labels.append(q.options[int(pick) - 1].label)
            elif pick.isdigit() and int(pick) == len(q.options) + 1:
                out.write("Your answer: ")
                out.flush()
                labels.append(read().strip())
            elif pick:
                labels.append(pick)
        answers[q.question] = labels if q.multi_select else (labels[0] if labels else "")
        request.partial[q.question] = answers[q.question]
    return answers


def _read_in_thread(request: QuestionRequest) -> asyncio.Future[dict[str, Any]]:
    """Run the terminal prompt in a daemon thread, so a timeout never waits on ``input()``."""
    import asyncio

    loop = asyncio.get_running_loop()
    future: asyncio.Future[dict[str, Any]] = loop.create_future()

    def settle(result: Any, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def work() -> None:
        try:
            result: Any = prompt_on(request, sys.stdin.readline, sys.stderr)
        except BaseException as exc:
            loop.call_soon_threadsafe(settle, None, exc)
            return
        loop.call_soon_threadsafe(settle, result, None)

    threading.Thread(target=work, daemon=True, name="pegboard-ask-user").start()
    return future


@hookimpl(trylast=True)
async def ask_user(request: QuestionRequest) -> dict[str, Any] | None:
    """The terminal fallback: only when a person sits at this process's terminal."""
    if not on_terminal():
        return None
    return await _read_in_thread(request)


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(ask_user_question)
