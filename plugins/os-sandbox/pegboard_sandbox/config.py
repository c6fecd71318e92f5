"""The ``sandbox`` config section."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from pegboard import NARROWS, NEUTRAL, ConfigSection, ToolContext, Widens

#: Tools whose commands the sandbox wraps.
SANDBOXED_TOOLS = frozenset({"Bash", "Monitor", "PowerShell", "exec"})
DEFAULT_MAX_EXPANDED = 10_000


class NetworkConfig(BaseModel):
    model_config = ConfigDict(extra="allow")

    allowedDomains: Annotated[list[str], Widens.when_set("lets sandboxed commands reach these hosts")] = Field(
        default_factory=list, description="Hosts sandboxed commands may reach through the proxy (none: no network)."
    )
    deniedDomains: Annotated[list[str], NARROWS] = Field(
        default_factory=list, description="Hosts refused everywhere (the web tools and Monitor refuse them too)."
    )
    allowManagedDomainsOnly: Annotated[bool, NARROWS] = Field(
        default=False, description="Only managed settings' domains count."
    )
    allowPrivateHosts: Annotated[list[str], Widens.when_set("lets sandboxed commands reach private hosts")] = Field(
        default_factory=list, description="Private hosts or networks the proxy may still reach (tests, intranets)."
    )


_CHECK_OFF = "turns a sandbox check off"
_FEWER_CHECKS = "lets commands run with fewer checks"


class SandboxConfig(BaseModel):
    """``sandbox``: whether commands run in bubblewrap and what they may reach."""

    model_config = ConfigDict(extra="allow")

    enabled: Annotated[bool, Widens.when_false(_CHECK_OFF)] = Field(
        default=False, description="Run Bash, Monitor and PowerShell commands in the sandbox."
    )
    failIfUnavailable: Annotated[bool, Widens.when_false(_CHECK_OFF)] = Field(
        default=True, description="Refuse commands when bubblewrap cannot run (false: run them unsandboxed)."
    )
    allowUnsandboxedCommands: Annotated[bool, Widens.when_true(_FEWER_CHECKS)] = Field(
        default=True, description="Let dangerouslyDisableSandbox run one command outside after an ask."
    )
    autoAllowBashIfSandboxed: Annotated[bool, Widens.when_true(_FEWER_CHECKS)] = Field(
        default=True, description="A sandboxed command needs no ask its rules would otherwise need."
    )
    maxExpandedPaths: Annotated[int, NEUTRAL] = Field(
        default=DEFAULT_MAX_EXPANDED, ge=1, description="Paths a Read/Edit deny pattern may expand to."
    )
    bwrap: Annotated[str, Widens.when_set("runs a program of the config's choosing with every command")] = Field(
        default="bwrap", description="The bubblewrap binary."
    )
    network: NetworkConfig = Field(default_factory=NetworkConfig)


SANDBOX_SECTION = ConfigSection(
    "sandbox",
    SandboxConfig,
    description="OS sandbox for shell commands: bubblewrap, masked paths, network allowlist",
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
