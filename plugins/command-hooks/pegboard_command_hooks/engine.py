"""Running an event: pick the matching handlers, run them concurrently, combine their answers."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pegboard import HookDecision, ToolCall, ToolContext, rule_matches
from pegboard_command_hooks.config import (
    TOOL_EVENTS,
    Handler,
    configured,
    project_root,
    url_allowed,
)
from pegboard_command_hooks.http import expand_headers, run_http
from pegboard_command_hooks.matcher import matcher_error, matches
from pegboard_command_hooks.protocol import combine, interpret
from pegboard_command_hooks.runner import RawOutcome, run_command


@dataclass
class HandlerReport:
    """One handler on one event: whether it ran, what it did, what it decided."""

    handler: Handler
    ran: bool
    skipped: str | None = None
    raw: RawOutcome | None = None
    decision: HookDecision | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.handler.type,
            "handler": self.handler.label,
            "matcher": self.handler.matcher,
            "sources": [s.label for s in self.handler.sources],
            "ran": self.ran,
            "skipped": self.skipped,
            "run": self.raw.to_json() if self.raw else None,
            "decision": decision_json(self.decision),
        }


@dataclass
class EventReport:
    event: str
    payload: dict[str, Any]
    handlers: list[HandlerReport] = field(default_factory=list)
    decision: HookDecision | None = None


def decision_json(decision: HookDecision | None) -> dict[str, Any] | None:
    if decision is None:
        return None
    data = decision.model_dump(mode="json", exclude_defaults=True)
    if "continue_" in data:
        data["continue"] = data.pop("continue_")
    return data


# --------------------------------------------------------------------------- selection


def condition_matches(rule: str, call: ToolCall, ctx: ToolContext) -> bool:
    """Does the permission rule ``rule`` match the call? Undecidable means yes (run the hook)."""
    try:
        return rule_matches(rule, call.tool, call.input, ctx.cwd)
    except Exception:
        return True


def select(
    event: str, ctx: ToolContext, match_value: str, call: ToolCall | None
) -> tuple[list[Handler], list[HandlerReport]]:
    """(handlers to run, reports for handlers that matched but will not run)."""
    handlers, _allow = configured(ctx)
    run: list[Handler] = []
    skipped: list[HandlerReport] = []
    seen: set[str] = set()
    for handler in handlers.get(event, []):
        if handler.key in seen or not matches(handler.matcher, match_value):
            continue
        seen.add(handler.key)
        problem = handler.problem or matcher_error(handler.matcher)
        if problem is not None:
            notice = f"{event} hook {handler.label!r} ({handler.source_label}) is not run: {problem}"
            skipped.append(HandlerReport(handler, False, problem, decision=HookDecision(notices=(notice,))))
            continue
        rule = handler.condition
        if rule is not None:
            if event not in TOOL_EVENTS or call is None:
                skipped.append(HandlerReport(handler, False, f"'if' is set on {event}, which has no tool call"))
                continue
            if not condition_matches(rule, call, ctx):
                skipped.append(HandlerReport(handler, False, f"'if' rule {rule!r} does not match"))
                continue
        run.append(handler)
    return run, skipped


# --------------------------------------------------------------------------- running


def hook_env(ctx: ToolContext, event: str) -> dict[str, str]:
    """The host's environment without ``OTEL_*``, plus the project dir under both names."""
    base = ctx.env if ctx.env else os.environ
    env = {k: v for k, v in base.items() if not k.startswith("OTEL_")}
    env.setdefault("PATH", os.defpath)
    start = Path(ctx.project_dir or ctx.cwd)
    root = str(project_root(ctx.config.layers if ctx.config else [], start))
    env["PEGBOARD_PROJECT_DIR"] = root
    env["CLAUDE_PROJECT_DIR"] = root
    env["PEGBOARD_HOOK_EVENT"] = event
    if ctx.session_id:
        env["PEGBOARD_SESSION_ID"] = ctx.session_id
    return env


async def run_handler(
    handler: Handler, payload: bytes, ctx: ToolContext, env: Mapping[str, str], allowlist: list[str]
) -> RawOutcome:
    if handler.type == "http":
        url = str(handler.spec["url"])
        if not url_allowed(url, allowlist):
            return RawOutcome(None, failure=f"URL {url} is not allowed by allowedHttpHookUrls")
        allowed = handler.spec.get("allowedEnvVars")
        headers = expand_headers(handler.spec.get("headers") or {}, allowed if isinstance(allowed, list) else [], env)
        return await run_http(url, payload, headers=headers, timeout=handler.timeout)
    cwd = Path(ctx.cwd)
    if not cwd.is_dir():
        return RawOutcome(None, failure=f"could not start: the working directory {cwd} does not exist")
    argv = handler.argv
    return await run_command(
        argv,
        None if argv is not None else str(handler.spec["command"]),
        payload,
        cwd=cwd,
        env=env,
        timeout=handler.timeout,
    )


async def run_event(
    event: str,
    ctx: ToolContext,
    payload: dict[str, Any],
    *,
    match_value: str = "",
    call: ToolCall | None = None,
) -> EventReport:
    """Run every handler of ``event`` that matches ``match_value``; combine their answers."""
    report = EventReport(event, payload)
    handlers, skipped = select(event, ctx, match_value, call)
    if not handlers and not skipped:
        return report
    data = json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8")
    env = hook_env(ctx, event)
    allowlist = configured(ctx)[1]
    raws = await asyncio.gather(*(run_handler(h, data, ctx, env, allowlist) for h in handlers))
    ran = [
        HandlerReport(h, True, raw=raw, decision=interpret(event, h, raw))
        for h, raw in zip(handlers, raws, strict=True)
    ]
    report.handlers = ran + skipped
    report.decision = combine([r.decision for r in ran] + [r.decision for r in skipped])
    return report
