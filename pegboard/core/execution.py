"""How a tool starts a process: the ``ExecBackend`` protocol.

Tools never start processes themselves. They ask ``await ctx.exec_backend()`` for a
backend (an ``exec_backend`` hook's answer, else the default a tool passes, normally the
local backend of ``pegboard-toolkit``) and call ``start``. A backend that runs commands
elsewhere (a container, a bubblewrap namespace, a remote host) implements the same two
small protocols, often by wrapping another backend and rewriting ``argv``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

Stream = Literal["stdout", "stderr"]


class ExecError(OSError):
    """A process that could not be started (missing program, bad cwd); the message says which."""


@runtime_checkable
class ExecProcess(Protocol):
    """A started process and its process group.

    ``read`` returns up to ``size`` bytes of a stream as they arrive, ``b""`` at its end
    (with ``merge_stderr`` or a pty everything comes through ``"stdout"``). Signals reach
    the whole group, so grandchildren go too.
    """

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None:
        """The exit status once the process ended (negative: killed by that signal)."""
        ...

    async def read(self, stream: Stream = "stdout", size: int = 65536) -> bytes: ...

    async def write(self, data: bytes) -> None:
        """Write to stdin; raises ``BrokenPipeError`` when stdin is closed or was not opened."""
        ...

    async def close_stdin(self) -> None: ...

    def signal(self, signum: int) -> None:
        """Send ``signum`` to the process group; a group that is gone is not an error."""
        ...

    async def wait(self, timeout: float | None = None) -> int | None:
        """The exit status, or ``None`` when ``timeout`` seconds passed first."""
        ...

    async def terminate(self, grace: float = 2.0) -> int:
        """TERM the group, KILL it after ``grace`` seconds if the process still runs; the status."""
        ...


@runtime_checkable
class ExecBackend(Protocol):
    """Starts processes; see the module docstring."""

    name: str

    async def start(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        stdin: bool = False,
        pty: bool = False,
        merge_stderr: bool = True,
    ) -> ExecProcess:
        """Start ``argv`` in ``cwd`` with exactly ``env``, in a new process group.

        ``stdin=False`` gives the process a closed stdin (``/dev/null``); ``True`` a pipe for
        ``ExecProcess.write``. ``pty=True`` runs it on a pseudo-terminal (stdin, stdout and
        stderr all on the terminal). Raises :class:`ExecError` when it cannot start.
        """
        ...


__all__ = ["ExecBackend", "ExecError", "ExecProcess", "Stream"]
