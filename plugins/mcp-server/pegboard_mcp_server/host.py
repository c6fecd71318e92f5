"""The MCP client as Pegboard's host: what ``pegboard serve`` answers the host hooks with.

A served Pegboard has no terminal and no agent loop of its own, so each host hook is
answered by the client of the request that needs it, through the capabilities it declared:

- ``ask_user`` (AskUserQuestion) and ``approve_plan`` (ExitPlanMode): an elicitation form;
- ``run_subagent`` (Agent, sessions_spawn) and ``deliver_message`` (SendMessage,
  sessions_send, scheduled prompts): a loop that calls the client's model through sampling
  and runs the tool calls it makes through a Pegboard session, bounded by the turn limit.

While a request runs (and while its tool list is computed) the transport sets
:data:`CURRENT_LINK`; a client without the capability a hook needs makes
``host_service_unavailable`` give the reason, so those tools are listed unavailable.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from pegboard import (
    MessageDelivery,
    PlanDecision,
    PlanRequest,
    Question,
    QuestionRequest,
    Session,
    SubagentRequest,
    ToolContext,
    ToolResult,
    hookimpl,
)

log = logging.getLogger("pegboard.mcp.serve")

#: ``elicit(message, requested_schema)`` -> the client's ``ElicitResult`` as a dict, or None.
Elicit = Callable[[str, dict[str, Any]], Awaitable["dict[str, Any] | None"]]
#: ``create_message(params)`` -> the client's ``sampling/createMessage`` result as a dict, or None.
CreateMessage = Callable[[dict[str, Any]], Awaitable["dict[str, Any] | None"]]

MAX_PLAN_CHARS = 20_000
MAX_TOKENS_PER_TURN = 4096
DEFAULT_SUBAGENT_TURNS = 20
PLAN_MODES = ("default", "acceptEdits", "bypassPermissions", "dontAsk")
NO_ELICITATION = "the MCP client did not declare the elicitation capability, so its user cannot be asked"
NO_SAMPLING = (
    "an MCP client cannot run an agent loop, and this one did not declare the sampling capability "
    "that would let Pegboard run it with the client's model"
)


@dataclass
class ClientLink:
    """What the client of the running request can do for the host: its declared
    capabilities and the two server-to-client requests the hooks use."""

    capabilities: dict[str, Any] = field(default_factory=dict)
    elicit: Elicit | None = None
    create_message: CreateMessage | None = None
    #: the same client reached outside any request (a schedule firing, a message answered in
    #: the background); ``None``: this link is not tied to a request and serves both
    standalone: ClientLink | None = None
    #: cleared when the request this link belongs to has ended
    active: bool = True
    #: sends the client ``notifications/tools/list_changed`` outside any request
    tools_changed: Callable[[], Awaitable[None]] | None = None

    @property
    def lasting(self) -> ClientLink:
        """The link to use once the request is over."""
        return self.standalone or self

    @property
    def can_elicit(self) -> bool:
        return self.elicit is not None and self.capabilities.get("elicitation") is not None

    @property
    def can_sample(self) -> bool:
        return self.create_message is not None and self.capabilities.get("sampling") is not None

    @property
    def sampling_tools(self) -> bool:
        sampling = self.capabilities.get("sampling")
        return isinstance(sampling, dict) and sampling.get("tools") is not None


CURRENT_LINK: ContextVar[ClientLink | None] = ContextVar("pegboard_mcp_client_link", default=None)


# --------------------------------------------------------------------------- questions


def question_form(questions: Sequence[Question]) -> dict[str, Any]:
    """An elicitation form for the questions: per question a choice (``qN``; a list for
    multi-select) and a free answer (``qN_other``) that is used instead when filled in."""
    properties: dict[str, Any] = {}
    for i, q in enumerate(questions, 1):
        labels = [o.label for o in q.options]
        listed = "\n".join(f"- {o.label}" + (f": {o.description}" if o.description else "") for o in q.options)
        described = f"{q.question}\n{listed}"
        if q.multi_select:
            properties[f"q{i}"] = {
                "type": "array",
                "title": q.header,
                "description": described + "\n(choose any number)",
                "items": {"type": "string", "enum": labels},
                "uniqueItems": True,
            }
        else:
            properties[f"q{i}"] = {"type": "string", "title": q.header, "description": described, "enum": labels}
        properties[f"q{i}_other"] = {
            "type": "string",
            "title": f"{q.header}: other",
            "description": "Or answer in your own words (used instead of the choice above)",
        }
    return {"type": "object", "properties": properties}


def question_message(questions: Sequence[Question]) -> str:
    if len(questions) == 1:
        return questions[0].question
    return "Please answer these questions:\n" + "\n".join(f"{i}. {q.question}" for i, q in enumerate(questions, 1))


def answers_from(content: Any, questions: Sequence[Question]) -> dict[str, Any]:
    """The tool's answers (question text -> label, labels or own words) from a filled-in form."""
    data = content if isinstance(content, dict) else {}
    answers: dict[str, Any] = {}
    for i, q in enumerate(questions, 1):
        other = data.get(f"q{i}_other")
        other = other.strip() if isinstance(other, str) else ""
        choice = data.get(f"q{i}")
        if q.multi_select:
            chosen = choice if isinstance(choice, list) else [choice]
            picked = [str(c) for c in chosen if isinstance(c, str) and c]
            if other:
                picked.append(other)
            if picked:
                answers[q.question] = picked
        elif other:
            answers[q.question] = other
        elif isinstance(choice, str) and choice:
            answers[q.question] = choice
    return answers


