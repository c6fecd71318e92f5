"""Which MCP servers to connect: ``mcpServers`` in Pegboard's config, plus a project ``.mcp.json``."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, ValidationError, model_validator
from pydantic.alias_generators import to_camel

from pegboard import NEUTRAL, ConfigSection, find_project_root

MCP_JSON = ".mcp.json"
STARTUP_WAIT_ENV = "PEGBOARD_MCP_STARTUP_WAIT"
DEFER_THRESHOLD_ENV = "PEGBOARD_MCP_DEFER_THRESHOLD"
DEFAULT_STARTUP_WAIT = 5.0
DEFAULT_DEFER_THRESHOLD = 40
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class McpServerConfig(BaseModel):
    """One entry of ``mcpServers``: a stdio server (``command``, ``args``, ``env``, ``cwd``) or a
    streamable-HTTP one (``url``, ``headers``). ``exposure`` says how its tools are offered:
    ``direct`` (full definitions), ``deferred`` (by name until ToolSearch loads them), or unset
    (deferred only when many MCP tools are connected). ``timeout`` limits each call in seconds."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, alias_generator=to_camel, validate_default=False)

    type: Literal["stdio", "http", "streamable-http", "streamableHttp"] | None = None
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    disabled: bool = False
    exposure: Literal["direct", "deferred"] | None = None
    timeout: float | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if not self.command and not self.url:
            raise ValueError("an MCP server needs either 'command' (stdio) or 'url' (streamable HTTP)")
        return self


class McpServers(RootModel[dict[str, McpServerConfig]]):
    """``mcpServers``: server name -> its settings. Neutral for trust: servers an untrusted
    project names are never started or connected (see ``pegboard trust``)."""

    root: Annotated[dict[str, McpServerConfig], NEUTRAL] = Field(default_factory=dict)


SECTION = ConfigSection(
    "mcpServers",
    McpServers,
    description="MCP servers whose tools become Pegboard tools (stdio or streamable HTTP)",
)


def expand(value: str, env: Mapping[str, str]) -> str:
    """``${VAR}`` and ``${VAR:-default}`` from ``env``; an unset variable without default is empty."""
    return _VAR.sub(lambda m: env.get(m.group(1)) or (m.group(2) or ""), value)


def expand_config(config: McpServerConfig, env: Mapping[str, str]) -> McpServerConfig:
    return config.model_copy(
        update={
            "command": expand(config.command, env) if config.command else None,
            "args": [expand(a, env) for a in config.args],
            "env": {k: expand(v, env) for k, v in config.env.items()},
            "cwd": expand(config.cwd, env) if config.cwd else None,
            "url": expand(config.url, env) if config.url else None,
            "headers": {k: expand(v, env) for k, v in config.headers.items()},
        }
    )


def read_mcp_json(root: Path, warnings: list[str]) -> dict[str, McpServerConfig]:
    """Servers from ``<project root>/.mcp.json`` (``{"mcpServers": {name: {...}}}``)."""
    path = root / MCP_JSON
    if not path.is_file():
        return {}
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        warnings.append(f"{path}: cannot read: {exc}")
        return {}
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        warnings.append(f"{path}: expected an object with key 'mcpServers'")
        return {}
    out: dict[str, McpServerConfig] = {}
    for name, entry in servers.items():
        if isinstance(entry, dict) and entry.get("type") == "sse":
            warnings.append(f"{path}: server {name!r}: the SSE transport is not supported; use streamable HTTP")
            continue
        try:
            out[name] = McpServerConfig.model_validate(entry)
        except ValidationError as exc:
            warnings.append(f"{path}: server {name!r}: {exc.errors()[0]['msg']}")
    return out


def configured_servers(
    config_servers: Mapping[str, McpServerConfig], cwd: Path, env: Mapping[str, str], warnings: list[str]
) -> dict[str, McpServerConfig]:
    """Every enabled server, ``.mcp.json`` first and Pegboard's own config winning on a name."""
    root = find_project_root(cwd.resolve())
    servers = read_mcp_json(root, warnings)
    servers.update(config_servers)
    return {name: expand_config(c, env) for name, c in servers.items() if not c.disabled}


def float_env(env: Mapping[str, str], name: str, default: float) -> float:
    try:
        return float(env.get(name, "") or default)
    except ValueError:
        return default


def server_cwd(config: McpServerConfig, cwd: Path) -> Path:
    if not config.cwd:
        return cwd
    path = Path(os.path.expanduser(config.cwd))
    return path if path.is_absolute() else cwd / path
