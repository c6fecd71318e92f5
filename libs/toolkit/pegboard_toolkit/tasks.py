"""Background tasks: one table per session, shared by Bash, exec, Monitor, background
subagents and the task tools.

What a task is (id, command, status, output file, exit code) is a persisted map slot of the
session, so another process sees it and a resumed session can say which tasks died with the
process that ran them. The live part (process handles, the pumps copying output to the
task's file) belongs to this process: a :class:`TaskTable` kept in a non-persisted slot,
which runs its tasks on an event loop of its own in a daemon thread, so a task outlives the
call (and the event loop of the call) that started it. Work that must stay on the host's
event loop (a subagent run through the ``run_subagent`` hook) runs there instead
(``start_source(..., here=True)``) and is still a task: listed, awaited and stopped the same
way. Closing the session kills every task's process group and cancels the rest.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import json
import os
import secrets
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

from pegboard import ExecBackend, ExecProcess, MapKey, Session, SessionKey, ToolContext
from pegboard_toolkit.deadline import within
from pegboard_toolkit.output import read_text_slice

T = TypeVar("T")

DEFAULT_MAX_RUNNING = 64
#: The longest line a task reports as one event; a longer one is reported in pieces.
MAX_EVENT_LINE = 1 << 20
KILL_GRACE_S = 2.0
_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
PREFIXES = {"bash": "b", "exec": "e", "monitor": "m", "agent": "a"}
RUNNING = "running"
FINISHED = ("completed", "failed", "killed", "timeout", "lost")

#: This process, as task records name their runner: ``<pid>:<random>``.
RUNNER = f"{os.getpid()}:{secrets.token_hex(4)}"
#: The store channel on which one process asks another to stop a task it runs.
STOP_CHANNEL = "task-stop"
#: How long a stop asked of another process may take to show in the task's record.
REMOTE_STOP_S = 5.0


class MessageBus(Protocol):
    """What a session store offers for several processes sharing it (the PostgreSQL store):
    messages between them and which of them are still there."""

    def notify(self, channel: str, payload: str) -> None: ...

    def subscribe(self, channel: str, callback: Callable[[str], None]) -> Callable[[], None]: ...

    def hold_presence(self, name: str) -> None: ...

    def present(self, name: str) -> bool: ...


def _bus_of(session: Session) -> MessageBus | None:
    store = getattr(session, "store", None)
    if not getattr(session, "persisted", False):
        return None
    if all(callable(getattr(store, name, None)) for name in ("notify", "subscribe", "hold_presence", "present")):
        return cast(MessageBus, store)
    return None


@dataclass
class TaskRecord:
    """One background task as the session remembers it."""

    id: str
    type: str
    command: str
    description: str
    output_file: str
    status: str = RUNNING
    started: float = 0.0
    ended: float | None = None
    exit_code: int | None = None
    agent: str | None = None
    runner: str = ""
    poll_offset: int = 0
    stdin_open: bool = False
    timeout_ms: int | None = None
    persistent: bool = False
    note: str = ""
    #: the session the task's work runs in (a subagent's), when it has one
    session_id: str | None = None

    @property
    def running(self) -> bool:
        return self.status == RUNNING

    def summary(self) -> dict[str, Any]:
        return {
            "task_id": self.id,
            "task_type": self.type,
            "status": self.status,
            "command": self.command,
            "description": self.description,
            "exit_code": self.exit_code,
            "output_file": self.output_file,
            "started": self.started,
            "ended": self.ended,
            **({"note": self.note} if self.note else {}),
            **({"session_id": self.session_id} if self.session_id else {}),
        }


TASKS: MapKey[TaskRecord] = MapKey("pegboard-background-tasks", TaskRecord, persist=True)
_LIVE: SessionKey[Any] = SessionKey("pegboard-background-live", object)
_CREATE_LOCK = threading.Lock()


class TaskError(RuntimeError):
    """A task request that cannot be served (cap reached, unknown id); the message says why."""


def new_task_id(kind: str) -> str:
    prefix = PREFIXES.get(kind, kind[:1] or "t")
    return prefix + "".join(secrets.choice(_ALPHABET) for _ in range(8))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class _Live:
    process: ExecProcess | None
    future: concurrent.futures.Future[None]
    stop_requested: str | None = None
    runner: asyncio.Task[None] | None = None


#: A task that is not a process (a WebSocket source): it gets a ``line`` callback and returns
#: a closing note (``"closed with code 1000"``); raising ends the task as failed.
Source = Callable[[Callable[[str], None]], Awaitable[str]]
#: Called once a task has ended, with its final record (on the loop that ran it).
ExitCallback = Callable[["TaskRecord"], "Awaitable[None] | None"]


class TaskTable:
    """The background tasks of one session; get it with ``TaskTable.of(ctx)``."""

    def __init__(self, session: Session, *, max_running: int = DEFAULT_MAX_RUNNING,
                 clock: Callable[[], float] = time.time) -> None:
        self.session = session
        self.max_running = max_running
        self.clock = clock
        self.records = session.state.map(TASKS)
        self._live: dict[str, _Live] = {}
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._closed = False
        self._bus = _bus_of(session)
        self._unsubscribe: Callable[[], None] | None = None
        if self._bus is not None:
            try:
                self._bus.hold_presence(RUNNER)
                self._unsubscribe = self._bus.subscribe(STOP_CHANNEL, self._on_stop_request)
            except Exception as exc:  # the store's messaging is down: tasks still run here
                self._bus = None
                session.notices.append(f"background tasks cannot be stopped from other processes: {exc}")
        self.lost: list[TaskRecord] = self._find_lost()
        session.on_close(self.close)
        atexit.register(_kill_at_exit, weakref.ref(self))

    @classmethod
    def of(cls, ctx: ToolContext, **options: Any) -> TaskTable:
        session = ctx.session
        if session is None:
            raise TaskError("background tasks need a session; run the tool through Pegboard")
        with _CREATE_LOCK:
            table = session.state.get(_LIVE)
            if table is None:
                from pegboard_toolkit.shell import tool_settings

                conf = tool_settings(ctx, "background")
                limit = ctx.env.get("PEGBOARD_MAX_BACKGROUND_TASKS") or conf.get("maxRunning")
                try:
                    if limit is not None and int(limit) > 0:
                        options.setdefault("max_running", int(limit))
                except (TypeError, ValueError):
                    pass
                table = cls(session, **options)
                session.state[_LIVE] = table
        assert isinstance(table, TaskTable)
        return table

    # -- resume ------------------------------------------------------------------------
    def _runner_gone(self, rec: TaskRecord) -> str | None:
        """Why ``rec``'s runner is gone, or ``None`` while it may still run it. With a store
        that knows which processes are present (one database for several replicas) that
        store decides; else the runner's pid on this host."""
        pid_text = rec.runner.split(":", 1)[0]
        pid = int(pid_text) if pid_text.isdigit() else 0
        if self._bus is not None:
            try:
                if self._bus.present(rec.runner):
                    return None
            except Exception:
                return None
            return f"died with the process that ran it (runner {rec.runner or 'unknown'} is gone)"
        if pid and pid != os.getpid() and _alive(pid):
            return None
        return f"died with the process that ran it (pid {pid or 'unknown'})"

    def _mark_lost(self, task_id: str, note: str) -> TaskRecord | None:
        def mark(r: TaskRecord | None) -> TaskRecord | None:
            if r is None or not r.running:
                return r
            return replace(r, status="lost", ended=r.ended or self.clock(), note=note)

        updated = self.records.update(task_id, mark)
        if updated is not None and updated.status == "lost":
            self._emit_exit(updated)
        return updated

    def _find_lost(self) -> list[TaskRecord]:
        """Running tasks whose runner process is gone: they died with it."""
        lost = []
        for task_id, rec in self.records.items():
            if not rec.running or rec.runner == RUNNER:
                continue
            note = self._runner_gone(rec)
            if note is None:
                continue
            updated = self._mark_lost(task_id, note)
            if updated is not None and updated.status == "lost":
                lost.append(updated)
        return lost

    def _on_stop_request(self, payload: str) -> None:
        """Another process asked this one to stop a task it runs (called on the store's thread)."""
        try:
            asked = json.loads(payload)
            runner, session_id, task_id = asked["runner"], asked["session"], asked["task"]
            reason = str(asked.get("reason") or "stopped from another process")
        except (ValueError, KeyError, TypeError):
            return
        if runner != RUNNER or session_id != self.session.id or task_id not in self._live or self._closed:
            return
        asyncio.run_coroutine_threadsafe(self.stop(task_id, reason), self._ensure_loop())

    def take_lost_notice(self) -> str | None:
        """Once: which tasks died with the old process, for the next task tool result."""
        if not self.lost:
            return None
        names = ", ".join(f"{r.id} ({r.description or r.command})" for r in self.lost)
        self.lost = []
        return f"These background tasks died with the process that ran them: {names}"

    # -- the private loop --------------------------------------------------------------
    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def run() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                self._thread = threading.Thread(target=run, name=f"pegboard-tasks-{self.session.id}", daemon=True)
                self._thread.start()
                ready.wait()
                self._loop = loop
            return self._loop

    async def _on_loop(self, coro: Coroutine[Any, Any, T]) -> T:
        future = asyncio.run_coroutine_threadsafe(coro, self._ensure_loop())
        return await asyncio.wrap_future(future)

    # -- queries -----------------------------------------------------------------------
    def get(self, task_id: str) -> TaskRecord | None:
        found: TaskRecord | None = self.records.get(task_id)
        return found

    def all(self, agent: str | Any | None = ...) -> list[TaskRecord]:
        """Every task (of ``agent`` when given), oldest first."""
        records = sorted(self.records.values(), key=lambda r: (r.started, r.id))
        if agent is not ...:
            records = [r for r in records if r.agent == agent]
        return records

    def running(self) -> list[TaskRecord]:
        return [r for r in self.all() if r.running]

    def lookup(self, key: str) -> TaskRecord | None:
        """A task by id, else the background agent named ``key`` (its subagent type or
        description, case-insensitive): the one running so named, or the one finished so
        named when none runs; ``None`` when the name is ambiguous."""
        found = self.get(key)
        if found is not None or not key.strip():
            return found
        wanted = key.strip().casefold()
        named = [
            r for r in self.all() if r.type == "agent" and wanted in (r.command.casefold(), r.description.casefold())
        ]
        running = [r for r in named if r.running]
        pick = running if running else named
        return pick[0] if len(pick) == 1 else None

    def unknown_id_message(self, task_id: str) -> str:
        running = self.running()
        if not running:
            return f"No task found with ID {task_id}. No background tasks are running."
        listing = "\n".join(f"- {r.id}: {r.description or r.command}" for r in running)
        return f"No task found with ID {task_id}. Running tasks:\n{listing}"

    # -- start -------------------------------------------------------------------------
    async def start(
        self,
        ctx: ToolContext,
        *,
        kind: str,
        argv: Sequence[str],
        command: str,
        description: str,
        backend: ExecBackend,
        cwd: Path,
        env: Mapping[str, str],
        stdin: bool = False,
        pty: bool = False,
        timeout_s: float | None = None,
        persistent: bool = False,
        on_line: Callable[[TaskRecord, str, int], None] | None = None,
    ) -> TaskRecord:
        """Start a task and return its record once the process runs; raises ``TaskError``
        when the session's cap on running tasks is reached, ``ExecError`` when it cannot start."""
        record = self._new_record(ctx, kind, command, description, timeout_s, persistent, stdin or pty)
        task_id = record.id
        output = Path(record.output_file)
        started: concurrent.futures.Future[ExecProcess] = concurrent.futures.Future()

        async def launch() -> None:
            try:
                proc = await backend.start(argv, cwd=cwd, env=env, stdin=stdin, pty=pty)
            except BaseException as exc:
                started.set_exception(exc)
                return
            started.set_result(proc)
            await self._run(task_id, proc, output, timeout_s, on_line)

        future = asyncio.run_coroutine_threadsafe(launch(), self._ensure_loop())
        try:
            proc = await asyncio.wrap_future(started)
        except BaseException as exc:
            note = f"could not start: {exc}"
            self.records.update(task_id, lambda r: r and replace(r, status="failed", ended=self.clock(), note=note))
            raise
        self._live[task_id] = _Live(proc, future)
        return self.get(task_id) or record

    def _new_record(self, ctx: ToolContext, kind: str, command: str, description: str,
                    timeout_s: float | None, persistent: bool, stdin: bool) -> TaskRecord:
        if self._closed:
            raise TaskError("the session is closing; no new background tasks")
        if self.session.background_refusal:
            raise TaskError(self.session.background_refusal)
        running = [r for r in self.all() if r.running and r.id in self._live]
        if len(running) >= self.max_running:
            raise TaskError(
                f"{len(running)} background tasks are already running in this session (the limit is "
                f"{self.max_running}); stop one with TaskStop or process kill, or wait for one to finish"
            )
        task_id = new_task_id(kind)
        out_dir = self.session.directory / "tasks"
        out_dir.mkdir(parents=True, exist_ok=True)
        output = out_dir / f"{task_id}.output"
        output.touch()
        record = TaskRecord(
            id=task_id, type=kind, command=command, description=description, output_file=str(output),
            started=self.clock(), agent=ctx.selection.agent, runner=RUNNER, stdin_open=stdin,
            timeout_ms=int(timeout_s * 1000) if timeout_s is not None else None, persistent=persistent,
        )
        self.records[task_id] = record
        return record

    async def start_source(
        self,
        ctx: ToolContext,
        *,
        kind: str,
        command: str,
        description: str,
        source: Source,
        timeout_s: float | None = None,
        persistent: bool = False,
        on_line: Callable[[TaskRecord, str, int], None] | None = None,
        here: bool = False,
        on_exit: ExitCallback | None = None,
        session_id: str | None = None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
    ) -> TaskRecord:
        """Run ``source`` as a task: each line it reports goes to the output file, then to
        ``on_line``; it ends at ``timeout_s``, on TaskStop, or when ``source`` returns, and then
        ``on_exit`` gets the final record. ``here`` runs it on the calling event loop (for
        work bound to the host's loop) instead of the table's own; ``sleep`` times the
        deadline (an injectable clock's sleep; ``asyncio.sleep`` by default)."""
        record = self._new_record(ctx, kind, command, description, timeout_s, persistent, False)
        if session_id is not None:
            record = replace(record, session_id=session_id)
            self.records[record.id] = record
        run = self._run_source(record, source, timeout_s, on_line, on_exit, sleep)
        if here:
            task = asyncio.ensure_future(run)
            done: concurrent.futures.Future[None] = concurrent.futures.Future()

            def settle(_task: asyncio.Future[None]) -> None:
                if not done.done():
                    done.set_result(None)

            task.add_done_callback(settle)
            self._live[record.id] = _Live(None, done, runner=task)
            return record
        loop = self._ensure_loop()
        ready: concurrent.futures.Future[asyncio.Task[None]] = concurrent.futures.Future()

        async def launch() -> None:
            runner = asyncio.ensure_future(run)
            ready.set_result(runner)
            with contextlib.suppress(asyncio.CancelledError):
                await runner

        future = asyncio.run_coroutine_threadsafe(launch(), loop)
        runner = await asyncio.wrap_future(ready)
        self._live[record.id] = _Live(None, future, runner=runner)
        return record

    async def _run_source(self, record: TaskRecord, source: Source, timeout_s: float | None,
                          on_line: Callable[[TaskRecord, str, int], None] | None,
                          on_exit: ExitCallback | None = None,
                          sleep: Callable[[float], Awaitable[None]] | None = None) -> None:
        seq = 0
        status, note = "completed", ""
        with open(record.output_file, "a", encoding="utf-8") as fh:

            def line(text: str) -> None:
                nonlocal seq
                fh.write(text + "\n")
                fh.flush()
                seq += 1
                if on_line is not None:
                    on_line(record, text, seq)

            try:
                note = await within(source(line), timeout_s, sleep or asyncio.sleep)
            except TimeoutError:
                status, note = "timeout", "reached its deadline"
            except asyncio.CancelledError:
                live = self._live.get(record.id)
                status, note = "killed", (live.stop_requested if live else None) or "stopped"
            except Exception as exc:
                status, note = "failed", f"{type(exc).__name__}: {exc}"

        def finish(r: TaskRecord | None) -> TaskRecord | None:
            return r and replace(r, status=status, ended=self.clock(), note=note)

        updated = self.records.update(record.id, finish)
        if updated is not None:
            self._emit_exit(updated)
            if on_exit is not None:
                try:
                    outcome = on_exit(updated)
                    if outcome is not None:
                        await outcome
                except Exception as exc:  # the task is over either way; say why its follow-up failed
                    why = f"after it ended: {type(exc).__name__}: {exc}"
                    self.records.update(record.id, lambda r: r and replace(r, note=f"{r.note}; {why}".lstrip("; ")))

    async def _run(self, task_id: str, proc: ExecProcess, output: Path,
                   timeout_s: float | None, on_line: Callable[[TaskRecord, str, int], None] | None) -> None:
        record = self.get(task_id)
        pending = b""
        seq = 0

        async def pump() -> None:
            nonlocal pending, seq
            with open(output, "ab", buffering=0) as fh:
                while True:
                    chunk = await proc.read("stdout")
                    if not chunk:
                        break
                    fh.write(chunk)
                    if on_line is not None and record is not None:
                        pending += chunk
                        *lines, pending = pending.split(b"\n")
                        if len(pending) > MAX_EVENT_LINE:  # a line without end: report it in pieces
                            lines.append(pending)
                            pending = b""
                        for line in lines:
                            seq += 1
                            on_line(record, line.decode("utf-8", errors="replace").rstrip("\r"), seq)
            if on_line is not None and record is not None and pending:
                seq += 1
                on_line(record, pending.decode("utf-8", errors="replace").rstrip("\r"), seq)

        reader = asyncio.ensure_future(pump())
        status = await proc.wait(timeout_s)
        timed_out = status is None
        if timed_out:
            status = await proc.terminate(KILL_GRACE_S)
        try:
            await asyncio.wait_for(asyncio.shield(reader), KILL_GRACE_S)
        except TimeoutError:
            # a process the command left behind holds the output open; stop reading
            reader.cancel()
        close = getattr(proc, "close", None)
        if callable(close):
            close()
        live = self._live.get(task_id)
        stopped = live.stop_requested if live is not None else None
        if stopped:
            final = "killed"
        elif timed_out:
            final = "timeout"
        else:
            final = "completed" if status == 0 else "failed"

        def finish(r: TaskRecord | None) -> TaskRecord | None:
            if r is None:
                return None
            return replace(r, status=final, exit_code=status, ended=self.clock(), stdin_open=False,
                           note=stopped or r.note)

        updated = self.records.update(task_id, finish)
        if updated is not None:
            self._emit_exit(updated)

    def _emit_exit(self, record: TaskRecord) -> None:
        with contextlib.suppress(Exception):
            self.session.emit("task_exited", record.summary(), tool=record.type)

    # -- control -----------------------------------------------------------------------
    async def wait(self, task_id: str, timeout: float | None) -> bool:
        """Wait until the task ends; ``False`` when ``timeout`` seconds passed first."""
        live = self._live.get(task_id)
        if live is None:
            return await self._wait_record(task_id, timeout)
        try:
            await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(live.future)), timeout)
        except TimeoutError:
            return False
        return True

    async def _wait_record(self, task_id: str, timeout: float | None, interval: float = 0.1) -> bool:
        """Wait for a task another process runs: watch its stored record."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            rec = self.get(task_id)
            if rec is None or not rec.running:
                return True
            if deadline is not None and loop.time() >= deadline:
                return False
            await asyncio.sleep(interval if deadline is None else min(interval, max(0.0, deadline - loop.time())))

    async def stop(self, task_id: str, reason: str = "stopped on request") -> TaskRecord | None:
        """Kill a running task's process group and wait for its record to say so."""
        live = self._live.get(task_id)
        rec = self.get(task_id)
        if rec is None:
            return None
        if live is None or not rec.running:
            if rec.running and live is None and rec.runner != RUNNER:
                note = self._runner_gone(rec)
                if note is not None:
                    return self._mark_lost(task_id, note)
                if self._bus is not None:  # the runner is there: ask it, and wait for its record
                    message = {"runner": rec.runner, "session": self.session.id, "task": task_id, "reason": reason}
                    self._bus.notify(STOP_CHANNEL, json.dumps(message))
                    await self._wait_record(task_id, KILL_GRACE_S * 2 + REMOTE_STOP_S)
                    return self.get(task_id)
            return rec
        live.stop_requested = reason
        if live.process is not None:
            await self._on_loop(live.process.terminate(KILL_GRACE_S))
        elif live.runner is not None:
            live.runner.get_loop().call_soon_threadsafe(live.runner.cancel)
        await self.wait(task_id, KILL_GRACE_S * 2)
        return self.get(task_id)

    async def write(self, task_id: str, data: bytes, *, eof: bool = False) -> None:
        live = self._live.get(task_id)
        rec = self.get(task_id)
        if live is None or rec is None or not rec.running:
            raise TaskError(f"task {task_id} is not running in this process")
        if not rec.stdin_open:
            raise TaskError(f"task {task_id} was started without stdin; nothing can be written to it")
        process = live.process
        if process is None:
            raise TaskError(f"task {task_id} is not a process; nothing can be written to it")
        if data:
            await self._on_loop(process.write(data))
        if eof:
            await self._on_loop(process.close_stdin())
            self.records.update(task_id, lambda r: r and replace(r, stdin_open=False))

    def remove(self, task_id: str) -> None:
        """Forget a finished task and delete its output file."""
        rec = self.get(task_id)
        if rec is None:
            return
        del self.records[task_id]
        self._live.pop(task_id, None)
        with contextlib.suppress(OSError):
            Path(rec.output_file).unlink()

    def read_output(self, record: TaskRecord, start: int = 0, max_bytes: int = 1 << 20) -> tuple[str, int]:
        return read_text_slice(Path(record.output_file), start, max_bytes)

    def output_size(self, record: TaskRecord) -> int:
        try:
            return os.path.getsize(record.output_file)
        except OSError:
            return 0

    def mark_polled(self, task_id: str, offset: int) -> None:
        self.records.update(task_id, lambda r: r and replace(r, poll_offset=offset))

    # -- shutdown ----------------------------------------------------------------------
    def _kill_all_now(self) -> None:
        """At interpreter exit: KILL every live group; nothing is awaited."""
        import signal

        for live in list(self._live.values()):
            if live.process is not None and live.process.returncode is None:
                live.process.signal(signal.SIGKILL)

    async def close(self) -> None:
        """Kill every task's group (the session is closing) and stop the private loop."""
        self._closed = True
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        running = [tid for tid, live in self._live.items() if not live.future.done()]
        if running:
            await asyncio.gather(*(self.stop(tid, "the session closed") for tid in running), return_exceptions=True)
        loop, self._loop = self._loop, None
        if loop is not None:
            loop.call_soon_threadsafe(loop.stop)
            if self._thread is not None:
                await asyncio.get_running_loop().run_in_executor(None, self._thread.join, 5.0)
            if not loop.is_running():
                loop.close()
        self._kill_all_now()


