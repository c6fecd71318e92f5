"""Running a shell command the way Bash, exec and Monitor do.

Each command is its own ``bash -c`` process (and process group) started through the call's
execution backend. Before the command the script applies the session's shell snapshot
(aliases, functions and shell options captured once from the user's startup file) and
sources the env file; after it, an EXIT trap writes the final working directory to a file
(when it changed) so that ``cd`` carries over to the next command while it stays inside the working
directories. Exported variables die with the process, as they should.
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from pegboard import SessionKey, ToolContext
from pegboard_toolkit.exec import backend_for, process_env
from pegboard_toolkit.output import CapturedOutput, OutputCapture
from pegboard_toolkit.progress import Progress
from pegboard_toolkit.runtime_config import HARD_MAX_OUTPUT, shell_binary

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
DEFAULT_MAX_OUTPUT = 30_000
PREVIEW_CHARS = 2_000
KILL_GRACE_S = 2.0
#: After the shell exited, how long to wait for processes it left holding the output open.
DRAIN_AFTER_EXIT_S = 0.5
SNAPSHOT_TIMEOUT_S = 10.0

SHELL_CWD: SessionKey[str] = SessionKey("pegboard-shell-cwd", str, persist=True)

MAINTAIN_DIR_VARS = ("PEGBOARD_BASH_MAINTAIN_PROJECT_WORKING_DIR", "FUXI_BASH_MAINTAIN_PROJECT_WORKING_DIR")
ENV_FILE_VARS = ("PEGBOARD_ENV_FILE", "FUXI_ENV_FILE")
#: ``set -o`` options a snapshot never carries over: they would change how every command runs.
_UNSAFE_SET_OPTIONS = frozenset(
    {"errexit", "nounset", "xtrace", "verbose", "noexec", "onecmd", "monitor", "history",
     "emacs", "vi", "braceexpand", "hashall", "interactive-comments", "posix", "privileged"}
)


def _truthy(value: Any) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def _int(value: Any) -> int | None:
    try:
        number = int(str(value).strip())
    except (TypeError, ValueError):
        return None
    return number if number > 0 else None


def tool_settings(ctx: ToolContext, section: str) -> dict[str, Any]:
    """``tools.<section>`` of the config, as a dict of the keys set (see ``runtime_config``)."""
    from pegboard_toolkit.runtime_config import section as read_section

    return read_section(ctx, f"tools.{section}")


def _progress_interval(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 1000


@dataclass(frozen=True)
class ShellSettings:
    """The limits and switches of shell commands; see ``ShellSettings.load`` for the sources."""

    default_timeout_ms: int = DEFAULT_TIMEOUT_MS
    max_timeout_ms: int = MAX_TIMEOUT_MS
    max_output_chars: int = DEFAULT_MAX_OUTPUT
    maintain_project_dir: bool = False
    env_file: str | None = None
    startup_file: str | None = None
    snapshot: bool = True
    bash: str = "bash"
    preview_tail: bool = False
    progress_interval_ms: int = 1000

    @classmethod
    def load(cls, ctx: ToolContext) -> ShellSettings:
        """Config ``tools.bash.*``, overridden by Fuxi Code's ``FUXI_CODE_*`` environment variables when set.

        Read on every command, so the answer is kept per validated settings object (the
        kernel keeps one per Pegboard) and the values of the variables that override it."""
        try:
            validated = ctx.settings("tools.bash")
        except (KeyError, RuntimeError):
            validated = None
        if not isinstance(validated, BaseModel):
            return cls._read(ctx)
        env = ctx.env
        overrides = tuple(env.get(var) for var in _SETTING_VARS)
        cached = _LOADED.get(id(validated))
        if cached is not None and cached[0] is validated and cached[1] == overrides:
            return cached[2]
        settings = cls._read(ctx)
        if len(_LOADED) >= 16:
            _LOADED.clear()
        _LOADED[id(validated)] = (validated, overrides, settings)
        return settings

    @classmethod
    def _read(cls, ctx: ToolContext) -> ShellSettings:
        conf = tool_settings(ctx, "bash")
        env = ctx.env

        def pick_int(key: str, var: str, default: int) -> int:
            return _int(env.get(var)) or _int(conf.get(key)) or default

        maintain = conf.get("maintainProjectWorkingDir", False)
        for var in MAINTAIN_DIR_VARS:
            if env.get(var):
                maintain = _truthy(env[var])
        env_file = conf.get("envFile")
        for var in ENV_FILE_VARS:
            if env.get(var):
                env_file = env[var]
        max_timeout = pick_int("maxTimeoutMs", "BASH_MAX_TIMEOUT_MS", MAX_TIMEOUT_MS)
        default_timeout = min(pick_int("defaultTimeoutMs", "BASH_DEFAULT_TIMEOUT_MS", DEFAULT_TIMEOUT_MS), max_timeout)
        output = min(pick_int("maxOutputLength", "BASH_MAX_OUTPUT_LENGTH", DEFAULT_MAX_OUTPUT), HARD_MAX_OUTPUT)
        startup = conf.get("startupFile")
        return cls(
            default_timeout_ms=default_timeout,
            max_timeout_ms=max_timeout,
            max_output_chars=output,
            maintain_project_dir=bool(maintain),
            env_file=str(env_file) if env_file else None,
            startup_file=str(startup) if isinstance(startup, str) and startup else None,
            snapshot=startup != "",
            bash=str(conf.get("shell") or "bash"),
            preview_tail=conf.get("previewTail") is True,
            progress_interval_ms=_progress_interval(conf.get("progressIntervalMs")),
        )

    def timeout_seconds(self, requested_ms: int | None) -> float:
        """The requested timeout (clamped to the maximum), else the default, in seconds."""
        ms = self.default_timeout_ms if requested_ms is None else min(requested_ms, self.max_timeout_ms)
        return ms / 1000


#: The environment variables :meth:`ShellSettings.load` reads.
_SETTING_VARS = (*MAINTAIN_DIR_VARS, *ENV_FILE_VARS, "BASH_MAX_TIMEOUT_MS", "BASH_DEFAULT_TIMEOUT_MS",
                 "BASH_MAX_OUTPUT_LENGTH")
_LOADED: dict[int, tuple[BaseModel, tuple[str | None, ...], ShellSettings]] = {}


def bash_path(settings: ShellSettings | None = None) -> str | None:
    """Where the shell binary is (``None``: not installed); looked up once per ``PATH``."""
    return shell_binary((settings or ShellSettings()).bash)


# --------------------------------------------------------------------------- working directory


def working_dirs(ctx: ToolContext) -> list[Path]:
    dirs = [ctx.cwd, *ctx.additional_dirs]
    if ctx.project_dir is not None:
        dirs.append(ctx.project_dir)
    return [Path(os.path.realpath(d)) for d in dirs]


def _inside(path: Path, dirs: list[Path]) -> bool:
    return any(path == d or d in path.parents for d in dirs)


def carries_cwd(ctx: ToolContext, settings: ShellSettings) -> bool:
    """Whether ``cd`` carries over: not for subagents, not when the setting turns it off."""
    return ctx.session is not None and ctx.subagent is None and not settings.maintain_project_dir


def shell_cwd(ctx: ToolContext, settings: ShellSettings) -> Path:
    """Where the next command starts: the carried-over directory, else the session's cwd."""
    if carries_cwd(ctx, settings) and ctx.session is not None:
        saved = ctx.session.state.get(SHELL_CWD)
        if saved:
            path = Path(saved)
            if path.is_dir() and _inside(Path(os.path.realpath(path)), working_dirs(ctx)):
                return path
    return ctx.cwd


