"""The sandbox's hooks: its config section, the backend, the unsandboxed-command ask, the CLI."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from pegboard import (
    ConfigSectionRegister,
    ExecBackend,
    ExecError,
    ExecProcess,
    HookDecision,
    PermissionDecision,
    StashKey,
    ToolContext,
    default_data_dir,
    hookimpl,
    when_configured,
)
from pegboard_sandbox.backend import LEDGER_DIR, BubblewrapBackend, SandboxUnavailable
from pegboard_sandbox.check import probe
from pegboard_sandbox.config import SANDBOX_SECTION, SANDBOXED_TOOLS, SandboxConfig, load
from pegboard_sandbox.layout import Layout, build_layout
from pegboard_sandbox.placeholders import Ledger

if TYPE_CHECKING:
    from pegboard_sandbox.proxy import FilteringProxy


class _State:
    """Per Pegboard instance: the proxy, the temp dir and the calls approved to run outside."""

    def __init__(self) -> None:
        self.proxy: FilteringProxy | None = None
        self.proxy_dir: Path | None = None
        self.temp_root: Path | None = None
        self.unsandboxed: dict[object, ToolContext] = {}

    @staticmethod
    def _key(tool_use_id: str | None, ctx: ToolContext) -> object:
        return tool_use_id if tool_use_id is not None else id(ctx)

    def approve_outside(self, tool_use_id: str | None, ctx: ToolContext) -> None:
        self.unsandboxed[self._key(tool_use_id, ctx)] = ctx

    def runs_outside(self, ctx: ToolContext) -> bool:
        """Whether this call asked for dangerouslyDisableSandbox (it only runs once approved)."""
        key = self._key(ctx.tool_use_id, ctx)
        return key in self.unsandboxed and (ctx.tool_use_id is not None or self.unsandboxed[key] is ctx)

    def temp(self) -> Path:
        if self.temp_root is None:
            self.temp_root = Path(tempfile.mkdtemp(prefix="pegboard-sandbox-"))
        return self.temp_root

    async def proxy_socket(self, cfg: SandboxConfig) -> Path:
        if self.proxy is None:
            self.proxy_dir = Path(tempfile.mkdtemp(prefix="pegboard-proxy-"))
            from pegboard_sandbox.proxy import FilteringProxy, make_guard

            guard = make_guard(cfg.network.allowedDomains, cfg.network.allowPrivateHosts,
                               denied_domains=cfg.network.deniedDomains)
            self.proxy = FilteringProxy(self.proxy_dir / "proxy.sock", guard)
            await self.proxy.start()
        return self.proxy.path


STATE: StashKey[_State] = StashKey("pegboard-sandbox")


def _state(ctx: ToolContext) -> _State:
    try:
        stash = ctx.stash
    except RuntimeError:
        return _State()
    if STATE not in stash:
        stash[STATE] = _State()
    return stash[STATE]


class RefusingBackend:
    """The sandbox is required but cannot run: every command is refused with the reason."""

    name = "sandbox-unavailable"

    def __init__(self, reason: str) -> None:
        self.reason = reason

    async def start(self, argv: Any, **_: Any) -> ExecProcess:
        raise SandboxUnavailable(
            f"the sandbox is enabled but cannot run: {self.reason}; set sandbox.failIfUnavailable = false "
            "to run commands unsandboxed instead"
        )


def ledger_for(pegboard: Any) -> Ledger:
    """The placeholder ledger in the data directory this Pegboard uses (never in a project)."""
    env = pegboard.data_env() if pegboard is not None else None
    return Ledger(default_data_dir(env) / LEDGER_DIR)


def layout_for(ctx: ToolContext, cfg: SandboxConfig, temp_root: Path) -> Layout:
    """The namespace of this call: its working dirs, its session dir, its deny rules, and
    read-only every protected path, the config files of every scope and the ledger."""
    project = ctx.project_dir or ctx.cwd
    dirs = [project, ctx.cwd, *ctx.additional_dirs]
    extra: list[Path] = []
    temp = temp_root / "tmp"
    if ctx.session is not None:
        extra.append(ctx.session.directory)
        temp = ctx.session.directory / "sandbox-tmp"
    deny = list(ctx.config.config.permissions.deny) if ctx.config is not None else []
    env = ctx.pegboard.env if ctx.pegboard is not None else ctx.env
    return build_layout(cwd=ctx.cwd, project=project, working_dirs=dirs, deny_rules=deny, temp_dir=temp,
                        extra_writable=extra, limit=cfg.maxExpandedPaths, config=ctx.config, env=env,
                        extra_protected=[ledger_for(ctx.pegboard).directory])


def sandbox_backend(ctx: ToolContext, cfg: SandboxConfig, inner: ExecBackend) -> ExecBackend:
    """The backend for a sandboxed call (or the refusing one when bwrap cannot run)."""
    reason = probe(cfg.bwrap)
    if reason is not None:
        return RefusingBackend(reason)
    state = _state(ctx)

    async def proxy() -> Path | None:
        return await state.proxy_socket(cfg) if cfg.network.allowedDomains else None

    return BubblewrapBackend(inner, lambda: layout_for(ctx, cfg, state.temp()), bwrap=cfg.bwrap, proxy=proxy,
                             ledger=ledger_for(ctx.pegboard))


@hookimpl
def register_config_sections(register: ConfigSectionRegister) -> None:
    register(SANDBOX_SECTION)


@hookimpl
@when_configured("sandbox")
def exec_backend(context: ToolContext) -> ExecBackend | None:
    cfg = load(context)
    if not cfg.enabled or context.tool not in SANDBOXED_TOOLS:
        return None
    if _state(context).runs_outside(context):
        return None
    if not cfg.failIfUnavailable and probe(cfg.bwrap) is not None:
        return None
    from pegboard_toolkit.exec import LocalBackend

    # asyncio's exit watch: on a loaded machine, bwrap commands measured slower on the pidfd path
    return sandbox_backend(context, cfg, LocalBackend(new_session="if-terminal", pidfd=False))


@hookimpl
@when_configured("sandbox")
def check_permission(call: Any, context: ToolContext) -> PermissionDecision | None:
    """``dangerouslyDisableSandbox`` asks (a person must approve), or is refused by config."""
    if call.name not in SANDBOXED_TOOLS or not call.input.get("dangerouslyDisableSandbox"):
        return None
    cfg = load(context)
    if not cfg.enabled:
        return None
    if not cfg.allowUnsandboxedCommands:
        return PermissionDecision(
            decision="deny", rule="sandbox.allowUnsandboxedCommands",
            reason="commands may not run outside the sandbox (sandbox.allowUnsandboxedCommands is false); "
                   "run it without dangerouslyDisableSandbox")
    _state(context).approve_outside(call.tool_use_id, context)
    return PermissionDecision(decision="ask", hard=True,
                              reason="dangerouslyDisableSandbox: this command would run outside the sandbox")


@hookimpl
@when_configured("sandbox")
def permission_request(call: Any, decision: PermissionDecision, context: ToolContext) -> HookDecision | None:
    """``autoAllowBashIfSandboxed``: a command that will run sandboxed needs no tool-default ask,
    and no ask that only Read/Edit deny rules might cause (the sandbox masks every file they
    deny, so it enforces them itself). An ask from a rule, any other hard ask and every deny
    still stand."""
    if call.name not in SANDBOXED_TOOLS or call.input.get("dangerouslyDisableSandbox"):
        return None
    cfg = load(context)
    enforced = decision.unseen_files and decision.hard
    if not (cfg.enabled and cfg.autoAllowBashIfSandboxed) or (
            (decision.rule is not None or decision.hard) and not enforced):
        return None
    if probe(cfg.bwrap) is not None:
        return None
    if enforced:
        return HookDecision(decision="allow", enforces_file_rules=True,
                            reason="the command runs in the sandbox, which masks every file a Read or Edit deny "
                                   "rule covers (sandbox.autoAllowBashIfSandboxed)")
    return HookDecision(decision="allow", reason="the command runs in the sandbox (sandbox.autoAllowBashIfSandboxed)")


@hookimpl
@when_configured("sandbox")
def pegboard_ready(pegboard: Any) -> None:
    """Remove the placeholders a crashed command left behind (only with the sandbox enabled;
    a config that does not mention the sandbox leaves this plugin unimported at start-up)."""
    try:
        cfg = pegboard.settings("sandbox")
    except (KeyError, RuntimeError):
        return
    if isinstance(cfg, SandboxConfig) and cfg.enabled:
        ledger_for(pegboard).sweep()


@hookimpl
def pegboard_close(pegboard: Any) -> Any:
    """Stop the filtering proxy if one was started (an awaitable then; nothing otherwise, so
    closing a Pegboard that ran no sandboxed command starts no event loop)."""
    state = pegboard.stash.pop(STATE, None)
    if state is not None and state.proxy is not None:
        return state.proxy.close()
    return None


def check_report(bwrap: str = "bwrap") -> list[tuple[str, bool, str]]:
    """``(what, works, detail)`` rows for ``pegboard sandbox check``."""
    import shutil
    import sys

    rows: list[tuple[str, bool, str]] = []
    binary = shutil.which(bwrap)
    rows.append(("bubblewrap binary", binary is not None, binary or f"{bwrap} not on PATH"))
    reason = probe(bwrap)
    rows.append(("namespaces (user, pid, net, ipc)", reason is None, reason or "a namespace was created"))
    rows.append(("network bridge (python)", Path(sys.executable).exists(), sys.executable))
    return rows


@click.group("sandbox")
def sandbox_cli() -> None:
    """The OS sandbox (bubblewrap)."""


@sandbox_cli.command("check")
@click.option("--bwrap", default="bwrap", show_default=True, help="The bubblewrap binary to test.")
def check_command(bwrap: str) -> None:
    """Report what of the sandbox works on this machine; exit 1 when commands cannot be sandboxed."""
    rows = check_report(bwrap)
    for what, works, detail in rows:
        click.echo(f"{'ok ' if works else 'NO '} {what}: {detail}")
    if not all(works for _, works, _ in rows):
        raise SystemExit(1)


@hookimpl
def register_commands(cli: click.Group) -> None:
    cli.add_command(sandbox_cli)


__all__ = ["ExecError", "RefusingBackend", "check_report", "layout_for", "ledger_for", "sandbox_backend"]
