"""Running one program in Deno, and the framed protocol between it and Pegboard.

Deno starts with no ``--allow-*`` flag (no files, network, environment, subprocesses), no
remote or npm modules, no config file, only cached modules, and a V8 heap cap. The program's
tool calls and console output cross stdout as frames: one line each, ``\\x1e`` then JSON.
Pegboard answers calls on stdin the same way. Anything else the program writes to stdout is
kept as output; stderr is read for the runtime's own failures (out of memory, syntax errors).

Frames from the program: ``{"t":"call","id","tool","input"}``, ``{"t":"log","text"}``,
``{"t":"done","ok","value"|"error","store"}``. To the program: ``{"t":"init","store"}``,
``{"t":"result","id","ok","value"|"error","reason"}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

FRAME = "\x1e"
DENO_FLAGS = ("run", "--no-prompt", "--no-remote", "--no-npm", "--no-config", "--cached-only")
#: stderr kept for diagnosing a failed start or a crash
STDERR_CHARS = 4_000
#: how often the wall limit looks at the clock while the program is quiet
CLOCK_TICK = 0.2


class Clock(Protocol):
    def now(self) -> float: ...


class CallOutcome(Protocol):
    ok: bool
    value: Any
    error: str
    reason: str | None


@dataclass
class InnerAnswer:
    ok: bool
    value: Any = None
    error: str = ""
    reason: str | None = None


@dataclass(frozen=True)
class Limits:
    wall_seconds: float = 30.0
    memory_mib: int = 256
    output_chars: int = 100_000
    max_calls: int = 1_000


@dataclass
class RunOutcome:
    """How a program ended: ``status`` is ``ok``, ``error`` (it threw), ``timeout``,
    ``memory`` (heap cap), ``calls`` (too many tool calls) or ``crashed`` (the runtime died)."""

    status: str
    value: Any = None
    error: str = ""
    output: str = ""
    output_truncated: bool = False
    store: dict[str, Any] | None = None
    calls: int = 0
    elapsed: float = 0.0
    stderr: str = ""


InnerCall = Callable[[str, Any], Awaitable[InnerAnswer]]


def command(binary: str, main: Path, limits: Limits) -> list[str]:
    heap = f"--v8-flags=--max-old-space-size={limits.memory_mib},--disallow-code-generation-from-strings"
    return [binary, *DENO_FLAGS, heap, str(main)]


@dataclass
class _Run:
    limits: Limits
    output: list[str] = field(default_factory=list)
    output_size: int = 0
    truncated: bool = False
    calls: int = 0

    def add_output(self, text: str) -> None:
        room = self.limits.output_chars - self.output_size
        if room <= 0:
            self.truncated = self.truncated or bool(text)
            return
        if len(text) > room:
            text = text[:room]
            self.truncated = True
        self.output.append(text)
        self.output_size += len(text)


async def run_program(
    program: str,
    *,
    binary: str,
    limits: Limits,
    call: InnerCall,
    store: dict[str, Any],
    clock: Clock,
    workdir: Path | None = None,
) -> RunOutcome:
    """Run ``program`` (the complete module text, prelude included) to its end or a limit."""
    start = clock.now()
    deadline = start + limits.wall_seconds
    run = _Run(limits)
    with tempfile.TemporaryDirectory(prefix="pegboard-codemode-", dir=workdir) as tmp:
        main = Path(tmp) / "main.ts"
        main.write_text(program, encoding="utf-8")
        env = {"DENO_DIR": str(Path(tmp) / "cache"), "NO_COLOR": "1", "DENO_NO_UPDATE_CHECK": "1",
               "HOME": tmp, "PATH": os.environ.get("PATH", "")}
        proc = await asyncio.create_subprocess_exec(
            *command(binary, main, limits),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=tmp,
            env=env,
            limit=64 * 1024 * 1024,
            start_new_session=True,
        )
        stderr_task = asyncio.ensure_future(_read_stderr(proc))
        pending: set[asyncio.Task[None]] = set()
        outcome: RunOutcome | None = None
        try:
            await _send(proc, {"t": "init", "store": store})
            outcome = await _converse(proc, run, call, clock, deadline, pending)
        finally:
            for task in pending:
                task.cancel()
            await _stop(proc)
            stderr_text = await stderr_task
        if outcome is None:  # the runtime ended without a "done" frame
            outcome = RunOutcome(status="crashed")
        outcome.stderr = stderr_text
        if outcome.status == "crashed" and _out_of_memory(stderr_text):
            outcome.status = "memory"
        outcome.output = "".join(run.output)
        outcome.output_truncated = run.truncated
        outcome.calls = run.calls
        outcome.elapsed = clock.now() - start
        return outcome


async def _converse(
    proc: asyncio.subprocess.Process,
    run: _Run,
    call: InnerCall,
    clock: Clock,
    deadline: float,
    pending: set[asyncio.Task[None]],
) -> RunOutcome | None:
    """Read frames until the program is done; a watchdog on ``clock`` kills it at the deadline
    (so reading a line costs no timer of its own)."""
    assert proc.stdout is not None
    stdout = proc.stdout
    expired = asyncio.Event()
    watchdog = asyncio.ensure_future(_watch(proc, clock, deadline, expired))
    try:
        while True:
            line = asyncio.get_running_loop().create_future()
            try:
                line.set_result(await stdout.readline())
            except ValueError as exc:  # a line longer than the stream limit
                line.set_exception(exc)
            if expired.is_set():
                return RunOutcome(status="timeout")
            outcome = _handle(line, proc, run, call, pending)
            if outcome is not _GO_ON:
                if outcome is None and expired.is_set():
                    return RunOutcome(status="timeout")
                return outcome if isinstance(outcome, RunOutcome) else None
    finally:
        watchdog.cancel()


async def _watch(proc: asyncio.subprocess.Process, clock: Clock, deadline: float, expired: asyncio.Event) -> None:
    while (left := deadline - clock.now()) > 0:
        await asyncio.sleep(min(left, CLOCK_TICK))
    expired.set()
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


_GO_ON = object()


def _handle(
    line_task: asyncio.Future[bytes],
    proc: asyncio.subprocess.Process,
    run: _Run,
    call: InnerCall,
    pending: set[asyncio.Task[None]],
) -> object:
    """One line of the program's stdout: ``_GO_ON``, a ``RunOutcome``, or ``None`` at its end."""
    try:
        line = line_task.result()
    except ValueError:  # a line longer than the stream limit
        run.add_output("[a line of more than 64 MiB was dropped]\n")
        return _GO_ON
    if not line:
        return None
    text = line.decode("utf-8", errors="replace")
    frame = _frame(text)
    if frame is None:
        run.add_output(text)
        return _GO_ON
    kind = frame.get("t")
    if kind == "log":
        run.add_output(str(frame.get("text", "")) + "\n")
    elif kind == "call":
        run.calls += 1
        if run.calls > run.limits.max_calls:
            return RunOutcome(status="calls")
        task = asyncio.ensure_future(_answer(proc, frame, call))
        pending.add(task)
        task.add_done_callback(pending.discard)
    elif kind == "done":
        store = frame.get("store")
        return RunOutcome(
            status="ok" if frame.get("ok") else "error",
            value=frame.get("value"),
            error=str(frame.get("error") or ""),
            store=store if isinstance(store, dict) else None,
        )
    else:
        run.add_output(text)
    return _GO_ON


