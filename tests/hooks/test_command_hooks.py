"""Command hooks from config driving real calls: real sh and Python scripts, real processes."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from pegboard import ConfigLayer, PermissionDecision, Reason, hookimpl
from pegboard_command_hooks import runner
from tests.hooks.support import PYTHON, Approver, board, cmd, hooks, json_out, project_layer, script

GUARD_PY = """
import json, sys
data = json.load(sys.stdin)
if data.get("tool_name") == "Bash" and "rm -rf" in data["tool_input"].get("command", ""):
    print(json.dumps({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "rm -rf is not allowed here",
    }}))
sys.exit(0)
"""


@pytest.fixture(autouse=True)
def _short_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "TERM_GRACE_SECONDS", 0.2)


def notices(result: Any) -> list[str]:
    return list(result.metadata.get("hook_notices", []))


# --------------------------------------------------------------------------- blocking


async def test_exit_2_blocks_and_stderr_is_the_reason(tmp_path: Path) -> None:
    guard = script(tmp_path, "guard.sh", "cat >/dev/null\necho 'no rm -rf, please' >&2\nexit 2\n")
    pb = board(tmp_path, hooks("PreToolUse", cmd(str(guard)), matcher="Bash"))
    approver = Approver()
    result = await pb.call("Bash", {"command": "rm -rf build"}, approver=approver)
    assert result.is_error and result.reason == Reason.HOOK_BLOCKED
    assert "no rm -rf, please" in result.text
    assert approver.asked == []  # blocked before the permission step


async def test_hook_block_wins_in_bypass_mode(tmp_path: Path) -> None:
    guard = script(tmp_path, "guard.sh", "echo blocked >&2; exit 2\n")
    pb = board(tmp_path, hooks("PreToolUse", cmd(str(guard))))
    result = await pb.call("Bash", {"command": "make build"}, mode="bypassPermissions")
    assert result.reason == Reason.HOOK_BLOCKED and "blocked" in result.text


async def test_exit_2_cannot_be_undone_by_json_allow(tmp_path: Path) -> None:
    out = json_out({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}})
    guard = script(tmp_path, "guard.sh", f"{out}\necho 'still no' >&2\nexit 2\n")
    pb = board(tmp_path, hooks("PreToolUse", cmd(str(guard))))
    result = await pb.call("Bash", {"command": "make build"}, approver=Approver())
    assert result.reason == Reason.HOOK_BLOCKED and "still no" in result.text


async def test_exit_2_with_invalid_json_still_blocks(tmp_path: Path) -> None:
    guard = script(tmp_path, "guard.sh", "echo '{oops'\necho 'nope' >&2\nexit 2\n")
    pb = board(tmp_path, hooks("PreToolUse", cmd(str(guard))))
    result = await pb.call("Bash", {"command": "make build"}, approver=Approver())
    assert result.reason == Reason.HOOK_BLOCKED and "nope" in result.text


async def test_json_deny_from_a_python_script(tmp_path: Path) -> None:
    guard = script(tmp_path, "guard.py", GUARD_PY, python=True)
    pb = board(tmp_path, hooks("PreToolUse", cmd(str(guard)), matcher="Bash"))
    approver = Approver()
    denied = await pb.call("Bash", {"command": "rm -rf /"}, approver=approver)
    assert denied.reason == Reason.HOOK_BLOCKED and "rm -rf is not allowed here" in denied.text
    fine = await pb.call("Bash", {"command": "make build"}, approver=approver)
    assert not fine.is_error and fine.structured == {
        "stdout": "ran: make build",
        "stderr": "",
        "interrupted": False,
        "isImage": False,
    }


async def test_legacy_top_level_decision_block(tmp_path: Path) -> None:
    guard = script(tmp_path, "guard.sh", json_out({"decision": "block", "reason": "legacy says no"}) + "\n")
    pb = board(tmp_path, hooks("PreToolUse", cmd(str(guard))))
    result = await pb.call("Bash", {"command": "make build"}, approver=Approver())
    assert result.reason == Reason.HOOK_BLOCKED and "legacy says no" in result.text


async def test_continue_false_stops_with_stop_reason(tmp_path: Path) -> None:
    guard = script(tmp_path, "stop.sh", json_out({"continue": False, "stopReason": "budget exhausted"}) + "\n")
    pb = board(tmp_path, hooks("PreToolUse", cmd(str(guard))))
    result = await pb.call("Bash", {"command": "make build"}, approver=Approver())
    assert result.is_error and "budget exhausted" in result.text


async def test_ask_from_a_hook_asks(tmp_path: Path) -> None:
    out = json_out({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask"}})
    pb = board(tmp_path, hooks("PreToolUse", cmd(out)))
    approver = Approver(answer=None)
    result = await pb.call("Bash", {"command": "make build"}, mode="bypassPermissions", approver=approver)
    assert result.reason == Reason.NOT_APPROVED and len(approver.asked) == 1


# --------------------------------------------------------------------------- hooks vs rules


class AskRule:
    """Stands in for a configured ask rule (``Bash(git push *)``) with ``check_permission``."""

    @hookimpl
    def check_permission(self, call: Any) -> PermissionDecision | None:
        if call.name == "Bash" and call.input["command"].startswith("git push"):
            return PermissionDecision(decision="ask", rule="Bash(git push *)", reason="ask rule")
        return None


class DenyRmRule:
    """Stands in for a configured deny rule (``Bash(rm *)``) with ``check_permission``."""

    @hookimpl
    def check_permission(self, call: Any) -> PermissionDecision | None:
        if call.name == "Bash" and call.input["command"].startswith("rm "):
            return PermissionDecision(decision="deny", rule="Bash(rm *)", reason="deny rule")
        return None


ALLOW = json_out({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}})


async def test_hook_allow_skips_the_default_prompt(tmp_path: Path) -> None:
    pb = board(tmp_path, hooks("PreToolUse", cmd(ALLOW)))
    approver = Approver(answer=None)
    result = await pb.call("Bash", {"command": "make build"}, approver=approver)
    assert not result.is_error and approver.asked == []


async def test_hook_allow_does_not_beat_an_ask_rule(tmp_path: Path) -> None:
    pb = board(tmp_path, hooks("PreToolUse", cmd(ALLOW)), AskRule())
    approver = Approver(answer=None)
    result = await pb.call("Bash", {"command": "git push origin main"}, approver=approver)
    assert result.reason == Reason.NOT_APPROVED
    assert [d.rule for _n, d in approver.asked] == ["Bash(git push *)"]


async def test_hook_allow_does_not_beat_a_deny_rule(tmp_path: Path) -> None:
    pb = board(tmp_path, hooks("PreToolUse", cmd(ALLOW)), DenyRmRule())
    result = await pb.call("Bash", {"command": "rm x"}, approver=Approver())
    assert result.reason == Reason.DENIED and "Bash(rm *)" in result.text


def rewrite_to(command: str, decision: str | None = None) -> str:
    specific: dict[str, Any] = {"hookEventName": "PreToolUse", "updatedInput": {"command": command}}
    if decision:
        specific["permissionDecision"] = decision
    return json_out({"hookSpecificOutput": specific})


async def test_updated_input_is_what_runs(tmp_path: Path) -> None:
    pb = board(tmp_path, hooks("PreToolUse", cmd(rewrite_to("echo rewritten"))))
    result = await pb.call("Bash", {"command": "echo original"}, approver=Approver())
    assert result.structured is not None and result.structured["stdout"] == "ran: echo rewritten"


async def test_rewritten_input_is_checked_against_deny_rules(tmp_path: Path) -> None:
    pb = board(tmp_path, hooks("PreToolUse", cmd(rewrite_to("rm -rf /tmp/x", "allow"))), DenyRmRule())
    result = await pb.call("Bash", {"command": "make build"}, approver=Approver())
    assert result.reason == Reason.DENIED and "Bash(rm *)" in result.text


async def test_rewritten_input_is_validated_again(tmp_path: Path) -> None:
    out = json_out({"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"cmd": "ls"}}})
    pb = board(tmp_path, hooks("PreToolUse", cmd(out)))
    result = await pb.call("Bash", {"command": "make build"}, approver=Approver())
    assert result.reason == Reason.INVALID_INPUT and "command" in result.text


def _engine_decides(rule_kind: str, rule: str, command: str) -> bool:
    """Does the installed rule engine understand ``Bash(...)`` specifiers yet?"""
    from pegboard.core.permissions import PermissionEngine
    from tests.hooks.support import bash

    engine = PermissionEngine([ConfigLayer("code", {"permissions": {rule_kind: [rule]}})], cwd=Path("/"))
    return engine.check("Bash", {"command": command}, bash).decision == rule_kind


needs_rule_engine = pytest.mark.skipif(
    not (_engine_decides("deny", "Bash(rm *)", "rm x") and _engine_decides("ask", "Bash(git push *)", "git push")),
    reason="the permission engine does not match Bash(...) specifiers yet",
)


@needs_rule_engine
async def test_allow_hook_and_configured_ask_rule_still_asks(tmp_path: Path) -> None:
    config = {**hooks("PreToolUse", cmd(ALLOW)), "permissions": {"ask": ["Bash(git push *)"]}}
    approver = Approver(answer=None)
    result = await board(tmp_path, config).call("Bash", {"command": "git push origin main"}, approver=approver)
    assert result.reason == Reason.NOT_APPROVED and len(approver.asked) == 1


@needs_rule_engine
async def test_rewrite_then_configured_deny_rule_matches_the_rewritten_input(tmp_path: Path) -> None:
    config = {**hooks("PreToolUse", cmd(rewrite_to("rm -rf build", "allow"))), "permissions": {"deny": ["Bash(rm *)"]}}
    result = await board(tmp_path, config).call("Bash", {"command": "make build"}, approver=Approver())
    assert result.reason == Reason.DENIED


@needs_rule_engine
async def test_if_rule_selects_by_command(tmp_path: Path) -> None:
    marker = tmp_path / "ran.txt"
    config = hooks("PreToolUse", cmd(f"echo hit >> {marker}", **{"if": "Bash(git *)"}))
    pb = board(tmp_path, config)
    await pb.call("Bash", {"command": "make build"}, approver=Approver())
    assert not marker.exists()
    await pb.call("Bash", {"command": "git status"}, approver=Approver())
    assert marker.read_text().split() == ["hit"]


async def test_if_with_a_bare_tool_rule(tmp_path: Path) -> None:
    marker = tmp_path / "ran.txt"
    pb = board(tmp_path, hooks("PreToolUse", cmd(f"echo hit >> {marker}", **{"if": "Write"})))
    await pb.call("Bash", {"command": "make build"}, approver=Approver())
    assert not marker.exists()
    await pb.call("Write", {"file_path": "a.txt", "content": "x"}, approver=Approver())
    assert marker.read_text().split() == ["hit"]


# --------------------------------------------------------------------------- PostToolUse


async def test_post_tool_use_block_adds_the_reason(tmp_path: Path) -> None:
    out = json_out({"decision": "block", "reason": "lint failed on a.py"})
    pb = board(tmp_path, hooks("PostToolUse", cmd(out), matcher="Write"))
    result = await pb.call("Write", {"file_path": "a.py", "content": "x = 1"}, approver=Approver())
    assert result.reason == Reason.HOOK_BLOCKED
    assert "lint failed on a.py" in result.text and "bytes_written" in result.text  # the output stays


async def test_post_tool_use_exit_2_shows_stderr_to_the_model(tmp_path: Path) -> None:
    hook = script(tmp_path, "post.sh", "echo 'tests are red' >&2; exit 2\n")
    pb = board(tmp_path, hooks("PostToolUse", cmd(str(hook))))
    result = await pb.call("Bash", {"command": "make"}, approver=Approver())
    assert "tests are red" in result.text and "ran: make" in result.text


async def test_post_tool_use_sees_tool_response_and_adds_context(tmp_path: Path) -> None:
    body = """
