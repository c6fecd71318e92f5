"""Fixtures shared by every test area."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Property tests assert behaviour, never time: no per-example deadline and no "too slow"
# health check, which a loaded machine would trip. CI also runs them deterministically (a red
# CI must be reproducible); local runs keep exploring new examples.
settings.register_profile("pegboard", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", parent=settings.get_profile("pegboard"), derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "pegboard")

pytest_plugins = ["pegboard.testing"]

#: fixture packages carry their own tests, run in their own directory by the tests that use them
collect_ignore_glob = ["fixtures/*"]

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def repo_root() -> Path:
    return REPO


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the developer's own home, user and managed config and data dirs out of every test
    (and out of every process a test starts, which inherits this environment)."""
    base = tmp_path_factory.mktemp("pegboard-home")
    home = base / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        monkeypatch.setenv(name, str(home / name.lower()))
    monkeypatch.setenv("PEGBOARD_CONFIG_DIR", str(base / "user"))
    monkeypatch.setenv("PEGBOARD_MANAGED_CONFIG_DIR", str(base / "managed"))
    monkeypatch.setenv("PEGBOARD_DATA_DIR", str(base / "data"))
    monkeypatch.setenv("PEGBOARD_CACHE_DIR", str(base / "cache"))
    monkeypatch.delenv("PEGBOARD_DISABLE_PLUGINS", raising=False)
    monkeypatch.delenv("PEGBOARD_LOAD_PLUGINS", raising=False)