def settle_cwd(ctx: ToolContext, settings: ShellSettings, final: str | None) -> tuple[Path, str | None]:
    """Keep ``final`` as the shell's cwd if allowed; return the cwd and a reset note if not."""
    start = ctx.cwd
    if not carries_cwd(ctx, settings) or ctx.session is None or not final:
        return shell_cwd(ctx, settings), None
    path = Path(final)
    if path.is_dir() and _inside(Path(os.path.realpath(path)), working_dirs(ctx)):
        ctx.session.state[SHELL_CWD] = str(path)
        return path, None
    ctx.session.state[SHELL_CWD] = str(start)
    return start, f"Shell cwd was reset to {start}"


# --------------------------------------------------------------------------- snapshot and script


def startup_file(ctx: ToolContext, settings: ShellSettings) -> Path | None:
    """The user's startup file: the setting, else ``~/.bashrc``, else ``~/.profile``."""
    if settings.startup_file:
        return Path(settings.startup_file).expanduser()
    home = process_env(ctx).get("HOME")
    if not home:
        return None
    for name in (".bashrc", ".profile"):
        candidate = Path(home) / name
        if candidate.is_file():
            return candidate
    return None


#: Only the shell options the startup file changed are kept: every line of the snapshot is
#: parsed again before each command, and most options keep bash's defaults.
_CAPTURE = r"""
shopt -s expand_aliases
__pegboard_shopt0=$(shopt -p)
__pegboard_set0=$(set -o)
source "$1" >/dev/null 2>&1 </dev/null
echo "# pegboard shell snapshot"
alias -p
declare -f
__pegboard_changed() {
  case $'\n'"$1"$'\n' in *$'\n'"$2"$'\n'*) return 1 ;; esac
}
shopt -p | while IFS= read -r line; do
  __pegboard_changed "$__pegboard_shopt0" "$line" && printf '%s\n' "$line"
done
set -o | while IFS= read -r line; do
  __pegboard_changed "$__pegboard_set0" "$line" || continue
  read -r name state <<< "$line"
  [ "$state" = on ] && printf 'set -o %s\n' "$name"
done
"""


