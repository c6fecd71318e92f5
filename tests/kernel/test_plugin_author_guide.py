"""docs/plugin-authors.md works as written: its package is the fixture the tests install and run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "tests" / "fixtures" / "third_party_plugin"
GUIDE = REPO / "docs" / "plugin-authors.md"


def guide_files() -> dict[str, str]:
    """Code blocks of the guide that start with a ``# <path>`` line, by that path."""
    blocks = re.findall(r"```(?:toml|python)\n(# ([\w./-]+)\n.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)
    return {path: text for text, path in blocks}


def test_the_guide_shows_the_package_file_for_file() -> None:
    files = guide_files()
    assert set(files) == {"pyproject.toml", "acme_shout.py", "tests/test_shout.py"}
    for path, text in files.items():
        assert (PACKAGE / path).read_text(encoding="utf-8") == text, path


def test_the_command_entry_point_names_a_command_the_module_defines() -> None:
    import tomllib

    project = tomllib.loads((PACKAGE / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    module, _, attribute = project["entry-points"]["pegboard.commands"]["shout"].partition(":")
    source = (PACKAGE / f"{module}.py").read_text(encoding="utf-8")
    assert re.search(rf"^def {attribute}\(", source, re.M) and "@click.command" in source


def test_the_package_tests_pass_under_a_plain_pytest(tmp_path: Path) -> None:
    copy = tmp_path / "acme-pegboard-shout"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("*.egg-info", "build", "__pycache__"))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        capture_output=True, text=True, timeout=120, cwd=copy, env={**os.environ, "PYTHONPATH": str(copy)},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 passed" in proc.stdout
