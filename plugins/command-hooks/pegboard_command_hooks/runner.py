"""Running one ``command`` handler: JSON on stdin, capped stdout/stderr, a process-group timeout.

The handler runs in its own session (so in its own process group). On timeout the whole
group gets SIGTERM, then SIGKILL after a short grace, so children a hook started (and
children that ignore SIGTERM) do not outlive it. When the handler exits but something it
left behind keeps its stdout open, reading stops after a short grace instead of waiting for
the timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

MAX_OUTPUT_BYTES = 1024 * 1024  # per stream; the rest is read and dropped
TERM_GRACE_SECONDS = 1.0  # between SIGTERM and SIGKILL on timeout
PIPE_GRACE_SECONDS = 0.5  # reading after the handler exited, if a leftover child holds the pipe
SHELL = "/bin/sh"
CANNOT_START_CODES = {126: "is not executable", 127: "was not found"}


@dataclass
class RawOutcome:
    """What a handler did, before the hook protocol reads it.

    ``failure`` says why there is no usable answer (timed out, could not start, crashed, an
    HTTP error); it is what ``failClosed`` turns into a block.
    """

    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    duration_ms: float = 0.0
    failure: str | None = None
    truncated: list[str] = field(default_factory=list)
    status: int | None = None  # http only

    def to_json(self) -> dict[str, object]:
        return {
            "exit_code": self.exit_code,
            "status": self.status,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "duration_ms": round(self.duration_ms, 3),
            "failure": self.failure,
            "truncated": list(self.truncated),
        }


class _Capture:
    """Reads a stream to its end, keeping the first ``limit`` bytes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.chunks: list[bytes] = []
        self.kept = 0
        self.dropped = 0

    async def drain(self, stream: asyncio.StreamReader | None) -> None:
        if stream is None:
            return
        while chunk := await stream.read(65536):
            room = self.limit - self.kept
            if room > 0:
                self.chunks.append(chunk[:room])
                self.kept += min(room, len(chunk))
            self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self) -> str:
        return b"".join(self.chunks).decode("utf-8", errors="replace")


async def _feed(stdin: asyncio.StreamWriter | None, data: bytes) -> None:
    if stdin is None:
        return
    with contextlib.suppress(BrokenPipeError, ConnectionResetError, OSError):
        stdin.write(data)
        await stdin.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError, OSError):
        stdin.close()


def _killpg(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


class _Protocol(asyncio.subprocess.SubprocessStreamProtocol):
    """Stream protocol that also reports the moment the process exits.

    ``Process.wait()`` returns only once every pipe is closed too, so a leftover child
    holding stdout open would make a finished hook look hung.
    """

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()

    def process_exited(self) -> None:
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)


async def _stop_group(pid: int, exited: asyncio.Future[None]) -> None:
    """SIGTERM the handler's process group, then SIGKILL whatever is left of it."""
    _killpg(pid, signal.SIGTERM)  # start_new_session: the handler leads its own group
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(exited), TERM_GRACE_SECONDS)
    _killpg(pid, signal.SIGKILL)  # also reaches children that ignore SIGTERM after the leader died
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(exited), TERM_GRACE_SECONDS)


async def run_command(
    argv: Sequence[str] | None,
    shell_command: str | None,
    stdin_data: bytes,
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    max_output: int | None = None,
) -> RawOutcome:
    """Run a handler in exec form (``argv``) or shell form (``shell_command`` via ``/bin/sh -c``)."""
    limit = MAX_OUTPUT_BYTES if max_output is None else max_output
    program = list(argv) if argv is not None else [SHELL, "-c", shell_command or ""]
    loop = asyncio.get_running_loop()
    started = time.perf_counter()
    try:
        transport, protocol = await loop.subprocess_exec(
            lambda: _Protocol(65536, loop),
            *program,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=str(cwd),
            env=dict(env),
            start_new_session=True,
        )
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        return RawOutcome(
            None,
            duration_ms=(time.perf_counter() - started) * 1000,
            failure=f"could not start {program[0]!r}: {reason}",
        )
    pid = transport.get_pid()
    out, err = _Capture(limit), _Capture(limit)
    tasks = [
        asyncio.ensure_future(out.drain(protocol.stdout)),
        asyncio.ensure_future(err.drain(protocol.stderr)),
        asyncio.ensure_future(_feed(protocol.stdin, stdin_data)),
    ]
    failure: str | None = None
    try:
        try:
            await asyncio.wait_for(asyncio.shield(protocol.exited), timeout)
        except TimeoutError:
            failure = f"timed out after {timeout:g} s (process group killed)"
            await _stop_group(pid, protocol.exited)
        await asyncio.wait(tasks, timeout=PIPE_GRACE_SECONDS)
    except asyncio.CancelledError:
        await asyncio.shield(_stop_group(pid, protocol.exited))
        raise
    finally:
        for task in tasks:
            if not task.done():
                task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        transport.close()
    code = transport.get_returncode()
    outcome = RawOutcome(
        code,
        stdout=out.text(),
        stderr=err.text(),
        duration_ms=(time.perf_counter() - started) * 1000,
    )
    for name, cap in (("stdout", out), ("stderr", err)):
        if cap.dropped:
            outcome.truncated.append(f"{name} cut at {limit} bytes ({cap.dropped} more bytes dropped)")
    if failure is not None:
        outcome.failure = failure
    elif code is not None and code < 0:
        outcome.failure = f"crashed: killed by signal {_signal_name(-code)}"
    elif argv is None and code in CANNOT_START_CODES:
        first = (outcome.stderr.strip().splitlines() or [""])[0]
        outcome.failure = f"could not start: the command {CANNOT_START_CODES[code]} (exit {code}) {first}".rstrip()
    return outcome


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