async def ensure_snapshot(ctx: ToolContext, settings: ShellSettings) -> Path | None:
    """The session's shell snapshot, captured from the startup file on first use."""
    if ctx.session is None or not settings.snapshot:
        return None
    target = ctx.session.directory / "shell-snapshot.sh"
    if target.exists():
        return target
    source = startup_file(ctx, settings)
    bash = bash_path(settings)
    if source is None or bash is None:
        target.write_text("# no startup file\n")
        return target
    backend = await backend_for(ctx)
    proc = await backend.start([bash, "-c", _CAPTURE, "pegboard-snapshot", str(source)],
                               cwd=ctx.cwd, env=process_env(ctx), stdin=False)
    capture = OutputCapture(4 << 20, lambda: target.with_suffix(".overflow"))
    try:
        await asyncio.wait_for(_pump(proc, capture), SNAPSHOT_TIMEOUT_S)
        await proc.wait(KILL_GRACE_S)
    except TimeoutError:
        await proc.terminate(KILL_GRACE_S)
        target.write_text("# the startup file did not finish in time\n")
        return target
    text = capture.finish().text
    lines = [ln for ln in text.splitlines() if not _unsafe_option(ln)]
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}")
    tmp.write_text("\n".join(lines) + "\n")
    os.replace(tmp, target)
    return target


@dataclass(frozen=True)
class Snapshot:
    """What a snapshot file holds: its shell option lines and the names it defines.

    The options apply to every command. The definitions (aliases and functions) are only
    sourced when the command can reach one (:meth:`reached_by`); parsing them is most of
    what a snapshot costs a command, and most commands name none.
    """

    path: Path
    options: tuple[str, ...]
    names: frozenset[str]
    defines: bool

    def reached_by(self, command: str) -> bool:
        """Whether ``command`` may use a definition: it names one (quotes and backslashes
        removed, since they can only split a name), or builds words or looks the shell's
        definitions up in ways a text search cannot follow (``$``, globs, ``eval``,
        ``source``, ``declare`` ...), or the snapshot defines a hook bash calls by itself."""
        if not self.defines:
            return False
        if not self.names or "command_not_found_handle" in self.names:
            return True
        bare = command.replace("'", "").replace('"', "").replace("\\", "")
        return bool(_DYNAMIC.search(bare)) or any(name in bare for name in self.names)


_DYNAMIC = re.compile(
    r"[$`{*?\[~]|(?<![\w.-])(?:eval|source|\.|declare|typeset|local|readonly|export|unset|set|alias|unalias"
    r"|type|command|builtin|compgen|complete|compopt|caller|enable|hash|help|fc)(?![\w.-])"
)
_OPTION_LINE = re.compile(r"^(?:shopt -[su] [\w-]+|set -o [\w-]+)$")
_FUNCTION_HEAD = re.compile(r"^(?:function )?(\S+) \(\) ?$")
_ALIAS_HEAD = re.compile(r"^alias (?:-- )?([^=\s]+)=")
_READ: dict[str, tuple[tuple[int, int, int], Snapshot]] = {}


