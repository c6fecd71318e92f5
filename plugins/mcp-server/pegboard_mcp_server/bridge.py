"""Between a ``Pegboard`` and the MCP wire: tool definitions out, calls in, results back.

Everything here works on plain JSON-ready dicts so that the lean stdio loop never has to
import the SDK; the HTTP transport validates the same dicts into SDK models.
"""

from __future__ import annotations

import json
import logging
import time
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pegboard import (
    ImageBlock,
    Pegboard,
    PermissionDecision,
    PermissionUpdate,
    Session,
    TextBlock,
    ToolCall,
    ToolResult,
    deferred_tools_note,
    suggest_allow_rules,
)
from pegboard_mcp_server.host import CURRENT_LINK, ClientHost, ClientLink, release
from pegboard_mcp_server.paging import DEFAULT_PAGE_SIZE, page
from pegboard_mcp_server.relay import LOG_LEVELS, EventRelay, LogSender, Progress, log_fields
from pegboard_mcp_server.sampling import CURRENT_SAMPLER

__all__ = ["LOG_LEVELS", "Bridge", "EventRelay", "Selection", "error_result", "log_fields", "result_to_mcp"]

log = logging.getLogger("pegboard.mcp.serve")

# ``elicit(message, requested_schema) -> {"action": ..., "content": {...}}`` or None when the
# client cannot be asked.
Elicit = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any] | None]]

#: the answers of an approval form: run this call, run it and remember its rules, refuse it
APPROVE_ONCE, APPROVE_SESSION, APPROVE_DENY = "once", "session", "deny"


def approval_schema(session_rules: str | None) -> dict[str, Any]:
    """The approval form: one choice, with "always in this session" when narrow rules
    (``session_rules``, as quoted) would allow the call, as the CLI offers it."""
    values = [APPROVE_ONCE, APPROVE_DENY]
    titles = ["Allow once", "Deny"]
    if session_rules:
        values.insert(1, APPROVE_SESSION)
        titles.insert(1, f'Allow always in this session (adds "{session_rules}")')
    return {
        "type": "object",
        "properties": {
            "decision": {
                "type": "string",
                "title": "Allow this call?",
                "enum": values,
                "enumNames": titles,
                "default": APPROVE_ONCE,
            }
        },
        "required": ["decision"],
    }


MAX_PREVIEW_CHARS = 600
#: A client session unused this long is closed (the SDK ends idle HTTP sessions after 30 min).
DEFAULT_IDLE_TIMEOUT = 1800.0


@dataclass
class Selection:
    """Whose tool set is served: the same choices ``pegboard tools`` takes."""

    agent: str | None = None
    provider: str | None = None
    model: str | None = None
    profile: str | None = None
    mode: str | None = None
    cwd: Path | None = None

    def policy(self) -> dict[str, Any]:
        return {"agent": self.agent, "provider": self.provider, "model": self.model, "profile": self.profile}


