"""``session_status``: what a session is, where it runs, which tools it has, and what it holds.

It is the one tool of the ``minimal`` profile, so its result is never cut. A ``model``
override is recorded for the session (``default`` clears it): the session's selection
changes, so the tool set follows the new model's provider policy from the next request.

Hosts report the figures only they know (token budget, context use) with
:func:`report_usage`; tools that run background work list it in the
``pegboard-background-tasks`` map slot (entries with a ``status``), which is counted here.
"""

from __future__ import annotations

import sys
from typing import Any

from pydantic import BaseModel, Field

from pegboard import MapKey, Session, SessionKey, ToolContext, ToolRegister, ToolResult, hookimpl, tool
from pegboard_tasks import session_tasks

USAGE: SessionKey[dict[str, Any]] = SessionKey("pegboard-session-usage", dict, persist=True)
MODEL_OVERRIDE: SessionKey[dict[str, Any]] = SessionKey("pegboard-session-model-override", dict, persist=True)
BACKGROUND_TASKS: MapKey[dict[str, Any]] = MapKey("pegboard-background-tasks", dict, persist=True)
CURRENT_KEYS = ("main", "current")


def report_usage(session: Session, **figures: Any) -> None:
    """Record the host's figures for ``session`` (merged into what was reported before).

    Conventional names: ``context_tokens`` (tokens in the context now), ``context_window`` (the
    model's window), ``token_budget`` (what the host allows), ``tokens_used`` (so far). A value
    of ``None`` removes a figure. Values must be JSON-ready.
    """

    def merge(current: dict[str, Any] | None) -> dict[str, Any]:
        merged = dict(current or {})
        for key, value in figures.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = value
        return merged

    session.state.update(USAGE, merge)


class SessionStatusInput(BaseModel):
    sessionKey: str | None = Field(default=None, description="The session to report on: the current one by default.")
    sessionId: str | None = Field(default=None, description="The same as sessionKey, by id.")
    model: str | None = Field(
        default=None,
        description="Switch this session to another model ('provider/model' or a model name); 'default' clears it.",
    )


def apply_model(session: Session, wanted: str) -> str:
    """Record a model override (or clear it with ``default``) and say what changed."""
    stored = session.state.get(MODEL_OVERRIDE) or {}
    original = stored.get("original") or {"provider": session.selection.provider, "model": session.selection.model}
    if wanted.strip().lower() == "default":
        session.select(provider=original["provider"], model=original["model"])
        del session.state[MODEL_OVERRIDE]
        return f"Model override cleared; back to {original['model'] or 'the default model'}."
    provider, _, model = wanted.strip().partition("/") if "/" in wanted else (None, "", wanted.strip())
    changes: dict[str, str | None] = {"model": model}
    if provider:
        changes["provider"] = provider
    session.select(**changes)
    session.state[MODEL_OVERRIDE] = {"original": original, "override": wanted.strip()}
    return f"Model set to {wanted.strip()} for this session; the tool set follows it from the next request."


def status(session: Session) -> dict[str, Any]:
    """Every field ``session_status`` reports, as JSON-ready data."""
    policy = session.tools()
    unavailable = {d.name: d.reason for d in policy.disabled if d.step == "availability"}
    enabled = session.enabled_tools()
    visible = session.visible_tools()
    pending = session.pending_deferred()
    background = [dict(v, id=k) for k, v in session.state.map(BACKGROUND_TASKS).items()]
    running = [t for t in background if t.get("status") == "running"]
    results = session.results.all()
    override = session.state.get(MODEL_OVERRIDE) or {}
    record = session.record
    return {
        "sessionId": session.id,
        "agent": session.selection.agent,
        "provider": session.selection.provider,
        "model": session.selection.model,
        "modelOverride": override.get("override"),
        "profile": session.selection.profile,
        "subagent": session.selection.subagent,
        "permissionMode": session.mode,
        "cwd": str(session.cwd),
        "workingDirs": [str(session.cwd), *(str(d) for d in session.additional_dirs)],
        "persisted": session.persisted,
        "created": record.created,
        "updated": record.updated,
        "tools": {
            "enabled": len(enabled),
            "visible": len(visible),
            "deferred": len(pending),
            "unavailable": len(unavailable),
            "unavailableReasons": unavailable,
        },
        "backgroundTasks": {"running": len(running), "tasks": running},
        "storedResults": {"count": len(results), "bytes": sum(r.size for r in results)},
        "usage": session.state.get(USAGE),
    }


