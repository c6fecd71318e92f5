"""Turning a finished shell command into the result Bash and exec return.

The text is the output (or, past the cap, a preview and where the whole output is), then
the facts a model must not miss: a timeout, ``Exit code N``, a cwd reset. The structured
value carries the fields OpenClaw's exec documents (``output``, ``exit_code``, ``truncated``,
``wall_time_seconds``) and those hooks written for other agents read (``stdout``,
``stderr``, ``interrupted``, ``backgroundTaskId``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pegboard import ToolContext, ToolResult
from pegboard_toolkit.ledger import ReadLedger
from pegboard_toolkit.output import read_text_tail
from pegboard_toolkit.shell import PREVIEW_CHARS, ShellOutcome, exit_meaning
from pegboard_toolkit.views import single_file_view

#: How much of a spilled output is also kept as a stored result (``tool_result_read``).
STORED_SPILL_BYTES = 4 << 20
#: A spilled output shown with its tail: this many characters of its start and of its end.
EDGE_CHARS = 1_000


def spill_note(size: str, path: Path | str, ref: str | None, text: str, tail: str | None) -> str:
    """What a model sees of an output past the cap: where the whole of it is, and its start
    (``tail`` given: the first and last :data:`EDGE_CHARS` characters, errors being at the end)."""
    ref_note = f" (also stored as {ref}; page it with tool_result_read)" if ref else ""
    where = f"The whole output was saved to: {path}{ref_note}"
    if tail is None:
        preview = text[:PREVIEW_CHARS]
        return (f"Output too large ({size}). {where}\n"
                f"Read or grep that file for the rest. Preview (first {len(preview):,} characters):\n{preview}")
    head = text[:EDGE_CHARS]
    return (f"Output too large ({size}). First {len(head):,} characters:\n{head}\n"
            f"[... the middle is left out. {where}; read or grep that file for the rest ...]\n"
            f"Last {len(tail):,} characters:\n{tail}")


def wants_tail(ctx: ToolContext, tool: str, settings_tail: bool) -> bool:
    """exec and seed 003's ``bash`` show a cut output's start and end; Bash only with ``tools.bash.previewTail``."""
    return tool == "exec" or ctx.requested_name == "bash" or settings_tail


def _store_spill(ctx: ToolContext, tool: str, path: Path, total_bytes: int) -> str | None:
    if ctx.session is None:
        return None
    try:
        with open(path, "rb") as fh:
            data = fh.read(STORED_SPILL_BYTES)
    except OSError:
        return None
    text = data.decode("utf-8", errors="replace")
    return ctx.session.results.put(
        tool,
        text,
        storage_kind="artifact",
        complete=total_bytes <= STORED_SPILL_BYTES,
        meta={"path": str(path), "bytes": total_bytes},
    )


def record_view(ctx: ToolContext, command: str, cwd: Path) -> None:
    """A plain one-file view (``cat f``, ``sed -n '1,20p' f`` ...) counts as a read of that file."""
    if ctx.session is None:
        return
    view = single_file_view(command, cwd)
    if view is None:
        return
    ledger = ReadLedger.of(ctx)
    if view.whole:
        ledger.record_read(view.path, whole=True)
    else:
        ledger.record_read(view.path, whole=False, first_line=view.first, last_line=view.last)


def shell_result(ctx: ToolContext, tool: str, command: str, outcome: ShellOutcome,
                 *, start_cwd: Path, extra: dict[str, Any] | None = None, tail: bool = False) -> ToolResult:
    out = outcome.output
    notices: list[str] = []
    ref = None
    end: str | None = None
    if out.truncated and out.spill_path is not None:
        ref = _store_spill(ctx, tool, out.spill_path, out.total_bytes)
        end = read_text_tail(out.spill_path, EDGE_CHARS) if tail else None
        body = spill_note(f"{out.total_chars:,} characters, {out.total_bytes:,} bytes", out.spill_path, ref,
                          out.text, end)
    else:
        body = out.text
    code = outcome.exit_code
    failed = False
    if outcome.timed_out:
        notices.append(f"Command timed out after {outcome.timeout_seconds:g} seconds; its process group was "
                       "terminated and the output so far is shown")
        failed = True
    elif code is not None and code != 0:
        meaning = exit_meaning(command, code)
        if meaning is None:
            notices.append(f"Exit code {code}")
            failed = True
    if outcome.cwd_note:
        notices.append(outcome.cwd_note)
    text = body.rstrip("\n")
    if notices:
        text = (text + "\n" if text else "") + "\n".join(notices)
    if not text:
        text = "(no output)"
    if not failed and code == 0:
        record_view(ctx, command, start_cwd)
    structured: dict[str, Any] = {
        "output": out.text if not out.truncated else out.text[:PREVIEW_CHARS],
        "exit_code": code,
        "truncated": out.truncated,
        "wall_time_seconds": round(outcome.wall_time_seconds, 3),
        "output_file": str(out.spill_path) if out.spill_path else None,
        "output_ref": ref,
        "cwd": str(outcome.cwd),
        "interrupted": outcome.timed_out,
        "stdout": out.text if not out.truncated else out.text[:PREVIEW_CHARS],
        "stderr": "\n".join(n for n in notices if not n.startswith("Exit code")),
        "isImage": False,
        "backgroundTaskId": None,
        "total_chars": out.total_chars,
        "total_bytes": out.total_bytes,
        **({"output_tail": end} if end is not None else {}),
        **(extra or {}),
    }
    metadata: dict[str, Any] = {}
    if failed:
        metadata["error_kind"] = "timeout" if outcome.timed_out else "exit_code"
    return ToolResult.from_text(text, structured=structured, is_error=failed, metadata=metadata)


__all__ = ["EDGE_CHARS", "STORED_SPILL_BYTES", "record_view", "shell_result", "spill_note", "wants_tail"]