def read_snapshot(path: Path) -> Snapshot | None:
    """The :class:`Snapshot` in ``path`` (``None``: no such file); parsed once per version of the file."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    version = (st.st_ino, st.st_mtime_ns, st.st_size)
    known = _READ.get(str(path))
    if known is not None and known[0] == version:
        return known[1]
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return None
    # the capture writes the options last, each on its own line
    cut = len(lines)
    while cut > 0 and (_OPTION_LINE.match(lines[cut - 1]) or not lines[cut - 1].strip()):
        cut -= 1
    options = tuple(ln for ln in lines[cut:] if ln.strip())
    body = [ln for ln in lines[:cut] if ln.strip() and not ln.startswith("#")]
    names = set()
    for line in body:
        m = _FUNCTION_HEAD.match(line) or _ALIAS_HEAD.match(line)
        if m:
            names.add(m.group(1))
    snapshot = Snapshot(path, options, frozenset(names), defines=bool(body))
    if len(_READ) >= 256:
        _READ.clear()
    _READ[str(path)] = (version, snapshot)
    return snapshot


def _unsafe_option(line: str) -> bool:
    m = re.match(r"^set -o (\S+)$", line)
    return bool(m and m.group(1) in _UNSAFE_SET_OPTIONS)


_CWD_TRAP = """trap '[ "$PWD" = "$__pegboard_cwd0" ] || pwd -P >| "$__pegboard_cwd_file" 2>/dev/null' EXIT"""


def build_script(command: str, *, snapshot: Path | Snapshot | None, env_file: str | None,
                 cwd_file: Path | None) -> str:
    """The ``bash -c`` script: snapshot, env file, the cwd trap, then the command itself.

    A :class:`Snapshot` is sourced whole when the command (or the env file, which may use
    anything) may use its definitions, else only its option lines run; a path is always
    sourced."""
    parts = ["shopt -s expand_aliases"]
    if isinstance(snapshot, Snapshot):
        if env_file or snapshot.reached_by(command):
            parts.append(f"source {shlex.quote(str(snapshot.path))} >/dev/null 2>&1")
        elif snapshot.options:
            parts.append("{ " + "; ".join(snapshot.options) + "; } 2>/dev/null")
    elif snapshot is not None:
        parts.append(f"source {shlex.quote(str(snapshot))} >/dev/null 2>&1")
    if env_file:
        path = shlex.quote(os.path.expanduser(env_file))
        parts.append(f"[ -f {path} ] && source {path}")
    if cwd_file is not None:
        # written only when the command moved: most commands do not, and a file costs time
        parts.append(f"__pegboard_cwd_file={shlex.quote(str(cwd_file))} __pegboard_cwd0=$PWD")
        parts.append(_CWD_TRAP)
    parts.append(command)
    return "\n".join(parts) + "\n"


# --------------------------------------------------------------------------- exit codes


_QUIET_FAILURES = {("grep",), ("egrep",), ("fgrep",), ("rg",), ("git", "grep"), ("diff",), ("git", "diff")}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def last_command_head(command: str) -> tuple[str, ...]:
    """The program (and a git subcommand) of the command that decides the exit status."""
    tail = re.split(r"\|\||&&|[|;&\n]", command.strip())[-1] if command.strip() else ""
    try:
        words = shlex.split(tail)
    except ValueError:
        return ()
    words = [w for w in words if not _ASSIGNMENT.match(w)]
    while words and words[0] in ("command", "exec", "time", "nice", "env"):
        words = words[1:]
    if not words:
        return ()
    head = os.path.basename(words[0])
    if head == "git":
        sub = next((w for w in words[1:] if not w.startswith("-")), "")
        return ("git", sub)
    return (head,)


def exit_meaning(command: str, code: int) -> str | None:
    """What a non-zero exit means when it is not a failure (``None``: it is a failure)."""
    if code != 1:
        return None
    head = last_command_head(command)
    if head in _QUIET_FAILURES:
        return "differences found" if head[-1] == "diff" else "no matches found"
    return None


# --------------------------------------------------------------------------- running


@dataclass
class ShellOutcome:
    """What one foreground command did."""

    output: CapturedOutput
    exit_code: int | None
    wall_time_seconds: float
    cwd: Path
    cwd_note: str | None = None
    timed_out: bool = False
    timeout_seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


async def _pump(proc: Any, capture: OutputCapture, progress: Progress | None = None) -> None:
    while True:
        chunk = await proc.read("stdout")
        if not chunk:
            return
        capture.feed(chunk)
        if progress is not None:
            _report(progress, capture.lines)


def _report(progress: Progress, lines: int) -> None:
    progress.update(lines, None, f"lines of output, {progress.elapsed:.0f} s elapsed")


async def _tick(progress: Progress, counted: Callable[[], int]) -> None:
    """Report the elapsed time of a command that prints nothing for a while."""
    while True:
        await asyncio.sleep(progress.interval)
        _report(progress, counted())


def spill_path(ctx: ToolContext, prefix: str = "bash") -> Path:
    assert ctx.session is not None
    return ctx.session.directory / "output" / f"{prefix}-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(4)}.txt"


async def shell_argv(ctx: ToolContext, settings: ShellSettings, command: str, cwd_file: Path | None) -> list[str]:
    bash = bash_path(settings)
    if bash is None:
        raise FileNotFoundError(f"{settings.bash} is not on PATH")
    path = await ensure_snapshot(ctx, settings)
    snapshot = read_snapshot(path) if path is not None else None
    return [bash, "-c", build_script(command, snapshot=snapshot, env_file=settings.env_file, cwd_file=cwd_file)]


def new_cwd_file(ctx: ToolContext) -> Path:
    """Where a shell run writes the directory it ended in (read back by :func:`run_foreground`)."""
    assert ctx.session is not None
    return ctx.session.directory / f".cwd-{secrets.token_hex(6)}"


async def run_foreground(
    ctx: ToolContext,
    argv: Sequence[str],
    *,
    cwd_file: Path,
    settings: ShellSettings,
    timeout_s: float,
    pty: bool = False,
    spill_prefix: str = "bash",
    clock: Callable[[], float] = time.monotonic,
) -> ShellOutcome:
    """Run ``argv`` (a shell script that writes its final directory to ``cwd_file``) in the
    foreground with ``settings``' limits and cwd carry-over: the runner behind Bash, exec and
    PowerShell. Never raises for the command; a process that cannot start raises ``ExecError``."""
    cwd = shell_cwd(ctx, settings)
    backend = await backend_for(ctx)
    capture = OutputCapture(settings.max_output_chars, lambda: spill_path(ctx, spill_prefix))
    started = clock()
    proc = await backend.start(argv, cwd=cwd, env=process_env(ctx), stdin=False, pty=pty)
    progress = Progress(ctx, settings.progress_interval_ms) if settings.progress_interval_ms else None
    pump = asyncio.ensure_future(_pump(proc, capture, progress))
    ticker = asyncio.ensure_future(_tick(progress, lambda: capture.lines)) if progress is not None else None
    timed_out = False
    try:
        status = await proc.wait(timeout_s)
        if status is None:
            timed_out = True
            await proc.terminate(KILL_GRACE_S)
        try:
            await asyncio.wait_for(asyncio.shield(pump), DRAIN_AFTER_EXIT_S if not timed_out else KILL_GRACE_S)
        except TimeoutError:
            pump.cancel()
    except BaseException:
        pump.cancel()
        await proc.terminate(KILL_GRACE_S)
        capture.abandon()
        raise
    finally:
        if ticker is not None:
            ticker.cancel()
        close = getattr(proc, "close", None)
        if callable(close):
            close()
    wall = clock() - started
    final = None
    try:
        final = cwd_file.read_text().strip() or None
        cwd_file.unlink()
    except OSError:
        pass
    new_cwd, note = settle_cwd(ctx, settings, final)
    return ShellOutcome(
        output=capture.finish(),
        exit_code=proc.returncode,
        wall_time_seconds=wall,
        cwd=new_cwd,
        cwd_note=note,
        timed_out=timed_out,
        timeout_seconds=timeout_s,
    )


async def run_shell(
    ctx: ToolContext,
    command: str,
    *,
    settings: ShellSettings,
    timeout_s: float,
    pty: bool = False,
    clock: Callable[[], float] = time.monotonic,
) -> ShellOutcome:
    """Run ``command`` with bash in the foreground with ``settings``' limits; never raises for the command."""
    cwd_file = new_cwd_file(ctx)
    argv = await shell_argv(ctx, settings, command, cwd_file)
    return await run_foreground(ctx, argv, cwd_file=cwd_file, settings=settings, timeout_s=timeout_s, pty=pty,
                                clock=clock)


__all__ = [
    "DEFAULT_MAX_OUTPUT",
    "DEFAULT_TIMEOUT_MS",
    "HARD_MAX_OUTPUT",
    "MAX_TIMEOUT_MS",
    "PREVIEW_CHARS",
    "SHELL_CWD",
    "ShellOutcome",
    "ShellSettings",
    "Snapshot",
    "bash_path",
    "build_script",
    "ensure_snapshot",
    "exit_meaning",
    "last_command_head",
    "new_cwd_file",
    "read_snapshot",
    "run_foreground",
    "run_shell",
    "shell_argv",
    "shell_cwd",
    "spill_path",
    "tool_settings",
]
