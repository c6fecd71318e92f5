"""``kill -9`` of a process that keeps writing and editing one file never leaves it partial."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

PAYLOAD = 1_200_000  # over the byte-path threshold of Edit, so both write paths run
VALID = re.compile(rb"\Aversion \d+(b)?\n(x{%d})\nEND\n\Z" % PAYLOAD)

WORKER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from tests.builtin.filetools import Files

    root = Path(sys.argv[1])
    files = Files(root, mode="bypassPermissions")
    target = root / "target.txt"
    i = 0
    while True:
        r = files.call("Write", file_path=str(target), content=f"version {i}\\n" + "x" * PAYLOAD + "\\nEND\\n")
        assert not r.is_error, r.text
        r = files.call("Edit", file_path=str(target), old_string=f"version {i}\\n", new_string=f"version {i}b\\n")
        assert not r.is_error, r.text
        (root / "progress").write_text(str(i))
        i += 1
    """
).replace("PAYLOAD", str(PAYLOAD))


def test_kill_9_leaves_the_old_or_the_new_file(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": str(repo)}
    for round_ in range(4):
        root = tmp_path / f"round{round_}"
        root.mkdir()
        proc = subprocess.Popen([sys.executable, "-c", WORKER, str(root)], cwd=repo, env=env,
                                stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 60
            while not (root / "progress").exists():
                assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
                assert time.monotonic() < deadline, "the worker never got going"
                time.sleep(0.01)
            time.sleep(0.02 + 0.037 * round_)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            if proc.stderr:
                proc.stderr.close()
        data = (root / "target.txt").read_bytes()
        assert VALID.match(data), f"round {round_}: partial file of {len(data)} bytes: {data[:40]!r}"