# --------------------------------------------------------------------------- plans

PLAN_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approve": {"type": "boolean", "title": "Approve the plan", "default": True},
        "mode": {
            "type": "string",
            "title": "Then continue in mode",
            "description": "Leave empty to go back to the mode that was active before plan mode",
            "enum": list(PLAN_MODES),
        },
        "feedback": {"type": "string", "title": "Feedback", "description": "A note for the agent (optional)"},
    },
    "required": ["approve"],
}


def plan_message(request: PlanRequest) -> str:
    plan = request.plan
    if len(plan) > MAX_PLAN_CHARS:
        plan = plan[:MAX_PLAN_CHARS] + f"\n... ({len(request.plan):,} characters in all)"
    return f"Approve this plan? Approving leaves plan mode (back to {request.previous_mode}).\n\n{plan}"


def plan_decision(answer: dict[str, Any]) -> PlanDecision:
    """accept -> the form's choice; decline or cancel -> not approved (plan mode stays)."""
    if answer.get("action") != "accept":
        return PlanDecision(approved=False, feedback="" if answer.get("action") == "cancel" else "declined")
    content = answer.get("content") if isinstance(answer.get("content"), dict) else {}
    assert isinstance(content, dict)
    mode = content.get("mode")
    feedback = content.get("feedback")
    return PlanDecision(
        approved=content.get("approve", True) is True,  # anything but a plain yes keeps plan mode
        mode=mode if isinstance(mode, str) and mode in PLAN_MODES else None,
        feedback=feedback.strip() if isinstance(feedback, str) else "",
    )


# --------------------------------------------------------------------------- the sampling loop


def _blocks(content: Any) -> list[dict[str, Any]]:
    items = content if isinstance(content, list) else [content]
    return [b for b in items if isinstance(b, dict)]


def _text_of(blocks: Sequence[dict[str, Any]]) -> str:
    return "\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text").strip()


def _tool_result_block(tool_use_id: str, result: ToolResult) -> dict[str, Any]:
    from pegboard_mcp_server.bridge import result_to_mcp

    mcp = result_to_mcp(result)
    block: dict[str, Any] = {"type": "tool_result", "toolUseId": tool_use_id, "content": mcp["content"]}
    if result.is_error:
        block["isError"] = True
    return block


async def sampling_loop(
    link: ClientLink,
    session: Session,
    prompt: str,
    *,
    tools: Sequence[str],
    max_turns: int,
    system_prompt: str = "",
) -> str:
    """Run ``prompt`` with the client's model: each turn one ``sampling/createMessage`` with
    the tools (when the client supports tools in sampling), each tool call it makes run
    through ``session``; ends with the model's text, or after ``max_turns`` turns."""
    assert link.create_message is not None
    offered = [d for d in session.schema("mcp") if d["name"] in set(tools)] if link.sampling_tools else []
    allowed = {d["name"] for d in offered}
    messages: list[dict[str, Any]] = [{"role": "user", "content": {"type": "text", "text": prompt}}]
    last_text = ""
    for _turn in range(max(1, max_turns)):
        params: dict[str, Any] = {"messages": messages, "maxTokens": MAX_TOKENS_PER_TURN}
        if system_prompt:
            params["systemPrompt"] = system_prompt
        if offered:
            params["tools"] = offered
        answer = await link.create_message(params)
        if answer is None:
            raise RuntimeError("the MCP client did not answer the sampling request")
        blocks = _blocks(answer.get("content"))
        uses = [b for b in blocks if b.get("type") == "tool_use"]
        last_text = _text_of(blocks) or last_text
        if not uses:
            return last_text
        messages.append({"role": "assistant", "content": blocks})
        results = []
        for use in uses:
            use_id = str(use.get("id") or f"use-{len(messages)}")
            name = str(use.get("name") or "")
            if name not in allowed:
                result = ToolResult.refusal(
                    "unknown_tool", f"Tool {name!r} is not offered here; use one of: {', '.join(sorted(allowed))}"
                )
            else:
                result = await session.call(name, use.get("input") or {}, tool_use_id=use_id)
            results.append(_tool_result_block(use_id, result))
        messages.append({"role": "user", "content": results})
    note = f"(stopped after {max_turns} turns, the turn limit)"
    return f"{last_text}\n\n{note}" if last_text else note


