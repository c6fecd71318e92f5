"""The start-up cache of ``pegboard tools``: replayed while nothing changed, fresh after any change.

Each test drives the real command line in subprocesses against a plugin distribution of its
own (a ``dist-info`` folder and a module on ``PYTHONPATH``). Whether a run was answered from
the cache shows in ``-X importtime``: a replay imports neither the kernel nor the plugin.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pegboard.core import outputcache
from pegboard.core.launch import project_cwd

PLUGIN = '''
from pydantic import BaseModel
from pegboard import hookimpl, tool


class Empty(BaseModel):
    pass


@tool(name="{name}", input_model=Empty)
async def probe(input: Empty, ctx: object) -> str:
    """A tool that only exists to be listed."""
    return "ok"


@hookimpl
def register_tools(register):
    register(probe)
'''


class Site:
    """A plugin distribution ``cacheprobe`` on its own ``sys.path`` entry."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.dist = root / "cacheprobe-0.1.0.dist-info"
        self.dist.mkdir(parents=True)
        self.module = root / "cacheprobe_plugin.py"
        self.entry_points("[pegboard]\ncacheprobe = cacheprobe_plugin\n")
        self.code(PLUGIN.format(name="ProbeOne"))

    def entry_points(self, text: str) -> None:
        (self.dist / "entry_points.txt").write_text(text, encoding="utf-8")

    def code(self, text: str) -> None:
        self.module.write_text(text, encoding="utf-8")


@pytest.fixture
def site(tmp_path: Path) -> Site:
    return Site(tmp_path / "site")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    return root


def run(project: Path, site: Site, *args: str, env: dict[str, str] | None = None) -> tuple[dict, str]:
    """``pegboard tools --json ARGS``: the listing, and the ``-X importtime`` report on stderr."""
    # no __pycache__ appearing beside the plugin: a run that changes a directory is not stored
    full = {**os.environ, "PYTHONPATH": str(site.root), "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "pegboard", "tools", "--json", *args],
        capture_output=True,
        text=True,
        cwd=project,
        env=full,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout), proc.stderr


def names(listing: dict) -> set[str]:
    return set(listing["enabled"]) | {d["name"] for d in listing["disabled"]}


def replayed(report: str) -> bool:
    return "pegboard.core.app" not in report and "cacheprobe_plugin" not in report


def entries() -> list[Path]:
    return sorted(Path(outputcache.cache_dir()).glob("tools-*.json"))


def test_the_second_run_is_replayed_with_the_same_output(project: Path, site: Site) -> None:
    first, report = run(project, site)
    assert "ProbeOne" in first["enabled"] and not replayed(report)
    assert len(entries()) == 1
    second, report = run(project, site)
    assert second == first
    assert replayed(report), "the second run imported the kernel"


def test_changed_plugin_code_is_never_served_from_the_cache(project: Path, site: Site) -> None:
    run(project, site)
    site.code(PLUGIN.format(name="ProbeTwoRenamed"))
    listing, report = run(project, site)
    assert not replayed(report)
    assert "ProbeTwoRenamed" in names(listing) and "ProbeOne" not in names(listing)


def test_changed_entry_points_are_never_served_from_the_cache(project: Path, site: Site) -> None:
    run(project, site)
    site.entry_points("[pegboard]\n")
    listing, report = run(project, site)
    assert not replayed(report) and "ProbeOne" not in names(listing)


def test_a_plugin_that_now_fails_to_import_is_reported_every_time(project: Path, site: Site) -> None:
    run(project, site)
    site.code("raise RuntimeError('broken on purpose')\n")
    for _ in range(2):
        listing, report = run(project, site)
        assert "ProbeOne" not in names(listing)
        assert "plugin cacheprobe failed to load" in report and not replayed(report)


def test_changed_project_config_is_never_served_from_the_cache(project: Path, site: Site) -> None:
    run(project, site)
    (project / ".pegboard").mkdir()
    (project / ".pegboard" / "settings.json").write_text('{"tools": {"deny": ["ProbeOne"]}}', encoding="utf-8")
    listing, report = run(project, site)
    assert not replayed(report) and "ProbeOne" not in listing["enabled"]
    (project / ".pegboard" / "settings.json").write_text('{"tools": {"deny": []}}', encoding="utf-8")
    listing, report = run(project, site)
    assert not replayed(report) and "ProbeOne" in listing["enabled"]


def test_new_user_config_and_options_and_environment_make_their_own_entries(project: Path, site: Site) -> None:
    run(project, site)
    user = Path(os.environ["PEGBOARD_CONFIG_DIR"])
    user.mkdir(parents=True, exist_ok=True)
    (user / "settings.toml").write_text('[tools]\ndeny = ["ProbeOne"]\n', encoding="utf-8")
    listing, report = run(project, site)
    assert not replayed(report) and "ProbeOne" not in listing["enabled"]
    listing, report = run(project, site, env={"PEGBOARD_DISABLE_PLUGINS": "cacheprobe"})
    assert not replayed(report) and "ProbeOne" not in names(listing)
    listing, report = run(project, site, "--explain")
    assert not replayed(report) and "decisions" in listing


