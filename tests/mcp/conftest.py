"""Fixtures for the MCP tests: how to start ``pegboard serve`` as a subprocess."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SUPPORT = HERE / "support"
VENV_BIN = Path(sys.executable).parent
PEGBOARD = shutil.which("pegboard", path=str(VENV_BIN)) or str(VENV_BIN / "pegboard")


def serve_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a served Pegboard: isolated config dirs, the test plugin importable."""
    env = {
        "PYTHONPATH": os.pathsep.join([str(SUPPORT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        "PEGBOARD_CONFIG_DIR": os.environ["PEGBOARD_CONFIG_DIR"],
        "PEGBOARD_MANAGED_CONFIG_DIR": os.environ["PEGBOARD_MANAGED_CONFIG_DIR"],
        "PATH": os.environ.get("PATH", ""),
    }
    env.update(extra or {})
    return env


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A project directory with a text file and a config that denies ``Secret``."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "hello.txt").write_text("hello\nworld\n", encoding="utf-8")
    (tmp_path / "test-config.json").write_text(json.dumps({"permissions": {"deny": ["Secret"]}}), encoding="utf-8")
    return tmp_path


@pytest.fixture
def serve_args(workdir: Path) -> list[str]:
    return [
        "serve",
        "--plugin",
        "pegboard_mcp_testtools",
        "--config",
        str(workdir / "test-config.json"),
        "--cwd",
        str(workdir),
    ]
