"""The examples in docs/ marked ``<!-- example: NAME -->`` run as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MARKED = re.compile(r"<!-- example: ([\w-]+) -->\s*```python\n(.*?)```", re.S)


def examples() -> list[tuple[str, str]]:
    found = []
    for page in sorted((REPO / "docs").glob("*.md")):
        for name, code in MARKED.findall(page.read_text(encoding="utf-8")):
            found.append((f"{page.name}:{name}", code))
    return found


@pytest.mark.parametrize(("name", "code"), examples(), ids=[n for n, _ in examples()])
def test_example_runs(name: str, code: str, tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# A project\n\nwith a readme\n")
    env = {**os.environ, "PEGBOARD_DATA_DIR": str(tmp_path / "data")}
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, f"{name} failed:\n{proc.stderr}"


def test_there_are_examples() -> None:
    assert {n.split(":")[1] for n, _ in examples()} >= {"sessions", "events", "plugin-state"}
