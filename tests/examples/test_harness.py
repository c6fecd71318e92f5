"""The reference harness end to end: a scripted model on 127.0.0.1 drives real tools."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

HARNESS = Path(__file__).resolve().parents[2] / "examples" / "harness.py"
QUESTION = {
    "question": "Which greeting?",
    "header": "Greeting",
    "options": [{"label": "hello", "description": "plain"}, {"label": "howdy", "description": "friendly"}],
}


def tool_call(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    call = {"id": f"call_{n}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


Step = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]


class ScriptedModel:
    """Plays the model: answers each chat-completions request with the next message of the script
    for that conversation (``by_task``: keyed by the conversation's first user message, so a
    subagent running beside the main loop follows its own script). A step may be a function
    of the request."""

    def __init__(self, script: list[Step], by_task: dict[str, list[Step]] | None = None) -> None:
        self.script = list(script)
        self.by_task = {task: list(steps) for task, steps in (by_task or {}).items()}
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with model.lock:
                    model.requests.append(body)
                    message = model.next_step(body)
                data = json.dumps({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}).encode()
                self.send_response(200 if self.path == "/v1/chat/completions" else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def next_step(self, body: dict[str, Any]) -> dict[str, Any]:
        task = next((m["content"] for m in body["messages"] if m["role"] == "user"), "")
        script = self.by_task.get(task, self.script)
        step = script.pop(0) if script else {"role": "assistant", "content": "out of script"}
        return step(body) if callable(step) else step


@pytest.fixture
def serve() -> Iterator[Any]:
    started: list[ScriptedModel] = []

    def start(script: list[Step], by_task: dict[str, list[Step]] | None = None) -> ScriptedModel:
        model = ScriptedModel(script, by_task)
        threading.Thread(target=model.server.serve_forever, daemon=True).start()
        started.append(model)
        return model

    yield start
    for model in started:
        model.server.shutdown()
        model.server.server_close()


def run_harness(tmp_path: Path, url: str, *extra: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(tmp_path / "home"), "PEGBOARD_DATA_DIR": str(tmp_path / "data")}
    env.pop("OPENAI_API_KEY", None)
    argv = [sys.executable, str(HARNESS), "--base-url", url, "--model", "scripted", "--cwd", str(tmp_path), *extra]
    return subprocess.run(argv, input=stdin, capture_output=True, text=True, env=env, timeout=120)


def test_reads_edits_runs_asks_and_plans(tmp_path: Path, serve: Any) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("greeting = hi\n")
    model = serve([
        tool_call(1, "Read", {"file_path": str(notes)}),
        tool_call(2, "Edit", {"file_path": str(notes), "old_string": "hi", "new_string": "hello"}),
        tool_call(3, "Bash", {"command": "cat notes.txt"}),
        tool_call(4, "AskUserQuestion", {"questions": [QUESTION]}),
        tool_call(5, "EnterPlanMode", {}),
        tool_call(6, "ExitPlanMode", {"plan": "1. greet"}),
        {"role": "assistant", "content": "All done: the greeting is hello."},
    ])
    out = run_harness(tmp_path, model.url, "--yes", "--profile", "full", "update the greeting", stdin="2\n")
    assert out.returncode == 0, out.stderr
    assert notes.read_text() == "greeting = hello\n"
    assert "All done: the greeting is hello." in out.stdout
    assert "> Edit" in out.stdout and "[Greeting] Which greeting?" in out.stdout
    tool_results = [m for m in model.requests[-1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_results] == [f"call_{n}" for n in range(1, 7)]
    assert "greeting = hi" in tool_results[0]["content"]
    assert "greeting = hello" in tool_results[2]["content"]
    assert '"Which greeting?"="howdy"' in tool_results[3]["content"]
    assert "approved the plan" in tool_results[5]["content"]
    names = {t["function"]["name"] for t in model.requests[0]["tools"]}
    assert {"Read", "Edit", "Bash", "AskUserQuestion", "ExitPlanMode"} <= names
    assert model.requests[0]["model"] == "scripted"


def test_a_background_agent_runs_beside_the_main_loop_and_task_output_fetches_its_report(
    tmp_path: Path, serve: Any
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("greeting = hello\n")

    def fetch_report(body: dict[str, Any]) -> dict[str, Any]:
        launched = next(m for m in reversed(body["messages"]) if m["role"] == "tool")["content"]
        match = re.search(r"task_id: (\w+)", launched)
        assert match, launched
        return tool_call(2, "TaskOutput", {"task_id": match.group(1), "timeout": 60_000})

    model = serve(
        [
            tool_call(1, "Agent", {"description": "read the notes", "prompt": "report the greeting",
                                   "run_in_background": True}),
            fetch_report,
            {"role": "assistant", "content": "The subagent says the greeting is hello."},
        ],
        by_task={"report the greeting": [
            tool_call(1, "Read", {"file_path": str(notes)}),
            {"role": "assistant", "content": "SUBAGENT REPORT: greeting = hello"},
        ]},
    )
    out = run_harness(tmp_path, model.url, "--yes", "--profile", "full", "what is the greeting?")
    assert out.returncode == 0, out.stderr
    assert "-> background subagent general-purpose: read the notes" in out.stdout
    assert "The subagent says the greeting is hello." in out.stdout
    main = [r for r in model.requests if r["messages"][1]["content"] == "what is the greeting?"]
    sub = [r for r in model.requests if r["messages"][1]["content"] == "report the greeting"]
    assert len(main) == 3 and len(sub) == 2
    launched, fetched = [m for m in main[-1]["messages"] if m["role"] == "tool"]
    assert "Started background agent" in launched["content"]
    assert "SUBAGENT REPORT: greeting = hello" in fetched["content"] and "completed" in fetched["content"]
    sub_tools = {t["function"]["name"] for t in sub[0]["tools"]}
    assert "Read" in sub_tools and "Agent" not in sub_tools
    assert "greeting = hello" in next(m for m in sub[-1]["messages"] if m["role"] == "tool")["content"]


def test_a_background_agents_ask_reaches_the_terminal_named_by_the_subagent(tmp_path: Path, serve: Any) -> None:
    target = tmp_path / "made.txt"

    def fetch_report(body: dict[str, Any]) -> dict[str, Any]:
        launched = next(m for m in reversed(body["messages"]) if m["role"] == "tool")["content"]
        return tool_call(2, "TaskOutput", {"task_id": re.findall(r"task_id: (\w+)", launched)[0]})

    model = serve(
        [tool_call(1, "Agent", {"description": "make a file", "prompt": "make it", "run_in_background": True}),
         fetch_report, {"role": "assistant", "content": "finished"}],
        by_task={"make it": [tool_call(1, "Write", {"file_path": str(target), "content": "made"}),
                             {"role": "assistant", "content": "wrote it"}]},
    )
    out = run_harness(tmp_path, model.url, "--profile", "full", "make a file in the background", stdin="y\n")
    assert out.returncode == 0, out.stderr
    assert "[subagent general-purpose] Allow Write" in out.stderr
    assert target.read_text() == "made"


def test_without_yes_a_refused_ask_is_reported_to_the_model(tmp_path: Path, serve: Any) -> None:
    target = tmp_path / "new.txt"
    model = serve([
        tool_call(1, "Write", {"file_path": str(target), "content": "x"}),
        {"role": "assistant", "content": "I was not allowed to write."},
    ])
    out = run_harness(tmp_path, model.url, "write a file", stdin="n\n")
    assert out.returncode == 0, out.stderr
    assert not target.exists()
    tool_result = next(m for m in model.requests[-1]["messages"] if m["role"] == "tool")
    assert "refused" in tool_result["content"]
    assert "I was not allowed to write." in out.stdout


def test_an_endpoint_error_exits_non_zero(tmp_path: Path, serve: Any) -> None:
    model = serve([])
    out = run_harness(tmp_path, model.url.replace("/v1", "/nowhere"), "anything")
    assert out.returncode == 2 and "endpoint failed" in out.stderr


def test_a_scheduled_prompt_reaches_the_model_as_the_next_turn(tmp_path: Path, serve: Any) -> None:
    def run_the_job(body: dict[str, Any]) -> dict[str, Any]:
        made = [m for m in body["messages"] if m["role"] == "tool"][-1]["content"]
        job_id = re.search(r"job ([0-9a-f]{8})", made)
        assert job_id, made
        return tool_call(2, "cron", {"action": "run", "jobId": job_id.group(1)})

    model = serve([
        tool_call(1, "CronCreate", {"cron": "*/5 * * * *", "prompt": "check the build"}),
        run_the_job,
        tool_call(3, "ScheduleWakeup", {"delaySeconds": 120, "prompt": "look again", "reason": "CI is slow"}),
        tool_call(4, "ScheduleWakeup", {"stop": True}),
        {"role": "assistant", "content": "Scheduled."},
        {"role": "assistant", "content": "The build is green."},
    ])
    out = run_harness(tmp_path, model.url, "--yes", "--profile", "full", "watch the build")
    assert out.returncode == 0, out.stderr
    assert "[scheduled prompt for" in out.stdout and "check the build" in out.stdout
    assert "Next iteration in 2 minutes" in out.stdout and "the pending wakeup was cancelled" in out.stdout
    last = model.requests[-1]["messages"]
    assert last[-1] == {"role": "user", "content": "check the build"}
    assert out.stdout.rstrip().endswith("The build is green.")
    names = {t["function"]["name"] for t in model.requests[0]["tools"]}
    assert {"CronCreate", "CronList", "CronDelete", "ScheduleWakeup", "cron"} <= names


def test_skills_sessions_messages_spawn_and_cron_listing(tmp_path: Path, serve: Any) -> None:
    skill = tmp_path / ".pegboard" / "skills" / "greet"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: greet\ndescription: Greet politely.\n---\nSay hello first.\n")

    def delete_the_job(body: dict[str, Any]) -> dict[str, Any]:
        made = [m for m in body["messages"] if m["role"] == "tool"][-2]["content"]
        job_id = re.search(r"job ([0-9a-f]{8})", made)
        assert job_id, made
        return tool_call(9, "CronDelete", {"id": job_id.group(1)})

    model = serve([
        tool_call(1, "Skill", {"skill": "greet"}),
        tool_call(2, "agents_list", {}),
        tool_call(3, "sessions_list", {}),
        tool_call(4, "sessions_history", {"sessionKey": "main"}),
        tool_call(5, "sessions_send", {"sessionKey": "main", "message": "status?", "timeoutSeconds": 0}),
        tool_call(6, "sessions_spawn", {"task": "count the files", "label": "counter"}),
        tool_call(7, "CronCreate", {"cron": "0 9 * * 1", "prompt": "weekly report"}),
        tool_call(8, "CronList", {}),
        delete_the_job,
        {"role": "assistant", "content": "Everything listed."},
    ], by_task={"count the files": [{"role": "assistant", "content": "There are 2 files."}]})
    out = run_harness(tmp_path, model.url, "--yes", "--profile", "full", "look around")
    assert out.returncode == 0, out.stderr
    assert "Everything listed." in out.stdout
    results = {m["tool_call_id"]: m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"}
    assert sorted(results) == [f"call_{n}" for n in range(1, 10)], results
    assert "Say hello first." in results["call_1"]
    assert "main" in results["call_2"]
    assert "weekly report" in results["call_8"]
    assert "Accepted" in results["call_6"]
    assert results["call_3"] == "No sessions." and results["call_4"] == "No messages."
    assert results["call_5"].startswith("Delivered to ") and results["call_9"].startswith("Cancelled job ")
    names = {t["function"]["name"] for t in model.requests[0]["tools"]}
    assert {"Skill", "agents_list", "sessions_list", "sessions_history", "sessions_send", "sessions_spawn",
            "SendMessage"} <= names
