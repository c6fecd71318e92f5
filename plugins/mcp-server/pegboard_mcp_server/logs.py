"""Logging for ``pegboard serve`` that never blocks the server.

Under many supervisors standard error is a pipe, and when nobody reads it a write blocks as
soon as the pipe is full (64 KiB on Linux). A server that writes its log lines from the event
loop then stops answering everyone. So log records go into a bounded queue, and a thread of
their own writes them to a private copy of standard error; when the queue is full a record is
dropped and counted, and the writer reports the count where the lines are missing.
"""

from __future__ import annotations

import atexit
import logging
import logging.handlers
import os
import queue
import sys
import threading
import time
from typing import Any

FORMAT = "pegboard serve: %(levelname)s %(name)s: %(message)s"
QUEUE_SIZE = 1024
FLUSH_SECONDS = 2.0


class DroppingQueueHandler(logging.handlers.QueueHandler):
    """A queue handler that drops (and counts) a record rather than wait for room; the next
    record it queues carries the count, so the report lands where the lines went missing."""

    def __init__(self, records: queue.Queue[Any]) -> None:
        super().__init__(records)
        self._lock = threading.Lock()
        self._dropped = 0

    def enqueue(self, record: logging.LogRecord) -> None:
        with self._lock:
            record.dropped_before = self._dropped
            try:
                self.queue.put_nowait(record)
            except queue.Full:
                self._dropped += 1
            else:
                self._dropped = 0

    def take_dropped(self) -> int:
        """How many records were dropped since the last one queued."""
        with self._lock:
            dropped, self._dropped = self._dropped, 0
        return dropped


class LogWriter:
    """The thread that writes queued records to a file descriptor; only it ever waits on it."""

    def __init__(self, fd: int, level: int, size: int = QUEUE_SIZE) -> None:
        self.fd = fd
        self.records: queue.Queue[Any] = queue.Queue(maxsize=size)
        self.handler = DroppingQueueHandler(self.records)
        self.handler.setLevel(level)
        self.handler.setFormatter(logging.Formatter(FORMAT))
        self._thread = threading.Thread(target=self._run, name="pegboard-serve-log", daemon=True)
        self._stopped = threading.Event()

    def start(self) -> LogWriter:
        self._thread.start()
        return self

    def stop(self, timeout: float = FLUSH_SECONDS) -> None:
        """Write what is queued, for at most ``timeout`` seconds (a pipe nobody reads never drains)."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        deadline = time.monotonic() + timeout
        try:
            self.records.put(None, timeout=timeout)
        except queue.Full:
            return
        self._thread.join(max(0.0, deadline - time.monotonic()))

    def flush(self, timeout: float = FLUSH_SECONDS) -> bool:
        """Wait (at most ``timeout`` seconds) until what is queued now is written."""
        written = threading.Event()
        try:
            self.records.put(written, timeout=timeout)
        except queue.Full:
            return False
        return written.wait(timeout)

    def _run(self) -> None:
        while True:
            record = self.records.get()
            if record is None:
                self._report_dropped(self.handler.take_dropped())
                return
            if isinstance(record, threading.Event):
                record.set()
                continue
            self._report_dropped(getattr(record, "dropped_before", 0))
            self._write(record.getMessage())

    def _report_dropped(self, dropped: int) -> None:
        if dropped:
            noun = "line was" if dropped == 1 else "lines were"
            self._write(
                f"pegboard serve: WARNING pegboard.mcp.serve: {dropped} log {noun} dropped: "
                "standard error was not read fast enough"
            )

    def _write(self, line: str) -> None:
        data = (line + "\n").encode("utf-8", "backslashreplace")
        try:
            while data:
                data = data[os.write(self.fd, data) :]
        except OSError:  # standard error closed: there is nobody to tell
            pass


def install(level: int, stream: Any = None) -> LogWriter:
    """Send every log record of this process at ``level`` or above through a ``LogWriter`` to
    standard error (``stream``: another file with a descriptor), warnings included; stopped at exit."""
    target = stream if stream is not None else sys.stderr
    writer = LogWriter(os.dup(target.fileno()), level).start()
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(writer.handler)
    root.setLevel(level)
    logging.captureWarnings(True)
    atexit.register(writer.stop)
    global _installed
    _installed = writer
    return writer


_installed: LogWriter | None = None


def flush(timeout: float = FLUSH_SECONDS) -> None:
    """Write what is queued before the process ends in a way that skips ``atexit`` (uvicorn
    re-raises the signal that stopped it)."""
    if _installed is not None:
        _installed.flush(timeout)