def render(fields: dict[str, Any]) -> str:
    tools = fields["tools"]
    lines = [
        f"Session {fields['sessionId']}" + (f" (agent {fields['agent']})" if fields["agent"] else ""),
        f"Model: {fields['model'] or 'unknown'}" + (f" on {fields['provider']}" if fields["provider"] else "")
        + (" (override)" if fields["modelOverride"] else ""),
        f"Permission mode: {fields['permissionMode']}",
        f"Working directories: {', '.join(fields['workingDirs'])}",
        f"Tools: {tools['enabled']} enabled, {tools['visible']} visible, {tools['deferred']} deferred, "
        f"{tools['unavailable']} unavailable",
    ]
    lines += [f"  {name}: {reason}" for name, reason in sorted(tools["unavailableReasons"].items())]
    lines.append(f"Background tasks running: {fields['backgroundTasks']['running']}")
    stored = fields["storedResults"]
    lines.append(f"Stored results: {stored['count']} ({stored['bytes']:,} bytes)")
    usage = fields["usage"]
    if usage:
        lines.append("Usage: " + ", ".join(f"{k} {v}" for k, v in sorted(usage.items())))
    return "\n".join(lines)


@tool(
    name="session_status",
    groups=["sessions", "pegboard"],
    max_result_chars=sys.maxsize,
    usage="Call session_status to see this session's model, permission mode, tools and usage.",
)
async def session_status(input: SessionStatusInput, ctx: ToolContext) -> ToolResult:
    """Show this session's status: id, agent, provider and model, permission mode, working directories,
    tool counts (with why tools are unavailable), background tasks, stored results and usage.
    Pass model to switch this session's model ('default' clears the override)."""
    session = ctx.session
    if session is None:
        return ToolResult.error("session_status needs a session", error_kind="not_available")
    key = input.sessionKey or input.sessionId
    if key is not None and key not in CURRENT_KEYS and key != session.id:
        return ToolResult.refusal(
            "out_of_scope",
            f"{key!r} is not this session; session_status reports on the session it runs in",
            error_kind="out_of_scope",
        )
    note = apply_model(session, input.model) if input.model else None
    fields = status(session)
    text = render(fields)
    return ToolResult.from_text(f"{note}\n\n{text}" if note else text, structured=fields)


def session_details(session: Session) -> dict[str, Any]:
    """What ``pegboard sessions show ID`` adds: the status, tasks and to-dos, stored results."""
    details: dict[str, Any] = {"status": status(session), **session_tasks(session)}
    details["results"] = [
        {
            "ref": r.ref,
            "tool": r.tool,
            "storage_kind": r.storage_kind,
            "content_type": r.content_type,
            "complete": r.complete,
            "total_chars": len(r.text),
            "bytes": r.size,
            "created": r.created,
            **({"raw_ref": r.ref + "_raw"} if r.raw is not None else {}),
        }
        for r in session.results.all()
    ]
    return details


def render_details(details: dict[str, Any]) -> str:
    """``session_details`` for people."""
    lines = [render(details["status"]), "", f"Tasks ({len(details['tasks'])}):"]
    for task in details["tasks"]:
        blocked = f" [blocked by {', '.join('#' + b for b in task['openBlockers'])}]" if task["openBlockers"] else ""
        lines.append(f"  #{task['id']} [{task['status']}] {task['subject']}{blocked}")
    lines.append(f"Todos ({len(details['todos'])}):")
    lines += [f"  [{t['status']}] {t['content']}" for t in details["todos"]]
    lines.append(f"Stored results ({len(details['results'])}):")
    lines += [
        f"  {r['ref']} {r['tool']} {r['storage_kind']} {r['total_chars']:,} characters" for r in details["results"]
    ]
    return "\n".join(lines)


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(session_status)


__all__ = [
    "BACKGROUND_TASKS",
    "USAGE",
    "render_details",
    "report_usage",
    "session_details",
    "session_status",
    "status",
]