def approval_message(call: ToolCall, decision: PermissionDecision) -> str:
    """What the user is asked: the tool, its input (shortened) and the rule that asked."""
    try:
        shown = json.dumps(call.input, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        shown = repr(call.input)
    if len(shown) > MAX_PREVIEW_CHARS:
        shown = shown[:MAX_PREVIEW_CHARS] + f"... ({len(shown):,} characters)"
    why = f" Rule {decision.rule!r}" + (f" in {decision.source}" if decision.source else "") if decision.rule else ""
    reason = f" ({decision.reason})" if decision.reason else ""
    return f"Allow {call.name} to run with {shown}?{why}{reason}".strip()


def elicitation_approver(
    elicit: Elicit, cwd: Path | None = None
) -> Callable[[ToolCall, PermissionDecision], Awaitable[bool | PermissionUpdate | None]]:
    """An approver for ``Pegboard.call`` that asks the MCP client's user through elicitation:
    once, always in this session (the narrowest allow rules, remembered by the session), or
    deny. A hard ask (no rule can allow it) is only offered once or deny."""

    async def approve(call: ToolCall, decision: PermissionDecision) -> bool | PermissionUpdate | None:
        found = None if decision.hard else suggest_allow_rules(call.tool, call.input, cwd or Path.cwd())
        remembered = found.rules if found is not None and found.allows and found.rules else ()
        schema = approval_schema('", "'.join(remembered) if remembered else None)
        answer = await elicit(approval_message(call, decision), schema)
        if answer is None:
            return None
        return approval_answer(answer, remembered)

    approve.how_to_approve = (  # type: ignore[attr-defined]
        "use an MCP client that supports elicitation so its user can be asked, or restart pegboard serve "
        "with another --mode (acceptEdits, bypassPermissions)"
    )
    return approve


def approval_answer(answer: dict[str, Any], rules: Sequence[str]) -> bool | PermissionUpdate:
    """What a filled-in approval form means: only accept approves; a choice the form did not
    offer refuses. A client that answers the older one-boolean form (``approve``) is understood."""
    if answer.get("action") != "accept":
        return False
    content = answer.get("content")
    content = content if isinstance(content, dict) else {}
    choice = content.get("decision")
    if choice is None:
        return content.get("approve", True) is not False
    if choice == APPROVE_ONCE:
        return True
    if choice == APPROVE_SESSION and rules:
        return PermissionUpdate(rules=list(rules))
    return False


def result_to_mcp(result: ToolResult) -> dict[str, Any]:
    """A ``ToolResult`` as an MCP ``CallToolResult``: text and image content, structured content, isError."""
    content: list[dict[str, Any]] = []
    for block in result.content:
        if isinstance(block, TextBlock):
            content.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock):
            content.append({"type": "image", "data": block.data, "mimeType": block.mime_type})
    out: dict[str, Any] = {"content": content, "isError": bool(result.is_error)}
    if result.structured is not None and not result.is_error:
        out["structuredContent"] = result.structured
    meta: dict[str, Any] = {}
    if result.reason or result.is_error:  # every error says why
        meta["reason"] = result.reason or "tool_error"
    for key in ("additional_context", "system_messages", "hook_notices", "reference", "how_to_approve",
                "suggested_rules"):
        if key in result.metadata:
            meta[key] = result.metadata[key]
    if meta:
        out["_meta"] = {"pegboard": _jsonable(meta)}
    return out


def _jsonable(value: Any) -> Any:
    try:
        return json.loads(json.dumps(value, default=str))
    except (TypeError, ValueError):
        return str(value)


def error_result(message: str, reason: str = "tool_error") -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "isError": True, "_meta": {"pegboard": {"reason": reason}}}


def shared_session_id(key: str) -> str:
    """The stored session id of a named session: the same in every process, the name unreadable."""
    import hashlib

    return "mcp-" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:40]


