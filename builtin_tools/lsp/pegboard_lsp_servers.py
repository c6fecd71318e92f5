"""Which language server covers a file, and the running servers of one session.

A server is configured by name under ``tools.lsp.servers`` with a command and the file
patterns it covers; the defaults (Python through python-lsp-server, TypeScript/JavaScript
through typescript-language-server) are merged with the configured entries by name. A
server starts on first use per workspace root (the nearest ancestor holding one of its root
markers), is restarted once when it dies, and is shut down when the session closes.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, Field

from pegboard import NEUTRAL, Session, SessionKey, Widens

if TYPE_CHECKING:
    from pegboard_lsp_client import LspClient


class ServerSettings(BaseModel):
    command: Annotated[list[str], Widens.when_set("starts this program")] = Field(
        default_factory=list, description="The server's argv; a bare name is looked up next to Python, on "
        "searchPaths, then on PATH.")
    filePatterns: Annotated[list[str], NEUTRAL] = Field(
        default_factory=list, description='File-name globs the server covers, such as "*.py".')
    languageId: Annotated[str | dict[str, str], NEUTRAL] = Field(
        default="plaintext", description="The LSP language id, or a map from file suffix to id.")
    rootMarkers: Annotated[list[str], NEUTRAL] = Field(
        default_factory=lambda: [".git"],
        description="Files or folders whose nearest ancestor directory is the workspace root.")
    initializationOptions: Annotated[dict[str, Any] | None, NEUTRAL] = None
    enabled: Annotated[bool, NEUTRAL] = True


class LspSettings(BaseModel):
    enabled: Annotated[bool, NEUTRAL] = True
    servers: Annotated[dict[str, ServerSettings], Widens.when_set("starts the programs its entries name")] = Field(
        default_factory=dict, description="Language servers by name, merged with the defaults (python, typescript).")
    searchPaths: Annotated[list[str], Widens.when_set("runs server programs found in these directories")] = Field(
        default_factory=list, description="Extra directories searched for a server command.")
    startTimeout: Annotated[float, NEUTRAL] = Field(default=30.0, gt=0, description="Seconds to wait for initialize.")
    requestTimeout: Annotated[float, NEUTRAL] = Field(default=30.0, gt=0, description="Seconds per request.")
    diagnosticsOnEdit: Annotated[bool, NEUTRAL] = Field(
        default=True, description="Append diagnostics to Edit/Write/MultiEdit/ApplyPatch results.")
    diagnosticsTimeout: Annotated[float, NEUTRAL] = Field(
        default=5.0, gt=0, description="Seconds to wait for diagnostics after an edit.")
    maxResults: Annotated[int, NEUTRAL] = Field(default=250, ge=1, description="Entries shown per result.")
    maxDiagnostics: Annotated[int, NEUTRAL] = Field(default=50, ge=1, description="Diagnostics shown per file.")


_PY_MARKERS = ["pyproject.toml", "setup.py", "setup.cfg", "tox.ini", ".git"]
_TS_IDS = {".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "typescriptreact",
           ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascriptreact"}

DEFAULT_SERVERS: dict[str, ServerSettings] = {
    "python": ServerSettings(command=["pylsp"], filePatterns=["*.py", "*.pyi"], languageId="python",
                             rootMarkers=_PY_MARKERS),
    "typescript": ServerSettings(command=["typescript-language-server", "--stdio"],
                                 filePatterns=[f"*{s}" for s in _TS_IDS], languageId=dict(_TS_IDS),
                                 rootMarkers=["tsconfig.json", "jsconfig.json", "package.json", ".git"]),
}


def npm_bin_dir() -> Path:
    """Where the set-up (``npm install --prefix <environment>/npm``) puts npm-distributed servers."""
    return Path(sys.prefix) / "npm" / "node_modules" / ".bin"


def effective_servers(settings: LspSettings) -> dict[str, ServerSettings]:
    """The defaults overlaid field by field with the configured entries; disabled ones dropped."""
    merged = dict(DEFAULT_SERVERS)
    for name, conf in settings.servers.items():
        base = merged.get(name)
        merged[name] = base.model_copy(update={k: getattr(conf, k) for k in conf.model_fields_set}) \
            if base is not None else conf
    return {n: s for n, s in merged.items() if s.enabled and s.command and s.filePatterns}


def server_for(path: Path, settings: LspSettings) -> tuple[str, ServerSettings] | None:
    for name, conf in effective_servers(settings).items():
        if any(fnmatch.fnmatch(path.name, pattern) for pattern in conf.filePatterns):
            return name, conf
    return None


def resolve_command(conf: ServerSettings, settings: LspSettings, env: Mapping[str, str]) -> list[str] | str:
    """The argv with its program found, or the reason it cannot be found."""
    program = os.path.expanduser(conf.command[0])
    if os.sep in program:
        return [program, *conf.command[1:]] if os.access(program, os.X_OK) else f"{program} is not an executable file"
    dirs = [str(Path(sys.executable).parent), *(os.path.expanduser(d) for d in settings.searchPaths),
            str(npm_bin_dir())]
    path = os.pathsep.join([*dirs, env.get("PATH") or os.environ.get("PATH", "")])
    found = shutil.which(program, path=path)
    if found is None:
        return f"{program} is not installed (looked next to Python, in {npm_bin_dir()}, on searchPaths and PATH)"
    return [found, *conf.command[1:]]


def initialization_options(name: str, conf: ServerSettings) -> dict[str, Any] | None:
    """The configured options; for the default typescript server without any, the tsserver
    installed beside it (the server finds no TypeScript in a project that does not ship one)."""
    if conf.initializationOptions is not None or name != "typescript":
        return conf.initializationOptions
    tsserver = npm_bin_dir().parent / "typescript" / "lib" / "tsserver.js"
    return {"tsserver": {"path": str(tsserver)}} if tsserver.is_file() else None


def language_id(conf: ServerSettings, path: Path) -> str:
    if isinstance(conf.languageId, str):
        return conf.languageId
    return conf.languageId.get(path.suffix, next(iter(conf.languageId.values()), "plaintext"))


def workspace_root(path: Path, conf: ServerSettings, fallback: Path) -> Path:
    """The nearest ancestor of ``path`` holding a root marker; else ``fallback`` (the cwd)
    when it contains the file, else the file's folder."""
    for folder in path.parents:
        if any((folder / marker).exists() for marker in conf.rootMarkers):
            return folder
    return fallback if fallback in path.parents else path.parent


