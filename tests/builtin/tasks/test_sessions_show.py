"""`pegboard sessions show ID` lists a session's tasks, to-dos and stored results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def pegboard(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PEGBOARD_DATA_DIR": str(tmp_path / "data"), "HOME": str(tmp_path), **env}
    return subprocess.run(
        [sys.executable, "-m", "pegboard", *args], capture_output=True, text=True, cwd=tmp_path, env=full, timeout=60
    )


def call(tmp_path: Path, tool: str, data: dict[str, Any], **env: str) -> dict[str, Any]:
    out = pegboard(tmp_path, "call", tool, "--input", json.dumps(data), "--session", "conv", "--json", **env)
    result: dict[str, Any] = json.loads(out.stdout)
    assert result["is_error"] is False, result
    return result


def test_show_lists_tasks_todos_and_results(tmp_path: Path) -> None:
    call(tmp_path, "TaskCreate", {"subject": "Write docs"})
    call(tmp_path, "TaskCreate", {"subject": "Ship", "description": "after the docs"})
    call(tmp_path, "TaskUpdate", {"taskId": "2", "addBlockedBy": ["1"]})
    todo = {"content": "Review", "status": "pending", "activeForm": "Reviewing"}
    call(tmp_path, "TodoWrite", {"todos": [todo]}, PEGBOARD_ENABLE_TASKS="0")
    (tmp_path / "big.txt").write_text("".join(f"{i:05d} match " + "z" * 90 + "\n" for i in range(5000)))
    grep = {"pattern": "match", "path": "big.txt", "output_mode": "content", "head_limit": 0}
    read = call(tmp_path, "Grep", grep)
    ref = read["metadata"]["details_ref"]
    shown = json.loads(pegboard(tmp_path, "sessions", "show", "conv", "--json").stdout)
    assert [t["subject"] for t in shown["tasks"]] == ["Write docs", "Ship"]
    assert shown["tasks"][1]["blockedBy"] == ["1"]
    assert shown["todos"] == [todo]
    assert [r["ref"] for r in shown["results"]] == [ref]
    text = pegboard(tmp_path, "sessions", "show", "conv").stdout
    assert "task #2 [pending] Ship (blocked by #1)" in text
    assert "todo [pending] Review" in text and f"result {ref} from Grep" in text