@dataclass
class Bridge:
    """One served tool set: lists definitions and runs calls, each client in its own session.

    A client is whatever identifies one MCP session (the stdio connection, the SDK's session
    object over HTTP); each gets its own Pegboard ``Session``, so tools a search loads, cut
    results and remembered approvals never cross from one client to another. ``client=None``
    (a stateless HTTP request) gets a session for that one call.
    """

    pegboard: Pegboard
    selection: Selection = field(default_factory=Selection)
    page_size: int = DEFAULT_PAGE_SIZE
    session_id: str | None = None
    persist: bool = False
    #: sessions a stateless request names are kept in the store under an id derived from the
    #: name and read again on every request, so every worker and replica sharing the store
    #: serves the same session (``pegboard serve --workers N``, replicas on one database)
    shared: bool = False
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT
    clock: Callable[[], float] = time.monotonic
    #: the serve host plugin: remembers each session's client for host services outside requests
    host: ClientHost | None = None
    #: the plugin that relays a call's progress and log events (registered with ``pegboard``);
    #: without it each session gets an ``events()`` reader that does the same, at more cost
    relay: EventRelay | None = None
    _sessions: dict[Any, list[Any]] = field(default_factory=dict, repr=False)
    _closing: set[Any] = field(default_factory=set, repr=False)
    _idle_checked: float = field(default=float("-inf"), repr=False)
    _approvers: dict[int, tuple[Elicit, Any]] = field(default_factory=dict, repr=False)
    #: polls the config files and tells the clients of a change (``None``: not watching)
    config_reload: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.config_reload is None:
            from pegboard_mcp_server.configreload import ConfigReload

            self.config_reload = ConfigReload.for_pegboard(self.pegboard)

    def session_for(self, client: Any = None) -> Session:
        """The session of ``client``, opened on first use (resuming ``session_id`` for stdio).

        ``client`` is any hashable key of one MCP session (the stdio server object, an HTTP
        ``Mcp-Session-Id``). Sessions idle for longer than ``idle_timeout`` are closed.
        """
        now = self.clock()
        self._close_idle(now)
        if self.config_reload is not None:
            self.config_reload.start()
        key = client if client is None or isinstance(client, str) else id(client)
        shared = self.shared and isinstance(key, str) and key.startswith("named:")
        if key is not None and key in self._sessions:
            entry = self._sessions[key]
            entry[0] = now
            if shared:
                entry[1].refresh()
            return entry[1]
        sel = self.selection
        if shared:
            assert isinstance(key, str)
            session = self.pegboard.session(
                agent=sel.agent, provider=sel.provider, model=sel.model, profile=sel.profile, cwd=sel.cwd,
                mode=sel.mode, session_id=shared_session_id(key), owner=key, persist=True,
            )
            self._sessions[key] = [now, session]
            return session
        session = self.pegboard.session(
            agent=sel.agent,
            provider=sel.provider,
            model=sel.model,
            profile=sel.profile,
            cwd=sel.cwd,
            mode=sel.mode,
            session_id=self.session_id if client is not None else None,
            owner=None if self.session_id else f"mcp:{id(self):x}:{key}",
            persist=self.persist and client is not None,
        )
        if key is not None:
            self._sessions[key] = [now, session]
        return session

    def _close_idle(self, now: float) -> None:
        """Close sessions idle past ``idle_timeout``; looked for at most ten times per timeout,
        so a request does not walk every open session."""
        if now - self._idle_checked < self.idle_timeout / 10:
            return
        self._idle_checked = now
        for key, (last, session) in list(self._sessions.items()):
            if now - last > self.idle_timeout:
                del self._sessions[key]
                if self.config_reload is not None:
                    self.config_reload.forget(key)
                if self.host is not None:
                    self.host.forget(session.id)
                session.close_sync()
                release(session)

    async def forget(self, client: Any) -> None:
        """The client went away: close its session."""
        key = client if isinstance(client, str) else id(client)
        entry = self._sessions.pop(key, None)
        if self.config_reload is not None:
            self.config_reload.forget(key)
        if entry is not None:
            if self.host is not None:
                self.host.forget(entry[1].id)
            await entry[1].close()
            release(entry[1])

    def _end_soon(self, session: Session) -> None:
        """Close a one-request session from synchronous code: on the running loop when there
        is one (no thread per request), else right away."""
        import asyncio

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            session.close_sync()
            release(session)
            return
        task = loop.create_task(session.close())
        self._closing.add(task)

        def done(finished: Any) -> None:
            self._closing.discard(finished)
            release(session)

        task.add_done_callback(done)

    def open_sessions(self) -> int:
        """How many client sessions are open."""
        return len(self._sessions)

    async def aclose(self) -> None:
        if self.config_reload is not None:
            self.config_reload.stop()
        for _last, session in list(self._sessions.values()):
            await session.close()
            release(session)
        self._sessions.clear()
        await self.pegboard.aclose()

    def list_page(self, cursor: str | None, client: Any = None, link: ClientLink | None = None) -> dict[str, Any]:
        """One page of ``tools/list``; raises ``CursorError`` for a cursor that is not (or no longer) valid."""
        return page(self.list_tools(client, link), cursor, self.page_size)

    def list_tools(self, client: Any = None, link: ClientLink | None = None) -> list[dict[str, Any]]:
        """Tool definitions in MCP form, for the client session's visible tools.

        ``link`` is what the client can do for host services: tools whose service it cannot
        back (AskUserQuestion without elicitation, Agent without sampling) are left out.
        Deferred tools stay out of the list until a search in this session loads them; their
        names are appended to the description of the tool that loads them.
        """
        token = CURRENT_LINK.set(link)
        try:
            return self._list_tools(client, link)
        finally:
            CURRENT_LINK.reset(token)

    def _list_tools(self, client: Any, link: ClientLink | None) -> list[dict[str, Any]]:
        session = self.session_for(client)
        try:
            return self._definitions(session, client, link)
        finally:
            if client is None:  # a stateless request's session ends with it
                self._end_soon(session)

    def _definitions(self, session: Session, client: Any, link: ClientLink | None) -> list[dict[str, Any]]:
        if self.host is not None and client is not None:
            self.host.remember(session.id, link)
        self._listen(client, link)
        definitions: list[dict[str, Any]] = session.schema("mcp")
        enabled = session.enabled_tools()
        pending = session.pending_deferred()
        loaders = {t.name for t in enabled if t.loads_deferred}
        if not pending or not loaders:
            return definitions
        note = deferred_tools_note(pending)
        return [
            {**d, "description": f"{d['description']}\n\n{note}"} if d["name"] in loaders else d for d in definitions
        ]

    def signature(self, client: Any = None) -> Any:
        """Changes when the client's tool list would change (tools registered, tools loaded)."""
        session = self.session_for(client)
        return (self.pegboard.tool_set_version, tuple(sorted(session.loaded_deferred())))

    async def call_tool(
        self,
        name: Any,
        arguments: Any,
        elicit: Elicit | None = None,
        *,
        client: Any = None,
        progress: Progress | None = None,
        log_message: LogSender | None = None,
        sample: Any = None,
        request_id: Any = None,
        link: ClientLink | None = None,
    ) -> dict[str, Any]:
        """Run one call through the whole pipeline; always returns a ``CallToolResult`` dict."""
        if not isinstance(name, str) or not name:
            return error_result("tools/call needs a tool name (params.name)", "invalid_input")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            return error_result(
                f"Arguments for {name} must be a JSON object, got {type(arguments).__name__}", "invalid_input"
            )
        approver = self._approver(elicit) if elicit is not None else None
        sampler_token = CURRENT_SAMPLER.set(sample)
        link_token = CURRENT_LINK.set(link)
        try:
            session = self.session_for(client)
            if self.host is not None and client is not None:
                self.host.remember(session.id, link)
            self._listen(client, link)
            session.approver = approver
            tool_use_id = f"mcp-{request_id}" if request_id is not None else None
            if progress is None and log_message is None:
                result = await session.call(name, arguments, tool_use_id=tool_use_id)
            elif self.relay is not None:
                result = await self.relay.call(
                    session, name, arguments, tool_use_id or f"mcp-{id(arguments):x}", progress, log_message
                )
            else:
                result = await _with_progress(
                    session, name, arguments, tool_use_id or f"mcp-{id(arguments):x}", progress, log_message
                )
        except Exception as exc:  # Session.call does not raise; this is a last line of defence
            log.exception("call of %s failed", name)
            return error_result(f"Pegboard failed on this call: {type(exc).__name__}: {exc}")
        finally:
            CURRENT_SAMPLER.reset(sampler_token)
            CURRENT_LINK.reset(link_token)
            if link is not None and link.standalone is not None:
                link.active = False
            if client is None and "session" in locals():
                await session.close()
                release(session)
        if result.reason == "not_approved" and isinstance(how := result.metadata.get("how_to_approve"), str):
            log.info("%s was not approved; to approve such calls, %s", name, how)
        return result_to_mcp(result)

    def _listen(self, client: Any, link: ClientLink | None) -> None:
        """A client session that listed or called tools hears when a config change is in force."""
        if self.config_reload is not None and client is not None and link is not None:
            key = client if isinstance(client, str) else id(client)
            self.config_reload.listen(key, link.lasting.tools_changed)

    def _approver(self, elicit: Elicit) -> Any:
        """The approver asking through ``elicit``, made once per elicitation function."""
        known = self._approvers.get(id(elicit))
        if known is not None and known[0] is elicit:
            return known[1]
        approver = elicitation_approver(elicit, self.selection.cwd or self.pegboard.cwd)
        if len(self._approvers) >= 256:
            self._approvers.clear()
        self._approvers[id(elicit)] = (elicit, approver)
        return approver

    def list_prompts(self, client: Any = None) -> dict[str, Any]:
        """``prompts/list``: the skills this client's ``Skill`` tool can load."""
        from pegboard_mcp_server.prompts import skill_prompts

        session = self.session_for(client)
        try:
            return {"prompts": skill_prompts(session)}
        finally:
            if client is None:
                self._end_soon(session)

    async def get_prompt(
        self, name: Any, arguments: Any, *, client: Any = None, link: ClientLink | None = None
    ) -> dict[str, Any]:
        """``prompts/get``: load the skill through the client's session (``Skill``'s whole
        pipeline: rules, trust, its ``allowed-tools``); raises ``PromptError``."""
        from pegboard_mcp_server.prompts import load_skill_prompt

        token = CURRENT_LINK.set(link)
        session = self.session_for(client)
        try:
            return await load_skill_prompt(session, name, arguments)
        finally:
            CURRENT_LINK.reset(token)
            if client is None:
                await session.close()
                release(session)

    def refresh(self) -> None:
        """Let dynamic tool sources (MCP servers) bring the registry up to date."""
        self.pegboard.tools()

    def tool_names(self, client: Any = None) -> Sequence[str]:
        return [t["name"] for t in self.list_tools(client)]


