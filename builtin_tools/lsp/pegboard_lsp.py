"""The built-in ``LSP`` tool: code intelligence from a real language server.

Navigation (definitions, references, hover, symbols, implementations, call hierarchies) at
1-based line/character positions, and the diagnostics a server reports after an Edit, Write,
MultiEdit or ApplyPatch of a file it covers, appended to that tool's result.
"""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import unquote, urlparse

from pydantic import BaseModel, Field

from pegboard import (
    ConfigSection,
    ConfigSectionRegister,
    InvalidPathError,
    Pegboard,
    Subjects,
    TextBlock,
    ToolCall,
    ToolContext,
    ToolResult,
    hookimpl,
    resolve_path,
    tool,
)
from pegboard_lsp_servers import (
    LspSettings,
    ServerPool,
    ServerSettings,
    effective_servers,
    language_id,
    resolve_command,
    server_for,
    workspace_root,
)
from pegboard_toolkit.toolconfig import tool_failure as _fail

if TYPE_CHECKING:
    from pegboard_lsp_client import LspClient

SETTINGS_KEY = "tools.lsp"
OWNER = "pegboard-lsp"
MAX_COLUMNS = 500
EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "ApplyPatch"})

Operation = Literal[
    "goToDefinition", "findReferences", "hover", "documentSymbol", "workspaceSymbol", "goToImplementation",
    "prepareCallHierarchy", "incomingCalls", "outgoingCalls",
]

#: operation -> (LSP method, server capability that must be present)
_METHODS: dict[str, tuple[str, str]] = {
    "goToDefinition": ("textDocument/definition", "definitionProvider"),
    "findReferences": ("textDocument/references", "referencesProvider"),
    "hover": ("textDocument/hover", "hoverProvider"),
    "documentSymbol": ("textDocument/documentSymbol", "documentSymbolProvider"),
    "workspaceSymbol": ("workspace/symbol", "workspaceSymbolProvider"),
    "goToImplementation": ("textDocument/implementation", "implementationProvider"),
    "prepareCallHierarchy": ("textDocument/prepareCallHierarchy", "callHierarchyProvider"),
    "incomingCalls": ("callHierarchy/incomingCalls", "callHierarchyProvider"),
    "outgoingCalls": ("callHierarchy/outgoingCalls", "callHierarchyProvider"),
}

_SYMBOL_KINDS = ("", "File", "Module", "Namespace", "Package", "Class", "Method", "Property", "Field",
                 "Constructor", "Enum", "Interface", "Function", "Variable", "Constant", "String", "Number",
                 "Boolean", "Array", "Object", "Key", "Null", "EnumMember", "Struct", "Event", "Operator",
                 "TypeParameter")
_SEVERITIES = ("", "Error", "Warning", "Info", "Hint")

USAGE = (
    "LSP(operation, filePath, line, character): code intelligence from a language server at a 1-based "
    "position: goToDefinition, findReferences, hover, documentSymbol, workspaceSymbol (query), "
    "goToImplementation, prepareCallHierarchy, incomingCalls, outgoingCalls. Type errors and warnings are "
    "reported automatically after edits."
)


class LspInput(BaseModel):
    operation: Operation = Field(description="What to ask the language server.")
    filePath: str = Field(min_length=1, description="The file to ask about (absolute or relative to the cwd).")
    line: int = Field(default=1, ge=1, description="1-based line of the symbol (unused by documentSymbol).")
    character: int = Field(default=1, ge=1, description="1-based character offset in that line.")
    query: str | None = Field(
        default=None, description="workspaceSymbol: the name to search; default: the word at line/character.")


def _settings(ctx: ToolContext) -> LspSettings:
    value: LspSettings = ctx.settings(SETTINGS_KEY)
    return value


# ------------------------------------------------------------------ positions and text


class _Lines:
    """File lines read once per result, for UTF-16 conversion and the shown source line."""

    def __init__(self) -> None:
        self._cache: dict[Path, list[str]] = {}

    def of(self, path: Path) -> list[str]:
        if path not in self._cache:
            try:
                self._cache[path] = path.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                self._cache[path] = []
        return self._cache[path]

    def line(self, path: Path, index: int) -> str | None:
        lines = self.of(path)
        return lines[index] if 0 <= index < len(lines) else None


def _to_utf16(text: str, column: int) -> int:
    return len(text[:column].encode("utf-16-le")) // 2


def _from_utf16(text: str, units: int) -> int:
    count = 0
    for i, ch in enumerate(text):
        if count >= units:
            return i
        count += 2 if ord(ch) > 0xFFFF else 1
    return len(text)