import json, sys
data = json.load(sys.stdin)
path = data["tool_response"]["file_path"]
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUse",
                  "additionalContext": "formatted " + path}}))
"""
    hook = script(tmp_path, "fmt.py", body, python=True)
    pb = board(tmp_path, hooks("PostToolUse", cmd(str(hook)), matcher="Write|Edit"))
    result = await pb.call("Write", {"file_path": "/tmp/a.py", "content": "x"}, approver=Approver())
    assert not result.is_error
    assert result.metadata["additional_context"] == ["formatted /tmp/a.py"]


async def test_post_tool_use_replaces_the_output(tmp_path: Path) -> None:
    out = json_out({"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedMCPToolOutput": "[redacted]"}})
    pb = board(tmp_path, hooks("PostToolUse", cmd(out)))
    result = await pb.call("Bash", {"command": "cat secrets"}, approver=Approver())
    assert result.text == "[redacted]"


async def test_post_tool_use_failure_gets_the_error(tmp_path: Path) -> None:
    body = """
import json, sys
data = json.load(sys.stdin)
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUseFailure",
                  "additionalContext": "saw: " + data["error"]}}))
"""
    hook = script(tmp_path, "fail.py", body, python=True)
    pb = board(tmp_path, hooks("PostToolUseFailure", cmd(str(hook))))
    result = await pb.call("Fail", {"why": "disk on fire"})
    assert result.reason == Reason.TOOL_ERROR
    assert result.metadata["additional_context"] == ["saw: disk on fire"]


# --------------------------------------------------------------------------- PermissionRequest


def permission_answer(behavior: str, **extra: Any) -> str:
    return json_out(
        {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": behavior, **extra}}}
    )


async def test_permission_request_allow_answers_the_prompt(tmp_path: Path) -> None:
    pb = board(tmp_path, hooks("PermissionRequest", cmd(permission_answer("allow"))))
    approver = Approver(answer=None)
    result = await pb.call("Bash", {"command": "make build"}, approver=approver)
    assert not result.is_error and approver.asked == []


async def test_permission_request_deny_refuses(tmp_path: Path) -> None:
    pb = board(tmp_path, hooks("PermissionRequest", cmd(permission_answer("deny", message="not on Fridays"))))
    result = await pb.call("Bash", {"command": "make build"}, approver=Approver())
    assert result.reason == Reason.DENIED and "not on Fridays" in result.text


async def test_permission_request_exit_2_is_ignored(tmp_path: Path) -> None:
    pb = board(tmp_path, hooks("PermissionRequest", cmd("echo no >&2; exit 2")))
    approver = Approver()
    result = await pb.call("Bash", {"command": "make build"}, approver=approver)
    assert not result.is_error and len(approver.asked) == 1
    assert any("PermissionRequest ignores" in n for n in notices(result))


async def test_permission_request_rewrite_is_checked_against_deny_rules(tmp_path: Path) -> None:
    answer = permission_answer("allow", updatedInput={"command": "rm -rf /"})
    pb = board(tmp_path, hooks("PermissionRequest", cmd(answer)), DenyRmRule())
    result = await pb.call("Bash", {"command": "make build"}, approver=Approver())
    assert result.reason == Reason.DENIED


# --------------------------------------------------------------------------- failures


async def test_exit_1_does_not_block_but_is_reported(tmp_path: Path) -> None:
    pb = board(tmp_path, hooks("PreToolUse", cmd("echo 'lint crashed' >&2; exit 1")))
    result = await pb.call("Bash", {"command": "make build"}, approver=Approver())
    assert not result.is_error
    assert any("exited with code 1" in n and "lint crashed" in n for n in notices(result))


async def test_exit_1_with_valid_json_lets_the_json_decide(tmp_path: Path) -> None:
    out = json_out({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"}})
    pb = board(tmp_path, hooks("PreToolUse", cmd(f"{out}; exit 1")))
    result = await pb.call("Bash", {"command": "make build"}, approver=Approver())
    assert result.reason == Reason.HOOK_BLOCKED


async def test_fail_closed_blocks_on_exit_1(tmp_path: Path) -> None:
    pb = board(tmp_path, hooks("PreToolUse", cmd("exit 1", failClosed=True)))
    result = await pb.call("Bash", {"command": "make build"}, approver=Approver())
    assert result.reason == Reason.HOOK_BLOCKED and "failClosed" in result.text


async def test_missing_script_is_a_visible_notice(tmp_path: Path) -> None:
    pb = board(tmp_path, hooks("PreToolUse", cmd(str(tmp_path / "no-such-hook.sh"))))
    result = await pb.call("Bash", {"command": "make build"}, approver=Approver())
    assert not result.is_error
    assert any("could not start" in n for n in notices(result))


async def test_missing_script_fail_closed_blocks(tmp_path: Path) -> None:
    pb = board(tmp_path, hooks("PreToolUse", cmd(str(tmp_path / "typo.sh"), failClosed=True)))
    result = await pb.call("Bash", {"command": "make build"}, approver=Approver())
    assert result.reason == Reason.HOOK_BLOCKED and "could not start" in result.text


async def test_exec_form_missing_program(tmp_path: Path) -> None:
    handler = {"type": "command", "command": str(tmp_path / "missing"), "args": ["x"]}
    pb = board(tmp_path, hooks("PreToolUse", handler))
    result = await pb.call("Bash", {"command": "make build"}, approver=Approver())
    assert not result.is_error and any("could not start" in n for n in notices(result))


async def test_exec_form_passes_arguments_without_a_shell(tmp_path: Path) -> None:
    body = "import sys; print(sys.argv[1], file=sys.stderr); sys.exit(2)\n"
    hook = script(tmp_path, "argv.py", body, python=True)
    handler = {"type": "command", "command": PYTHON, "args": [str(hook), "a b; $HOME"]}
    result = await board(tmp_path, hooks("PreToolUse", handler)).call("Bash", {"command": "make build"})
    assert result.reason == Reason.HOOK_BLOCKED and "a b; $HOME" in result.text


async def test_stdout_that_is_not_json(tmp_path: Path) -> None:
    pb = board(tmp_path, hooks("PreToolUse", cmd("cat >/dev/null; echo 'all good, carry on'")))
    result = await pb.call("Bash", {"command": "make build"}, approver=Approver())
    assert not result.is_error and notices(result) == []
    broken = board(tmp_path, hooks("PreToolUse", cmd("echo '{\"hookSpecificOutput\": '")))
    result = await broken.call("Bash", {"command": "make build"}, approver=Approver())
    assert not result.is_error and any("not valid JSON" in n for n in notices(result))


async def test_huge_stdout_is_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "MAX_OUTPUT_BYTES", 64 * 1024)
    body = "import sys\nsys.stdout.write('{\"reason\": \"' + 'x' * 8_000_000 + '\"}')\n"
    hook = script(tmp_path, "big.py", body, python=True)
    started = time.perf_counter()
    result = await board(tmp_path, hooks("PreToolUse", cmd(str(hook)))).call(
        "Bash", {"command": "make build"}, approver=Approver()
    )
    assert time.perf_counter() - started < 10
    assert not result.is_error
    assert any("stdout cut at 65536 bytes" in n for n in notices(result))


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


async def test_timeout_kills_the_process_group_even_children_ignoring_sigterm(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    body = f"trap '' TERM\nsleep 30 &\necho $! > {pidfile}\nwait\n"
    hook = script(tmp_path, "slow.sh", body)
    pb = board(tmp_path, hooks("PreToolUse", cmd(str(hook), timeout=0.5)))
    started = time.perf_counter()
    result = await pb.call("Bash", {"command": "make build"}, approver=Approver())
    assert time.perf_counter() - started < 5
    assert not result.is_error  # fails open without failClosed ...
    assert any("timed out" in n for n in notices(result))  # ... but visibly
    child = int(pidfile.read_text())
    for _ in range(50):
        if _gone(child):
            break
        await asyncio.sleep(0.05)
    assert _gone(child), f"grandchild {child} survived the timeout"


async def test_timeout_fail_closed_blocks(tmp_path: Path) -> None:
    pb = board(tmp_path, hooks("PreToolUse", cmd("sleep 5", timeout=0.3, failClosed=True)))
    result = await pb.call("Bash", {"command": "make build"}, approver=Approver())
    assert result.reason == Reason.HOOK_BLOCKED and "timed out" in result.text


async def test_background_child_holding_stdout_does_not_stall_the_hook(tmp_path: Path) -> None:
    pb = board(tmp_path, hooks("PreToolUse", cmd("sleep 3 & echo ok", timeout=10)))
    started = time.perf_counter()
    result = await pb.call("Bash", {"command": "make build"}, approver=Approver())
    assert not result.is_error and time.perf_counter() - started < 2.5


# --------------------------------------------------------------------------- input, env, config


async def test_input_json_environment_and_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector")
    body = f"""
