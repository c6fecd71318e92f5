"""Shared helpers for the file-tool tests: a Pegboard with the writing tools, a session that
may edit, and a simulated Read (a ledger entry, as the Read tool records one)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pegboard_apply_patch
import pegboard_edit
import pegboard_notebook_edit
import pegboard_write
from pegboard import Pegboard, Session, ToolResult
from pegboard.testing import isolated_pegboard
from pegboard_toolkit import ReadLedger

PLUGINS = (pegboard_write, pegboard_edit, pegboard_notebook_edit, pegboard_apply_patch)


def board(cwd: Path, config: dict[str, Any] | None = None) -> Pegboard:
    """Every writing tool, MultiEdit and ApplyPatch enabled by name."""
    merged: dict[str, Any] = {"tools": {"alsoAllow": ["MultiEdit", "ApplyPatch"]}}
    for key, value in (config or {}).items():
        merged[key] = {**merged.get(key, {}), **value} if isinstance(value, dict) else value
    return isolated_pegboard(*PLUGINS, cwd=cwd, config=merged)


class Files:
    """One session (acceptEdits, so edits inside cwd run without a prompt) over ``root``."""

    def __init__(self, root: Path, config: dict[str, Any] | None = None, mode: str = "acceptEdits") -> None:
        self.root = root
        self.pb = board(root, config)
        self._cm = self.pb.session_sync(mode=mode)
        self.session: Session = self._cm.__enter__()

    def call(self, tool: str, **input: Any) -> ToolResult:
        result = self.session.call_sync(tool, input)
        if result.is_error and result.reason == "tool_error":
            assert "error_kind" in result.metadata, result
        return result

    def read(self, path: Path | str, *, partial: bool = False) -> None:
        """What a Read of the whole file records (``partial``: only its PARTIAL first page)."""
        ReadLedger(self.session).record_read(path, whole=not partial, partial_view=partial)

    def close(self) -> None:
        self._cm.__exit__(None, None, None)


def kind(result: ToolResult) -> str | None:
    return result.metadata.get("error_kind") if result.is_error else None


@contextlib.contextmanager
def unprivileged() -> Iterator[None]:
    """Run the block as ``nobody`` when the tests run as root, so permission bits bite."""
    if os.geteuid() != 0:
        yield
        return
    os.setegid(65534)
    os.seteuid(65534)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)