def _frame(text: str) -> dict[str, Any] | None:
    if not text.startswith(FRAME):
        return None
    try:
        frame = json.loads(text[1:])
    except ValueError:
        return None
    return frame if isinstance(frame, dict) else None


async def _answer(proc: asyncio.subprocess.Process, frame: dict[str, Any], call: InnerCall) -> None:
    call_id = frame.get("id")
    name = frame.get("tool")
    if not isinstance(name, str):
        answer = InnerAnswer(ok=False, error="a tool call needs the tool's name", reason="invalid_input")
    else:
        try:
            answer = await call(name, frame.get("input"))
        except Exception as exc:  # the pipeline never raises; this is a last guard for the host
            answer = InnerAnswer(ok=False, error=f"{type(exc).__name__}: {exc}", reason="tool_error")
    reply: dict[str, Any] = {"t": "result", "id": call_id, "ok": answer.ok}
    if answer.ok:
        reply["value"] = answer.value
    else:
        reply["error"] = answer.error
        reply["reason"] = answer.reason
    with contextlib.suppress(ConnectionError, RuntimeError):
        await _send(proc, reply)


async def _send(proc: asyncio.subprocess.Process, frame: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write((json.dumps(frame, ensure_ascii=False, default=str) + "\n").encode())
    await proc.stdin.drain()


async def _read_stderr(proc: asyncio.subprocess.Process) -> str:
    assert proc.stderr is not None
    kept = bytearray()
    while chunk := await proc.stderr.read(65536):
        if len(kept) < STDERR_CHARS * 4:
            kept.extend(chunk)
    return kept.decode("utf-8", errors="replace")[-STDERR_CHARS:]


async def _stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    if proc.stdin is not None:
        with contextlib.suppress(Exception):
            proc.stdin.close()
    with contextlib.suppress(Exception):
        await asyncio.wait_for(proc.wait(), timeout=5)


def _out_of_memory(stderr: str) -> bool:
    return "heap out of memory" in stderr or "Fatal JavaScript out of memory" in stderr or "heap limit" in stderr
