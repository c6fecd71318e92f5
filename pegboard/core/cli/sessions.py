"""``pegboard sessions``: list, show, remove and prune stored sessions."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import click

from pegboard.core.cli.common import EXIT_USAGE, config_options, emit_json, fail, json_option, load_pegboard

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")
#: where the task tools (pegboard-tasks) keep a session's task list and TodoWrite's list
TASKS_SLOT = "pegboard-tasks"
TODOS_SLOT = "pegboard-todos"
_UNITS = {"": 86400.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}


def parse_duration(text: str) -> float:
    """``30d``, ``12h``, ``90m``, ``45s``, ``2w`` (a bare number is days) in seconds."""
    match = _DURATION.match(text)
    if not match:
        raise click.BadParameter(f"{text!r} is not a duration; use forms like 30d, 12h, 90m, 2w")
    return float(match.group(1)) * _UNITS[match.group(2)]


def describe_duration(seconds: float) -> str:
    """``30d``, ``12h``, ``90m``, ``5s``: the largest unit that says it in a short number."""
    for unit in ("w", "d", "h", "m"):
        size = _UNITS[unit]
        if seconds >= size and (seconds / size).is_integer():
            return f"{seconds / size:g}{unit}"
    for unit in ("d", "h", "m"):
        if seconds >= _UNITS[unit]:
            return f"{seconds / _UNITS[unit]:.3g}{unit}"
    return f"{seconds:g}s"


def _store(config_files: tuple[Path, ...], cwd: Path | None) -> Any:
    from pegboard.core.store import SessionStoreError

    pb = load_pegboard(config_files, cwd)
    try:
        return pb, pb.session_store
    except SessionStoreError as exc:
        fail(str(exc), EXIT_USAGE)


def _summary(record: Any, store: Any) -> dict[str, Any]:
    results = store.results(record.id)
    return {
        **record.to_json(),
        "slots": store.slot_names(record.id),
        "results": len(results),
        "results_bytes": sum(r.size for r in results),
    }


def _decoded(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def session_details(store: Any, session_id: str) -> dict[str, Any] | None:
    """Everything the store keeps about one session, JSON-ready (for ``sessions show``)."""
    record = store.load(session_id)
    if record is None:
        return None
    slots: dict[str, Any] = {}
    for name in store.slot_names(session_id):
        whole = store.get(session_id, name)
        entries = store.entries(session_id, name)
        if entries:
            slots[name] = {k: _decoded(v) for k, v in entries.items()}
        elif whole is not None:
            slots[name] = _decoded(whole)
    results = [
        {
            "ref": r.ref,
            "tool": r.tool,
            "storage_kind": r.storage_kind,
            "content_type": r.content_type,
            "chars": len(r.text),
            "bytes": r.size,
            "complete": r.complete,
            "created": r.created,
            **({"raw_ref": r.ref + "_raw"} if r.raw is not None else {}),
        }
        for r in store.results(session_id)
    ]
    return {**record.to_json(), **_task_lists(slots), "slots": slots, "results": results}


def _task_lists(slots: dict[str, Any]) -> dict[str, list[Any]]:
    """The session's task list and to-do list, from the slots the task tools keep them in."""
    board = slots.get(TASKS_SLOT)
    listed = board.get("tasks") if isinstance(board, dict) else None
    tasks = list(listed.values()) if isinstance(listed, dict) else []
    todos = slots.get(TODOS_SLOT)
    return {"tasks": tasks, "todos": todos if isinstance(todos, list) else []}


@click.group("sessions")
def command() -> None:
    """Stored sessions: what a conversation's tools remembered (read ledger, shell cwd, results)."""


@command.command("list")
@config_options
@json_option
def list_sessions(config_files: tuple[Path, ...], cwd: Path | None, as_json: bool) -> None:
    """Every stored session, most recently used first."""
    _pb, store = _store(config_files, cwd)
    rows = [_summary(r, store) for r in store.sessions()]
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo("No stored sessions.")
        return
    for row in rows:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(row["updated"]))
        who = row["agent"] or "-"
        click.echo(f"{row['id']}  {when}  agent={who}  mode={row['mode'] or 'default'}  cwd={row['cwd']}")


@command.command("show")
@click.argument("session_id")
@config_options
@json_option
def show(session_id: str, config_files: tuple[Path, ...], cwd: Path | None, as_json: bool) -> None:
    """One session: its record, every slot (read ledger, tasks, todos ...) and its stored results."""
    _pb, store = _store(config_files, cwd)
    details = session_details(store, session_id)
    if details is None:
        fail(f"no stored session {session_id!r}; `pegboard sessions list` shows the stored ones", 1)
    if as_json:
        emit_json(details)
        return
    click.echo(f"session {details['id']}")
    for key in ("agent", "provider", "model", "profile", "subagent", "mode", "cwd"):
        if details.get(key):
            click.echo(f"  {key}: {details[key]}")
    for task in details["tasks"]:
        blocked = ", ".join(f"#{b}" for b in task.get("blockedBy") or [])
        click.echo(
            f"  task #{task.get('id')} [{task.get('status')}] {task.get('subject')}"
            + (f" (blocked by {blocked})" if blocked else "")
        )
    for todo in details["todos"]:
        click.echo(f"  todo [{todo.get('status')}] {todo.get('content')}")
    for name, value in details["slots"].items():
        if name in (TASKS_SLOT, TODOS_SLOT):
            continue
        click.echo(f"  slot {name}: {json.dumps(value, ensure_ascii=False)[:400]}")
    for r in details["results"]:
        click.echo(f"  result {r['ref']} from {r['tool']}: {r['chars']:,} characters ({r['storage_kind']})")


@command.command("rm")
@click.argument("session_ids", nargs=-1, required=True)
@config_options
@json_option
def remove(session_ids: tuple[str, ...], config_files: tuple[Path, ...], cwd: Path | None, as_json: bool) -> None:
    """Remove sessions with everything they stored (and their session directories)."""
    pb, store = _store(config_files, cwd)
    removed = [sid for sid in session_ids if _remove(pb, store, sid)]
    missing = [sid for sid in session_ids if sid not in removed]
    if as_json:
        emit_json({"removed": removed, "missing": missing})
    else:
        for sid in removed:
            click.echo(f"removed {sid}")
        for sid in missing:
            click.echo(f"no stored session {sid!r}", err=True)
    if missing:
        raise SystemExit(1)


def _remove(pb: Any, store: Any, session_id: str) -> bool:
    import shutil

    from pegboard.core.store import default_data_dir

    found = bool(store.delete(session_id))
    if "/" not in session_id and session_id not in ("", ".", ".."):
        directory = default_data_dir(pb.data_env()) / "sessions" / session_id
        if directory.is_dir():
            shutil.rmtree(directory, ignore_errors=True)
            found = True
    return found


@command.command("prune")
@click.option(
    "--older-than",
    "older_than",
    default=None,
    metavar="DURATION",
    help="Remove sessions untouched for this long (default: sessions.retentionDays, 30 days).",
)
@config_options
@json_option
def prune(older_than: str | None, config_files: tuple[Path, ...], cwd: Path | None, as_json: bool) -> None:
    """Remove sessions nobody used for a while."""
    pb, _ = _store(config_files, cwd)
    age = parse_duration(older_than) if older_than is not None else pb._retention_seconds()
    removed = pb.prune_sessions(age)
    if as_json:
        emit_json({"removed": removed, "older_than_seconds": age})
    else:
        click.echo(f"removed {len(removed)} session(s) not used for {describe_duration(age)}")
