"""The MCP conformance script: which scenarios apply, and (opt-in) the real suite over HTTP.

The real run installs the suite (and a node 22 runtime) from the npm registry, so it runs only
when ``PEGBOARD_MCP_CONFORMANCE=1`` is set.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "mcp_conformance.py"


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mcp_conformance", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_scenarios_that_apply_to_a_tools_only_server():
    script = load_script()
    tools_only = {"tools": {"listChanged": True}}
    for scenario in ("server-initialize", "ping", "tools-list", "dns-rebinding-protection"):
        assert script.applies(scenario, tools_only) is None, scenario
    assert "resources" in script.applies("resources-read-text", tools_only)
    assert "logging" in script.applies("logging-set-level", tools_only)
    assert "fixture" in script.applies("tools-call-simple-text", tools_only)
    assert script.applies("some-future-scenario", tools_only) == "not classified by this script"
    assert script.applies("resources-list", {"resources": {}}) is None


def test_without_npm_it_says_it_skipped(tmp_path):
    env = {**os.environ, "PATH": str(tmp_path / "empty")}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--cache", str(tmp_path / "cache")],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0
    assert "skipped:" in done.stdout


@pytest.mark.skipif(os.environ.get("PEGBOARD_MCP_CONFORMANCE") != "1", reason="set PEGBOARD_MCP_CONFORMANCE=1")
def test_conformance_suite_passes_over_http():
    done = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "skipped:" not in done.stdout
    assert "passed" in done.stdout and " failed " not in done.stdout
