"""Masks cover every name of a denied file: spellings the engine folds together, and hard links."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import pegboard_sandbox.plugin as sandbox_plugin
from pegboard_sandbox import SandboxRefused, build_layout
from pegboard_sandbox.check import probe
from pegboard_sandbox.layout import Layout, bwrap_args
from pegboard_sandbox.masks import fold, name_matches
from tests.builtin.runtime_support import RUNTIME, runtime_pegboard

WHY = probe()
needs_bwrap = pytest.mark.skipif(WHY is not None, reason=f"bubblewrap cannot run here: {WHY}")


def layout_for(root: Path, *rules: str) -> Layout:
    return build_layout(cwd=root, project=root, working_dirs=[root], deny_rules=list(rules), temp_dir=None)


def read_inside(root: Path, path: Path, *rules: str) -> subprocess.CompletedProcess[str]:
    layout = layout_for(root, *rules)
    args = bwrap_args(layout)
    return subprocess.run([*args, "--chdir", str(root), "--", "cat", str(path)], capture_output=True, text=True,
                          timeout=30)


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    root = tmp_path.resolve() / "proj"
    (root / "src").mkdir(parents=True)
    (root / ".env").write_text("SECRET=1\n")
    os.link(root / ".env", root / "src" / "notes.txt")
    (root / "plain.txt").write_text("plain\n")
    return root


def test_names_fold_as_the_engine_folds_them() -> None:
    assert fold(".ENV") == ".env" and fold("\uff0e\uff45\uff4e\uff56") == ".env"  # fullwidth
    assert name_matches("KEY.PEM", "*.pem") and not name_matches("key.pen", "*.pem")


@pytest.mark.parametrize("rule", ["Read(.env)", "Read(./.env)", "Read(**/.env)"])
def test_case_and_width_variants_and_hard_links_are_masked(proj: Path, rule: str) -> None:
    (proj / "src" / ".ENV").write_text("UPPER=1\n")
    (proj / "\uff0eenv").write_text("WIDE=1\n")
    layout = layout_for(proj, rule)
    masked = set(layout.masked)
    assert {proj / ".env", proj / "src" / "notes.txt", proj / "\uff0eenv"} <= masked
    assert (proj / "src" / ".ENV" in masked) == (rule != "Read(./.env)")
    assert proj / "plain.txt" not in masked


def test_edit_denied_files_are_read_only_under_every_name(proj: Path) -> None:
    (proj / "LOCKED").write_text("l")
    os.link(proj / "LOCKED", proj / "src" / "locked-too")
    layout = layout_for(proj, "Edit(./locked)")
    assert set(layout.read_only) == {proj / "LOCKED", proj / "src" / "locked-too"}


def test_a_link_inside_a_masked_directory_is_masked_where_it_is_seen(proj: Path) -> None:
    (proj / "secrets").mkdir()
    (proj / "secrets" / "key").write_text("k")
    os.link(proj / "secrets" / "key", proj / "src" / "key-copy")
    masked = set(layout_for(proj, "Read(secrets/**)").masked)
    assert masked == {proj / "secrets", proj / "src" / "key-copy"}


def test_a_denied_file_with_a_name_outside_refuses_to_start(proj: Path) -> None:
    outside = proj.parent / "backup"
    outside.mkdir()
    os.link(proj / ".env", outside / "env.bak")
    with pytest.raises(SandboxRefused, match=r"the denied file .*/proj/\.env has 3 hard links and only 2"):
        layout_for(proj, "Read(.env)")


@needs_bwrap
def test_masked_inside_bubblewrap(proj: Path) -> None:
    (proj / "src" / ".ENV").write_text("UPPER=1\n")
    for path in (proj / "src" / "notes.txt", proj / "src" / ".ENV", proj / ".env"):
        done = read_inside(proj, path, "Read(.env)")
        assert "SECRET" not in done.stdout and "UPPER" not in done.stdout, (path, done)
    assert read_inside(proj, proj / "plain.txt", "Read(.env)").stdout == "plain\n"


@needs_bwrap
async def test_sandboxed_bash_cannot_read_the_link(proj: Path) -> None:
    config = {"permissions": {"allow": ["Bash"], "deny": ["Read(.env)"]}, "sandbox": {"enabled": True}}
    pb = runtime_pegboard(proj, config=config, modules=(*RUNTIME, sandbox_plugin))
    # a name the permission check cannot see: only the sandbox stands between it and the file
    code = "import os; print(open(os.path.join('src', 'no' + 'tes.txt')).read())"
    async with pb.session() as session:
        inside = await session.call("Bash", {"command": f"{sys.executable} -c \"{code}\""})
    assert "SECRET" not in inside.text


@needs_bwrap
async def test_sandboxed_bash_refuses_when_a_name_cannot_be_masked(proj: Path) -> None:
    os.link(proj / ".env", proj.parent / "elsewhere")
    config = {"permissions": {"allow": ["Bash"], "deny": ["Read(.env)"]}, "sandbox": {"enabled": True}}
    pb = runtime_pegboard(proj, config=config, modules=(*RUNTIME, sandbox_plugin))
    marker = proj / "ran"
    async with pb.session() as session:
        result = await session.call("Bash", {"command": f"touch {marker}"})
    assert result.is_error and f"{proj}/.env" in result.text and "cannot be masked" in result.text
    assert not marker.exists()