def _uri_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


def _shown(path: Path, cwd: Path) -> str:
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)


def _cap(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_COLUMNS else text[:MAX_COLUMNS] + " [...]"


@dataclasses.dataclass
class _Render:
    ctx: ToolContext
    cwd: Path
    lines: _Lines
    hidden: int = 0
    filtered: bool = True

    def location(self, uri: str, rng: dict[str, Any] | None) -> dict[str, Any] | None:
        """A location as file/line/character (1-based); ``None`` when a Read rule hides its file."""
        path = _uri_path(uri)
        start = (rng or {}).get("start") or {}
        line0 = int(start.get("line", 0))
        if path is not None and self.filtered and not self.ctx.permissions.may_read(path):
            self.hidden += 1
            return None
        text = self.lines.line(path, line0) if path is not None else None
        char = _from_utf16(text, int(start.get("character", 0))) + 1 if text is not None else \
            int(start.get("character", 0)) + 1
        return {"file": _shown(path, self.cwd) if path is not None else uri, "line": line0 + 1, "character": char,
                "text": _cap(text) if text is not None else None}


def _entry_line(item: dict[str, Any], label: str = "") -> str:
    head = f"{item['file']}:{item['line']}:{item['character']}"
    tail = label or (item.get("text") or "")
    return f"{head}: {tail}" if tail else head


def _locations(raw: Any) -> list[tuple[str, dict[str, Any] | None]]:
    items = raw if isinstance(raw, list) else [raw] if isinstance(raw, dict) else []
    out = []
    for item in items:
        if not isinstance(item, dict):
            continue
        if "targetUri" in item:  # LocationLink
            out.append((str(item["targetUri"]), item.get("targetSelectionRange") or item.get("targetRange")))
        elif "uri" in item:
            out.append((str(item["uri"]), item.get("range")))
    return out


def _hover_text(raw: Any) -> str:
    if not isinstance(raw, dict):
        return ""
    contents = raw.get("contents")
    parts = contents if isinstance(contents, list) else [contents]
    texts = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict):
            value = str(part.get("value", ""))
            lang = part.get("language")
            texts.append(f"```{lang}\n{value}\n```" if lang else value)
    return "\n\n".join(t for t in texts if t.strip()).strip()


def _symbols(raw: Any, render: _Render, path: Path | None, depth: int = 0) -> list[tuple[str, dict[str, Any]]]:
    """(shown line, structured entry) for DocumentSymbol trees and SymbolInformation lists."""
    out: list[tuple[str, dict[str, Any]]] = []
    for sym in raw if isinstance(raw, list) else []:
        if not isinstance(sym, dict):
            continue
        kind_no = int(sym.get("kind", 0))
        kind = _SYMBOL_KINDS[kind_no] if 0 < kind_no < len(_SYMBOL_KINDS) else "Symbol"
        if "location" in sym:
            loc = render.location(str(sym["location"].get("uri", "")), sym["location"].get("range"))
        else:
            loc = render.location(path.as_uri(), sym.get("selectionRange") or sym.get("range")) if path else None
        if loc is None:
            continue
        container = f" in {sym['containerName']}" if sym.get("containerName") else ""
        name = str(sym.get("name", "?"))
        label = f"{'  ' * depth}{name} ({kind}){container} - {loc['file']}:{loc['line']}:{loc['character']}"
        out.append((label, {"name": name, "kind": kind, "depth": depth, **loc}))
        out.extend(_symbols(sym.get("children") or [], render, path, depth + 1))
    return out


def _trimmed(entries: list[str], limit: int, what: str) -> tuple[str, bool]:
    if len(entries) <= limit:
        return "\n".join(entries), False
    return "\n".join(entries[:limit]) + (
        f"\n\n[Showing {limit} of {len(entries)} {what}; raise tools.lsp.maxResults to see more]"), True


def _word_at(text: str, column: int) -> str:
    for match in re.finditer(r"\w+", text):
        if match.start() <= column <= match.end():
            return match.group()
    return ""


# ------------------------------------------------------------------ the server for a file


