"""``pegboard call --session`` and ``pegboard sessions``, as separate real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def run(*args: str, cwd: Path, data: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PEGBOARD_DATA_DIR": str(data)}
    return subprocess.run(
        [sys.executable, "-m", "pegboard", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=60
    )


def run_json(*args: str, cwd: Path, data: Path) -> Any:
    proc = run(*args, "--json", cwd=cwd, data=data)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def test_a_cut_result_is_read_back_by_another_process(tmp_path: Path) -> None:
    data = tmp_path / "data"
    big = tmp_path / "big.txt"
    big.write_text("".join(f"{i:06d} match {'y' * 80}\n" for i in range(5000)))
    grep = {"pattern": "match", "path": str(big), "output_mode": "content", "head_limit": 0}
    first = run_json("call", "Grep", "--input", json.dumps(grep), "--session", "conv-1", cwd=tmp_path, data=data)
    assert first["session"] == "conv-1" and first["metadata"]["truncated"] is True
    ref = first["metadata"]["full_result_ref"]
    assert ref.startswith("tr_") and ref in first["content"][-1]["text"]
    second = run_json("call", "tool_result_read", "--input", json.dumps({"ref": ref, "offset": 100_000}),
                      "--session", "conv-1", cwd=tmp_path, data=data)
    assert second["is_error"] is False, second
    page = second["content"][0]["text"]
    assert " match y" in page and second["structured"]["next_offset"] > 100_000
    other = run_json("call", "tool_result_read", "--input", json.dumps({"ref": ref}), "--session", "conv-2",
                     cwd=tmp_path, data=data)
    assert other["is_error"] is True


def test_sessions_list_show_rm_prune(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (tmp_path / "a.txt").write_text("hello\n")
    for sid in ("s-one", "s-two"):
        out = run_json("call", "Read", "--input", '{"file_path": "a.txt"}', "--session", sid, cwd=tmp_path, data=data)
        assert out["session"] == sid and not out["is_error"]
    listed = run_json("sessions", "list", cwd=tmp_path, data=data)
    assert {r["id"] for r in listed} == {"s-one", "s-two"}
    shown = run_json("sessions", "show", "s-one", cwd=tmp_path, data=data)
    assert shown["id"] == "s-one" and shown["cwd"] == str(tmp_path.resolve())
    missing = run("sessions", "show", "nope", cwd=tmp_path, data=data)
    assert missing.returncode == 1 and "no stored session 'nope'" in missing.stderr
    assert run_json("sessions", "rm", "s-two", cwd=tmp_path, data=data) == {"removed": ["s-two"], "missing": []}
    assert run_json("sessions", "prune", "--older-than", "1d", cwd=tmp_path, data=data)["removed"] == []
    time.sleep(0.05)
    assert run_json("sessions", "prune", "--older-than", "0.01s", cwd=tmp_path, data=data)["removed"] == ["s-one"]
    assert run_json("sessions", "list", cwd=tmp_path, data=data) == []
    bad = run("sessions", "prune", "--older-than", "soon", cwd=tmp_path, data=data)
    assert bad.returncode == 2 and "not a duration" in bad.stderr


def test_a_bad_session_id_is_a_usage_error(tmp_path: Path) -> None:
    proc = run("call", "Read", "--input", '{"file_path": "x"}', "--session", "../../etc", cwd=tmp_path,
               data=tmp_path / "d")
    assert proc.returncode == 2 and "invalid session id" in proc.stderr


def test_without_session_nothing_is_stored(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (tmp_path / "a.txt").write_text("x\n")
    out = run_json("call", "Read", "--input", '{"file_path": "a.txt"}', cwd=tmp_path, data=data)
    assert out["session"] is None
    assert not (data / "sessions.sqlite3").exists()


def test_tools_does_not_open_the_store(tmp_path: Path) -> None:
    data = tmp_path / "data"
    proc = run("tools", "--json", cwd=tmp_path, data=data)
    assert proc.returncode == 0, proc.stderr
    assert not data.exists()


def test_a_read_in_one_process_is_in_the_ledger_of_the_next(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (tmp_path / "notes.txt").write_text("one\ntwo\n")
    read = run_json("call", "Read", "--input", '{"file_path": "notes.txt"}', "--session", "ledger-1",
                    cwd=tmp_path, data=data)
    assert not read["is_error"]
    shown = run_json("sessions", "show", "ledger-1", cwd=tmp_path, data=data)
    ledger = shown["slots"]["pegboard-read-ledger"]
    entry = ledger[str((tmp_path / "notes.txt").resolve())]
    assert entry["whole"] is True and entry["size"] == 8
    edit = {"file_path": "notes.txt", "old_string": "two", "new_string": "three"}
    edited = run_json("call", "Edit", "--input", json.dumps(edit), "--session", "ledger-1", "--yes",
                      cwd=tmp_path, data=data)
    assert not edited["is_error"], edited
    assert (tmp_path / "notes.txt").read_text() == "one\nthree\n"
    fresh = run_json("call", "Edit", "--input", json.dumps({**edit, "old_string": "one", "new_string": "1"}),
                     "--session", "other", "--yes", cwd=tmp_path, data=data)
    assert fresh["is_error"] and fresh["metadata"]["error_kind"] == "not_read"
