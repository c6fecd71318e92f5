"""Host services: what only the agent loop can do, asked for through first-result hooks.

Asking the user, approving a plan, running a subagent and delivering a message to a session
need the host (its terminal, UI or model loop). Pegboard defines the tools around them; a
host implements ``ask_user``, ``approve_plan``, ``run_subagent`` and ``deliver_message``.
A tool whose service no plugin implements is listed unavailable with the reason.
(Running a prompt over text on a small model, the ``complete`` hook, is in ``completion``.)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pegboard.core.tools import ToolContext

HOST_HOOKS = ("ask_user", "approve_plan", "run_subagent", "deliver_message")


class HostServiceError(RuntimeError):
    """Every implementation of a host hook that was asked failed; the message names them."""


class Clock(Protocol):
    """Time for host waits (question timeouts, schedules); tests inject a fake one."""

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """The real clock: monotonic time and ``asyncio.sleep``."""

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        import asyncio

        await asyncio.sleep(max(0.0, seconds))


@dataclass(frozen=True)
class QuestionOption:
    label: str
    description: str = ""


@dataclass(frozen=True)
class Question:
    """One multiple-choice question; the user may always answer in their own words."""

    question: str
    header: str
    options: tuple[QuestionOption, ...]
    multi_select: bool = False


@dataclass
class QuestionRequest:
    """What ``ask_user`` is asked. ``timeout`` (seconds, ``None`` = wait for ever) is the
    idle time after which the tool continues on its own; a host records choices as they
    are made in ``partial`` (question text → label or labels) and calls :meth:`touch` on
    every keystroke, which restarts the idle timer."""

    questions: tuple[Question, ...]
    timeout: float | None = None
    partial: dict[str, Any] = field(default_factory=dict)
    #: a host sets ``declined`` (the user refused to answer) or ``cancelled`` (dismissed
    #: without answering) and returns ``{}``; the tool tells the model so.
    outcome: str = "answered"
    last_activity: float = 0.0
    clock: Clock = field(default_factory=SystemClock, repr=False)

    def touch(self) -> None:
        self.last_activity = self.clock.now()


@dataclass(frozen=True)
class PlanRequest:
    """A plan to approve: ``plan`` (markdown) and the mode that was active before plan mode."""

    plan: str
    previous_mode: str


@dataclass(frozen=True)
class PlanDecision:
    """The answer to a plan: approved or not, the mode to switch to, and feedback for the model."""

    approved: bool
    mode: str | None = None
    feedback: str = ""


@dataclass(frozen=True)
class SubagentRequest:
    """A subagent to run to completion: its type, its task, the tool names policy gives it,
    its turn limit and model (``None``: the host's choice). ``session_id`` names the session
    the subagent's tool calls use (``pegboard.session(subagent=...)``)."""

    subagent_type: str
    prompt: str
    description: str = ""
    tools: tuple[str, ...] = ()
    max_turns: int | None = None
    model: str | None = None
    system_prompt: str = ""
    parent_session_id: str | None = None
    session_id: str | None = None
    approver: Any = field(default=None, repr=False, compare=False)
    background: bool = False

    def session_options(self) -> dict[str, Any]:
        """The ``pb.session(...)`` arguments for the subagent's own session."""
        options: dict[str, Any] = {"subagent": self.subagent_type}
        if self.session_id is not None:
            options["session_id"] = self.session_id
        if self.approver is not None:
            options["approver"] = self.approver
        return options


@dataclass(frozen=True)
class MessageDelivery:
    """A message (or prompt) for session ``session_id``; ``sender`` names who sent it.
    ``wait`` is how long the sender waits for a reply (0: fire and forget)."""

    session_id: str
    text: str
    sender: str | None = None
    wait: float = 0.0
    kind: str = "message"
    metadata: Mapping[str, Any] = field(default_factory=dict)


def host_service_gaps(context_or_pegboard: Any, hook: str, *, ignore: Sequence[Any] = ()) -> list[str] | None:
    """``None`` when some plugin can answer host hook ``hook`` now; else why not: one reason
    per implementation that said it cannot (an empty list when no plugin implements it).

    A plugin object may define ``host_service_unavailable(hook) -> str | None``: a reason
    means it cannot answer at the moment (``pegboard serve`` while the MCP client lacks the
    capability the hook needs). Implementations whose plugin object is in ``ignore`` (a
    tool's own fallback) do not count.
    """
    pb = getattr(context_or_pegboard, "_pegboard", context_or_pegboard)
    if pb is None:
        return []
    reasons: list[str] = []
    for impl in pb.hooks.implementations(hook):
        if impl.plugin in ignore:
            continue
        probe = getattr(impl.plugin, "host_service_unavailable", None)
        try:
            reason = probe(hook) if callable(probe) else None
        except Exception as exc:
            reason = f"{type(exc).__name__}: {exc}"
        if not reason:
            return None
        reasons.append(str(reason))
    return reasons


def has_host_service(context_or_pegboard: Any, hook: str, *, ignore: Sequence[Any] = ()) -> bool:
    """Whether a plugin can answer host hook ``hook`` now (see :func:`host_service_gaps`)."""
    return host_service_gaps(context_or_pegboard, hook, ignore=ignore) is None


def host_service_reason(pegboard: Any, hook: str, what: str, *, ignore: Sequence[Any] = ()) -> str | None:
    """Why the host cannot ``what`` (``None`` when it can): no implementation of ``hook``, or
    the reasons its implementations gave."""
    gaps = host_service_gaps(pegboard, hook, ignore=ignore)
    if gaps is None:
        return None
    if gaps:
        return f"the host cannot {what}: " + "; ".join(dict.fromkeys(gaps))
    return f"the host does not {what} (no plugin implements the {hook} hook)"


@dataclass(frozen=True)
class NeedsHost:
    """An availability check for ``Tool.availability``: the tool needs a plugin that answers
    host hook ``hook`` (``what`` words the reason: "run subagents"). Plain data, so a
    declaration file records it and listing tools asks it without importing the tool::

        @tool(availability=NeedsHost("run_subagent", "run subagents"))
    """

    hook: str
    what: str

    def __call__(self, pegboard: Any) -> str | None:
        return host_service_reason(pegboard, self.hook, self.what)


def unavailable_without(pegboard: Any, hook: str, what: str, *, ignore: Sequence[Any] = ()) -> Callable[[], str | None]:
    """An availability check for ``Tool.availability``: a reason while no plugin can answer ``hook``."""

    def check() -> str | None:
        return host_service_reason(pegboard, hook, what, ignore=ignore)

    return check


async def ask_host(context: ToolContext, hook: str, **kwargs: Any) -> Any:
    """The first answer of host hook ``hook``; ``None`` when nobody answered. Raises
    ``HostServiceError`` when implementations raised and none answered."""
    pb: Any = context._pegboard
    if pb is None:
        return None
    errors: list[Any] = []
    answer = await pb.hooks.first(hook, errors, context=context, **kwargs)
    if answer is None and errors:
        raise HostServiceError("; ".join(f"{e.plugin}: {e.error}" for e in errors))
    return answer


__all__ = [
    "HOST_HOOKS",
    "Clock",
    "HostServiceError",
    "MessageDelivery",
    "PlanDecision",
    "PlanRequest",
    "Question",
    "QuestionOption",
    "QuestionRequest",
    "SubagentRequest",
    "SystemClock",
    "ask_host",
    "has_host_service",
    "host_service_gaps",
    "host_service_reason",
    "unavailable_without",
]
