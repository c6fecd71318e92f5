"""``pegboard call``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from pegboard.core.awaitables import resolve_sync
from pegboard.core.cli.common import (
    EXIT_USAGE,
    config_options,
    emit_result,
    fail,
    input_option,
    json_option,
    load_pegboard,
    mode_option,
    parse_json_input,
    selection_options,
    wait_mcp_option,
)
from pegboard.core.session import Selection, SessionError
from pegboard.core.store import SessionStoreError

#: why ``pegboard call`` starts no background work: the process, and every task it runs, ends with the call
BACKGROUND_REFUSAL = (
    "pegboard call ends when this call returns, and a background task would be killed with it, so nothing "
    "was started. Run the command in the foreground instead, or use a host that stays up between calls: "
    "`pegboard serve` (MCP), or a Python program that keeps one `pb.session()` open."
)


#: why a Read in an earlier ``pegboard call`` does not let this one edit: each call without
#: ``--session`` has a session, and a read ledger, of its own
NOT_READ_WITHOUT_SESSION = (
    "without --session each pegboard call is a session of its own, which has read no file: "
    "run the Read and this call with the same --session NAME"
)


def make_approver(yes: bool, *, remember: bool = False, cwd: Path | None = None) -> Any:
    """``--yes`` approves every ask; on a TTY the user is asked; otherwise nobody answers.

    In a stored session (``remember``) the user may also answer "always": the narrowest rules
    that allow the call (one per simple command of a shell line) are remembered for the rest
    of that session; a call no narrow rule allows is only asked yes or no.
    """

    def approve(call: Any, decision: Any) -> Any:
        if yes:
            return True
        if not (sys.stdin.isatty() and sys.stderr.isatty()):
            return None
        why = f" ({decision.reason})" if decision.reason else ""
        question = f"Allow {call.name} {call.input}{why}?"
        from pegboard.core.permissions.suggest import suggest_allow_rules
        from pegboard.core.session import PermissionUpdate

        asks_always = remember and not decision.hard
        found = suggest_allow_rules(call.tool, call.input, cwd or Path.cwd()) if asks_always else None
        if found is None or not found.allows:
            return click.confirm(question, default=False, err=True)
        answer = click.prompt(
            f'{question} [y]es, [n]o, [a]lways in this session ("{found.text}")',
            type=click.Choice(["y", "n", "a"], case_sensitive=False),
            default="n",
            show_choices=False,
            err=True,
        )
        if answer.lower() == "a":
            return PermissionUpdate(rules=found.rules)
        return answer.lower() == "y"

    approve.how_to_approve = "pass --yes, or run pegboard call in a terminal to be asked"  # type: ignore[attr-defined]
    return approve


@click.command("call")
@click.argument("tool")
@input_option
@config_options
@selection_options
@wait_mcp_option
@mode_option
@click.option(
    "--add-dir", "add_dirs", multiple=True, type=click.Path(path_type=Path), help="Extra working directory; repeatable."
)
@click.option("--yes", "-y", is_flag=True, help="Approve the call if a rule or hook asks.")
@click.option(
    "--session",
    "session_id",
    default=None,
    metavar="ID",
    help="Run in the stored session ID (created if new): its read ledger, shell cwd, stored results.",
)
@json_option
def command(
    tool: str,
    input_text: str | None,
    config_files: tuple[Path, ...],
    cwd: Path | None,
    selection: Selection,
    wait_mcp: float | None,
    mode: str | None,
    add_dirs: tuple[Path, ...],
    yes: bool,
    session_id: str | None,
    as_json: bool,
) -> None:
    """Run TOOL with --input through policy, permission rules, hooks and the tool itself.

    Exits 0 on success and 1 when the result is an error or a refusal.
    """
    tool_input = parse_json_input(input_text)
    pb = load_pegboard(config_files, cwd, wait_mcp=wait_mcp)
    show_progress = not as_json and sys.stderr.isatty()
    try:
        result, sid = resolve_sync(
            _run(
                pb,
                tool,
                tool_input,
                session_id=session_id,
                show_progress=show_progress,
                **selection.as_kwargs(),
                cwd=cwd,
                mode=mode,
                additional_dirs=list(add_dirs),
                approver=make_approver(yes, remember=session_id is not None, cwd=cwd),
            )
        )
    except (SessionError, SessionStoreError) as exc:
        fail(str(exc), EXIT_USAGE)
    for diag in pb._permission_engine(cwd=cwd, mode=mode, additional_dirs=list(add_dirs)).diagnostics:
        click.echo(f"warning: {diag}", err=True)
    if sid is None and result.metadata.get("read_state") == "not_read":
        click.echo(f"note: {NOT_READ_WITHOUT_SESSION}", err=True)
    emit_result(result, as_json, session=sid)


async def _run(
    pb: Any,
    tool: str,
    tool_input: Any,
    *,
    session_id: str | None,
    show_progress: bool,
    approver: Any,
    cwd: Path | None,
    mode: str | None,
    additional_dirs: list[Path],
    **selection: Any,
) -> tuple[Any, str | None]:
    """One call: in the stored session ``session_id``, else in a one-call session."""
    if session_id is None and not show_progress:
        pb._memory_session().background_refusal = BACKGROUND_REFUSAL
        result = await pb.call(
            tool, tool_input, cwd=cwd, mode=mode, additional_dirs=additional_dirs, approver=approver, **selection
        )
        return result, None
    async with pb.session(
        session_id=session_id,
        cwd=cwd,
        mode=mode,
        additional_dirs=additional_dirs,
        approver=approver,
        persist=session_id is not None,
        **selection,
    ) as session:
        session.background_refusal = BACKGROUND_REFUSAL
        watcher = _watch_progress(session) if show_progress else None
        try:
            result = await session.call(tool, tool_input)
        finally:
            if watcher is not None:
                watcher.cancel()
        return result, session.id if session_id is not None else None


def _watch_progress(session: Any) -> Any:
    """Show ``progress`` events as one rewritten line on standard error (a terminal)."""
    import asyncio

    async def watch() -> None:
        shown = False
        try:
            async for event in session.events():
                if event.kind != "progress" or not isinstance(event.data, dict):
                    continue
                done, total, message = event.data.get("done"), event.data.get("total"), event.data.get("message")
                count = f"{done}/{total}" if total else f"{done}"
                text = f"[{event.tool or 'tool'}] {count} {message or ''}".rstrip()
                sys.stderr.write("\r\x1b[2K" + text[:200])
                sys.stderr.flush()
                shown = True
        finally:
            if shown:
                sys.stderr.write("\r\x1b[2K")
                sys.stderr.flush()

    return asyncio.ensure_future(watch())