import json, os, sys
data = json.load(sys.stdin)
env = {{k: os.environ.get(k) for k in ("PEGBOARD_PROJECT_DIR", "CLAUDE_PROJECT_DIR", "OTEL_EXPORTER_OTLP_ENDPOINT")}}
json.dump({{"input": data, "env": env, "cwd": os.getcwd()}}, open({str(tmp_path / "seen.json")!r}, "w"))
"""
    hook = script(tmp_path, "spy.py", body, python=True)
    work = tmp_path / "sub"
    work.mkdir()
    pb = board(tmp_path, hooks("PreToolUse", cmd('"$CLAUDE_PROJECT_DIR"/spy.py')))
    result = await pb.call(
        "Write",
        {"file_path": "notes.txt", "content": "hi"},
        cwd=work,
        session_id="s-1",
        tool_use_id="toolu_1",
        mode="acceptEdits",
        approver=Approver(),
    )
    assert not result.is_error, result.text
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert seen["input"] == {
        "session_id": "s-1",
        "transcript_path": None,
        "cwd": str(work),
        "permission_mode": "acceptEdits",
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": str(work / "notes.txt"), "content": "hi"},
        "tool_use_id": "toolu_1",
    }
    assert seen["env"] == {
        "PEGBOARD_PROJECT_DIR": str(tmp_path),
        "CLAUDE_PROJECT_DIR": str(tmp_path),
        "OTEL_EXPORTER_OTLP_ENDPOINT": None,
    }
    assert seen["cwd"] == str(work)
    assert hook.exists()


async def test_matchers_select_tools(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    config = {
        "hooks": {
            "PreToolUse": [
                {"matcher": "Write, Edit", "hooks": [cmd(f"echo list >> {log}")]},
                {"matcher": "^Ba", "hooks": [cmd(f"echo regex >> {log}")]},
                {"matcher": "*", "hooks": [cmd(f"echo all >> {log}")]},
                {"matcher": "bash", "hooks": [cmd(f"echo wrong-case >> {log}")]},
            ]
        }
    }
    pb = board(tmp_path, config)
    await pb.call("Bash", {"command": "make build"}, approver=Approver())
    assert sorted(log.read_text().split()) == ["all", "regex"]
    log.unlink()
    await pb.call("Write", {"file_path": "a", "content": ""}, approver=Approver())
    assert sorted(log.read_text().split()) == ["all", "list"]


async def test_identical_handlers_from_two_scopes_run_once(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    same = cmd(f"echo same >> {log}")
    layers = [
        project_layer(tmp_path / "home", hooks("PreToolUse", same), scope="user"),
        project_layer(tmp_path, hooks("PreToolUse", same, cmd(f"echo other >> {log}"), matcher="Bash")),
    ]
    pb = board(tmp_path, layers=layers)
    await pb.call("Bash", {"command": "make build"}, approver=Approver())
    assert sorted(log.read_text().split()) == ["other", "same"]


async def test_matching_handlers_run_concurrently(tmp_path: Path) -> None:
    config = hooks("PreToolUse", cmd("sleep 1; echo a"), cmd("sleep 1; echo b"), cmd("sleep 1; echo c"))
    pb = board(tmp_path, config)
    started = time.perf_counter()
    await pb.call("Bash", {"command": "make build"}, approver=Approver())
    assert time.perf_counter() - started < 2.5


async def test_concurrent_rewrites_resolve_in_config_order(tmp_path: Path) -> None:
    slow_first = f"sleep 0.4; {rewrite_to('echo first')}"
    fast_last = rewrite_to("echo last")
    pb = board(tmp_path, hooks("PreToolUse", cmd(slow_first), cmd(fast_last)))
    for _ in range(2):
        result = await pb.call("Bash", {"command": "echo original"}, approver=Approver())
        assert result.structured is not None and result.structured["stdout"] == "ran: echo last"
        assert any("rewrote the input" in n for n in notices(result))


async def test_disable_all_hooks(tmp_path: Path) -> None:
    config = {**hooks("PreToolUse", cmd("exit 2")), "disableAllHooks": True}
    result = await board(tmp_path, config).call("Bash", {"command": "make build"}, approver=Approver())
    assert not result.is_error


async def test_unsupported_handler_type_is_reported(tmp_path: Path) -> None:
    pb = board(tmp_path, hooks("PreToolUse", {"type": "prompt", "prompt": "is $ARGUMENTS safe?"}))
    result = await pb.call("Bash", {"command": "make build"}, approver=Approver())
    assert not result.is_error and any("not supported" in n for n in notices(result))


async def test_no_configured_hooks_costs_no_process(tmp_path: Path) -> None:
    result = await board(tmp_path, {}).call("Bash", {"command": "make build"}, approver=Approver())
    assert not result.is_error and "hook_notices" not in result.metadata


# --------------------------------------------------------------------------- session events


async def test_session_start_and_end_through_fire(tmp_path: Path) -> None:
    log = tmp_path / "end.txt"
    record = f"{PYTHON} -c \"import json,sys; d=json.load(sys.stdin); print(d['reason'], d['session_id'])\" >> {log}"
    config = {
        "hooks": {
            "SessionStart": [
                {"matcher": "startup", "hooks": [cmd("cat >/dev/null; echo 'repo uses uv; run tests with make'")]},
                {"matcher": "resume", "hooks": [cmd("echo resumed")]},
            ],
            "SessionEnd": [{"hooks": [cmd(record)]}],
        }
    }
    pb = board(tmp_path, config)
    answers = await pb.fire("session_start", session_id="s-9", source="startup")
    assert [a.additional_context for a in answers] == ["repo uses uv; run tests with make"]
    await pb.fire("session_end", session_id="s-9", reason="logout")
    assert log.read_text().split() == ["logout", "s-9"]


async def test_session_start_ignores_if_and_cannot_block(tmp_path: Path) -> None:
    config = {
        "hooks": {
            "SessionStart": [
                {"hooks": [cmd("echo never", **{"if": "Bash"}), cmd("echo 'heads up' >&2; exit 2")]},
            ]
        }
    }
    answers = await board(tmp_path, config).fire("session_start", session_id="s", source="startup")
    assert len(answers) == 1
    assert answers[0].system_message == "heads up" and answers[0].additional_context is None


# --------------------------------------------------------------------------- anchor-style scripts


ANCHOR_STYLE = """
import json
import sys