@dataclass
class _Entry:
    client: LspClient
    restarts: int = 0


@dataclass
class ServerPool:
    """The servers one session started, keyed by server name and workspace root."""

    entries: dict[tuple[str, Path], _Entry] = field(default_factory=dict)
    lock: Any = None
    closed: bool = False

    @classmethod
    def of(cls, session: Session) -> ServerPool:
        pool = session.state.get(POOL)
        if pool is None:
            pool = cls()
            session.state[POOL] = pool
            session.on_close(pool.close)
        return pool

    def running(self, name: str, root: Path) -> LspClient | None:
        entry = self.entries.get((name, root))
        return entry.client if entry is not None and entry.client.alive else None

    async def client(self, name: str, conf: ServerSettings, argv: list[str], root: Path,
                     settings: LspSettings, env: Mapping[str, str]) -> LspClient:
        """The running server for ``(name, root)``; started now, or restarted once after a crash."""
        import asyncio

        from pegboard_lsp_client import LspClient, LspError

        if self.lock is None:
            self.lock = asyncio.Lock()
        if self.closed:
            raise LspError("the session is closed")
        async with self.lock:
            entry = self.entries.get((name, root))
            if entry is not None and entry.client.alive:
                return entry.client
            if entry is not None and entry.restarts >= 1:
                raise LspError(f"the {name} server for {root} crashed again after a restart; "
                               f"last words: {entry.client.stderr_tail.decode(errors='replace')[-300:]!r}")
            restarts = 0 if entry is None else entry.restarts + 1
            if entry is not None:
                await entry.client.shutdown(1.0)
            client = LspClient(argv, root, env=dict(env) or None,
                               initialization_options=initialization_options(name, conf))
            self.entries[(name, root)] = _Entry(client, restarts)
            try:
                await client.start(settings.startTimeout)
            except (OSError, LspError) as exc:
                await client.shutdown(1.0)
                raise LspError(f"the {name} server ({argv[0]}) did not start: {exc}") from None
            return client

    async def close(self) -> None:
        import asyncio

        self.closed = True
        entries, self.entries = list(self.entries.values()), {}
        await asyncio.gather(*(e.client.shutdown() for e in entries), return_exceptions=True)


POOL: SessionKey[ServerPool] = SessionKey("pegboard-lsp-servers", ServerPool)