def _kill_at_exit(ref: weakref.ReferenceType[TaskTable]) -> None:
    table = ref()
    if table is not None:
        table._kill_all_now()


async def start_shell_task(
    ctx: ToolContext,
    *,
    kind: str,
    command: str,
    description: str,
    stdin: bool = False,
    pty: bool = False,
    timeout_s: float | None = None,
    persistent: bool = False,
    on_line: Callable[[TaskRecord, str, int], None] | None = None,
) -> TaskRecord:
    """Start ``command`` as a background task of ``kind``, the way Bash runs commands
    (snapshot, env file, the shell's cwd), its output going to the task's file."""
    from pegboard_toolkit.exec import backend_for, process_env
    from pegboard_toolkit.shell import ShellSettings, shell_argv, shell_cwd

    settings = ShellSettings.load(ctx)
    table = TaskTable.of(ctx)
    argv = await shell_argv(ctx, settings, command, None)
    return await table.start(
        ctx, kind=kind, argv=argv, command=command, description=description,
        backend=await backend_for(ctx), cwd=shell_cwd(ctx, settings), env=process_env(ctx),
        stdin=stdin, pty=pty, timeout_s=timeout_s, persistent=persistent, on_line=on_line,
    )


__all__ = [
    "DEFAULT_MAX_RUNNING",
    "FINISHED",
    "RUNNER",
    "TASKS",
    "TaskError",
    "TaskRecord",
    "TaskTable",
    "new_task_id",
    "start_shell_task",
]