async def _client_for(
    ctx: ToolContext, path: Path, settings: LspSettings
) -> tuple[LspClient, ServerSettings, str] | ToolResult:
    found = server_for(path, settings)
    if found is None:
        names = ", ".join(sorted(effective_servers(settings))) or "none"
        return ToolResult.refusal(
            "unavailable", f"No language server is configured for {path.name} (configured: {names}). Add one under "
            f"tools.lsp.servers with a command and filePatterns.", error_kind="no_server")
    name, conf = found
    if ctx.session is None:
        return _fail("LSP needs a session (servers live as long as one); run it through Pegboard", "no_session")
    root = workspace_root(path, conf, Path(ctx.cwd))
    pool = ServerPool.of(ctx.session)
    if (running := pool.running(name, root)) is not None:
        return running, conf, name
    argv = resolve_command(conf, settings, ctx.env or os.environ)
    if isinstance(argv, str):
        return ToolResult.refusal("unavailable", f"The {name} language server is unavailable: {argv}.",
                                  error_kind="server_not_installed", server=name)
    from pegboard_lsp_client import LspError

    try:
        client = await pool.client(name, conf, argv, root, settings, ctx.env)
    except LspError as exc:
        return _fail(str(exc), "server_failed", server=name)
    return client, conf, name


async def _open(client: LspClient, conf: ServerSettings, path: Path, settings: LspSettings) -> str:
    """Sync the file; the first time, wait (up to diagnosticsTimeout) for its first diagnostics,
    the sign that the server has analysed it: tsserver answers from a half-loaded project before."""
    uri = path.as_uri()
    first, before = uri not in client.opened, client.publication(uri)
    await client.sync_file(path, language_id(conf, path))
    if first:
        await client.wait_diagnostics(uri, before, settings.diagnosticsTimeout)
    return uri


async def _ask(client: LspClient, method: str, params: Any, settings: LspSettings) -> Any:
    return await client.request(method, params, settings.requestTimeout)


# ------------------------------------------------------------------ the tool


@tool(
    name="LSP",
    groups=["fs", "file"],
    permission_family="Read",
    read_only=True,
    idempotent=True,
    path_fields=("filePath",),
    permission_subjects=lambda i: Subjects(paths_read=(i.filePath,)),
    usage=USAGE,
)
async def lsp(input: LspInput, ctx: ToolContext) -> ToolResult:
    """Code intelligence from a language server. operation: goToDefinition, findReferences,
    hover (type and docs), documentSymbol (the file's symbols), workspaceSymbol (symbols by
    name across the workspace; query defaults to the word at the position), goToImplementation,
    prepareCallHierarchy, incomingCalls, outgoingCalls. line and character are 1-based, as
    Read and Grep show them. Results list file:line:character with the source line, at most
    tools.lsp.maxResults entries. The server for the file's language starts on first use."""
    settings = _settings(ctx)
    if not settings.enabled:
        return ToolResult.refusal("unavailable", f"LSP is turned off by {SETTINGS_KEY}.enabled", error_kind="disabled")
    cwd = Path(ctx.cwd)
    try:
        path = resolve_path(input.filePath, cwd, ctx.env.get("HOME"))
    except (InvalidPathError, ValueError) as exc:
        return _fail(f"Invalid filePath: {exc}", "invalid_path")
    if not path.is_file():
        what = "is a directory; pass a source file" if path.is_dir() else "does not exist"
        return _fail(f"{path} {what}. The current working directory is {cwd}.", "path_not_found")
    found = await _client_for(ctx, path, settings)
    if isinstance(found, ToolResult):
        return found
    client, conf, name = found
    method, capability = _METHODS[input.operation]
    if not client.capabilities.get(capability):
        return _fail(f"The {name} language server ({client.command[0]}) does not support {input.operation} "
                     f"(it has no {capability}).", "unsupported", server=name)
    lines = _Lines()
    text = lines.line(path, input.line - 1)
    if text is None and input.operation not in ("documentSymbol", "workspaceSymbol"):
        return _fail(f"line {input.line} is past the end of {path} ({len(lines.of(path))} lines)", "invalid_position")
    column = min(input.character - 1, len(text or ""))
    from pegboard_lsp_client import LspError

    try:
        uri = await _open(client, conf, path, settings)
        doc = {"textDocument": {"uri": uri}, "position": {"line": input.line - 1,
                                                           "character": _to_utf16(text or "", column)}}
        raw = await _run(input, client, method, doc, text or "", column, settings)
    except LspError as exc:
        return _fail(f"The {name} language server failed on {input.operation}: {exc}", "server_failed", server=name)
    from pegboard_toolkit.walk import ReadFilter

    render = _Render(ctx, cwd, lines, filtered=ReadFilter(ctx).active)
    return _result(input, raw, render, path, settings, name)


