"""The JSON hook protocol: the event JSON a handler reads, and how its answer is understood.

In: common fields (``session_id``, ``transcript_path``, ``cwd``, ``permission_mode``,
``hook_event_name``) plus per-event fields (``tool_name``, ``tool_input``, ``tool_use_id``,
``tool_response``, ``error``, ``source``, ``reason`` ...).

Out, for a command handler:

- exit 0: stdout is JSON only if its first non-space character is ``{``; otherwise plain text
  (added to the model's context for SessionStart, ignored elsewhere);
- exit 2: a block where the event can block; the reason is the JSON's reason if it gives
  one, else stderr. JSON cannot undo it;
- any other exit: with valid JSON the JSON decides; without it a visible notice, and the
  call goes on (unless the handler is ``failClosed``).

An ``http`` handler's 2xx answer is read like exit 0; a failure like a failed command.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pegboard import HookDecision, TextBlock, ToolCall, ToolContext, ToolResult
from pegboard_command_hooks.config import Handler
from pegboard_command_hooks.runner import RawOutcome

MAX_TEXT = 10_000  # longest reason / context / message taken from one handler
PATH_FIELDS = ("file_path", "notebook_path")
_RANK = {"deny": 4, "defer": 3, "ask": 2, "allow": 1}


# --------------------------------------------------------------------------- input JSON


def hook_tool_input(tool_input: Mapping[str, Any], cwd: Path) -> dict[str, Any]:
    """The tool input as hooks see it: ``file_path`` / ``notebook_path`` made absolute."""
    view = dict(tool_input)
    for key in PATH_FIELDS:
        value = view.get(key)
        if isinstance(value, str) and value:
            path = Path(value).expanduser()
            view[key] = str(path if path.is_absolute() else cwd / path)
    return view


def common_fields(event: str, ctx: ToolContext) -> dict[str, Any]:
    return {
        "session_id": ctx.session_id or "",
        "transcript_path": None,
        "cwd": str(ctx.cwd),
        "permission_mode": ctx.mode,
        "hook_event_name": event,
    }


def tool_response(result: ToolResult) -> Any:
    """The PostToolUse ``tool_response``: the tool's structured output, else its text."""
    return result.structured if result.structured is not None else result.text


def tool_payload(event: str, call: ToolCall, ctx: ToolContext, **extra: Any) -> dict[str, Any]:
    payload = common_fields(event, ctx)
    payload["tool_name"] = call.name
    payload["tool_input"] = hook_tool_input(call.input, ctx.cwd)
    if event == "PermissionRequest":
        payload["permission_suggestions"] = []
    else:
        payload["tool_use_id"] = call.tool_use_id or ctx.tool_use_id
    payload.update(extra)
    return payload


# --------------------------------------------------------------------------- output


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = text.strip()
    if not text:
        return None
    if len(text) > MAX_TEXT:
        text = text[:MAX_TEXT] + f"... [cut at {MAX_TEXT} characters]"
    return text


def parse_stdout(stdout: str) -> tuple[dict[str, Any] | None, str | None]:
    """(JSON object, error): JSON only if stdout's first non-space character is ``{``."""
    text = stdout.lstrip()
    if not text.startswith("{"):
        return None, None
    try:
        value = json.loads(text)
    except ValueError as exc:
        return None, f"stdout starts with '{{' but is not valid JSON ({exc})"
    if not isinstance(value, dict):
        return None, "stdout is JSON but not an object"
    return value, None


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:300]


def updated_output(value: Any) -> Any:
    """A hook's replacement tool output in a form the kernel accepts (str, dict or ToolResult)."""
    if isinstance(value, str | dict):
        return value
    if isinstance(value, list):  # MCP content blocks
        blocks: list[Any] = []
        for item in value:
            if isinstance(item, Mapping) and isinstance(item.get("text"), str):
                blocks.append(TextBlock(text=item["text"]))
            else:
                blocks.append(TextBlock(text=json.dumps(item, ensure_ascii=False, default=str)))
        return ToolResult(content=blocks)
    return json.dumps(value, ensure_ascii=False, default=str)


