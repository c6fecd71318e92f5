"""Pegboard tools made from MCP servers' tools, plus the shared resource and wait tools."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pegboard import Pegboard, StashKey, Tool, ToolContext, ToolResult, tool
from pegboard_mcp_client.manager import CONNECTING, McpManager, ServerState
from pegboard_mcp_client.names import sanitise, server_prefix, tool_name

# The manager of a Pegboard that has MCP servers configured, kept in its stash.
MANAGER: StashKey[McpManager] = StashKey("pegboard-mcp-client-manager")
OWNER_PREFIX = "mcp:"


def manager_for(owner: Any) -> McpManager | None:
    """The manager of ``owner`` (a ``Pegboard`` or a ``ToolContext``), if servers are configured."""
    stash = getattr(owner, "stash", None) if owner is not None else None
    return stash.get(MANAGER) if stash is not None else None


def input_model_for(schema: Mapping[str, Any] | None) -> type[BaseModel]:
    """A pass-through input model whose JSON schema is the server's own ``inputSchema``.

    The server validates arguments itself; Pegboard checks only that they form an object.
    """
    fixed: dict[str, Any] = copy.deepcopy(dict(schema)) if isinstance(schema, Mapping) else {}
    fixed.setdefault("type", "object")
    fixed.setdefault("properties", {})

    class McpToolInput(BaseModel):
        model_config = ConfigDict(extra="allow")

        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            return copy.deepcopy(fixed)

    return McpToolInput


def make_tool(manager: McpManager, state: ServerState, remote: Mapping[str, Any], name: str, deferred: bool) -> Tool:
    """The Pegboard ``Tool`` for one remote tool, registered as ``name``; calls use the original name."""
    original = str(remote["name"])
    server = state.name
    hints: Mapping[str, Any] = remote.get("annotations") or {}

    async def run(input: BaseModel, ctx: ToolContext) -> ToolResult:
        arguments = input.model_dump(mode="json", exclude_unset=True)
        return await manager.call_tool(server, original, arguments)

    description = str(remote.get("description") or "").strip() or f"Tool {original} from MCP server {server}"
    return Tool(
        name=name,
        description=description,
        input_model=input_model_for(remote.get("inputSchema")),
        run=run,
        groups=("mcp",),
        requires_permission=True,
        availability=state.unavailable_reason,
        read_only=bool(hints.get("readOnlyHint", False)),
        destructive=bool(hints.get("destructiveHint", False)),
        idempotent=bool(hints.get("idempotentHint", False)),
        open_world=bool(hints.get("openWorldHint", True)),
        timeout=state.config.timeout,
        deferred=deferred,
        title=remote.get("title") or hints.get("title"),
        usage=f"MCP tool {original!r} of server {server!r}",
        server=sanitise(server),
    )


class Registrar:
    """Keeps one Pegboard's registry in step with its servers' tool lists.

    Runs in the thread that uses the Pegboard (as a tool source, before every catalog), so the
    registry is never changed under a reader. A server that disconnects keeps its tools
    registered but unavailable; a changed tool list replaces that server's tools.
    """

    def __init__(self, pegboard: Pegboard, manager: McpManager, defer_threshold: int) -> None:
        self.pegboard = pegboard
        self.manager = manager
        self.defer_threshold = defer_threshold
        self.applied: dict[str, int] = {}
        self.names: dict[str, dict[str, str]] = {}  # server -> original tool name -> exposed name

    def sync(self) -> None:
        versions = {name: s.tools_version for name, s in self.manager.states.items()}
        if versions == self.applied:
            return
        total = sum(len(s.tools) for s in self.manager.states.values())
        for name, state in self.manager.states.items():
            if self.applied.get(name) == versions[name]:
                continue
            self._register(state, total)
            self.applied[name] = versions[name]

    def pending_reason(self, name: str) -> str | None:
        """Why ``name`` (not registered) may be a tool of a server that has not answered yet."""
        wanted = name.lower().replace("-", "_")
        for server, state in self.manager.states.items():
            if state.status == "connected" or self.names.get(server):
                continue
            if wanted.startswith(server_prefix(server).lower().replace("-", "_")):
                reason = state.unavailable_reason()
                if state.status in CONNECTING:
                    return f"{reason}; wait for it with --wait-mcp SECONDS or the WaitForMcpServers tool"
                return reason
        return None

    def _register(self, state: ServerState, total: int) -> None:
        owner = OWNER_PREFIX + state.name
        self.pegboard.remove_tools(owner)
        exposure = state.config.exposure
        deferred = exposure == "deferred" or (exposure is None and total > self.defer_threshold)
        mapping: dict[str, str] = {}
        for remote in state.tools:
            exposed = tool_name(state.name, str(remote.get("name", "")), lambda n: self.pegboard.tool(n) is not None)
            try:
                self.pegboard.add_tool(make_tool(self.manager, state, remote, exposed, deferred), owner=owner)
            except Exception as exc:  # a tool the kernel rejects is reported, the rest still register
                state.error = f"tool {remote.get('name')!r} not registered: {exc}"
                continue
            mapping[str(remote["name"])] = exposed
        self.names[state.name] = mapping


def exposed_name(pegboard: Any, server: str, original: str) -> str | None:
    """The registered name of ``original`` on ``server`` (after a sync), or ``None``."""
    registrar = pegboard.stash.get(REGISTRAR)
    return registrar.names.get(server, {}).get(original) if registrar is not None else None


REGISTRAR: StashKey[Registrar] = StashKey("pegboard-mcp-client-registrar")


# -- shared tools ------------------------------------------------------------------------------


def _no_servers() -> ToolResult:
    return ToolResult.refusal("unavailable", "No MCP servers are configured (mcpServers in the config or .mcp.json)")


class ListResourcesInput(BaseModel):
    server: str | None = Field(default=None, description="Only this server (default: every connected server).")
    cursor: str | None = Field(default=None, description="Page cursor from a previous call (with server).")


class ReadResourceInput(BaseModel):
    server: str = Field(description="The MCP server that offers the resource.")
    uri: str = Field(description="The resource URI, as listed by ListMcpResourcesTool.")


class WaitInput(BaseModel):
    servers: list[str] | None = Field(default=None, description="Server names to wait for (default: all).")
    timeout: float = Field(default=30.0, gt=0, le=300, description="Seconds to wait at most.")


@tool(
    name="ListMcpResourcesTool",
    aliases=["list_mcp_resources"],
    groups=["mcp"],
    read_only=True,
    idempotent=True,
)
async def list_mcp_resources(input: ListResourcesInput, ctx: ToolContext) -> ToolResult:
    """List the resources that connected MCP servers offer (files, records, documents), with their
    server and URI. Give `server` to list one server and page with `cursor`."""
    manager = manager_for(ctx)
    if manager is None:
        return _no_servers()
    return await manager.list_resources(input.server, input.cursor, templates=False)


@tool(
    name="ListMcpResourceTemplatesTool",
    aliases=["list_mcp_resource_templates"],
    groups=["mcp"],
    read_only=True,
    idempotent=True,
)
async def list_mcp_resource_templates(input: ListResourcesInput, ctx: ToolContext) -> ToolResult:
    """List the resource URI templates that connected MCP servers offer; fill one in and read it
    with ReadMcpResourceTool. Give `server` to list one server and page with `cursor`."""
    manager = manager_for(ctx)
    if manager is None:
        return _no_servers()
    return await manager.list_resources(input.server, input.cursor, templates=True)


@tool(
    name="ReadMcpResourceTool",
    aliases=["read_mcp_resource"],
    groups=["mcp"],
    read_only=True,
    idempotent=True,
)
async def read_mcp_resource(input: ReadResourceInput, ctx: ToolContext) -> ToolResult:
    """Read one resource from an MCP server by server name and URI. Text comes back as text,
    images as image content."""
    manager = manager_for(ctx)
    if manager is None:
        return _no_servers()
    return await manager.read_resource(input.server, input.uri)


@tool(name="WaitForMcpServers", groups=["mcp"], read_only=True, idempotent=True)
async def wait_for_mcp_servers(input: WaitInput, ctx: ToolContext) -> ToolResult:
    """Wait for MCP servers that are still connecting in the background, so that their tools can
    be used in the next request without restarting. Returns each server's state and tools."""
    manager = manager_for(ctx)
    if manager is None:
        return _no_servers()
    unknown = [n for n in input.servers or [] if n not in manager.states]
    if unknown:
        known = ", ".join(sorted(manager.states)) or "(none)"
        return ToolResult.refusal("invalid_input", f"Unknown MCP server(s): {', '.join(unknown)}. Configured: {known}")
    await manager.wait_async(input.servers, input.timeout)
    registrar = ctx.stash.get(REGISTRAR)
    if registrar is not None:
        registrar.pegboard.refresh()
    servers = []
    lines = []
    for name in input.servers or list(manager.states):
        state = manager.states[name]
        names = sorted(registrar.names.get(name, {}).values()) if registrar is not None else []
        servers.append({"name": name, "status": state.status, "error": state.error, "tools": names})
        detail = f" ({state.error})" if state.error and state.status != "connected" else ""
        lines.append(f"{name}: {state.status}{detail}; tools: {', '.join(names) or '(none)'}")
    return ToolResult.from_text("\n".join(lines), structured={"servers": servers})


SHARED_TOOLS = (list_mcp_resources, list_mcp_resource_templates, read_mcp_resource, wait_for_mcp_servers)
