"""docs/plugin-authors.md's permission family works as written, and a family plugs into the engine."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def guide_family() -> str:
    text = (REPO / "docs" / "plugin-authors.md").read_text(encoding="utf-8")
    match = re.search(r"```python\n(# example: permission family\n.*?)```", text, re.S)
    assert match is not None, "the guide's permission family example is gone"
    return match.group(1)


def test_the_guides_family_judges_its_rules(tmp_path: Path) -> None:
    script = tmp_path / "family.py"
    script.write_text(guide_family(), encoding="utf-8")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "https://example.com/docs allow",
        "http://127.0.0.1:8080/admin deny",
        "https://other.example/ ask",
    ]
