"""``config validate`` warns about ``/dir`` rules whose directory the file's base lacks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pegboard.core.permissions.anchors import anchored_directory

RULES = {
    "deny": ["Edit(/etc/**)", "Read(//etc/shadow)", "Read(/src/**)", "Read(/.env)", "Bash(rm *)",
             "Read(/../outside/**)", "Read(file_path:/etc/x)"],
    "ask": ["Read(/missing/*.pem)"],
}


def validate(file: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PEGBOARD_CONFIG_DIR": str(file.parent / ".user-config")}
    return subprocess.run([sys.executable, "-m", "pegboard", "config", "validate", *extra, str(file)],
                          capture_output=True, text=True, env=env, timeout=60, cwd=file.parent)


def test_anchored_directory_is_the_literal_directory_below_the_base() -> None:
    assert anchored_directory("/etc/**") == "etc"
    assert anchored_directory("/etc/shadow") == "etc"
    assert anchored_directory("/usr/local/*/bin/x") == "usr/local"
    assert anchored_directory("/.env") == ""
    assert anchored_directory("//etc/**") is None
    assert anchored_directory("src/**") is None
    assert anchored_directory("/../x/**") is None


def test_a_cli_config_file_gets_a_warning_and_the_double_slash_form(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    file = tmp_path / "agent.json"
    file.write_text(json.dumps({"permissions": RULES}))
    proc = validate(file)
    assert proc.returncode == 0, proc.stderr
    warned = [line for line in proc.stderr.splitlines() if "anchors at this file's base" in line]
    assert len(warned) == 2, proc.stderr
    assert "'Edit(/etc/**)'" in warned[0] and f"means {tmp_path}/etc/**" in warned[0]
    assert "write Edit(//etc/**)" in warned[0]
    assert "'Read(/missing/*.pem)'" in warned[1] and "write Read(//missing/*.pem)" in warned[1]
    assert validate(file, "--strict").returncode == 1


def test_a_project_file_is_anchored_at_the_project_root_and_json_carries_the_warning(tmp_path: Path) -> None:
    (tmp_path / ".pegboard").mkdir()
    (tmp_path / "etc").mkdir()  # exists at the project root, so Edit(/etc/**) is meant relative
    file = tmp_path / ".pegboard" / "settings.json"
    file.write_text(json.dumps({"permissions": {"deny": ["Edit(/etc/**)", "Write(/build/**)"]}}))
    data = json.loads(validate(file, "--json").stdout)
    assert data["valid"] is True
    warned = [w for w in data["warnings"] if "anchors at this file's base" in w]
    assert len(warned) == 1 and "'Write(/build/**)'" in warned[0] and f"{tmp_path}/build does not exist" in warned[0]
    assert "write Write(//build/**)" in warned[0]