async def _run(input: LspInput, client: LspClient, method: str, doc: dict[str, Any], text: str, column: int,
               settings: LspSettings) -> Any:
    op = input.operation
    if op == "findReferences":
        return await _ask(client, method, {**doc, "context": {"includeDeclaration": True}}, settings)
    if op == "documentSymbol":
        return await _ask(client, method, {"textDocument": doc["textDocument"]}, settings)
    if op == "workspaceSymbol":
        return await _ask(client, method, {"query": input.query or _word_at(text, column)}, settings)
    if op in ("incomingCalls", "outgoingCalls"):
        items = await _ask(client, "textDocument/prepareCallHierarchy", doc, settings)
        if not items:
            return []
        return await _ask(client, method, {"item": items[0]}, settings)
    return await _ask(client, method, doc, settings)


def _result(input: LspInput, raw: Any, render: _Render, path: Path, settings: LspSettings, server: str) -> ToolResult:
    op = input.operation
    entries: list[tuple[str, dict[str, Any]]] = []
    if op == "hover":
        body = _hover_text(raw) or f"No hover information at {input.line}:{input.character}."
        return ToolResult.from_text(body, structured={"operation": op, "hover": body}, metadata={"server": server})
    if op in ("documentSymbol", "workspaceSymbol"):
        entries = _symbols(raw, render, path if op == "documentSymbol" else None)
    elif op == "prepareCallHierarchy" or op in ("incomingCalls", "outgoingCalls"):
        for item in raw if isinstance(raw, list) else []:
            target = item.get("from") or item.get("to") or item if isinstance(item, dict) else None
            if not isinstance(target, dict):
                continue
            loc = render.location(str(target.get("uri", "")), target.get("selectionRange") or target.get("range"))
            if loc is not None:
                kind_no = int(target.get("kind", 0))
                kind = _SYMBOL_KINDS[kind_no] if 0 < kind_no < len(_SYMBOL_KINDS) else "Symbol"
                label = f"{target.get('name', '?')} ({kind})"
                entries.append((_entry_line(loc, label), {"name": target.get("name"), "kind": kind, **loc}))
    else:
        for uri, rng in _locations(raw):
            loc = render.location(uri, rng)
            if loc is not None:
                entries.append((_entry_line(loc), loc))
    what = {"goToDefinition": "definitions", "goToImplementation": "implementations",
            "findReferences": "references", "documentSymbol": "symbols", "workspaceSymbol": "symbols",
            "prepareCallHierarchy": "call hierarchy items", "incomingCalls": "callers",
            "outgoingCalls": "callees"}[op]
    if not entries:
        body = f"No {what} found" + (f" ({render.hidden} hidden by Read rules)" if render.hidden else "")
        return ToolResult.from_text(body, structured={"operation": op, "results": [], "hidden": render.hidden},
                                    metadata={"server": server})
    body, cut = _trimmed([e[0] for e in entries], settings.maxResults, what)
    header = f"{len(entries)} {what if len(entries) != 1 else what.removesuffix('s')}"
    if render.hidden:
        header += f" ({render.hidden} more hidden by Read rules)"
    structured = {"operation": op, "results": [e[1] for e in entries[: settings.maxResults]],
                  "total": len(entries), "truncated": cut, "hidden": render.hidden}
    return ToolResult.from_text(f"{header}:\n{body}", structured=structured, metadata={"server": server,
                                                                                        "truncated": cut})


# ------------------------------------------------------------------ diagnostics after edits


def _edited_paths(call: ToolCall, result: ToolResult, cwd: Path) -> list[Path]:
    paths: list[str] = []
    for key in ("file_path", "filePath", "path"):
        value = call.input.get(key)
        if isinstance(value, str):
            paths.append(value)
    if call.name == "ApplyPatch":
        structured = result.structured or {}
        for key in ("added", "modified", "updated", "files", "changed"):
            value = structured.get(key) or result.metadata.get(key)
            if isinstance(value, list):
                paths.extend(str(v.get("path") if isinstance(v, dict) else v) for v in value)
        patch = call.input.get("input") or call.input.get("patch") or ""
        if isinstance(patch, str):
            paths.extend(m.strip() for m in re.findall(r"^\*\*\* (?:Add|Update) File: (.+)$", patch, re.M))
            paths.extend(m.strip() for m in re.findall(r"^\*\*\* Move to: (.+)$", patch, re.M))
    out: list[Path] = []
    for p in paths:
        try:
            resolved = resolve_path(p, cwd)
        except (InvalidPathError, ValueError):
            continue
        if resolved.is_file() and resolved not in out:
            out.append(resolved)
    return out