def release(session: Session) -> None:
    """Free what a closed in-memory session kept (its record, slots and cut results): nobody
    can resume it (its owner is one MCP session, or one subagent run)."""
    if session.closed and not session.persisted:
        session.store.delete(session.id)


def _child_session(parent: Session, *, subagent: str | None = None) -> Session:
    sel = parent.selection
    return parent.pegboard.session(
        agent=sel.agent,
        provider=sel.provider,
        model=sel.model,
        profile=sel.profile,
        subagent=subagent,
        cwd=parent.cwd,
        mode=parent.mode,
        additional_dirs=parent.additional_dirs,
        approver=parent.approver,
        owner=parent.owner,
        persist=False,
    )


class ClientHost:
    """A plugin object: the host hooks answered by the calling MCP client."""

    def __init__(self) -> None:
        self._background: set[Any] = set()
        #: session id -> the lasting link of the client whose session it is
        self.links: dict[str, ClientLink] = {}

    def remember(self, session_id: str, link: ClientLink | None) -> None:
        if link is not None:
            self.links[session_id] = link.lasting

    def forget(self, session_id: str) -> None:
        self.links.pop(session_id, None)

    def link_for(self, context: ToolContext) -> ClientLink | None:
        """The running request's client; outside a request, the client of the session."""
        link = CURRENT_LINK.get()
        if link is not None and link.active:
            return link
        session = context.session
        return self.links.get(session.id) if session is not None else None

    def host_service_unavailable(self, hook: str) -> str | None:
        current = CURRENT_LINK.get()
        links = [current] if current is not None and current.active else list(self.links.values())
        if hook in ("ask_user", "approve_plan"):
            return None if any(link.can_elicit for link in links) else NO_ELICITATION
        if hook in ("run_subagent", "deliver_message"):
            return None if any(link.can_sample for link in links) else NO_SAMPLING
        return None

    @hookimpl
    async def ask_user(self, request: QuestionRequest, context: ToolContext) -> dict[str, Any] | None:
        link = self.link_for(context)
        if link is None or not link.can_elicit or link.elicit is None:
            return None
        answer = await link.elicit(question_message(request.questions), question_form(request.questions))
        if answer is None:
            return None
        action = answer.get("action")
        if action != "accept":
            request.outcome = "declined" if action == "decline" else "cancelled"
            return {}
        request.touch()
        return answers_from(answer.get("content"), request.questions)

    @hookimpl
    async def approve_plan(self, request: PlanRequest, context: ToolContext) -> PlanDecision | None:
        link = self.link_for(context)
        if link is None or not link.can_elicit or link.elicit is None:
            return None
        answer = await link.elicit(plan_message(request), PLAN_FORM)
        return None if answer is None else plan_decision(answer)

    @hookimpl
    async def run_subagent(self, request: SubagentRequest, context: ToolContext) -> str | None:
        link = self.link_for(context)
        parent = context.session
        if link is None or not link.can_sample or parent is None:
            return None
        child = _child_session(parent, subagent=request.subagent_type)
        try:
            async with child:
                system = "\n\n".join(p for p in (request.system_prompt, child.prompt()) if p)
                child.record_message("user", request.prompt)
                final = await sampling_loop(
                    link,
                    child,
                    request.prompt,
                    tools=request.tools,
                    max_turns=request.max_turns or DEFAULT_SUBAGENT_TURNS,
                    system_prompt=system,
                )
                child.record_message("assistant", final)
        finally:
            release(child)
        return final

    @hookimpl
    async def deliver_message(self, request: MessageDelivery, context: ToolContext) -> str | bool | None:
        import asyncio

        link = self.link_for(context)
        caller = context.session
        if link is None or not link.can_sample or caller is None:
            return None
        live = link if request.wait > 0 else link.lasting
        sender = request.sender or "another session"
        note = request.metadata.get("note") if isinstance(request.metadata, dict) else None
        prompt = request.text if request.kind == "prompt" else f"Message from {sender}: {request.text}"
        if note:
            prompt += f"\n\n({note})"

        async def run() -> str:
            turn = _child_session(caller)
            try:
                async with turn:
                    system = f"You are the agent of session {request.session_id}; answer the message below."
                    return await sampling_loop(
                        live,
                        turn,
                        prompt,
                        tools=[t.name for t in turn.visible_tools()],
                        max_turns=DEFAULT_SUBAGENT_TURNS,
                        system_prompt=f"{system}\n\n{turn.prompt()}",
                    )
            finally:
                release(turn)

        if request.wait <= 0:
            task = asyncio.ensure_future(run())
            self._background.add(task)
            task.add_done_callback(self._finished)
            return True
        try:
            return await asyncio.wait_for(run(), request.wait)
        except TimeoutError:
            return True

    def _finished(self, task: Any) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.info("a delivered message's turn failed: %s", task.exception())


__all__ = [
    "CURRENT_LINK",
    "ClientHost",
    "ClientLink",
    "answers_from",
    "plan_decision",
    "question_form",
    "sampling_loop",
]
