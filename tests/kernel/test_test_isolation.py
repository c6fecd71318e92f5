"""No test touches the user's home: config, data and cache directories all resolve under the
test's own temporary home, for this process and for the processes a test starts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pegboard.core.store import default_data_dir


def test_home_and_data_dirs_are_the_tests_own(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    assert home.name == "home" and "pegboard-home" in str(home)
    assert default_data_dir().is_relative_to(home.parent)
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        assert Path(os.environ[name]).is_relative_to(home)


def test_a_process_a_test_starts_sees_the_same_home(tmp_path: Path) -> None:
    code = "import os, pathlib; print(pathlib.Path.home())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == os.environ["HOME"]
