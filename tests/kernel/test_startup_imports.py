"""Listing tools loads every plugin that has no declaration (the others are read from their
declaration files) but none of the heavy libraries the tools need only when they run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEAVY = ("httpx", "anyio", "asyncio", "sqlite3", "websockets", "PIL", "pypdf", "nbformat", "html_to_markdown")

CODE = """
import contextlib, io, json, sys
from importlib.metadata import entry_points
from pegboard.core.cli import main
from pegboard.core.declarations import read_declaration
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        main(["tools", "--json"])
    except SystemExit as exc:
        assert not exc.code, exc.code
listing = json.loads(out.getvalue())
plugins = sorted(ep.module for ep in entry_points(group="pegboard"))
print(json.dumps({
    "enabled": len(listing["enabled"]),
    "plugins": plugins,
    "not_loaded": [m for m in plugins if m not in sys.modules],
    "lazy": [m for m in plugins if (d := read_declaration(m)) is not None and d.lazy_under(lambda key: False)],
    "modules": sorted(sys.modules),
}))
"""


def test_tools_json_imports_no_heavy_library(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, cwd=tmp_path, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["enabled"] > 0
    assert "pegboard_web_fetch" in report["plugins"] and "pegboard_memory" in report["plugins"]
    assert report["not_loaded"], "declared plugins are listed from their declarations"
    undeclared = sorted(set(report["not_loaded"]) - set(report["lazy"]))
    assert undeclared == [], "a plugin module without a lazy declaration was not imported"
    heavy = sorted({m for m in report["modules"] if m.split(".")[0] in HEAVY})
    assert heavy == [], f"imported at start-up: {heavy}"
