"""A small JSON-RPC 2.0 client for one language server over stdio (LSP base protocol).

Messages are framed with ``Content-Length`` headers. Requests get futures resolved by the
reader task; server-to-client requests (``workspace/configuration``, registrations) are
answered so servers that wait for them keep going; ``textDocument/publishDiagnostics`` is
kept per URI with a version counter so a caller can wait for the next publication.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

MAX_MESSAGE_BYTES = 64 * 1024 * 1024


class LspError(RuntimeError):
    """The server answered an error, died, or did not answer in time."""


class LspClient:
    """One running server process and the requests in flight to it."""

    def __init__(self, command: Sequence[str], root: Path, *, env: Mapping[str, str] | None = None,
                 initialization_options: Any = None) -> None:
        self.command = list(command)
        self.root = root
        self.env = dict(env) if env is not None else None
        self.initialization_options = initialization_options
        self.capabilities: dict[str, Any] = {}
        self.diagnostics: dict[str, list[dict[str, Any]]] = {}
        self._published: dict[str, int] = {}
        self._changed = asyncio.Condition()
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._next_id = 0
        self._proc: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._stderr: asyncio.Task[None] | None = None
        self.stderr_tail = b""
        self.opened: dict[str, int] = {}
        self._stamps: dict[str, tuple[int, int, int]] = {}

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.returncode is None and self._reader is not None \
            and not self._reader.done()

    async def start(self, timeout: float) -> None:
        """Start the process and run ``initialize`` / ``initialized``."""
        self._proc = await asyncio.create_subprocess_exec(
            *self.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, cwd=str(self.root), env=self.env, start_new_session=True)
        self._reader = asyncio.create_task(self._read_loop())
        self._stderr = asyncio.create_task(self._drain_stderr())
        uri = self.root.as_uri()
        params = {
            "processId": os.getpid(),
            "rootUri": uri,
            "rootPath": str(self.root),
            "workspaceFolders": [{"uri": uri, "name": self.root.name or "root"}],
            "initializationOptions": self.initialization_options,
            "capabilities": _CLIENT_CAPABILITIES,
        }
        result = await self.request("initialize", params, timeout)
        self.capabilities = dict((result or {}).get("capabilities") or {})
        await self.notify("initialized", {})

    async def request(self, method: str, params: Any, timeout: float) -> Any:
        self._next_id += 1
        msg_id = self._next_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        try:
            await self._send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            with contextlib.suppress(Exception):
                await self.notify("$/cancelRequest", {"id": msg_id})
            raise LspError(f"{method} got no answer within {timeout:g} s") from None
        finally:
            self._pending.pop(msg_id, None)

    async def notify(self, method: str, params: Any) -> None:
        await self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def publication(self, uri: str) -> int:
        """How many diagnostics publications arrived for ``uri`` so far."""
        return self._published.get(uri, 0)

    async def wait_diagnostics(self, uri: str, after: int, timeout: float) -> list[dict[str, Any]] | None:
        """The diagnostics of the first publication for ``uri`` numbered above ``after``;
        ``None`` when none arrives within ``timeout``."""
        async def published() -> None:
            async with self._changed:
                await self._changed.wait_for(lambda: self._published.get(uri, 0) > after or not self.alive)
        try:
            await asyncio.wait_for(published(), timeout)
        except TimeoutError:
            return None
        return self.diagnostics.get(uri) if self._published.get(uri, 0) > after else None

    async def sync_file(self, path: Path, language_id: str) -> str:
        """Open ``path``, or send its text as a full change when it differs from what the server
        has; returns its URI."""
        uri = path.as_uri()
        info = path.stat()
        stamp = (info.st_mtime_ns, info.st_size, info.st_ino)
        version = self.opened.get(uri)
        if version is not None and self._stamps.get(uri) == stamp:
            return uri
        text = path.read_text(encoding="utf-8", errors="replace")
        self._stamps[uri] = stamp
        if version is None:
            self.opened[uri] = 1
            await self.notify("textDocument/didOpen", {"textDocument": {
                "uri": uri, "languageId": language_id, "version": 1, "text": text}})
        else:
            self.opened[uri] = version + 1
            await self.notify("textDocument/didChange", {
                "textDocument": {"uri": uri, "version": version + 1}, "contentChanges": [{"text": text}]})
            await self.notify("textDocument/didSave", {"textDocument": {"uri": uri}, "text": text})
        return uri

    async def shutdown(self, timeout: float = 3.0) -> None:
        """``shutdown`` then ``exit``; kill the process if it does not leave in time."""
        proc = self._proc
        if proc is None:
            return
        if self.alive:
            with contextlib.suppress(Exception):
                await self.request("shutdown", None, timeout)
                await self.notify("exit", None)
        try:
            await asyncio.wait_for(proc.wait(), timeout)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
        for task in (self._reader, self._stderr):
            if task is not None:
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        self._fail_pending("the server was shut down")

    # -- wire ---------------------------------------------------------------------------------
    async def _send(self, message: dict[str, Any]) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None or proc.returncode is not None:
            raise LspError(self._death())
        body = json.dumps(message, ensure_ascii=False).encode()
        try:
            proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            await proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            raise LspError(self._death()) from None

    def _death(self) -> str:
        code = self._proc.returncode if self._proc is not None else None
        tail = self.stderr_tail.decode(errors="replace").strip()[-400:]
        return f"the language server exited (code {code})" + (f": {tail}" if tail else "")

    async def _read_loop(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        stdout = self._proc.stdout
        try:
            while True:
                length = None
                while True:
                    line = await stdout.readline()
                    if not line:
                        return
                    line = line.strip()
                    if not line:
                        break
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                if length is None or length < 0 or length > MAX_MESSAGE_BYTES:
                    raise LspError(f"bad Content-Length header from the server: {length}")
                message = json.loads(await stdout.readexactly(length))
                await self._dispatch(message)
        except (asyncio.IncompleteReadError, ValueError, LspError):
            return
        finally:
            self._fail_pending(self._death() if self._proc.returncode is not None else "the server's output ended")
            async with self._changed:
                self._changed.notify_all()

    async def _drain_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        while chunk := await self._proc.stderr.read(4096):
            self.stderr_tail = (self.stderr_tail + chunk)[-4096:]

    def _fail_pending(self, why: str) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(LspError(why))

    async def _dispatch(self, message: Any) -> None:
        if not isinstance(message, dict):
            return
        if "method" not in message:
            future = self._pending.get(message.get("id"))  # type: ignore[arg-type]
            if future is not None and not future.done():
                error = message.get("error")
                if error:
                    future.set_exception(LspError(f"server error {error.get('code')}: {error.get('message')}"))
                else:
                    future.set_result(message.get("result"))
            return
        method = message["method"]
        if "id" in message:
            await self._answer(message["id"], method, message.get("params"))
        elif method == "textDocument/publishDiagnostics":
            params = message.get("params") or {}
            uri = str(params.get("uri", ""))
            self.diagnostics[uri] = list(params.get("diagnostics") or [])
            async with self._changed:
                self._published[uri] = self._published.get(uri, 0) + 1
                self._changed.notify_all()

    async def _answer(self, msg_id: Any, method: str, params: Any) -> None:
        result: Any = None
        if method == "workspace/configuration":
            items = (params or {}).get("items") or []
            result = [None for _ in items]
        elif method == "workspace/workspaceFolders":
            result = [{"uri": self.root.as_uri(), "name": self.root.name or "root"}]
        with contextlib.suppress(LspError):
            await self._send({"jsonrpc": "2.0", "id": msg_id, "result": result})


_CLIENT_CAPABILITIES: dict[str, Any] = {
    "workspace": {"workspaceFolders": True, "configuration": True, "symbol": {}},
    "textDocument": {
        "synchronization": {"didSave": True, "dynamicRegistration": False},
        "definition": {"linkSupport": True},
        "implementation": {"linkSupport": True},
        "references": {},
        "hover": {"contentFormat": ["markdown", "plaintext"]},
        "documentSymbol": {"hierarchicalDocumentSymbolSupport": True},
        "callHierarchy": {},
        "publishDiagnostics": {"relatedInformation": False, "versionSupport": True},
    },
    "general": {"positionEncodings": ["utf-16"]},
}
