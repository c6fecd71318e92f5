"""``pegboard serve --http HOST:PORT --workers N``: N server processes on one listening socket.

The supervisor binds the socket once and starts N copies of the same command, each handed
the socket's descriptor (``PEGBOARD_SERVE_WORKER_FD``): the kernel spreads connections over
the processes that accept on it. Workers share sessions only through the session store
(a stateless request's named session, read again on every request), so any request can be
served by any worker. A worker that dies is started again (at most ``RESTARTS`` times a
minute); the supervisor passes SIGTERM/SIGINT on and waits for the workers to finish.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from types import FrameType

log = logging.getLogger("pegboard.mcp.serve")

WORKER_FD_ENV = "PEGBOARD_SERVE_WORKER_FD"
WORKER_INDEX_ENV = "PEGBOARD_SERVE_WORKER"
RESTARTS = 5
BACKLOG = 2048
STOP_SECONDS = 15.0


def inherited_fd() -> int | None:
    """The listening socket a supervisor handed this worker, if any."""
    value = os.environ.get(WORKER_FD_ENV, "")
    return int(value) if value.isdigit() else None


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (IPv6 when ``host`` is an IPv6 literal)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(BACKLOG)
    sock.set_inheritable(True)
    return sock


class Supervisor:
    """Starts and watches the worker processes of one ``serve`` command."""

    def __init__(self, argv: Sequence[str], workers: int, sock: socket.socket) -> None:
        self.argv = list(argv)
        self.workers = workers
        self.sock = sock
        self.procs: dict[int, subprocess.Popen[bytes]] = {}
        self.stopping = False
        self._restarts: list[float] = []

    def _start(self, index: int) -> None:
        env = {**os.environ, WORKER_FD_ENV: str(self.sock.fileno()), WORKER_INDEX_ENV: str(index)}
        self.procs[index] = subprocess.Popen(self.argv, env=env, pass_fds=(self.sock.fileno(),))

    def _stop(self, signum: int, frame: FrameType | None) -> None:
        self.stopping = True
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)

    def run(self) -> int:
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGINT, self._stop)
        for index in range(self.workers):
            self._start(index)
        log.info("supervising %d workers", self.workers)
        status = 0
        while not self.stopping:
            time.sleep(0.2)
            for index, proc in list(self.procs.items()):
                code = proc.poll()
                if code is None or self.stopping:
                    continue
                now = time.monotonic()
                self._restarts = [t for t in self._restarts if now - t < 60] + [now]
                if len(self._restarts) > RESTARTS:
                    log.error("worker %d exited with %s; too many restarts in a minute, stopping", index, code)
                    status = 1
                    self._stop(signal.SIGTERM, None)
                    break
                log.warning("worker %d exited with %s; starting it again", index, code)
                self._start(index)
        deadline = time.monotonic() + STOP_SECONDS
        for proc in self.procs.values():
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.sock.close()
        return status


def worker_command() -> list[str]:
    """This process's own command line, to start a worker with."""
    return [sys.executable, "-m", "pegboard", *sys.argv[1:]]
