"""Matcher syntax, config collection across scopes, and reading handler answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import pegboard_command_hooks
from pegboard import ConfigError, ConfigLayer, Pegboard
from pegboard_command_hooks.config import Handler, collect_handlers, event_name, url_allowed
from pegboard_command_hooks.matcher import matcher_error, matches
from pegboard_command_hooks.protocol import interpret, parse_stdout
from pegboard_command_hooks.runner import RawOutcome


@pytest.mark.parametrize(
    ("matcher", "value", "expected"),
    [
        ("", "Bash", True),
        ("*", "anything", True),
        (None, "Bash", True),
        ("Bash", "Bash", True),
        ("Bash", "BashOutput", False),  # exact, not a prefix
        ("bash", "Bash", False),  # case-sensitive
        ("Write|Edit", "Edit", True),
        ("Write | Edit", "Edit", True),
        ("Write,Edit", "Write", True),
        ("Write, Edit", "NotebookEdit", False),
        ("my-tool", "my-tool", True),  # hyphens belong to the exact set
        ("Edit.*", "NotebookEdit", True),  # regex, unanchored
        ("^Edit$", "NotebookEdit", False),
        ("mcp__memory", "mcp__memory__create", False),  # exact characters: no tool has that name
        ("mcp__memory__.*", "mcp__memory__create", True),
        ("Notebook.*|Web.*", "WebFetch", True),
        ("(?<kind>Web)Fetch", "WebFetch", True),  # JavaScript named group
        ("[unclosed", "[unclosed", False),  # invalid regex matches nothing
    ],
)
def test_matcher(matcher: str | None, value: str, expected: bool) -> None:
    assert matches(matcher, value) is expected


def test_matcher_error_names_invalid_regex() -> None:
    assert matcher_error("[unclosed") is not None
    assert matcher_error("Write|Edit") is None and matcher_error("Edit.*") is None


def test_event_names() -> None:
    assert event_name("pre_tool_use") == event_name("PreToolUse") == "PreToolUse"
    with pytest.raises(ValueError):
        event_name("Stop")


def layer(scope: str, data: dict[str, Any]) -> ConfigLayer:
    return ConfigLayer(scope, data, path=Path(f"/{scope}.json"))  # type: ignore[arg-type]


def pre(*handlers: dict[str, Any], matcher: str = "") -> dict[str, Any]:
    return {"hooks": {"PreToolUse": [{"matcher": matcher, "hooks": list(handlers)}]}}


def test_collect_merges_scopes_and_deduplicates() -> None:
    a, b = {"type": "command", "command": "a"}, {"type": "command", "command": "b"}
    found = collect_handlers(
        [layer("managed", pre(b)), layer("user", pre(a)), layer("project", pre(a, b))], "PreToolUse"
    )
    assert [(h.label, [s.scope for s in h.sources]) for h in found] == [
        ("a", ["user", "project"]),
        ("b", ["project", "managed"]),
    ]


def test_disable_all_hooks_by_precedence() -> None:
    hook = {"type": "command", "command": "a"}
    managed_hook = {"type": "command", "command": "m"}
    user_off = [layer("user", {**pre(hook), "disableAllHooks": True}), layer("managed", pre(managed_hook))]
    assert [h.label for h in collect_handlers(user_off)] == ["m"]  # managed hooks survive
    project_on = [*user_off, layer("project", {"disableAllHooks": False})]
    assert [h.label for h in collect_handlers(project_on)] == ["a", "m"]
    managed_off = [layer("user", pre(hook)), layer("managed", {**pre(managed_hook), "disableAllHooks": True})]
    assert collect_handlers(managed_off) == []
    only_managed = [layer("project", pre(hook)), layer("managed", {**pre(managed_hook), "allowManagedHooksOnly": True})]
    assert [h.label for h in collect_handlers(only_managed)] == ["m"]


def test_url_allowlist_patterns() -> None:
    assert url_allowed("http://127.0.0.1:8123/post", ["http://127.0.0.1:8123/*"])
    assert not url_allowed("http://127.0.0.1:8123.evil.com/post", ["http://127.0.0.1:8123/*"])
    assert not url_allowed("https://hooks.example.com/x", [])
    assert url_allowed("https://hooks.example.com/x", ["https://*.example.com/*"])


def handler(**spec: Any) -> Handler:
    return Handler("PreToolUse", "", {"type": "command", "command": "x", **spec})


def test_stdout_is_json_only_when_it_starts_with_a_brace() -> None:
    assert parse_stdout('  \n{"a": 1}') == ({"a": 1}, None)
    assert parse_stdout('note: {"a": 1}') == (None, None)
    assert parse_stdout("{broken")[1] is not None
    assert parse_stdout("[1, 2]") == (None, None)


@pytest.mark.parametrize(
    ("event", "raw", "expected"),
    [
        ("PreToolUse", RawOutcome(2, stderr="nope\n"), {"decision": "deny", "reason": "nope"}),
        ("PreToolUse", RawOutcome(1, stderr="oops"), {"decision": None}),
        (
            "PreToolUse",
            RawOutcome(0, stdout='{"decision": "approve", "reason": "ok"}'),
            {"decision": "allow", "reason": "ok"},
        ),
        (
            "PreToolUse",
            RawOutcome(
                0, stdout='{"hookSpecificOutput": {"hookEventName": "PostToolUse", "permissionDecision": "deny"}}'
            ),
            {"decision": None},  # another event's output is ignored
        ),
        ("PostToolUse", RawOutcome(2, stderr="red"), {"decision": "deny", "reason": "red"}),
        ("PostToolUseFailure", RawOutcome(2, stderr="why"), {"decision": None, "additional_context": "why"}),
        ("PermissionRequest", RawOutcome(2, stderr="x"), {"decision": None}),
        ("SessionStart", RawOutcome(0, stdout="context\n"), {"additional_context": "context"}),
        ("SessionEnd", RawOutcome(0, stdout="ignored\n"), {"additional_context": None}),
        ("SessionEnd", RawOutcome(2, stderr="to the user"), {"system_message": "to the user"}),
        (
            "PreToolUse",
            RawOutcome(0, stdout='{"continue": false, "stopReason": "halt", "systemMessage": "warn"}'),
            {"continue_": False, "stop_reason": "halt", "system_message": "warn"},
        ),
    ],
)
def test_interpret(event: str, raw: RawOutcome, expected: dict[str, Any]) -> None:
    decision = interpret(event, handler(), raw)
    for key, value in expected.items():
        assert getattr(decision, key, None) == value, key


def test_fail_closed_on_timeout_per_event() -> None:
    timed_out = RawOutcome(None, failure="timed out after 1 s")
    assert interpret("PreToolUse", handler(failClosed=True), timed_out).decision == "deny"  # type: ignore[union-attr]
    assert interpret("PermissionRequest", handler(failClosed=True), timed_out).decision == "deny"  # type: ignore[union-attr]
    session = interpret("SessionStart", handler(failClosed=True), timed_out)
    assert session is not None and session.decision is None and session.system_message
    open_ = interpret("PreToolUse", handler(), timed_out)
    assert open_ is not None and open_.decision is None and "timed out" in open_.notices[0]


def test_hook_settings_are_known_keys(tmp_path: Path) -> None:
    def load(data: dict[str, Any]) -> Pegboard:
        layers = [ConfigLayer("project", data)]
        return Pegboard(layers=layers, plugins=[pegboard_command_hooks], load_entrypoints=False, cwd=tmp_path)

    loaded = load({"allowedHttpHookUrls": ["http://127.0.0.1:*"], "disableAllHooks": False})
    assert loaded.warnings == []
    assert loaded.settings("allowedHttpHookUrls").root == ["http://127.0.0.1:*"]
    with pytest.raises(ConfigError, match="disableAllHooks"):
        load({"disableAllHooks": "maybe"})