class _Answer:
    """Fields collected from one handler before they become a ``HookDecision``."""

    def __init__(self) -> None:
        self.fields: dict[str, Any] = {}
        self.notices: list[str] = []

    def set(self, key: str, value: Any) -> None:
        if value is not None:
            self.fields[key] = value

    def decision(self, source: str) -> HookDecision | None:
        if not self.fields and not self.notices:
            return None
        return HookDecision(**self.fields, notices=tuple(self.notices), source=source)


def _read_json(event: str, data: Mapping[str, Any], answer: _Answer, name: str) -> None:
    """Universal fields and the event's decision fields from a JSON answer."""
    if data.get("continue") is False:
        answer.set("continue_", False)
        answer.set("stop_reason", _text(data.get("stopReason")) or f"{name} stopped the run")
    answer.set("system_message", _text(data.get("systemMessage")))
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, Mapping) else {}
    if specific.get("hookEventName") not in (None, event):
        answer.notices.append(f"{name}: hookSpecificOutput is for {specific.get('hookEventName')!r}; ignored")
        specific = {}
    answer.set("additional_context", _text(specific.get("additionalContext")))
    legacy = data.get("decision")
    reason = _text(data.get("reason"))
    if event == "PreToolUse":
        decision = specific.get("permissionDecision")
        if decision is None and legacy is not None:
            decision = {"approve": "allow", "block": "deny"}.get(legacy, legacy)
        if decision is not None and decision not in _RANK:
            answer.notices.append(f"{name}: permissionDecision {decision!r} is not allow, deny, ask or defer; ignored")
            decision = None
        answer.set("decision", decision)
        answer.set("reason", _text(specific.get("permissionDecisionReason")) or reason)
        new_input = specific.get("updatedInput")
        if new_input is not None and not isinstance(new_input, dict):
            answer.notices.append(f"{name}: updatedInput is not an object; ignored")
        elif new_input is not None:
            answer.set("updated_input", new_input)
    elif event in ("PostToolUse", "PostToolUseFailure"):
        if legacy == "block":
            if event == "PostToolUse":
                answer.set("decision", "deny")
                answer.set("reason", reason or f"{name} blocked the result")
            else:
                _add_context(answer, reason)
        new_output = specific.get("updatedToolOutput", specific.get("updatedMCPToolOutput"))
        if event == "PostToolUse" and new_output is not None:
            answer.set("updated_output", updated_output(new_output))
    elif event == "PermissionRequest":
        verdict = specific.get("decision")
        if isinstance(verdict, Mapping) and verdict.get("behavior") in ("allow", "deny"):
            answer.set("decision", verdict["behavior"])
            if verdict["behavior"] == "deny":
                answer.set("reason", _text(verdict.get("message")) or f"{name} denied the request")
            elif isinstance(verdict.get("updatedInput"), dict):
                answer.set("updated_input", verdict["updatedInput"])
        elif verdict is not None:
            answer.notices.append(f"{name}: decision.behavior must be allow or deny; ignored")


def _add_context(answer: _Answer, text: str | None) -> None:
    if text:
        prior = answer.fields.get("additional_context")
        answer.fields["additional_context"] = f"{prior}\n{text}" if prior else text


def _fail(event: str, handler: Handler, failure: str, answer: _Answer, name: str) -> None:
    if not handler.fail_closed:
        answer.notices.append(f"{name} failed: {failure}; ignored, the call goes on (set failClosed to block)")
        return
    reason = f"{name} failed and is failClosed: {failure}"
    if event in ("PreToolUse", "PostToolUse", "PermissionRequest"):
        answer.set("decision", "deny")
        answer.set("reason", reason)
    else:
        answer.notices.append(f"{reason} (a {event} hook cannot block)")
        answer.set("system_message", reason)


