"""A fresh checkout as the README describes it: ``dev.py start`` and the Python snippet."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]


def dev_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pegboard_dev_script", REPO / "dev.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fake_tree(root: Path) -> None:
    (root / "plugins" / "p").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "pegboard"\ndependencies = ["click"]\n')
    (root / "plugins" / "p" / "pyproject.toml").write_text('[project]\nname = "pegboard-p"\n')
    (root / "requirements-dev.txt").write_text("pytest\n")


def test_the_install_stamp_changes_only_with_what_the_installs_read(tmp_path: Path) -> None:
    dev = dev_module()
    fake_tree(tmp_path)
    first = dev.install_stamp(tmp_path)
    (tmp_path / "plugins" / "p" / "module.py").write_text("x = 1\n")
    (tmp_path / "README.md").write_text("docs\n")
    assert dev.install_stamp(tmp_path) == first, "source files are installed in editable mode"
    (tmp_path / "plugins" / "p" / "pyproject.toml").write_text('[project]\nname = "pegboard-p"\nversion = "2"\n')
    second = dev.install_stamp(tmp_path)
    assert second != first
    (tmp_path / "plugins" / "q").mkdir()
    (tmp_path / "plugins" / "q" / "pyproject.toml").write_text('[project]\nname = "pegboard-q"\n')
    third = dev.install_stamp(tmp_path)
    assert third != second, "a new distribution must be installed"
    (tmp_path / "requirements-dev.txt").write_text("pytest\nhypothesis\n")
    assert dev.install_stamp(tmp_path) != third


def test_a_second_start_skips_the_installs_and_says_so() -> None:
    dev = dev_module()
    if not dev.up_to_date(REPO):
        pytest.skip("this checkout's .venv was not set up by the current dev.py (run python3 dev.py setup)")
    proc = subprocess.run(
        [sys.executable, str(REPO / "dev.py"), "start", "--version"],
        capture_output=True, text=True, timeout=60, cwd=REPO,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "skipping pip installs" in proc.stderr and "running pegboard --version" in proc.stderr
    assert "pip" not in proc.stderr.replace("skipping pip installs", "")
    lines = proc.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("pegboard, version "), "dev.py's own lines go to stderr"


def readme_python() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Use it from Python", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None, "the README's Python snippet is gone"
    return match.group(1)


def test_the_readme_python_snippet_runs_as_written(tmp_path: Path) -> None:
    script = tmp_path / "snippet.py"
    script.write_text(readme_python())
    env = {**os.environ, "PEGBOARD_CONFIG_DIR": str(tmp_path / "user-config")}
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, cwd=REPO, env=env
    )
    assert proc.returncode == 0, proc.stderr
    assert "'Read'" in proc.stdout, "the tool list"
    assert "# Pegboard" in proc.stdout, "the Read call returned the README's first line"
    assert "not_approved" in proc.stdout and "approver=" in proc.stdout, "the refused call says how to allow it"


def test_the_test_command_names_each_step_as_it_starts() -> None:
    dev = dev_module()
    if not dev.up_to_date(REPO):
        pytest.skip("this checkout's .venv was not set up by the current dev.py (run python3 dev.py setup)")
    proc = subprocess.run(
        [sys.executable, str(REPO / "dev.py"), "test", "-n", "0", "--co", "-q", "tests/kernel/test_deferred.py"],
        capture_output=True, text=True, timeout=300, cwd=REPO,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    steps = [line for line in proc.stderr.splitlines() if line.startswith("dev.py: step ")]
    assert [s.split(":")[1].strip() for s in steps] == ["step 1/4", "step 2/4", "step 3/4", "step 4/4"]
    assert "mypy (types; about 15 s without its cache)" in steps[1]
