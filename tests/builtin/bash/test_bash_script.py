"""What each Bash command's script holds: the snapshot's definitions only when the command
may use them, its options always, and the settings it is built from, as they change."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from pegboard import Pegboard
from pegboard_toolkit.shell import ShellSettings, build_script, read_snapshot, shell_argv
from tests.builtin.runtime_support import runtime_pegboard

RC = (
    "alias greet='echo hello from alias'\n"
    "shout() { echo \"${1^^}\"; }\n"
    "helper() { shout \"$@\"; }\n"
    "shopt -s extglob\n"
    "set -o noclobber\n"
)


async def script_for(pb: Pegboard, session: Any, command: str) -> str:
    ctx = pb.context(session=session)
    return (await shell_argv(ctx, ShellSettings.load(ctx), command, None))[-1]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text(RC)
    return home


def test_a_snapshot_knows_its_names_and_options(tmp_path: Path) -> None:
    path = tmp_path / "snap.sh"
    path.write_text(
        "# pegboard shell snapshot\nalias greet='echo hi'\nalias -- -dash='echo d'\n"
        "alias multi='echo one\nshopt -s not-an-option'\nshout () \n{ \n    echo \"${1^^}\"\n}\n"
        "function a-b () \n{ \n    :\n}\nshopt -s extglob\nset -o noclobber\n"
    )
    snapshot = read_snapshot(path)
    assert snapshot is not None and snapshot.defines
    assert snapshot.names == {"greet", "-dash", "multi", "shout", "a-b"}
    assert snapshot.options == ("shopt -s extglob", "set -o noclobber")
    assert read_snapshot(tmp_path / "missing.sh") is None


@pytest.mark.parametrize(
    ("command", "sourced"),
    [
        ("true", False),
        ("ls -la /tmp", False),
        ("greet", True),
        ("echo a && gr'e'et", True),
        ("gr\\eet", True),
        ("helper x", True),
        ("echo $HOME", True),
        ("eval x", True),
        ("declare -F", True),
        (". ./script.sh", True),
        ("source script.sh", True),
        ("`echo greet`", True),
        ("{gr,}eet", True),
        ("gre?t", True),
        ("set", True),
        ("type shout", True),
        ("compgen -A function", True),
    ],
)
def test_the_definitions_are_sourced_only_when_the_command_may_use_them(
    tmp_path: Path, command: str, sourced: bool
) -> None:
    path = tmp_path / "snap.sh"
    path.write_text("alias greet='echo hi'\nshout () \n{ \n    :\n}\nhelper () \n{ \n    shout\n}\nshopt -s extglob\n")
    snapshot = read_snapshot(path)
    assert snapshot is not None
    script = build_script(command, snapshot=snapshot, env_file=None, cwd_file=None)
    assert (f"source {path}" in script) is sourced
    if not sourced:
        assert "shopt -s extglob" in script, "the options apply to every command"
    assert f"source {path}" in build_script(command, snapshot=snapshot, env_file="/x", cwd_file=None)


def test_a_hook_bash_calls_by_itself_is_always_there(tmp_path: Path) -> None:
    path = tmp_path / "snap.sh"
    path.write_text("command_not_found_handle () \n{ \n    echo missing \"$1\"\n}\n")
    snapshot = read_snapshot(path)
    assert snapshot is not None
    assert "source" in build_script("true", snapshot=snapshot, env_file=None, cwd_file=None)


async def test_every_command_sees_the_startup_files_definitions_and_options(tmp_path: Path, home: Path) -> None:
    pb = runtime_pegboard(tmp_path, env={"HOME": str(home)})
    async with pb.session() as session:
        results = {}
        commands = ("greet", "helper loud", "shopt extglob", "set -o", "f=shout; $f built",
                    "echo ok > x; echo again > x", "declare -F", "type -t shout")
        for command in commands:
            results[command] = (await session.call("Bash", {"command": command})).text
        assert "source" not in await script_for(pb, session, "true")
    assert results["greet"] == "hello from alias"
    assert results["helper loud"] == "LOUD"
    assert "on" in results["shopt extglob"]
    assert "noclobber" in results["set -o"] and "on" in results["set -o"].split("noclobber", 1)[1].split("\n")[0]
    assert "cannot overwrite existing file" in results["echo ok > x; echo again > x"], "noclobber applies"
    assert results["f=shout; $f built"] == "BUILT", "a name built at run time still finds the function"
    assert "shout" in results["declare -F"] and "helper" in results["declare -F"]
    assert results["type -t shout"] == "function"


async def test_an_empty_snapshot_is_not_sourced(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("# only comments and exports\nexport FROM_RC=1\n")
    pb = runtime_pegboard(tmp_path, env={"HOME": str(home)})
    async with pb.session() as session:
        script = await script_for(pb, session, "echo $FROM_RC")
        snapshot = read_snapshot(session.directory / "shell-snapshot.sh")
        assert snapshot is not None and not snapshot.defines and not snapshot.options
        assert "source" not in script
        result = await session.call("Bash", {"command": 'echo "${FROM_RC:-not exported}"'})
    assert result.text == "not exported", "a startup file's exports were never part of the snapshot"


async def test_a_rewritten_snapshot_is_read_again(tmp_path: Path, home: Path) -> None:
    pb = runtime_pegboard(tmp_path, env={"HOME": str(home)})
    async with pb.session() as session:
        snapshot = session.directory / "shell-snapshot.sh"
        assert f"source {snapshot}" in await script_for(pb, session, "greet")
        snapshot.write_text("# emptied\n")
        assert "source" not in await script_for(pb, session, "greet")


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
