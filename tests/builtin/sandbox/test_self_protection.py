"""The sandbox cannot rewrite what sandboxes it: protected paths, config files, missing ones too.

Every command here runs in ``bypassPermissions`` mode, so the permission engine lets it
through and bubblewrap alone has to stop the write.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

import pegboard_sandbox.plugin as sandbox_plugin
from pegboard import ConfigLayer, MemorySessionStore, Pegboard
from pegboard_sandbox.check import probe
from pegboard_sandbox.layout import build_layout, bwrap_args
from pegboard_sandbox.placeholders import Ledger, Spot
from tests.builtin.runtime_support import RUNTIME, runtime_pegboard

WHY = probe()
needs_bwrap = pytest.mark.skipif(WHY is not None, reason=f"bubblewrap cannot run here: {WHY}")
MODULES = (*RUNTIME, sandbox_plugin)
CONFIG: dict[str, Any] = {
    "permissions": {"allow": ["Bash"], "defaultMode": "bypassPermissions"},
    "sandbox": {"enabled": True},
}
ABSENT = (".envrc", ".pegboard/settings.local.json", ".git/hooks/pre-commit")


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q")
    return root


def tree(root: Path) -> dict[str, tuple[bool, bytes | None]]:
    """Every path below ``root`` with whether it is a directory and a file's content."""
    found: dict[str, tuple[bool, bytes | None]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            found[os.path.relpath(os.path.join(dirpath, name), root)] = (True, None)
        for name in filenames:
            path = os.path.join(dirpath, name)
            found[os.path.relpath(path, root)] = (False, Path(path).read_bytes())
    return found


async def run(pb: Any, *commands: str) -> list[Any]:
    async with pb.session() as session:
        return [await session.call("Bash", {"command": c}) for c in commands]


def ledger(pb: Pegboard) -> Ledger:
    return sandbox_plugin.ledger_for(pb)


@needs_bwrap
async def test_writes_that_would_switch_the_sandbox_off_fail_and_leave_the_host_unchanged(project: Path) -> None:
    before = tree(project)
    assert not any((project / p).exists() for p in ABSENT)
    pb = runtime_pegboard(project, config=CONFIG, modules=MODULES)
    writes = [
        "echo x > .envrc",
        "mkdir -p .pegboard && echo '{\"sandbox\":{\"enabled\":false}}' > .pegboard/settings.local.json",
        "echo x > .git/hooks/pre-commit",
        "git config core.fsmonitor x",
        f"{sys.executable} -c \"open('.envrc', 'w').write('export X=1')\"",
    ]
    results = await run(pb, *writes)
    for command, result in zip(writes, results, strict=True):
        assert result.is_error, f"{command!r} succeeded: {result.text}"
    assert "Read-only file system" in results[0].text
    assert tree(project) == before
    assert not any((project / p).exists() for p in ABSENT)
    assert "fsmonitor" not in (project / ".git" / "config").read_text()
    assert json.loads(ledger(pb).path.read_text()) == {"placeholders": {}}


@needs_bwrap
async def test_existing_protected_paths_are_read_only_and_still_readable(project: Path) -> None:
    (project / ".pegboard").mkdir()
    (project / ".pegboard" / "settings.json").write_text('{"sandbox": {"enabled": true}}\n')
    (project / ".vscode").mkdir()
    (project / ".vscode" / "settings.json").write_text("{}\n")
    (project / ".envrc").write_text("export A=1\n")
    config = (project / ".git" / "config").read_text()
    before = tree(project)
    pb = runtime_pegboard(project, config=CONFIG, modules=MODULES)
    results = await run(
        pb,
        "echo '{}' > .pegboard/settings.json",
        "echo x > .pegboard/settings.local.json",
        "echo x > .vscode/tasks.json",
        "echo x >> .envrc",
        "rm -f .envrc",
        "mv .git .git-moved",
        "cat .pegboard/settings.json .envrc && git config core.bare",
    )
    assert all(r.is_error for r in results[:-1]), [r.text for r in results]
    assert not results[-1].is_error and "enabled" in results[-1].text and "export A=1" in results[-1].text
    assert tree(project) == before
    assert (project / ".git" / "config").read_text() == config


@needs_bwrap
async def test_writes_elsewhere_in_the_project_still_work(project: Path) -> None:
    pb = runtime_pegboard(project, config=CONFIG, modules=MODULES)
    [result] = await run(pb, "mkdir -p src/pkg && echo y > src/pkg/a.py && echo in > inside.txt && rm inside.txt"
                             " && echo kept > notes.txt && git add notes.txt; echo status=$?")
    assert not result.is_error, result.text
    assert (project / "src" / "pkg" / "a.py").read_text() == "y\n"
    assert (project / "notes.txt").read_text() == "kept\n" and not (project / "inside.txt").exists()
    assert "status=128" in result.text  # git add writes .git/index: refused like every .git write


@needs_bwrap
async def test_nested_protected_paths_and_the_worktree_exception(project: Path) -> None:
    nested = project / "vendor" / "lib"
    nested.mkdir(parents=True)
    git(nested, "init", "-q")
    worktree = project / ".pegboard" / "worktrees" / "wt"
    worktree.mkdir(parents=True)
    pb = runtime_pegboard(project, config=CONFIG, modules=MODULES)
    results = await run(pb, "echo x > vendor/lib/.git/hooks/post-checkout", "echo x > .pegboard/other",
                        "echo ok > .pegboard/worktrees/wt/file && cat .pegboard/worktrees/wt/file")
    assert results[0].is_error and results[1].is_error
    assert not results[2].is_error and results[2].text == "ok", results[2].text
    assert not (nested / ".git" / "hooks" / "post-checkout").exists() and not (project / ".pegboard" / "other").exists()


@needs_bwrap
async def test_config_files_of_every_scope_are_read_only(project: Path, tmp_path: Path) -> None:
    extra = project / "ci-config.json"
    extra.write_text(json.dumps(CONFIG))
    user = project / "home" / "config"  # a user config dir that does not exist yet, inside the project
    layers = [ConfigLayer("cli", json.loads(extra.read_text()), extra, project)]
    pb = Pegboard(plugins=list(MODULES), load_entrypoints=False, layers=layers, cwd=project,
                  env={"PEGBOARD_CONFIG_DIR": str(user), "PEGBOARD_DATA_DIR": str(tmp_path / "data")},
                  store=MemorySessionStore())
    results = await run(pb, "echo '{}' > ci-config.json",
                        "mkdir -p home/config && echo '{}' > home/config/settings.json", "echo ok > notes && cat notes")
    assert results[0].is_error and results[1].is_error, [r.text for r in results]
    assert json.loads(extra.read_text()) == CONFIG
    assert not (project / "home").exists()  # the first missing directory on the way was barred, and removed
    assert not results[2].is_error and results[2].text == "ok", results[2].text


def bwrap_pids(root: Path, parent: int | None = None) -> list[int]:
    """The running bubblewrap processes of commands in ``root`` (only the children of ``parent``)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state, ppid = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:2]
        except (OSError, ValueError):
            continue
        ours = argv[0].endswith(b"bwrap") and str(root).encode() in argv and state not in ("Z", "X")
        if ours and (parent is None or int(ppid) == parent):
            pids.append(int(entry.name))
    return pids


async def until(check: Any, within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{check} did not come true within {within} s")
        await asyncio.sleep(0.02)


@needs_bwrap
async def test_killing_bwrap_mid_command_removes_the_placeholders(project: Path) -> None:
    pb = runtime_pegboard(project, config=CONFIG, modules=MODULES)
    async with pb.session() as session:
        call = asyncio.ensure_future(session.call("Bash", {"command": "touch started; sleep 30"}))
        await until(lambda: (project / "started").exists())
        assert (project / ".envrc").exists() and (project / ".pegboard").is_dir()  # the placeholders, meanwhile
        [pid] = bwrap_pids(project, parent=os.getpid())
        os.kill(pid, signal.SIGKILL)
        result = await asyncio.wait_for(call, 20)
    assert result.is_error
    assert not any((project / p).exists() for p in (".envrc", ".pegboard", ".vscode"))


CRASHING_HOST = textwrap.dedent("""
    import asyncio, sys
    from pathlib import Path
    import pegboard_sandbox.plugin as sandbox_plugin
    from tests.builtin.runtime_support import RUNTIME, runtime_pegboard

    async def main():
        pb = runtime_pegboard(Path(sys.argv[1]), config={config!r}, modules=(*RUNTIME, sandbox_plugin))
        async with pb.session() as session:
            await session.call("Bash", {{"command": "touch started; sleep 60"}})

    asyncio.run(main())
""")


@needs_bwrap
async def test_a_crashed_host_leaves_placeholders_the_next_start_removes(project: Path, repo_root: Path) -> None:
    host = subprocess.Popen([sys.executable, "-c", CRASHING_HOST.format(config=CONFIG), str(project)],
                            cwd=repo_root, env={**os.environ, "PYTHONPATH": str(repo_root)})
    try:
        await until(lambda: (project / "started").exists() or host.poll() is not None, within=60)
        assert host.poll() is None, "the host ended before its command started"
        host.send_signal(signal.SIGKILL)
        host.wait(10)
    finally:
        if host.poll() is None:
            host.kill()
            host.wait(10)
    await until(lambda: not bwrap_pids(project))  # --die-with-parent: the namespace went with the host
    assert (project / ".envrc").is_file() and (project / ".pegboard").is_dir()  # what the crash left
    runtime_pegboard(project, config=CONFIG, modules=MODULES)  # the next start sweeps the ledger
    assert not any((project / p).exists() for p in (".envrc", ".pegboard", ".idea", ".mcp.json"))
    assert set(os.listdir(project)) == {".git", "started"}


@needs_bwrap
async def test_a_placeholder_stays_while_another_command_holds_it(project: Path) -> None:
    pb = runtime_pegboard(project, config=CONFIG, modules=MODULES)
    async with pb.session() as one, pb.session() as two:
        command = "touch started; while [ ! -e go ]; do sleep 0.01; done; echo x > .envrc; echo wrote=$?"
        slow = asyncio.ensure_future(one.call("Bash", {"command": command}))
        await until(lambda: (project / "started").exists())
        quick = await two.call("Bash", {"command": "true"})
        assert not quick.is_error
        assert (project / ".envrc").exists()  # the slow command still needs it
        (project / "go").touch()
        late = await asyncio.wait_for(slow, 20)
    assert "Read-only file system" in late.text and "wrote=1" in late.text
    assert not (project / ".envrc").exists()


def test_layout_binds_protected_paths_outermost_first(project: Path) -> None:
    (project / ".pegboard" / "worktrees" / "wt").mkdir(parents=True)
    (project / ".vscode").mkdir()
    layout = build_layout(cwd=project, project=project, working_dirs=[project], deny_rules=["Read(./.env)"],
                          temp_dir=None)
    spots = {s.path: s.directory for s in layout.protected}
    assert spots[project / ".git"] and spots[project / ".idea"] and not spots[project / ".envrc"]
    assert layout.unprotected == (project / ".pegboard" / "worktrees",)
    args = bwrap_args(layout)
    binds = [(args[i], args[i + 1]) for i in range(len(args) - 1) if args[i] in ("--bind", "--ro-bind")]
    assert ("--ro-bind", str(project / ".git")) in binds and ("--ro-bind", str(project / ".vscode")) in binds
    assert ("--ro-bind", str(project / ".envrc")) not in binds  # missing: bound once its placeholder exists
    order = [path for _, path in binds]
    assert order.index(str(project / ".pegboard")) < order.index(str(project / ".pegboard" / "worktrees"))


def test_ledger_adopts_releases_and_never_removes_what_is_not_its_own(tmp_path: Path) -> None:
    book = Ledger(tmp_path / "ledger")
    spots = [Spot(tmp_path / ".envrc", False), Spot(tmp_path / ".idea", True), Spot(tmp_path / "gone" / "x", False)]
    first = book.hold(spots)
    assert first.created == [tmp_path / ".envrc", tmp_path / ".idea"]  # a spot whose parent is gone is left
    assert (tmp_path / ".envrc").read_bytes() == b"" and (tmp_path / ".envrc").stat().st_mode & 0o222 == 0
    second = book.hold(spots)
    assert second.created == []
    first.release()
    first.release()
    assert (tmp_path / ".envrc").exists()
    second.release()
    assert not (tmp_path / ".envrc").exists() and not (tmp_path / ".idea").exists()
    third = book.hold(spots[:1])
    os.chmod(tmp_path / ".envrc", 0o644)
    (tmp_path / ".envrc").write_text("the user's now\n")
    third.release()
    assert (tmp_path / ".envrc").read_text() == "the user's now\n"


def test_ledger_sweep_removes_what_dead_holders_left(tmp_path: Path) -> None:
    book = Ledger(tmp_path / "ledger")
    gone = subprocess.Popen(["true"])
    gone.wait()
    hold = book.hold([Spot(tmp_path / ".envrc", False)])
    hold.transfer(os.getpid())
    assert book.sweep() == []  # held by a live process
    book.retag(hold.token, f"{gone.pid}:1")  # a process that has ended
    assert book.sweep() == [tmp_path / ".envrc"]
    assert not (tmp_path / ".envrc").exists()
    (tmp_path / "ledger" / "placeholders.json").write_text("not json")
    assert book.sweep() == []  # a damaged ledger is an empty one, never an error


@needs_bwrap
async def test_a_cwd_below_the_repository_root_keeps_git_working(project: Path) -> None:
    sub = project / "sub"
    sub.mkdir()
    (project / "tracked.txt").write_text("x\n")
    git(project, "add", "tracked.txt")
    pb = runtime_pegboard(sub, config=CONFIG, modules=MODULES)
    status, envrc = await run(pb, "git status --short", "echo x > .envrc")
    assert not status.is_error and "A  ../tracked.txt" in status.text, status.text  # sub/.git's placeholder is empty
    assert envrc.is_error
    assert os.listdir(sub) == []
