"""A reference agent harness: one model, Pegboard's tools, a terminal for the user.

It talks to any OpenAI-compatible chat-completions endpoint with httpx and uses only
Pegboard's public API: open a session, render its tools for the model, run each tool call
the model makes with ``session.call`` and send back the results, until the model answers
without a tool call. The host hooks (approvals, questions, plans, subagents, messages) are
answered on the terminal::

    .venv/bin/python examples/harness.py --base-url http://localhost:8000/v1 --model my-model "fix the failing test"

The API key, if the endpoint needs one, is read from ``OPENAI_API_KEY``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import httpx

from pegboard import (
    MessageDelivery,
    Pegboard,
    PermissionDecision,
    PlanDecision,
    PlanRequest,
    QuestionRequest,
    SubagentRequest,
    ToolCall,
    ToolContext,
    hookimpl,
)

SYSTEM = "You are a coding agent. Use the tools to do the task, then answer briefly with what you did."


def show(text: str) -> None:
    print(text, flush=True)


def read_line(prompt: str) -> str | None:
    """A line from the user, or ``None`` when stdin has ended (scripted runs)."""
    sys.stderr.write(prompt)
    sys.stderr.flush()
    line = sys.stdin.readline()
    return line.strip() if line else None


class TerminalHost:
    """The host hooks, answered by the person at the terminal (or ``--yes``)."""

    def __init__(self, agent: Agent, yes: bool) -> None:
        self.agent = agent
        self.yes = yes

    @hookimpl
    def request_approval(self, call: ToolCall, decision: PermissionDecision, context: ToolContext) -> bool:
        who = f"[subagent {context.subagent}] " if context.subagent else ""
        if self.yes:
            return True
        answer = read_line(f"{who}Allow {call.name} {json.dumps(call.input)[:200]}? ({decision.reason}) [y/N] ")
        return (answer or "").lower() in {"y", "yes"}

    @hookimpl
    def ask_user(self, request: QuestionRequest) -> dict[str, Any]:
        answers: dict[str, Any] = {}
        for q in request.questions:
            show(f"[{q.header}] {q.question}")
            for i, option in enumerate(q.options, 1):
                show(f"  {i}. {option.label}: {option.description}")
            line = read_line("Choose a number or type an answer: ")
            if line is None or not line:
                line = "1"
            picked = [q.options[int(p) - 1].label if p.isdigit() and 0 < int(p) <= len(q.options) else p
                      for p in (x.strip() for x in line.split(","))]
            answers[q.question] = picked if q.multi_select else picked[0]
            request.partial[q.question] = answers[q.question]
        return answers

    @hookimpl
    def approve_plan(self, request: PlanRequest) -> PlanDecision:
        show(f"Plan:\n{request.plan}")
        if self.yes:
            return PlanDecision(approved=True)
        answer = read_line("Approve this plan? [y/N, or feedback] ") or ""
        if answer.lower() in {"y", "yes"}:
            return PlanDecision(approved=True)
        return PlanDecision(approved=False, feedback=answer if answer.lower() not in {"", "n", "no"} else "")

    @hookimpl
    async def run_subagent(self, request: SubagentRequest) -> str:
        mode = "background " if request.background else ""
        show(f"-> {mode}subagent {request.subagent_type}: {request.description or request.prompt[:60]}")
        return await self.agent.run(request.prompt, tools=request.tools, max_turns=request.max_turns or 20,
                                    session_options=request.session_options())

    @hookimpl
    def deliver_message(self, request: MessageDelivery) -> bool:
        if request.kind == "prompt":  # a scheduled prompt (CronCreate, ScheduleWakeup, cron): the next turn
            show(f"[scheduled prompt for {request.session_id}] {request.text}")
            self.agent.inbox.setdefault(request.session_id, []).append(request.text)
            return True
        show(f"[{request.kind} for {request.session_id} from {request.sender or 'someone'}] {request.text}")
        return True


class Agent:
    """The loop: model → tool calls → ``session.call`` → results → model, until it stops."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.cwd = Path(args.cwd or os.getcwd()).resolve()
        self.pb = Pegboard(plugins=[TerminalHost(self, args.yes)], cwd=self.cwd)
        key = os.environ.get("OPENAI_API_KEY")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.http = httpx.AsyncClient(base_url=args.base_url.rstrip("/"), headers=headers, timeout=300)
        self.inbox: dict[str, list[str]] = {}  # session id -> scheduled prompts not yet sent to the model

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.args.model, "messages": messages}
        if tools:
            body["tools"] = tools
        response = await self.http.post("/chat/completions", json=body)
        response.raise_for_status()
        message: dict[str, Any] = response.json()["choices"][0]["message"]
        return message

    async def run(self, task: str, *, tools: tuple[str, ...] = (), max_turns: int = 50,
                  session_options: dict[str, Any] | None = None) -> str:
        options = {"profile": self.args.profile, "cwd": self.cwd, "persist": False, **(session_options or {})}
        async with self.pb.session(**options) as s:
            schema = s.schema("openai")
            if tools:
                schema = [t for t in schema if t["function"]["name"] in tools]
            messages: list[dict[str, Any]] = [{"role": "system", "content": f"{SYSTEM}\n\n{s.prompt()}"},
                                              {"role": "user", "content": task}]
            s.record_message("user", task)
            for _turn in range(max_turns):
                reply = await self.complete(messages, schema)
                messages.append({k: v for k, v in reply.items() if v is not None})
                calls = reply.get("tool_calls") or []
                if not calls:
                    final = str(reply.get("content") or "")
                    s.record_message("assistant", final)
                    queued = self.inbox.pop(s.id, [])
                    if not queued:
                        return final
                    messages.append({"role": "user", "content": "\n\n".join(queued)})
                    s.record_message("user", "\n\n".join(queued))
                    continue
                for call in calls:
                    messages.append(await self.run_call(s, call))
            return "(stopped: turn limit reached)"

    async def run_call(self, session: Any, call: dict[str, Any]) -> dict[str, Any]:
        name = call["function"]["name"]
        try:
            tool_input = json.loads(call["function"].get("arguments") or "{}")
        except json.JSONDecodeError as exc:
            tool_input = {"_unparsable_arguments": str(exc)}
        show(f"> {name} {json.dumps(tool_input)[:300]}")
        result = await session.call(name, tool_input, tool_use_id=call.get("id"))
        text = result.text
        show(("! " if result.is_error else "< ") + text[:2000])
        return {"role": "tool", "tool_call_id": call.get("id"), "content": text}


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A small agent loop over Pegboard and a chat-completions endpoint.")
    parser.add_argument("--base-url", required=True, help="the endpoint's base URL, e.g. http://localhost:8000/v1")
    parser.add_argument("--model", required=True)
    parser.add_argument("--profile", default=None, help="the Pegboard tool profile (coding, minimal, full ...)")
    parser.add_argument("--cwd", default=None, help="the working directory (default: the current one)")
    parser.add_argument("--yes", action="store_true", help="approve every permission ask and plan")
    parser.add_argument("task")
    args = parser.parse_args(argv)
    agent = Agent(args)
    try:
        final = await agent.run(args.task)
    except httpx.HTTPError as exc:
        print(f"error: the model endpoint failed: {exc}", file=sys.stderr)
        return 2
    finally:
        await agent.http.aclose()
        await agent.pb.aclose()
    show(f"\n{final}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