def format_diagnostics(path: Path, diagnostics: list[dict[str, Any]], cwd: Path, limit: int) -> str:
    shown = _shown(path, cwd)
    ordered = sorted(diagnostics, key=lambda d: (int(d.get("severity") or 1),
                                                 int(((d.get("range") or {}).get("start") or {}).get("line", 0))))
    rows = []
    for diag in ordered[:limit]:
        start = (diag.get("range") or {}).get("start") or {}
        sev_no = int(diag.get("severity") or 1)
        severity = _SEVERITIES[sev_no] if 0 < sev_no < len(_SEVERITIES) else "Error"
        source = f" [{diag['source']}]" if diag.get("source") else ""
        code = f" ({diag['code']})" if diag.get("code") not in (None, "") else ""
        message = _cap(str(diag.get("message", "")).replace("\n", " "))
        rows.append(f"  {shown}:{int(start.get('line', 0)) + 1}:{int(start.get('character', 0)) + 1}: "
                    f"{severity}{code}: {message}{source}")
    more = f"\n  [... {len(ordered) - limit} more]" if len(ordered) > limit else ""
    return "\n".join(rows) + more


async def diagnostics_after_edit(call: ToolCall, result: ToolResult, ctx: ToolContext) -> str | None:
    """The diagnostics block for the files ``call`` changed, or ``None`` when nothing to say."""
    if call.name not in EDIT_TOOLS or result.is_error or ctx.session is None or ctx.pegboard is None:
        return None
    settings = _settings(ctx)
    if not settings.enabled or not settings.diagnosticsOnEdit:
        return None
    from pegboard_lsp_client import LspError

    cwd = Path(ctx.cwd)
    blocks = []
    for path in _edited_paths(call, result, cwd):
        found = server_for(path, settings)
        if found is None or not ctx.permissions.may_read(path):
            continue
        name, conf = found
        argv = resolve_command(conf, settings, ctx.env or os.environ)
        if isinstance(argv, str):
            continue
        try:
            client = await ServerPool.of(ctx.session).client(name, conf, argv, workspace_root(path, conf, cwd),
                                                             settings, ctx.env)
            uri = path.as_uri()
            before = client.publication(uri)
            await client.sync_file(path, language_id(conf, path))
            diagnostics = await client.wait_diagnostics(uri, before, settings.diagnosticsTimeout)
        except (LspError, OSError):
            continue
        if diagnostics:
            blocks.append(format_diagnostics(path, diagnostics, cwd, settings.maxDiagnostics))
    if not blocks:
        return None
    return "<new-diagnostics>The language server reports these problems in the file(s) just changed:\n" + \
        "\n".join(blocks) + "\n</new-diagnostics>"


@hookimpl
async def post_tool_use(call: ToolCall, result: ToolResult, context: ToolContext) -> ToolResult | None:
    """The edit's result with the new diagnostics appended as one more text block."""
    text = await diagnostics_after_edit(call, result, context)
    if not text:
        return None
    return result.model_copy(update={"content": [*result.content, TextBlock(text=text)],
                                     "metadata": {**result.metadata, "lsp_diagnostics": True}})


# ------------------------------------------------------------------ registration


def availability(pegboard: Pegboard) -> str | None:
    """Unavailable when turned off or when no configured server's program is installed."""
    settings: LspSettings = pegboard.settings(SETTINGS_KEY)
    if not settings.enabled:
        return f"turned off by {SETTINGS_KEY}.enabled"
    servers = effective_servers(settings)
    if not servers:
        return "no language server is configured (tools.lsp.servers)"
    problems = []
    for name, conf in servers.items():
        argv = resolve_command(conf, settings, os.environ)
        if not isinstance(argv, str):
            return None
        problems.append(f"{name}: {argv}")
    return "no configured language server is installed: " + "; ".join(problems)


def engines(pegboard: Pegboard) -> str | None:
    """Per configured server, the program found or why it is missing (``tools --explain``)."""
    settings: LspSettings = pegboard.settings(SETTINGS_KEY)
    out = []
    for name, conf in effective_servers(settings).items():
        argv = resolve_command(conf, settings, os.environ)
        out.append(f"{name}: {argv if isinstance(argv, str) else ' '.join(argv)}")
    return "; ".join(out) or None


@hookimpl
def register_config_sections(register: ConfigSectionRegister) -> None:
    register(ConfigSection(SETTINGS_KEY, LspSettings, description="The LSP tool and its language servers."))


@hookimpl
def pegboard_ready(pegboard: Pegboard) -> None:
    pegboard.add_tool(dataclasses.replace(lsp, availability=lambda: availability(pegboard),
                                          engine=lambda: engines(pegboard)), owner=OWNER)