def test_cache_can_be_turned_off(project: Path, site: Site) -> None:
    for _ in range(2):
        _, report = run(project, site, env={"PEGBOARD_NO_CACHE": "1"})
        assert not replayed(report)
    assert entries() == []


def test_a_run_that_starts_a_process_is_not_stored(project: Path, site: Site) -> None:
    site.code(PLUGIN.format(name="ProbeOne") + "\nimport subprocess\nsubprocess.run(['true'])\n")
    for _ in range(2):
        _, report = run(project, site)
        assert not replayed(report)
    assert entries() == []


@pytest.mark.parametrize(
    ("argv", "cacheable"),
    [
        (["tools", "--json"], True),
        (["tools", "--json", "--provider", "openai", "--model=gpt-5"], True),
        (["tools", "--cwd", "sub", "--config", "x.toml", "--explain"], True),
        (["tools", "--help"], False),
        (["tools", "--json", "--wait-mcp", "3"], False),
        (["tools", "--provider"], False),
        (["tools", "stray"], False),
        (["call", "Read"], False),
        ([], False),
    ],
)
def test_only_known_command_lines_take_the_fast_path(argv: list[str], cacheable: bool) -> None:
    assert (project_cwd(argv) is not None) is cacheable


@given(st.lists(st.sampled_from(["tools", "--json", "--cwd", "--cwd=x", "--model", "m", "-", "=", "--help", ""])))
def test_reading_any_command_line_never_raises_and_only_tools_qualifies(argv: list[str]) -> None:
    cwd = project_cwd(argv)
    assert cwd is None or (argv[0] == "tools" and "--help" not in argv)


def test_cache_dir_follows_the_environment(tmp_path: Path) -> None:
    assert outputcache.cache_dir({"PEGBOARD_CACHE_DIR": str(tmp_path)}) == str(tmp_path)
    assert outputcache.cache_dir({"XDG_CACHE_HOME": "/x"}) == os.path.join("/x", "pegboard")
    assert outputcache.cache_dir({"HOME": "/h"}) == os.path.join("/h", ".cache", "pegboard")
    assert outputcache.disabled({"PEGBOARD_NO_CACHE": "1"}) and not outputcache.disabled({"PEGBOARD_NO_CACHE": "0"})


def test_an_entry_whose_file_changed_is_not_returned(tmp_path: Path) -> None:
    env = {"PEGBOARD_CACHE_DIR": str(tmp_path / "cache")}
    watched = tmp_path / "watched.txt"
    watched.write_text("one", encoding="utf-8")
    assert outputcache.store("tools", "k" * 64, [(str(watched), outputcache.stamp(str(watched)))], {"stdout": "x"}, env)
    assert (outputcache.lookup("tools", "k" * 64, env) or {}).get("stdout") == "x"
    assert outputcache.lookup("tools", "j" * 64, env) is None
    watched.write_text("two!", encoding="utf-8")
    assert outputcache.lookup("tools", "k" * 64, env) is None


CHECK = "import sys; from pegboard import config_problem; print(config_problem(None, sys.argv[1:]))"


def check(project: Path, *files: Path) -> tuple[str, str]:
    """``config_problem`` in a fresh interpreter: its answer, and the ``-X importtime`` report."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", CHECK, *map(str, files)],
        capture_output=True, text=True, cwd=project, timeout=120, check=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    return proc.stdout.strip(), proc.stderr


def test_a_config_that_loaded_is_known_to_load_until_it_changes(project: Path) -> None:
    extra = project / "agent.json"
    extra.write_text('{"permissions": {"allow": ["Read"]}}', encoding="utf-8")
    answer, report = check(project, extra)
    assert answer == "None" and "pegboard.core.config" in report
    answer, report = check(project, extra)
    assert answer == "None" and "pegboard.core.config" not in report, "the second check validated again"
    extra.write_text('{"permissions": {"allow": 5}}', encoding="utf-8")
    for _ in range(2):
        answer, report = check(project, extra)
        assert "permissions.allow" in answer and "pegboard.core.config" in report


def test_a_new_project_config_file_is_seen_by_the_config_check(project: Path) -> None:
    assert check(project)[0] == "None"
    assert check(project)[0] == "None"
    (project / ".pegboard").mkdir()
    (project / ".pegboard" / "settings.json").write_text('{"tools": {"deny": 1}}', encoding="utf-8")
    answer, _ = check(project)
    assert "tools.deny" in answer
