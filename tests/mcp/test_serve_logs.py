"""``pegboard serve`` logs through a bounded queue: a full pipe on standard error never blocks it."""

from __future__ import annotations

import logging
import os
import threading
import time

from pegboard_mcp_server.logs import LogWriter


def test_a_pipe_nobody_reads_drops_lines_instead_of_blocking() -> None:
    read_end, write_end = os.pipe()
    writer = LogWriter(write_end, logging.INFO, size=64).start()
    logger = logging.getLogger("pegboard.test.logs")
    logger.propagate = False
    logger.addHandler(writer.handler)
    logger.setLevel(logging.INFO)
    try:
        started = time.monotonic()
        for n in range(5000):
            try:
                raise RuntimeError(f"failure {n}")
            except RuntimeError:
                logger.exception("a long line with a traceback %d", n)
        assert time.monotonic() - started < 5, "logging waited for the pipe"

        chunks: list[bytes] = []
        reader = threading.Thread(target=lambda: chunks.extend(iter(lambda: os.read(read_end, 65536), b"")))
        reader.start()
        deadline = time.monotonic() + 10
        while not writer.records.empty() and time.monotonic() < deadline:
            time.sleep(0.01)
        logger.info("after the reader came")
        writer.stop(timeout=10)
        os.close(write_end)
        reader.join(10)
    finally:
        logger.removeHandler(writer.handler)
        os.close(read_end)
    text = b"".join(chunks).decode()
    assert text.startswith("pegboard serve: ERROR pegboard.test.logs: a long line with a traceback 0\n")
    assert "RuntimeError: failure 0" in text
    lines = text.splitlines()
    assert lines[-2].endswith("log lines were dropped: standard error was not read fast enough")
    assert lines[-1] == "pegboard serve: INFO pegboard.test.logs: after the reader came"


def test_records_below_the_level_are_not_queued() -> None:
    read_end, write_end = os.pipe()
    writer = LogWriter(write_end, logging.WARNING).start()
    logger = logging.getLogger("pegboard.test.levels")
    logger.propagate = False
    logger.addHandler(writer.handler)
    logger.setLevel(logging.DEBUG)
    try:
        logger.info("quiet")
        logger.warning("loud")
        writer.stop()
        os.close(write_end)
        assert os.read(read_end, 65536) == b"pegboard serve: WARNING pegboard.test.levels: loud\n"
    finally:
        logger.removeHandler(writer.handler)
        os.close(read_end)


def test_flush_waits_until_what_is_queued_is_written() -> None:
    read_end, write_end = os.pipe()
    writer = LogWriter(write_end, logging.INFO).start()
    logger = logging.getLogger("pegboard.test.flush")
    logger.propagate = False
    logger.addHandler(writer.handler)
    logger.setLevel(logging.INFO)
    try:
        for n in range(100):
            logger.info("line %d", n)
        assert writer.flush()
        os.set_blocking(read_end, False)
        written = os.read(read_end, 1 << 20).decode().splitlines()
        assert written[-1] == "pegboard serve: INFO pegboard.test.flush: line 99" and len(written) == 100
    finally:
        logger.removeHandler(writer.handler)
        writer.stop()
        os.close(write_end)
        os.close(read_end)
