"""The Bash tool on real processes: output, exit codes, timeouts, limits, cwd, env, snapshot."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import pegboard_bash
from pegboard import ConfigError, ConfigLayer, MemorySessionStore, Pegboard, SQLiteSessionStore, hookimpl
from pegboard.testing import check_tool
from pegboard_toolkit import LocalBackend, ReadLedger
from tests.builtin.runtime_support import ALLOW_ALL, RUNTIME, pid_gone, runtime_pegboard, wait_for_file


async def run(tmp_path: Path, command: str, **kw: object):
    pb = runtime_pegboard(tmp_path, **kw)  # type: ignore[arg-type]
    async with pb.session() as session:
        return await session.call("Bash", {"command": command})


def test_conforms() -> None:
    example = {"command": "ls", "timeout": 1000, "description": "list", "run_in_background": False}
    check_tool(pegboard_bash.bash, example)


async def test_stdout_and_stderr_are_merged_in_order(tmp_path: Path) -> None:
    result = await run(tmp_path, "echo one; echo two >&2; echo three")
    assert not result.is_error
    assert result.text == "one\ntwo\nthree"
    s = result.structured
    assert s is not None
    assert s["exit_code"] == 0 and s["truncated"] is False and s["interrupted"] is False
    assert s["stdout"] == "one\ntwo\nthree\n" and s["output"] == s["stdout"]
    assert s["backgroundTaskId"] is None and s["cwd"] == str(tmp_path)
    assert isinstance(s["wall_time_seconds"], float) and s["wall_time_seconds"] >= 0


async def test_non_zero_exit_is_reported(tmp_path: Path) -> None:
    result = await run(tmp_path, "echo partial; exit 3")
    assert result.is_error and result.metadata["error_kind"] == "exit_code"
    assert result.text == "partial\nExit code 3"
    assert result.structured is not None and result.structured["exit_code"] == 3


@pytest.mark.parametrize(
    "command",
    [
        "grep nothing-here {f}",
        "egrep nothing-here {f}",
        "fgrep nothing-here {f}",
        "diff {f} {g}",
        "cat {f} | grep nothing-here",
    ],
)
async def test_exit_1_of_search_and_diff_is_not_a_failure(tmp_path: Path, command: str) -> None:
    (tmp_path / "f").write_text("alpha\n")
    (tmp_path / "g").write_text("beta\n")
    result = await run(tmp_path, command.format(f=tmp_path / "f", g=tmp_path / "g"))
    assert not result.is_error, result.text
    assert "Exit code" not in result.text
    assert result.structured is not None and result.structured["exit_code"] == 1


async def test_grep_exit_2_is_a_failure(tmp_path: Path) -> None:
    result = await run(tmp_path, "grep x /no/such/file")
    assert result.is_error and result.text.endswith("Exit code 2")


async def test_timeout_kills_grandchildren_that_ignore_term(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    command = (
        f"bash -c 'trap \"\" TERM; echo $$ > {pidfile}; while true; do sleep 0.1; done' & "
        "trap '' TERM; echo started; while true; do sleep 0.1; done"
    )
    pb = runtime_pegboard(tmp_path)
    async with pb.session() as session:
        result = await session.call("Bash", {"command": command, "timeout": 700})
    assert result.is_error and result.metadata["error_kind"] == "timeout"
    assert result.structured is not None and result.structured["interrupted"] is True
    assert "started" in result.text and "timed out after 0.7 seconds" in result.text
    assert pid_gone(int(wait_for_file(pidfile)))


async def test_default_and_maximum_timeout_come_from_the_environment(tmp_path: Path) -> None:
    env = {"BASH_DEFAULT_TIMEOUT_MS": "300", "BASH_MAX_TIMEOUT_MS": "500"}
    pb = runtime_pegboard(tmp_path, env=env)
    async with pb.session() as session:
        default = await session.call("Bash", {"command": "sleep 5"})
        clamped = await session.call("Bash", {"command": "sleep 5", "timeout": 600_000})
    assert "timed out after 0.3 seconds" in default.text
    assert "timed out after 0.5 seconds" in clamped.text


async def test_timeouts_come_from_config(tmp_path: Path) -> None:
    config = {"tools": {"bash": {"defaultTimeoutMs": 250, "maxTimeoutMs": 400}}}
    pb = runtime_pegboard(tmp_path, config=config)
    async with pb.session() as session:
        default = await session.call("Bash", {"command": "sleep 5"})
        clamped = await session.call("Bash", {"command": "sleep 5", "timeout": 9000})
    assert "timed out after 0.25 seconds" in default.text
    assert "timed out after 0.4 seconds" in clamped.text


async def test_output_past_the_cap_is_spilled_and_stored(tmp_path: Path) -> None:
    pb = runtime_pegboard(tmp_path)
    async with pb.session() as session:
        result = await session.call("Bash", {"command": "seq 1 20000"})
        s = result.structured
        assert s is not None and s["truncated"] is True
        spill = Path(s["output_file"])
        assert spill.parent.parent == session.directory
        assert spill.read_text() == "".join(f"{i}\n" for i in range(1, 20001))
        assert str(spill) in result.text and result.text.count("\n") < 1000
        stored = session.results.get(s["output_ref"])
        assert stored is not None and stored.text.startswith("1\n2\n3\n") and stored.complete
        assert stored.storage_kind == "artifact" and s["output_ref"] in result.text


async def test_output_cap_setting_and_its_hard_limit(tmp_path: Path) -> None:
    small = await run(tmp_path, "seq 1 400", env={"BASH_MAX_OUTPUT_LENGTH": "1000"})
    assert small.structured is not None and small.structured["truncated"] is True
    huge = "python3 -c \"print('x' * 149000)\""
    raised = await run(tmp_path, huge, env={"BASH_MAX_OUTPUT_LENGTH": "999999"})
    assert raised.structured is not None and raised.structured["truncated"] is False
    over = "python3 -c \"print('x' * 151000)\""
    capped = await run(tmp_path, over, env={"BASH_MAX_OUTPUT_LENGTH": "999999"})
    assert capped.structured is not None and capped.structured["truncated"] is True
    configured = await run(tmp_path, "seq 1 400", config={"tools": {"bash": {"maxOutputLength": 500}}})
    assert configured.structured is not None and configured.structured["truncated"] is True


def test_memory_stays_bounded_for_200_mb_of_output(tmp_path: Path) -> None:
    """Run in a fresh interpreter so its peak RSS measures only this command."""
    script = textwrap.dedent(
        f"""
        import asyncio, json, resource, sys
        sys.path.insert(0, {str(Path(__file__).resolve().parents[3])!r})
        from tests.builtin.runtime_support import runtime_pegboard
        from pathlib import Path

        async def main():
            pb = runtime_pegboard(Path({str(tmp_path)!r}))
            async with pb.session() as session:
                await session.call("Bash", {{"command": "true"}})
                before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                result = await session.call("Bash", {{"command": "head -c 200000000 /dev/zero | tr '\\\\0' x"}})
                after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                s = result.structured
                size = Path(s["output_file"]).stat().st_size
                print(json.dumps({{"before": before, "after": after, "size": size, "bytes": s["total_bytes"]}}))

        asyncio.run(main())
        """
    )
    env = {**os.environ, "PEGBOARD_DATA_DIR": str(tmp_path / "data")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["size"] == 200_000_000 == report["bytes"]
    growth_mb = (report["after"] - report["before"]) / 1024
    assert growth_mb < 64, f"peak RSS grew by {growth_mb:.1f} MB"


async def test_cd_carries_over_inside_the_working_dirs_and_resets_outside(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    extra = tmp_path.parent / f"{tmp_path.name}-extra"
    extra.mkdir()
    pb = runtime_pegboard(tmp_path)
    async with pb.session(additional_dirs=[extra]) as session:
        await session.call("Bash", {"command": "cd sub"})
        assert (await session.call("Bash", {"command": "pwd"})).text == str(tmp_path / "sub")
        await session.call("Bash", {"command": f"cd {extra}"})
        assert (await session.call("Bash", {"command": "pwd"})).text == str(extra)
        reset = await session.call("Bash", {"command": "cd / && echo moved"})
        assert reset.text == f"moved\nShell cwd was reset to {tmp_path}"
        assert reset.structured is not None and reset.structured["cwd"] == str(tmp_path)
        assert (await session.call("Bash", {"command": "pwd"})).text == str(tmp_path)


async def test_cwd_survives_a_resumed_session(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    store_path = tmp_path / "sessions.sqlite3"
    pb = runtime_pegboard(tmp_path, store=SQLiteSessionStore(store_path))
    async with pb.session() as session:
        await session.call("Bash", {"command": "cd sub"})
        sid = session.id
    again = runtime_pegboard(tmp_path, store=SQLiteSessionStore(store_path))
    async with again.session(session_id=sid) as resumed:
        assert (await resumed.call("Bash", {"command": "pwd"})).text == str(tmp_path / "sub")


@pytest.mark.parametrize(
    ("env", "config"),
    [
        ({"FUXI_BASH_MAINTAIN_PROJECT_WORKING_DIR": "1"}, None),
        ({"PEGBOARD_BASH_MAINTAIN_PROJECT_WORKING_DIR": "true"}, None),
        ({}, {"tools": {"bash": {"maintainProjectWorkingDir": True}}}),
    ],
)
async def test_carry_over_can_be_turned_off(tmp_path: Path, env: dict[str, str], config: dict | None) -> None:
    (tmp_path / "sub").mkdir()
    pb = runtime_pegboard(tmp_path, env=env, config=config)
    async with pb.session() as session:
        await session.call("Bash", {"command": "cd sub"})
        assert (await session.call("Bash", {"command": "pwd"})).text == str(tmp_path)


async def test_a_subagent_never_carries_cwd_over(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    pb = runtime_pegboard(tmp_path)
    async with pb.session(subagent="helper") as session:
        await session.call("Bash", {"command": "cd sub"})
        assert (await session.call("Bash", {"command": "pwd"})).text == str(tmp_path)


async def test_exported_variables_do_not_persist(tmp_path: Path) -> None:
    pb = runtime_pegboard(tmp_path)
    async with pb.session() as session:
        first = await session.call("Bash", {"command": "export PB_TEST_VAR=set; echo $PB_TEST_VAR"})
        second = await session.call("Bash", {"command": 'echo "${PB_TEST_VAR:-unset}"'})
    assert first.text == "set" and second.text == "unset"


async def test_startup_file_aliases_functions_and_options_are_applied(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    rc = home / ".bashrc"
    rc.write_text(
        "alias greet='echo hello from alias'\n"
        "shout() { echo \"${1^^}\"; }\n"
        "shopt -s extglob\n"
        "echo noise-from-rc\n"
    )
    project = tmp_path / "project"
    project.mkdir()
    pb = runtime_pegboard(project, env={"HOME": str(home)})
    async with pb.session() as session:
        alias = await session.call("Bash", {"command": "greet"})
        func = await session.call("Bash", {"command": "shout quiet"})
        opt = await session.call("Bash", {"command": "shopt extglob"})
        snapshot = session.directory / "shell-snapshot.sh"
        assert snapshot.is_file() and "greet" in snapshot.read_text()
        rc.write_text("alias greet='echo changed'\n")
        again = await session.call("Bash", {"command": "greet"})
    assert alias.text == "hello from alias"
    assert func.text == "QUIET"
    assert "on" in opt.text
    assert again.text == "hello from alias", "the snapshot is taken once per session"


async def test_env_file_is_sourced_before_each_command(tmp_path: Path) -> None:
    env_file = tmp_path / "env.sh"
    env_file.write_text("export FROM_ENV_FILE=yes\n")
    for var in ("FUXI_ENV_FILE", "PEGBOARD_ENV_FILE"):
        result = await run(tmp_path, "echo $FROM_ENV_FILE", env={var: str(env_file)})
        assert result.text == "yes"


async def test_single_file_views_count_as_reads(tmp_path: Path) -> None:
    f = tmp_path / "notes.txt"
    f.write_text("".join(f"line {i}\n" for i in range(1, 31)))
    g = tmp_path / "other.txt"
    g.write_text("x\n")
    pb = runtime_pegboard(tmp_path)
    async with pb.session() as session:
        await session.call("Bash", {"command": f"cat {f}"})
        await session.call("Bash", {"command": f"sed -n '3,7p' {g}"})
        await session.call("Bash", {"command": f"cat {g} | head -1"})
        ledger = ReadLedger(session)
        whole = ledger.entry(f)
        assert whole is not None and whole.whole
        ranged = ledger.entry(g)
        assert ranged is not None and not ranged.whole and ranged.ranges == [[3, 7]]
        await session.call("Bash", {"command": f"tail -n 5 {f}"})
        h = tmp_path / "piped.txt"
        h.write_text("y\n")
        await session.call("Bash", {"command": f"cat {h} | cat"})
        assert ledger.entry(h) is None


async def test_a_denied_compound_command_never_runs(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    config = {"permissions": {"allow": ["Bash(echo *)"], "deny": ["Bash(touch *)"]}}
    pb = runtime_pegboard(tmp_path, config=config)
    async with pb.session() as session:
        result = await session.call("Bash", {"command": f"echo hi && touch {marker}"})
        piped = await session.call("Bash", {"command": f"echo hi | tee /dev/null; touch {marker}"})
    assert result.is_error and result.reason == "denied"
    assert piped.is_error and piped.reason == "denied"
    assert not marker.exists()


async def test_an_unapproved_command_never_runs(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    pb = runtime_pegboard(tmp_path, config={"permissions": {"allow": []}})
    async with pb.session() as session:
        result = await session.call("Bash", {"command": f"touch {marker}"})
    assert result.is_error and result.reason in ("not_approved", "denied")
    assert not marker.exists()


async def test_empty_command_is_an_error(tmp_path: Path) -> None:
    result = await run(tmp_path, "   ")
    assert result.is_error and "command is empty" in result.text


async def test_background_run_returns_a_task_id_and_output_file(tmp_path: Path) -> None:
    pb = runtime_pegboard(tmp_path)
    async with pb.session() as session:
        started = await session.call("Bash", {"command": "echo from-background", "run_in_background": True})
        s = started.structured
        assert s is not None
        task_id = s["backgroundTaskId"]
        assert task_id.startswith("b") and len(task_id) == 9
        assert str(session.directory) in s["output_file"] and task_id in started.text
        done = await session.call("TaskOutput", {"task_id": task_id, "block": True, "timeout": 10_000})
        assert done.structured is not None and done.structured["task"]["output"] == "from-background\n"
        assert Path(s["output_file"]).read_text() == "from-background\n"


class RecordingBackend:
    """A real backend over the local one that notes what it started and adds a variable."""

    name = "recording"

    def __init__(self) -> None:
        self.local = LocalBackend()
        self.started: list[list[str]] = []

    async def start(self, argv, *, cwd, env, stdin=False, pty=False, merge_stderr=True):
        self.started.append(list(argv))
        return await self.local.start(argv, cwd=cwd, env={**env, "VIA_BACKEND": "recording"}, stdin=stdin, pty=pty)


class BackendPlugin:
    def __init__(self) -> None:
        self.backend = RecordingBackend()
        self.contexts: list[object] = []

    @hookimpl
    def exec_backend(self, context):
        self.contexts.append(context.tool)
        return self.backend


async def test_commands_start_through_the_exec_backend_hook(tmp_path: Path) -> None:
    plugin = BackendPlugin()
    pb = runtime_pegboard(tmp_path, plugin)
    async with pb.session() as session:
        result = await session.call("Bash", {"command": "echo $VIA_BACKEND"})
    assert result.text == "recording"
    assert plugin.backend.started and plugin.backend.started[-1][1] == "-c"
    assert "Bash" in plugin.contexts


def test_settings_are_a_validated_config_section(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"tools\.bash\.defaultTimeoutMs"):
        runtime_pegboard(tmp_path, config={"tools": {"bash": {"defaultTimeoutMs": "soon"}}})
    pb = runtime_pegboard(tmp_path, config={"tools": {"bash": {"defualtTimeoutMs": 5}}})
    assert any("tools.bash.defualtTimeoutMs" in w for w in pb.warnings)


async def test_an_untrusted_projects_env_file_is_ignored(tmp_path: Path) -> None:
    env_file = tmp_path / "env.sh"
    env_file.write_text("export FROM_ENV_FILE=yes\n")
    user = ConfigLayer("user", ALLOW_ALL, root=tmp_path)
    project = ConfigLayer("project", {"tools": {"bash": {"envFile": str(env_file)}}}, root=tmp_path, trusted=False)
    pb = Pegboard(plugins=list(RUNTIME), load_entrypoints=False, layers=[user, project], cwd=tmp_path, env={},
                  store=MemorySessionStore())
    assert any("tools.bash.envFile" in w and "trust" in w for w in pb.warnings)
    async with pb.session() as session:
        result = await session.call("Bash", {"command": 'echo "${FROM_ENV_FILE:-unset}"'})
    assert result.text == "unset"
    trusted = runtime_pegboard(tmp_path, config={"tools": {"bash": {"envFile": str(env_file)}}})
    async with trusted.session() as session:
        assert (await session.call("Bash", {"command": "echo $FROM_ENV_FILE"})).text == "yes"


async def test_the_snapshot_can_be_turned_off_or_pointed_elsewhere(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("alias greet='echo from bashrc'\n")
    other = tmp_path / "other-rc"
    other.write_text("alias greet='echo from other'\n")
    off = await run(tmp_path, "greet", env={"HOME": str(home)}, config={"tools": {"bash": {"startupFile": ""}}})
    assert off.is_error and "Exit code 127" in off.text
    elsewhere = await run(tmp_path, "greet", env={"HOME": str(home)},
                          config={"tools": {"bash": {"startupFile": str(other)}}})
    assert elsewhere.text == "from other"


async def test_a_process_left_holding_the_output_does_not_hold_the_result(tmp_path: Path) -> None:
    begin = time.monotonic()
    result = await run(tmp_path, "echo hi; sleep 30 &")
    assert result.text == "hi" and time.monotonic() - begin < 5


async def test_wall_time_comes_from_the_given_clock(tmp_path: Path) -> None:
    from pegboard_toolkit import ShellSettings, run_shell

    ticks = iter([10.0, 12.25])
    pb = runtime_pegboard(tmp_path)
    async with pb.session() as session:
        outcome = await run_shell(pb.context(session=session), "true", settings=ShellSettings(), timeout_s=5,
                                  clock=lambda: next(ticks))
    assert outcome.wall_time_seconds == 2.25 and outcome.exit_code == 0


LONG = "seq 1 20000; echo 'error: the build failed at the end'"


async def test_bash_shows_the_head_preview_and_path_past_the_cap(tmp_path: Path) -> None:
    result = await run(tmp_path, LONG)
    s = result.structured
    assert s is not None and s["truncated"] is True and "output_tail" not in s
    assert "Preview (first 2,000 characters):\n1\n2\n3\n" in result.text and s["output_file"] in result.text
    assert "the build failed" not in result.text


async def test_the_preview_tail_setting_adds_the_end(tmp_path: Path) -> None:
    result = await run(tmp_path, LONG, config={"tools": {"bash": {"previewTail": True}}})
    s = result.structured
    assert s is not None and s["truncated"] is True
    text = result.text
    assert text.index("First 1,000 characters:\n1\n2\n") < text.index(s["output_file"]) < text.index(
        "Last 1,000 characters:")
    assert text.endswith("19999\n20000\nerror: the build failed at the end")
    assert len(s["output_tail"]) == 1000


async def test_seed_003_bash_spelling_shows_the_first_and_last_1000_characters(tmp_path: Path) -> None:
    pb = runtime_pegboard(tmp_path)
    async with pb.session() as session:
        result = await session.call("bash", {"command": LONG})
    assert "First 1,000 characters:" in result.text and "Last 1,000 characters:" in result.text
    assert result.text.endswith("error: the build failed at the end")


async def test_the_tail_starts_on_a_character_boundary(tmp_path: Path) -> None:
    command = "python3 -c \"print('é' * 40000)\""
    result = await run(tmp_path, command, config={"tools": {"bash": {"previewTail": True}}})
    s = result.structured
    assert s is not None and s["output_tail"] == "é" * 999 + "\n"


async def test_a_long_command_reports_lines_and_elapsed_time_as_progress(tmp_path: Path) -> None:
    import asyncio

    pb = runtime_pegboard(tmp_path, config={"tools": {"bash": {"progressIntervalMs": 100}}})
    seen: list[dict[str, object]] = []
    async with pb.session() as session:

        async def listen() -> None:
            async for event in session.events():
                if event.kind == "progress":
                    seen.append(event.data)

        listener = asyncio.ensure_future(listen())
        await asyncio.sleep(0)
        result = await session.call("Bash", {"command": "for i in 1 2 3 4 5 6; do echo $i; sleep 0.15; done"})
        await asyncio.sleep(0.05)
        listener.cancel()
    assert not result.is_error
    assert 2 <= len(seen) <= 12, seen
    done = [float(str(d["done"])) for d in seen]
    assert done == sorted(done) and all(isinstance(d["message"], str) and "lines of output" in d["message"]
                                        for d in seen)


async def test_progress_is_off_with_a_zero_interval(tmp_path: Path) -> None:
    import asyncio

    pb = runtime_pegboard(tmp_path, config={"tools": {"bash": {"progressIntervalMs": 0}}})
    seen: list[object] = []
    async with pb.session() as session:

        async def listen() -> None:
            async for event in session.events():
                if event.kind == "progress":
                    seen.append(event.data)

        listener = asyncio.ensure_future(listen())
        await asyncio.sleep(0)
        await session.call("Bash", {"command": "echo a; sleep 0.3; echo b"})
        listener.cancel()
    assert seen == []


def test_progress_is_throttled_by_the_clock(tmp_path: Path) -> None:
    from pegboard_toolkit.progress import Progress

    now = [0.0]
    sent: list[tuple[float, str | None]] = []

    class Ctx:
        def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
            sent.append((done, message))

    p = Progress(Ctx(), 1000, clock=lambda: now[0])  # type: ignore[arg-type]
    assert not p.update(1)
    now[0] = 0.5
    assert not p.update(2)
    now[0] = 1.0
    assert p.update(3, None, "three")
    now[0] = 1.9
    assert not p.update(4)
    now[0] = 2.0
    assert p.update(5)
    assert sent == [(3, "three"), (5, None)] and p.elapsed == 2.0
