"""``pegboard hooks list`` and ``pegboard hooks test``: the configured hooks, and a dry run.

The plugin contributes these commands through entry-point group ``pegboard.commands``, so
``pegboard hooks`` imports this module and nothing of the other plugins. In-process hooks
are the ``@hookimpl`` functions of every loaded plugin; the configured ones are this
plugin's ``Handler`` objects.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from pathlib import Path
from typing import Any

import click
from pydantic import BaseModel, ConfigDict

from pegboard.cli import (
    EXIT_USAGE,
    config_options,
    emit_json,
    fail,
    json_option,
    load_pegboard,
    parse_json_input,
    print_table,
)
from pegboard_command_hooks.config import EVENTS, TOOL_EVENTS, collect_handlers

PLUGIN_PACKAGE = __name__.split(".")[0]
RUNTIME_HOOKS = (
    "pre_tool_use",
    "check_permission",
    "permission_request",
    "request_approval",
    "post_tool_use",
    "post_tool_use_failure",
    "session_start",
    "session_end",
)


def _is_runner(impl: Any) -> bool:
    return str(getattr(impl.function, "__module__", "")).startswith(PLUGIN_PACKAGE)


def _event(name: str) -> str:
    folded = name.replace("_", "").replace("-", "").lower()
    for event in EVENTS:
        if event.lower() == folded:
            return event
    fail(f"unknown event {name!r}; choose one of {', '.join(EVENTS)}", EXIT_USAGE)


def _plugin_hooks(pb: Any) -> list[dict[str, Any]]:
    return [
        {
            "hook": name,
            "plugin": impl.plugin_name,
            "function": f"{getattr(impl.function, '__module__', '?')}.{getattr(impl.function, '__qualname__', '?')}",
            "runs_config_hooks": _is_runner(impl),
        }
        for name in RUNTIME_HOOKS
        for impl in pb.hook_implementations(name)
    ]


@click.group("hooks")
def command() -> None:
    """List configured hooks or test them on a synthetic event."""


@command.command("list")
@config_options
@json_option
def list_command(config_files: tuple[Path, ...], cwd: Path | None, as_json: bool) -> None:
    """Every configured hook (with its scope and file) and every in-process plugin hook."""
    pb = load_pegboard(config_files, cwd)
    configured = [h.to_json() for h in collect_handlers(pb.layers)]
    plugins = _plugin_hooks(pb)
    runner_loaded = any(p["runs_config_hooks"] for p in plugins)
    warnings = []
    if configured and not runner_loaded:
        warnings.append("configured hooks do not run: the pegboard-command-hooks plugin is not installed or not loaded")
    if as_json:
        emit_json(
            {
                "configured": configured,
                "plugins": plugins,
                "config_hooks_run": runner_loaded,
                "warnings": warnings,
            }
        )
        return
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo("Configured hooks:")
    if configured:
        rows = []
        for h in configured:
            where = ", ".join(s["scope"] + (f" ({s['path']})" if s["path"] else "") for s in h["sources"])
            extra = []
            if h.get("if"):
                extra.append(f"if {h['if']}")
            if h.get("failClosed"):
                extra.append("failClosed")
            if h.get("problem"):
                extra.append(f"NOT RUN: {h['problem']}")
            rows.append([h["event"], h["matcher"] or "*", h["type"], h["handler"], "; ".join(extra), where])
        print_table(["EVENT", "MATCHER", "TYPE", "HANDLER", "NOTES", "SOURCE"], rows)
    else:
        click.echo("  (none)")
    click.echo("")
    click.echo("Plugin hooks:")
    if plugins:
        print_table(["HOOK", "PLUGIN", "FUNCTION"], [[p["hook"], p["plugin"], p["function"]] for p in plugins])
    else:
        click.echo("  (none)")


class _AnyInput(BaseModel):
    model_config = ConfigDict(extra="allow")


async def _never(input: Any, ctx: Any) -> str:
    raise RuntimeError("a stand-in tool never runs")


def _tool(pb: Any, name: str) -> Any:
    """The registered tool, or a stand-in accepting any input (hooks may target absent tools)."""
    from pegboard import Tool, ToolDefinitionError

    found = pb.tool(name)
    if found is not None:
        return found
    try:
        return Tool(name=name, description=f"stand-in for {name}", input_model=_AnyInput, run=_never)
    except ToolDefinitionError as exc:
        fail(f"--tool {name!r}: {exc}", EXIT_USAGE)


def _decision_json(decision: Any) -> dict[str, Any] | None:
    if decision is None:
        return None
    if hasattr(decision, "model_dump") and not hasattr(decision, "content"):
        data: dict[str, Any] = decision.model_dump(mode="json", exclude_defaults=True)
        if "continue_" in data:
            data["continue"] = data.pop("continue_")
        return data
    if hasattr(decision, "to_json"):
        return {"replacement_result": decision.to_json()}
    return {"value": repr(decision)}


async def _run_test(
    pb: Any,
    event: str,
    tool_name: str | None,
    tool_input: dict[str, Any],
    response: Any,
    error_text: str,
    value: str,
    mode: str | None,
    session_id: str,
) -> dict[str, Any]:
    from pegboard import HookDecision, PermissionDecision, ToolCall, ToolResult
    from pegboard_command_hooks.engine import run_event
    from pegboard_command_hooks.protocol import combine

    ctx = pb.context(mode=mode, session_id=session_id, tool_use_id="toolu_hooks_test")
    call = None
    kwargs: dict[str, Any] = {"context": ctx, "session_id": session_id}
    if event in TOOL_EVENTS:
        assert tool_name is not None
        call = ToolCall(_tool(pb, tool_name), dict(tool_input), requested_name=tool_name, tool_use_id=ctx.tool_use_id)
        kwargs["call"] = call
    result: ToolResult = _as_result(response) if response is not None else ToolResult.from_text("")
    kwargs.update(
        result=result,
        error=RuntimeError(error_text),
        decision=PermissionDecision(decision="ask", reason="synthetic event from `pegboard hooks test`"),
        source=value,
        reason=value,
    )
    entries: list[dict[str, Any]] = []
    ordered: list[Any] = []
    for impl in pb.hook_implementations(EVENTS[event]):
        if _is_runner(impl):
            payload = _payload(event, call, ctx, result, error_text, value)
            report = await run_event(event, ctx, payload, match_value=tool_name or value, call=call)
            for handler in report.handlers:
                entries.append({"kind": handler.handler.type, **handler.to_json()})
            ordered.append(report.decision)
            continue
        entry: dict[str, Any] = {"kind": "plugin", "plugin": impl.plugin_name, "ran": True}
        try:
            answer = impl.function(**{a: kwargs[a] for a in impl.argnames if a in kwargs})
            if inspect.isawaitable(answer):
                answer = await answer
        except Exception as exc:
            entry["error"] = f"{type(exc).__name__}: {exc}"
            answer = None
        entry["decision"] = _decision_json(answer)
        entries.append(entry)
        if isinstance(answer, HookDecision):
            ordered.append(answer.model_copy(update={"source": answer.source or impl.plugin_name}))
    combined = combine(ordered)
    out: dict[str, Any] = {
        "event": event,
        "tool": call.name if call else None,
        "input": tool_input if call else None,
        "handlers": entries,
        "combined": _decision_json(combined),
    }
    if event == "PreToolUse" and call is not None and not (combined and combined.decision == "deny"):
        final_input = combined.updated_input if combined and combined.updated_input is not None else call.input
        permission = pb.check(call.name, final_input, mode=mode)
        out["permission"] = permission.to_json()
    return out


def _as_result(value: Any) -> Any:
    """``--response`` as a result: text stays text, an object is the structured output."""
    from pegboard import TextBlock, ToolResult

    if isinstance(value, str):
        return ToolResult.from_text(value)
    if isinstance(value, dict):
        return ToolResult(content=[TextBlock(text=json.dumps(value, ensure_ascii=False))], structured=value)
    raise TypeError(f"a tool returned {type(value).__name__}; return a ToolResult, a str or a dict")


def _payload(event: str, call: Any, ctx: Any, result: Any, error_text: str, value: str) -> dict[str, Any]:
    from pegboard_command_hooks.protocol import common_fields, tool_payload, tool_response

    if event == "PostToolUse":
        return dict(tool_payload(event, call, ctx, tool_response=tool_response(result)))
    if event == "PostToolUseFailure":
        return dict(tool_payload(event, call, ctx, error=error_text, is_interrupt=False))
    if event in TOOL_EVENTS:
        return dict(tool_payload(event, call, ctx))
    key = "source" if event == "SessionStart" else "reason"
    return {**common_fields(event, ctx), key: value}


@command.command("test")
@click.argument("event")
@click.option("--tool", "tool_name", default=None, help="Tool name for tool events (PreToolUse, PostToolUse, ...).")
@click.option(
    "--input",
    "input_text",
    default=None,
    metavar="JSON",
    help="Tool input as JSON, @FILE to read it from a file, or - for standard input.",
)
@click.option("--response", "response_text", default=None, metavar="JSON", help="PostToolUse: the tool's output.")
@click.option("--error", "error_text", default="synthetic failure", help="PostToolUseFailure: the error text.")
@click.option(
    "--source",
    "value",
    default=None,
    help="SessionStart source (startup, resume, clear, compact) or SessionEnd reason (exit, clear, logout, other).",
)
@click.option(
    "--mode",
    default=None,
    type=click.Choice(["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"]),
    help="Permission mode the hooks see (default: permissions.defaultMode).",
)
@click.option("--session-id", default="hooks-test", show_default=True, help="Session id the hooks see.")
@config_options
@json_option
def test_command(
    event: str,
    tool_name: str | None,
    input_text: str | None,
    response_text: str | None,
    error_text: str,
    value: str | None,
    mode: str | None,
    session_id: str,
    config_files: tuple[Path, ...],
    cwd: Path | None,
    as_json: bool,
) -> None:
    """Run the hooks matching a synthetic EVENT and show what each returned and the combined decision.

    The tool does not run. Handlers (commands, http endpoints, plugin hooks) do: test with
    the same care as a real call.
    """
    name = _event(event)
    if name in TOOL_EVENTS and not tool_name:
        fail(f"{name} needs --tool", EXIT_USAGE)
    tool_input = parse_json_input(input_text)
    if not isinstance(tool_input, dict):
        fail("--input must be a JSON object", EXIT_USAGE)
    response = parse_json_input(response_text, "--response") if response_text is not None else None
    if value is None:
        value = "startup" if name == "SessionStart" else "other"
    pb = load_pegboard(config_files, cwd)
    report = asyncio.run(_run_test(pb, name, tool_name, tool_input, response, error_text, value, mode, session_id))
    if as_json:
        emit_json(report)
        return
    _print_report(report)


def _summary(decision: dict[str, Any] | None) -> str:
    if not decision:
        return "no opinion"
    parts = []
    if decision.get("decision"):
        parts.append(str(decision["decision"]))
    if decision.get("reason"):
        parts.append(json.dumps(decision["reason"]))
    if "updated_input" in decision:
        parts.append(f"input -> {json.dumps(decision['updated_input'])}")
    if decision.get("additional_context"):
        parts.append(f"context: {json.dumps(decision['additional_context'])}")
    if decision.get("system_message"):
        parts.append(f"message: {json.dumps(decision['system_message'])}")
    if decision.get("continue") is False:
        parts.append(f"stop: {decision.get('stop_reason')}")
    if "replacement_result" in decision:
        parts.append("replaces the result")
    return ", ".join(parts) or ("notices only" if decision.get("notices") else "no opinion")


def _print_report(report: dict[str, Any]) -> None:
    for warning in report.get("warnings", []):
        click.echo(f"warning: {warning}", err=True)
    head = report["event"]
    if report["tool"]:
        head += f" {report['tool']} {json.dumps(report['input'])}"
    click.echo(head)
    rows = []
    for h in report["handlers"]:
        if h["kind"] == "plugin":
            what = f"error: {h['error']}" if h.get("error") else _summary(h["decision"])
            rows.append([f"plugin {h['plugin']}", "", what])
            continue
        run = h.get("run") or {}
        if not h["ran"]:
            what = f"skipped: {h['skipped']}"
        else:
            code = f"exit {run['exit_code']}" if run.get("status") is None else f"HTTP {run['status']}"
            what = f"{code}, {run['duration_ms']:.0f} ms: {_summary(h['decision'])}"
            if run.get("failure"):
                what = f"FAILED ({run['failure']}) -> {_summary(h['decision'])}"
        rows.append([f"{h['kind']} {h['handler']}", ", ".join(h["sources"]), what])
    if rows:
        print_table(["HANDLER", "SOURCE", "RESULT"], rows)
    else:
        click.echo("no hook matches this event")
    combined = report["combined"]
    click.echo(f"Combined: {_summary(combined)}")
    for notice in (combined or {}).get("notices", []):
        click.echo(f"notice: {notice}")
    if "permission" in report:
        p = report["permission"]
        rule = f" (rule {p['rule']})" if p.get("rule") else ""
        click.echo(f"Permission after hooks: {p['decision']}{rule}: {p['reason']}")