payload = json.load(sys.stdin)
if payload["hook_event_name"] != "PreToolUse" or payload["tool_name"] != "Bash":
    sys.exit(0)
command = payload["tool_input"]["command"]
if command.startswith("rm -rf"):
    out = {"permissionDecision": "deny", "permissionDecisionReason": "Destructive command blocked by hook"}
elif command.startswith("npm "):
    out = {"permissionDecision": "allow", "permissionDecisionReason": "use pnpm",
           "updatedInput": {**payload["tool_input"], "command": "pnpm " + command[4:]}}
else:
    sys.exit(0)
out["hookEventName"] = "PreToolUse"
print(json.dumps({"hookSpecificOutput": out}))
"""


async def test_an_anchor_style_script_blocks_and_rewrites_unchanged(tmp_path: Path) -> None:
    (tmp_path / ".claude" / "hooks").mkdir(parents=True)
    script(tmp_path / ".claude" / "hooks", "bash_guard.py", ANCHOR_STYLE, python=True)
    config = hooks("PreToolUse", cmd('"$CLAUDE_PROJECT_DIR"/.claude/hooks/bash_guard.py'), matcher="Bash")
    pb = board(tmp_path, config)
    blocked = await pb.call("Bash", {"command": "rm -rf node_modules"}, approver=Approver())
    assert blocked.reason == Reason.HOOK_BLOCKED and "Destructive command blocked by hook" in blocked.text
    approver = Approver(answer=None)
    rewritten = await pb.call("Bash", {"command": "npm install", "description": "deps"}, approver=approver)
    assert not rewritten.is_error and approver.asked == []
    assert rewritten.structured is not None and rewritten.structured["stdout"] == "ran: pnpm install"
    untouched = await pb.call("Write", {"file_path": "a", "content": ""}, approver=Approver())
    assert not untouched.is_error


async def test_env_var_guard_in_sh_reading_tool_input_command(tmp_path: Path) -> None:
    body = """
input=$(cat)
case "$input" in
  *'"command": "git push --force'*|*'"command":"git push --force'*) echo "force push blocked" >&2; exit 2 ;;
esac
exit 0
"""
    guard = script(tmp_path, "guard.sh", body)
    pb = board(tmp_path, hooks("PreToolUse", cmd(str(guard)), matcher="Bash"))
    blocked = await pb.call("Bash", {"command": "git push --force origin main"}, approver=Approver())
    assert blocked.reason == Reason.HOOK_BLOCKED and "force push blocked" in blocked.text


async def test_parsed_config_lives_in_the_pegboards_stash_until_it_closes(tmp_path: Path) -> None:
    from pegboard_command_hooks.config import PARSED

    pb = board(tmp_path, hooks("PreToolUse", cmd("exit 0")))
    other = board(tmp_path, {})
    await pb.call("Bash", {"command": "make build"}, approver=Approver())
    assert [entry[0] for entry in pb.stash[PARSED].values()] == [pb._loaded_config]
    assert PARSED not in other.stash
    await pb.aclose()
    assert PARSED not in pb.stash
