"""What each Bash command's script holds, and the settings it is built from, as they change."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from pegboard_toolkit.shell import ShellSettings, shell_argv, snapshot_applies
from tests.builtin.runtime_support import runtime_pegboard


async def test_an_empty_snapshot_is_not_sourced(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("# only comments and exports\nexport FROM_RC=1\n")
    pb = runtime_pegboard(tmp_path, env={"HOME": str(home)})
    async with pb.session() as session:
        ctx = pb.context(session=session)
        argv = await shell_argv(ctx, ShellSettings.load(ctx), "true", None)
        snapshot = session.directory / "shell-snapshot.sh"
        assert snapshot.is_file() and not snapshot_applies(snapshot)
        assert "source" not in argv[-1] and str(snapshot) not in argv[-1]
        result = await session.call("Bash", {"command": 'echo "${FROM_RC:-not exported}"'})
    assert result.text == "not exported", "a startup file's exports were never part of the snapshot"


async def test_a_snapshot_with_aliases_is_sourced_and_a_rewritten_one_is_seen(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("alias greet='echo hi'\n")
    pb = runtime_pegboard(tmp_path, env={"HOME": str(home)})
    async with pb.session() as session:
        ctx = pb.context(session=session)
        argv = await shell_argv(ctx, ShellSettings.load(ctx), "greet", None)
        snapshot = session.directory / "shell-snapshot.sh"
        assert snapshot_applies(snapshot) and f"source {snapshot}" in argv[-1]
        assert (await session.call("Bash", {"command": "greet"})).text == "hi"
        snapshot.write_text("# emptied\n")
        assert not snapshot_applies(snapshot)
        assert "source" not in (await shell_argv(ctx, ShellSettings.load(ctx), "greet", None))[-1]
        snapshot.unlink()
        assert not snapshot_applies(snapshot)


async def test_settings_follow_the_config_and_the_overriding_variables(tmp_path: Path) -> None:
    pb = runtime_pegboard(tmp_path, config={"tools": {"bash": {"maxOutputLength": 1234}}})
    ctx = pb.context()
    assert ShellSettings.load(ctx).max_output_chars == 1234
    assert ShellSettings.load(ctx) == ShellSettings.load(ctx)
    overridden = dataclasses.replace(ctx, env={**ctx.env, "BASH_MAX_OUTPUT_LENGTH": "99"})
    assert ShellSettings.load(overridden).max_output_chars == 99
    carried = dataclasses.replace(ctx, env={**ctx.env, "PEGBOARD_BASH_MAINTAIN_PROJECT_WORKING_DIR": "1"})
    assert ShellSettings.load(carried).maintain_project_dir and not ShellSettings.load(ctx).maintain_project_dir
    other = runtime_pegboard(tmp_path, config={"tools": {"bash": {"maxOutputLength": 4321}}})
    assert ShellSettings.load(other.context()).max_output_chars == 4321
    assert ShellSettings.load(ctx).max_output_chars == 1234