async def _with_progress(
    session: Session,
    name: str,
    arguments: Any,
    tool_use_id: str,
    progress: Progress | None,
    log_message: LogSender | None = None,
) -> Any:
    """Run the call while forwarding its ``progress`` and ``log`` events, every one of them
    sent before the result (the call's own ``call_finished`` event ends the forwarding)."""
    forwarder = _FORWARDERS.get(session)
    if forwarder is None:
        forwarder = _FORWARDERS[session] = _Forwarder(session)
    return await forwarder.call(name, arguments, tool_use_id, progress, log_message)


class _Forwarder:
    """One ``events()`` reader per session that hands each call's events to that call's
    senders: a call pays a dict entry, not a reader, a task and a queue of its own."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.calls: dict[str, tuple[Progress | None, LogSender | None, Any]] = {}
        self.task: Any = None
        self.subscribed: Any = None
        session.on_close(self.stop)

    async def call(
        self, name: str, arguments: Any, tool_use_id: str, progress: Progress | None, log_message: LogSender | None
    ) -> Any:
        import asyncio

        loop = asyncio.get_running_loop()
        if self.task is None or self.task.done() or self.task.get_loop() is not loop:
            self.subscribed = loop.create_future()
            self.task = loop.create_task(self._forward(self.session.events(), self.subscribed))
        if not self.subscribed.done():
            await self.subscribed  # the reader listens before this call emits anything
        if tool_use_id in self.calls:  # the same id twice at once: its events would be ambiguous
            return await self.session.call(name, arguments, tool_use_id=tool_use_id)
        finished = loop.create_future()
        self.calls[tool_use_id] = (progress, log_message, finished)
        try:
            return await self.session.call(name, arguments, tool_use_id=tool_use_id)
        finally:
            try:
                if not finished.done():
                    await asyncio.wait_for(finished, 5.0)
            except (TimeoutError, asyncio.CancelledError, Exception):
                pass
            self.calls.pop(tool_use_id, None)

    async def _forward(self, events: Any, subscribed: Any) -> None:
        # Set in the same step that starts ``events``, whose reader subscribes before it first
        # waits: a call that sees the future done, or wakes from it, is already heard.
        subscribed.set_result(None)
        try:
            async for event in events:
                entry = self.calls.get(event.tool_use_id) if event.tool_use_id is not None else None
                if entry is None:
                    continue
                progress, log_message, finished = entry
                if event.kind == "call_finished":
                    del self.calls[event.tool_use_id]
                    if not finished.done():
                        finished.set_result(None)
                    continue
                try:
                    if event.kind == "progress" and progress is not None and isinstance(event.data, dict):
                        done = float(event.data.get("done") or 0)
                        await progress(done, event.data.get("total"), event.data.get("message"))
                    elif event.kind == "log" and log_message is not None:
                        await log_message(*log_fields(event.data))
                except Exception as exc:
                    log.debug("notification failed: %s", exc)
        finally:
            for _progress, _log, finished in self.calls.values():
                if not finished.done():
                    finished.set_result(None)
            await events.aclose()

    def stop(self) -> None:
        _FORWARDERS.pop(self.session, None)
        if self.subscribed is not None and not self.subscribed.done():
            self.subscribed.set_result(None)
        if self.task is not None and not self.task.done():
            self.task.cancel()


_FORWARDERS: weakref.WeakKeyDictionary[Session, _Forwarder] = weakref.WeakKeyDictionary()
