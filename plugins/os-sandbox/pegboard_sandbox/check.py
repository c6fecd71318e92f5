"""Can bubblewrap run here? One probe per binary, cached for the process."""

from __future__ import annotations

import functools
import shutil
import subprocess

from pegboard_sandbox.backend import INSTALL_HINT


@functools.lru_cache(maxsize=8)
def probe(bwrap: str = "bwrap") -> str | None:
    """``None`` when a namespace can be created, else why not (with how to fix it)."""
    binary = shutil.which(bwrap)
    if binary is None:
        return f"{bwrap} is not on PATH; {INSTALL_HINT}"
    args = [binary, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-user-try",
            "--unshare-pid", "--unshare-net", "--unshare-ipc", "--die-with-parent", "--", "true"]
    try:
        done = subprocess.run(args, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{binary} cannot run: {exc}"
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip() or f"exit status {done.returncode}"
        return f"{binary} cannot create namespaces here: {why} (unprivileged user namespaces may be disabled)"
    return None
