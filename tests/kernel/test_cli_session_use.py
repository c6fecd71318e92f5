"""What a CLI user does with sessions, as real ``pegboard`` processes: use one, list, prune,
and ask for background work that ``pegboard call`` cannot keep."""

from __future__ import annotations

import functools
import json
import time
from pathlib import Path

from pegboard import SessionRecord, SQLiteSessionStore
from tests.kernel.test_cli_sessions import run, run_json

HOUR = 3600.0
DAY = 86400.0


def seed(data: Path, cwd: Path, **ages: float) -> None:
    """Sessions created and last used ``age`` seconds ago (an earlier clock for the store)."""
    now = time.time()
    for sid, age in ages.items():
        store = SQLiteSessionStore(data / "sessions.sqlite3", clock=functools.partial(float, now - age))
        store.create(SessionRecord(id=sid, cwd=str(cwd.resolve())))
        store.close()


def test_a_session_used_a_moment_ago_survives_prune_and_is_listed_first(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (tmp_path / "a.txt").write_text("hello\n")
    seed(data, tmp_path, worked=2 * HOUR, idle=HOUR)
    assert [r["id"] for r in run_json("sessions", "list", cwd=tmp_path, data=data)] == ["idle", "worked"]
    used = run_json("call", "Read", "--input", '{"file_path": "a.txt"}', "--session", "worked", cwd=tmp_path, data=data)
    assert used["session"] == "worked" and not used["is_error"], used
    listed = run_json("sessions", "list", cwd=tmp_path, data=data)
    assert [r["id"] for r in listed] == ["worked", "idle"]
    assert time.time() - listed[0]["updated"] < 60
    plain = run("sessions", "list", cwd=tmp_path, data=data)
    assert plain.stdout.splitlines()[0].startswith("worked  ")
    pruned = run_json("sessions", "prune", "--older-than", "30m", cwd=tmp_path, data=data)  # idle: 1 h
    assert pruned["removed"] == ["idle"]
    assert [r["id"] for r in run_json("sessions", "list", cwd=tmp_path, data=data)] == ["worked"]
    said = run("sessions", "prune", "--older-than", "90m", cwd=tmp_path, data=data)
    assert said.returncode == 0 and said.stdout.strip() == "removed 0 session(s) not used for 90m"


def test_the_automatic_prune_keeps_a_session_in_use(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (tmp_path / "a.txt").write_text("hello\n")
    seed(data, tmp_path, old_but_used=40 * DAY, forgotten=40 * DAY)
    store = SQLiteSessionStore(data / "sessions.sqlite3")
    store.put("", "pegboard-last-prune", repr(time.time()))  # no prune on the next open
    store.close()
    used = run_json("call", "Read", "--input", '{"file_path": "a.txt"}', "--session", "old_but_used",
                    cwd=tmp_path, data=data)
    assert not used["is_error"], used
    store = SQLiteSessionStore(data / "sessions.sqlite3")
    store.put("", "pegboard-last-prune", repr(time.time() - 2 * DAY))  # the once-a-day prune is due
    store.close()
    other = run_json("call", "Read", "--input", '{"file_path": "a.txt"}', "--session", "new-one",
                     cwd=tmp_path, data=data)
    assert not other["is_error"], other
    assert {r["id"] for r in run_json("sessions", "list", cwd=tmp_path, data=data)} == {"old_but_used", "new-one"}


def test_background_bash_is_refused_on_the_cli_and_nothing_runs(tmp_path: Path) -> None:
    data = tmp_path / "data"
    marker = tmp_path / "ran"
    bash = {"command": f"sleep 0.2; touch {marker}", "run_in_background": True}
    for extra in (("--session", "bg"), ()):
        out = run_json("call", "Bash", "--input", json.dumps(bash), *extra, "--yes", cwd=tmp_path, data=data)
        assert out["is_error"] is True, out
        text = out["content"][0]["text"]
        assert "pegboard call ends when this call returns" in text and "nothing was started" in text
        assert "pegboard serve" in text and "pb.session()" in text
        assert "running in background" not in text.lower()
    time.sleep(0.5)
    assert not marker.exists()
    shown = run_json("sessions", "show", "bg", cwd=tmp_path, data=data)
    assert "pegboard-background-tasks" not in shown["slots"]
    output = run_json("call", "TaskOutput", "--input", '{"task_id": "b00000000"}', "--session", "bg",
                      cwd=tmp_path, data=data)
    assert output["is_error"] and "No background tasks are running" in output["content"][0]["text"]
    foreground = run_json("call", "Bash", "--input", '{"command": "echo still here"}', "--session", "bg", "--yes",
                          cwd=tmp_path, data=data)
    assert not foreground["is_error"] and "still here" in foreground["content"][0]["text"]


def test_monitor_is_refused_on_the_cli(tmp_path: Path) -> None:
    out = run_json("call", "Monitor", "--input", '{"command": "echo tick"}', "--yes", cwd=tmp_path,
                   data=tmp_path / "data")
    assert out["is_error"] is True and "nothing was started" in out["content"][0]["text"]


def test_exec_on_the_cli_waits_for_its_command_instead_of_yielding(tmp_path: Path) -> None:
    data = tmp_path / "data"
    exec_input = {"command": "sleep 0.3; echo finished", "yieldMs": 10}
    out = run_json("call", "exec", "--input", json.dumps(exec_input), "--session", "ex", "--yes",
                   cwd=tmp_path, data=data)
    assert not out["is_error"], out
    assert "finished" in out["content"][0]["text"] and out["structured"]["status"] == "completed"
    background = run_json("call", "exec", "--input", json.dumps({**exec_input, "background": True}),
                          "--session", "ex", "--yes", cwd=tmp_path, data=data)
    assert background["is_error"] and "nothing was started" in background["content"][0]["text"]
