"""Running PowerShell the way the PowerShell tool does: finding ``pwsh`` 7+, the command line,
the script that carries the working directory over, and the run itself.

On Linux and macOS the tool is opt-in (an environment variable or ``tools.powershell.enabled``)
and needs ``pwsh`` 7 or later on ``PATH``. PowerShell starts with ``-NoProfile
-NonInteractive`` and, unless the machine's policy is to be respected, a process-scope
``-ExecutionPolicy Bypass`` (which group policy still overrides).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pegboard import ToolContext
    from pegboard_toolkit.shell import ShellOutcome, ShellSettings

USE_VARS = ("PEGBOARD_USE_POWERSHELL_TOOL", "FUXI_CODE_USE_POWERSHELL_TOOL")
RESPECT_POLICY_VARS = ("PEGBOARD_POWERSHELL_RESPECT_EXECUTION_POLICY", "FUXI_CODE_POWERSHELL_RESPECT_EXECUTION_POLICY")
MIN_MAJOR = 7
_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


def _truthy(value: Any) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def parse_version(text: str) -> tuple[int, int, int] | None:
    """``(major, minor, patch)`` from ``pwsh --version`` output (``PowerShell 7.4.1``)."""
    m = _VERSION.search(text)
    if m is None:
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


@functools.lru_cache(maxsize=8)
def _probe(binary: str) -> str:
    try:
        done = subprocess.run([binary, "--version"], capture_output=True,
                              text=True, timeout=15, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout


def find_pwsh(path: str | None = None) -> tuple[str | None, str | None]:
    """``(binary, None)`` for a usable ``pwsh`` 7+, else ``(None, why)``."""
    binary = shutil.which("pwsh", path=path if path is not None else os.environ.get("PATH", ""))
    if binary is None:
        return None, "pwsh (PowerShell 7 or later) is not on PATH"
    version = parse_version(_probe(binary))
    if version is None:
        return None, f"{binary} did not report a version"
    if version[0] < MIN_MAJOR:
        return None, f"{binary} is PowerShell {'.'.join(map(str, version))}; the tool needs 7 or later"
    return binary, None


def pwsh_missing() -> str | None:
    """Why the PowerShell tool cannot run here (no usable ``pwsh`` on ``PATH``), or ``None``."""
    return find_pwsh(os.environ.get("PATH", ""))[1]


def opted_in(env: Mapping[str, str], settings: Mapping[str, Any]) -> bool:
    """The tool is switched on: ``tools.powershell.enabled``, else one of ``USE_VARS``."""
    if "enabled" in settings:
        return bool(settings["enabled"])
    return any(_truthy(env.get(var, "")) for var in USE_VARS)


def respects_policy(env: Mapping[str, str], settings: Mapping[str, Any]) -> bool:
    if "respectExecutionPolicy" in settings:
        return bool(settings["respectExecutionPolicy"])
    return any(_truthy(env.get(var, "")) for var in RESPECT_POLICY_VARS)


def _ps_quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def build_ps_script(command: str, cwd_file: Path | None) -> str:
    """The ``-Command`` script: the command, then its status kept, the cwd written when it
    moved, and the exit status (the native program's code, 1 for a failed cmdlet, else 0)."""
    lines = ["$__pegboard_cwd0 = (Get-Location).Path", command,
             "$__pegboard_ok = $?", "$__pegboard_code = $LASTEXITCODE"]
    if cwd_file is not None:
        lines.append(
            "if ((Get-Location).Path -ne $__pegboard_cwd0) { "
            f"Set-Content -LiteralPath {_ps_quote(str(cwd_file))} -Value (Get-Location).ProviderPath -NoNewline }}"
        )
    lines.append("if ($__pegboard_ok) { exit 0 } elseif ($__pegboard_code) { exit $__pegboard_code } else { exit 1 }")
    return "\n".join(lines) + "\n"


def powershell_argv(pwsh: str, script: str, *, respect_policy: bool = False) -> list[str]:
    """The command line PowerShell runs with."""
    argv = [pwsh, "-NoProfile", "-NonInteractive"]
    if not respect_policy:
        argv += ["-ExecutionPolicy", "Bypass"]
    return [*argv, "-Command", script]


async def run_powershell(
    ctx: ToolContext, command: str, *, pwsh: str, settings: ShellSettings, timeout_s: float, respect_policy: bool
) -> ShellOutcome:
    """Run ``command`` in the foreground with Bash's limits and cwd carry-over."""
    from pegboard_toolkit.shell import new_cwd_file, run_foreground

    cwd_file = new_cwd_file(ctx)
    argv = powershell_argv(pwsh, build_ps_script(command, cwd_file), respect_policy=respect_policy)
    return await run_foreground(ctx, argv, cwd_file=cwd_file, settings=settings, timeout_s=timeout_s,
                                spill_prefix="powershell")


__all__ = [
    "RESPECT_POLICY_VARS",
    "USE_VARS",
    "build_ps_script",
    "find_pwsh",
    "opted_in",
    "parse_version",
    "powershell_argv",
    "respects_policy",
    "run_powershell",
]
