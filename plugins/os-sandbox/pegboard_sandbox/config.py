"""The ``sandbox`` config section."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pegboard import ConfigSection, ToolContext

#: Tools whose commands the sandbox wraps.
SANDBOXED_TOOLS = frozenset({"Bash", "Monitor", "PowerShell", "exec"})
DEFAULT_MAX_EXPANDED = 10_000


class NetworkConfig(BaseModel):
    model_config = ConfigDict(extra="allow")

    allowedDomains: list[str] = Field(
        default_factory=list, description="Hosts sandboxed commands may reach through the proxy (none: no network)."
    )
    deniedDomains: list[str] = Field(
        default_factory=list, description="Hosts refused everywhere (the web tools and Monitor refuse them too)."
    )
    allowManagedDomainsOnly: bool = Field(default=False, description="Only managed settings' domains count.")
    allowPrivateHosts: list[str] = Field(
        default_factory=list, description="Private hosts or networks the proxy may still reach (tests, intranets)."
    )


class SandboxConfig(BaseModel):
    """``sandbox``: whether commands run in bubblewrap and what they may reach."""

    model_config = ConfigDict(extra="allow")

    enabled: bool = Field(default=False, description="Run Bash, Monitor and PowerShell commands in the sandbox.")
    failIfUnavailable: bool = Field(
        default=True, description="Refuse commands when bubblewrap cannot run (false: run them unsandboxed)."
    )
    allowUnsandboxedCommands: bool = Field(
        default=True, description="Let dangerouslyDisableSandbox run one command outside after an ask."
    )
    autoAllowBashIfSandboxed: bool = Field(
        default=True, description="A sandboxed command needs no ask its rules would otherwise need."
    )
    maxExpandedPaths: int = Field(
        default=DEFAULT_MAX_EXPANDED, ge=1, description="Paths a Read/Edit deny pattern may expand to."
    )
    bwrap: str = Field(default="bwrap", description="The bubblewrap binary.")
    network: NetworkConfig = Field(default_factory=NetworkConfig)


def _off(name: str) -> Any:
    """Widening unless the value keeps the check on (an untrusted project may only say ``true``)."""
    def widens(value: Any) -> str | None:
        return f"{name} {value!r} turns a sandbox check off" if value is not True else None

    return widens


def _on(name: str) -> Any:
    """Widening unless the value is ``false`` (an untrusted project may only switch it off)."""
    def widens(value: Any) -> str | None:
        return f"{name} {value!r} lets commands run with fewer checks" if value is not False else None

    return widens


SANDBOX_SECTION = ConfigSection(
    "sandbox",
    SandboxConfig,
    description="OS sandbox for shell commands: bubblewrap, masked paths, network allowlist",
    widening={
        "enabled": _off("enabled"),
        "failIfUnavailable": _off("failIfUnavailable"),
        "allowUnsandboxedCommands": _on("allowUnsandboxedCommands"),
        "autoAllowBashIfSandboxed": _on("autoAllowBashIfSandboxed"),
        "bwrap": "runs a program of the config's choosing with every command",
        "network.allowedDomains": "lets sandboxed commands reach these hosts",
        "network.allowPrivateHosts": "lets sandboxed commands reach private hosts",
    },
)


def load(ctx: ToolContext) -> SandboxConfig:
    """The validated section, else the raw config's ``sandbox`` (this plugin not registered)."""
    try:
        value = ctx.settings("sandbox")
    except (KeyError, RuntimeError):
        value = None
    if isinstance(value, SandboxConfig):
        return value
    data = ctx.config.data.get("sandbox") if ctx.config is not None else None
    return SandboxConfig.model_validate(data if isinstance(data, dict) else {})