def interpret(event: str, handler: Handler, raw: RawOutcome) -> HookDecision | None:
    """One handler's answer as a ``HookDecision`` (``None``: no opinion, nothing to report)."""
    name = f"{event} {handler.type} hook {handler.label!r}"
    source = f"{handler.type} hook {handler.label!r} from {handler.sources[0].scope if handler.sources else 'config'}"
    answer = _Answer()
    answer.notices.extend(f"{name}: {t}" for t in raw.truncated)
    data, json_error = parse_stdout(raw.stdout)
    failure = raw.failure
    if failure is None and raw.exit_code not in (0, 2) and data is None:
        failure = f"exited with code {raw.exit_code}" + (f": {_first_line(raw.stderr)}" if raw.stderr.strip() else "")
    if failure is not None:
        _fail(event, handler, failure, answer, name)
        return answer.decision(source)
    if data is not None:
        _read_json(event, data, answer, name)
    elif json_error is not None:
        answer.notices.append(f"{name}: {json_error}; treated as plain text")
    elif event == "SessionStart" and raw.exit_code == 0:
        answer.set("additional_context", _text(raw.stdout))
    if raw.exit_code == 2:
        _exit_two(event, raw, answer, name)
    return answer.decision(source)


def _exit_two(event: str, raw: RawOutcome, answer: _Answer, name: str) -> None:
    """Exit 2: block where the event can; JSON cannot undo it, its reason is used if given."""
    stderr = _text(raw.stderr)
    if event in ("PreToolUse", "PostToolUse"):
        answer.fields["decision"] = "deny"
        answer.fields.pop("updated_input", None)
        answer.fields["reason"] = answer.fields.get("reason") or stderr or f"{name} exited with code 2"
    elif event == "PostToolUseFailure":
        _add_context(answer, stderr)
    elif event == "PermissionRequest":
        answer.notices.append(f"{name} exited with code 2, which PermissionRequest ignores")
    else:
        answer.set("system_message", stderr)


# --------------------------------------------------------------------------- combining


def combine(decisions: Iterable[HookDecision | None]) -> HookDecision | None:
    """Several handlers' answers (in config order) as one: deny > defer > ask > allow.

    The reason is every reason given at the winning rank; the last rewrite of the input or
    the output in config order wins (deterministic, whatever finished first); contexts,
    messages and notices are all kept.
    """
    answers = [d for d in decisions if d is not None]
    if not answers:
        return None
    ranked = [d for d in answers if d.decision is not None]
    top = max((_RANK[d.decision] for d in ranked if d.decision), default=0)
    winners = [d for d in ranked if d.decision and _RANK[d.decision] == top]
    fields: dict[str, Any] = {}
    if winners:
        fields["decision"] = winners[0].decision
        reasons = list(dict.fromkeys(d.reason for d in winners if d.reason))
        fields["reason"] = "; ".join(reasons) or None
        fields["source"] = ", ".join(dict.fromkeys(d.source or "" for d in winners)).strip(", ") or None
    else:
        fields["source"] = answers[0].source
    rewrites = [d.updated_input for d in answers if d.updated_input is not None]
    notices = [n for d in answers for n in d.notices]
    if len(rewrites) > 1 and any(r != rewrites[-1] for r in rewrites):
        notices.append(f"{len(rewrites)} hooks rewrote the input; the last in config order won")
    if rewrites and fields.get("decision") != "deny":
        fields["updated_input"] = rewrites[-1]
    outputs = [d.updated_output for d in answers if d.updated_output is not None]
    if outputs:
        fields["updated_output"] = outputs[-1]
    for key in ("additional_context", "system_message"):
        texts = [getattr(d, key) for d in answers if getattr(d, key)]
        fields[key] = "\n".join(texts) if texts else None
    stopped = [d for d in answers if not d.continue_]
    if stopped:
        fields["continue_"] = False
        fields["stop_reason"] = stopped[0].stop_reason
    return HookDecision(**fields, notices=tuple(notices))
