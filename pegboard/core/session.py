"""``Session``: one conversation's tool calls, bound to one selection and one working directory.

The calls of a conversation share state a tool needs between calls (the read ledger, the
shell's cwd, background tasks, loaded deferred tools, stored results). A session keeps it
in a ``SessionStore`` (SQLite by default) under an opaque id, so another process resumes it
with ``pb.session(session_id=...)``. ``Pegboard.call`` is a one-call session kept in memory.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections import deque
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from pegboard.core.state import MapKey, SessionKey, SessionState
from pegboard.core.store import DEFAULT_RESULT_QUOTA, SessionRecord, SessionStore, SessionStoreError, StoredResult

if TYPE_CHECKING:
    import asyncio

    from pegboard.core.app import Pegboard
    from pegboard.core.decisions import PermissionDecision
    from pegboard.core.pipeline import Approver
    from pegboard.core.policy import PolicyResult
    from pegboard.core.prepared import PreparedCall
    from pegboard.core.results import ToolResult
    from pegboard.core.tools import Tool

SESSION_ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
DEFAULT_EVENT_QUEUE = 1000
#: seconds between two writes of a session's ``updated`` while it is in use
TOUCH_INTERVAL = 1.0

LOADED_DEFERRED: SessionKey[list[str]] = SessionKey("pegboard-deferred-loaded", list, persist=True, default=list)
SESSION_RULES: SessionKey[dict[str, list[str]]] = SessionKey("pegboard-session-rules", dict, persist=True, default=dict)
TRANSCRIPT: MapKey[dict[str, Any]] = MapKey("pegboard-transcript", dict, persist=True)
#: ``SessionRecord.meta`` key: the working directory the caller opened the session in. A
#: resume that names it again keeps where a tool moved the session (EnterWorktree).
OPENED_CWD = "opened_cwd"


class SessionError(ValueError):
    """A session that cannot be opened as asked (bad id, another owner's session)."""


def new_session_id() -> str:
    """An opaque, URL-safe, unguessable id."""
    import secrets

    return "s_" + secrets.token_urlsafe(18).replace("-", "x").replace("_", "y")


def validate_session_id(session_id: str) -> str:
    if not isinstance(session_id, str) or not SESSION_ID_PATTERN.match(session_id):
        raise SessionError(
            f"invalid session id {session_id!r}: use 1-128 characters from A-Z, a-z, 0-9, '_' and '-'"
        )
    return session_id


@dataclass(frozen=True)
class Selection:
    """Who is calling: the choices that decide an agent's tool set."""

    agent: str | None = None
    provider: str | None = None
    model: str | None = None
    profile: str | None = None
    subagent: str | None = None

    def as_kwargs(self) -> dict[str, str | None]:
        return {
            "agent": self.agent,
            "provider": self.provider,
            "model": self.model,
            "profile": self.profile,
            "subagent": self.subagent,
        }


class CallOptions(TypedDict, total=False):
    """The keyword options ``Pegboard.call`` and ``Pegboard.session`` share: whose tool set
    (the :class:`Selection` fields), where and in which permission mode the calls run, which
    session they belong to and who approves what a rule asks about."""

    agent: str | None
    provider: str | None
    model: str | None
    profile: str | None
    subagent: str | None
    cwd: Path | str | None
    mode: str | None
    additional_dirs: Sequence[Path | str]
    session_id: str | None
    approver: Approver | None


CALL_OPTIONS: frozenset[str] = frozenset(CallOptions.__optional_keys__)


def check_call_options(method: str, options: Mapping[str, object]) -> None:
    """Refuse a keyword the shared option set does not have, as a fixed signature would."""
    if options.keys() <= CALL_OPTIONS:  # the per-call path: no set is built
        return
    unknown = sorted(options.keys() - CALL_OPTIONS)
    raise TypeError(f"{method}() got an unexpected keyword argument {unknown[0]!r}")


_NO_SELECTION = Selection()


def selection_of(options: Mapping[str, Any]) -> Selection:
    """The :class:`Selection` part of :class:`CallOptions` (one shared empty one when none is given)."""
    if not options:
        return _NO_SELECTION
    get = options.get
    agent, provider, model, profile, subagent = get("agent"), get("provider"), get("model"), get("profile"), \
        get("subagent")
    if agent is None and provider is None and model is None and profile is None and subagent is None:
        return _NO_SELECTION
    return Selection(agent, provider, model, profile, subagent)


@dataclass(frozen=True)
class SessionEvent:
    """Something that happened in a session: ``call_started``, ``call_finished``,
    ``progress`` (``{"done", "total", "message"}``), ``log``, or a tool's own kind."""

    kind: str
    data: Any = None
    tool_use_id: str | None = None
    tool: str | None = None
    time: float = field(default_factory=time.time)


class _Consumer:
    """One ``events()`` reader: a bounded queue that drops its oldest events when full."""

    def __init__(self, loop: asyncio.AbstractEventLoop, size: int) -> None:
        import asyncio

        self.loop = loop
        self.queue: deque[SessionEvent | None] = deque(maxlen=size)
        self.ready = asyncio.Event()
        self.dropped = 0
        self.lock = threading.Lock()

    def push(self, event: SessionEvent | None) -> None:
        import asyncio

        with self.lock:
            if self.queue.maxlen is not None and len(self.queue) == self.queue.maxlen:
                self.dropped += 1
            self.queue.append(event)
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            self.ready.set()
        elif not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self.ready.set)


@dataclass(frozen=True)
class PermissionUpdate:
    """An approver's "allow, and remember": ``rules`` added to ``behavior`` for this session only.

    Return ``PermissionUpdate(rules=["WebFetch(domain:docs.python.org)"])`` (or ``True`` /
    ``False``) from an approver or ``request_approval`` hook.
    """

    rules: Sequence[str]
    behavior: str = "allow"
    approve: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "rules", tuple(self.rules))
        if self.behavior not in ("allow", "ask", "deny"):
            raise ValueError(f"PermissionUpdate.behavior must be allow, ask or deny, not {self.behavior!r}")


class SessionResults:
    """The session's kept results, under ``tr_…`` references (see ``tool_result_read``)."""

    def __init__(self, session: Session) -> None:
        self._session = session

    def new_ref(self) -> str:
        import secrets

        return "tr_" + secrets.token_hex(10)

    def put(
        self,
        tool: str,
        text: str,
        *,
        storage_kind: str = "inspectable",
        content_type: str = "text/plain",
        raw: str | None = None,
        complete: bool = True,
        meta: Mapping[str, Any] | None = None,
        ref: str | None = None,
    ) -> str:
        """Keep ``text`` (and ``raw``), with credentials redacted, and return its reference."""
        from pegboard.core.projection import redact

        s = self._session
        secrets = list(s.pegboard.secrets)
        record = StoredResult(
            ref=ref or self.new_ref(),
            tool=tool,
            text=redact(text, secrets),
            storage_kind=storage_kind,
            content_type=content_type,
            raw=None if raw is None else redact(raw, secrets),
            complete=complete,
            run=s.current_run,
            meta=dict(meta or {}),
        )
        s.store.put_result(s.id, record, max(0, s.result_quota - s.directory_usage()))
        return record.ref

    def get(self, ref: str) -> StoredResult | None:
        return self._session.store.get_result(self._session.id, ref)

    def owner_of(self, ref: str) -> str | None:
        """The id of the session that holds ``ref``, whichever it is."""
        found = self._session.store.find_result(ref)
        return found[0] if found else None

    def all(self) -> list[StoredResult]:
        return self._session.store.results(self._session.id)


class Session:
    """One conversation's tool calls; build it with ``Pegboard.session(...)``.

    Use it as an async (or sync) context manager, or call :meth:`close` yourself. It never
    raises for what a model sends: :meth:`call` returns refusals as results.
    """

    def __init__(
        self,
        pegboard: Pegboard,
        record: SessionRecord,
        store: SessionStore,
        *,
        persisted: bool,
        approver: Approver | None = None,
        resumed: bool = False,
        result_quota: int = DEFAULT_RESULT_QUOTA,
    ) -> None:
        self.pegboard = pegboard
        self.store = store
        self.persisted = persisted
        self.approver = approver
        self.resumed = resumed
        self.result_quota = result_quota
        self._record = record
        self._cwd_path: tuple[str, Path] | None = None
        self.notices: list[str] = []
        self.state = SessionState(store, record.id, report=self._notice)
        self.results = SessionResults(self)
        self.current_run: str | None = None
        self._consumers: list[_Consumer] = []
        self._closers: list[Callable[[], Any]] = []
        self._directory: Path | None = None
        self._closed = False
        self._rules: dict[str, tuple[str, ...]] | None = None
        #: the policy and context the last call worked out, reused while its inputs hold
        self._prepared_call: PreparedCall | None = None
        #: why work that would outlive a call cannot run here (the host ends with the call,
        #: as ``pegboard call`` does), or ``None``: background tools refuse with this text
        self.background_refusal: str | None = None
        self._clock: Callable[[], float] = getattr(store, "clock", time.time)
        self._touched = record.updated
        self._used = record.updated
        self.selection = Selection(
            agent=record.agent,
            provider=record.provider,
            model=record.model,
            profile=record.profile,
            subagent=record.subagent,
        )

    # -- identity --------------------------------------------------------------------------
    @property
    def id(self) -> str:
        return self._record.id

    @property
    def owner(self) -> str | None:
        return self._record.owner

    @property
    def record(self) -> SessionRecord:
        return self._record

    @property
    def cwd(self) -> Path:
        """The session's working directory, one value for every call: ``ToolContext.cwd``,
        relative paths, searches without a path and the permission engine's working
        directory follow it. Setting it moves the session (EnterWorktree does); a persisted
        session keeps it."""
        cwd = self._record.cwd
        if not cwd:
            return self.pegboard.cwd
        if self._cwd_path is None or self._cwd_path[0] != cwd:
            self._cwd_path = (cwd, Path(cwd))
        return self._cwd_path[1]

    @cwd.setter
    def cwd(self, value: Path | str) -> None:
        self._save(cwd=str(Path(value)))

    @property
    def mode(self) -> str:
        return self._record.mode or self.pegboard.config.permissions.default_mode or "default"

    @mode.setter
    def mode(self, value: str) -> None:
        from pegboard.core.config import PERMISSION_MODES

        if value not in PERMISSION_MODES:
            raise ValueError(f"unknown permission mode {value!r}; use one of {', '.join(PERMISSION_MODES)}")
        self._save(mode=value)

    @property
    def additional_dirs(self) -> tuple[Path, ...]:
        dirs = self._record.additional_dirs
        return tuple(Path(d) for d in dirs) if dirs else ()

    def _save(self, **changes: Any) -> None:
        self._record = replace(self._record, **changes)
        self.store.save(self._record)
        self._touched = self._used = self._clock()

    def refresh(self) -> None:
        """Read again what this object keeps from the store (the record: cwd, mode, selection;
        the remembered approval rules), for a session that other processes also serve
        (``pegboard serve`` workers and replicas sharing one store)."""
        stored = self.store.load(self.id)
        if stored is not None:
            self._record = stored
        self._rules = None

    def touch(self) -> None:
        """Mark the session used now (calls and events do), so listing and pruning see it as
        recent: ``updated`` is written at most once per ``TOUCH_INTERVAL`` seconds while the
        session is in use, and once more when it closes."""
        now = self._clock()
        self._used = now
        if now - self._touched >= TOUCH_INTERVAL:
            self._write_touch(now)

    def _write_touch(self, when: float) -> None:
        self._touched = when
        touch = getattr(self.store, "touch", None)
        try:
            if touch is not None:
                touch(self.id, when)
            else:
                self.store.save(self._record)
        except SessionStoreError as exc:
            self._notice(f"could not mark the session used: {exc}")
            return
        self._record = replace(self._record, updated=when)

    def select(self, **changes: str | None) -> None:
        """Change the selection (``model=...`` after a model switch) for the next requests."""
        self._save(**changes)
        self.selection = replace(self.selection, **changes)

    def _notice(self, message: str) -> None:
        if message not in self.notices:
            self.notices.append(message)

    def directory_usage(self) -> int:
        """Bytes the files in :attr:`directory` take; they count against the result quota."""
        if self._directory is None and not self.persisted:
            return 0
        import os

        root = self._directory
        if root is None and getattr(self.store, "durable", True) is False:
            return 0
        if root is None:
            from pegboard.core.store import default_data_dir

            root = default_data_dir(self.pegboard.data_env()) / "sessions" / self.id
        total = 0
        for dirpath, _dirs, files in os.walk(root):
            for name in files:
                with contextlib.suppress(OSError):
                    total += os.lstat(os.path.join(dirpath, name)).st_size
        return total

    @property
    def directory(self) -> Path:
        """A directory of this session's own, for files a tool hands to the model or the user
        (spilled output, task output); removed with the session."""
        if self._directory is None:
            if self.persisted and getattr(self.store, "durable", True) is not False:
                from pegboard.core.store import default_data_dir

                base = default_data_dir(self.pegboard.data_env()) / "sessions"
            else:
                import tempfile

                base = Path(tempfile.gettempdir()) / "pegboard-sessions"
            path = base / self.id
            path.mkdir(parents=True, exist_ok=True, mode=0o700)
            self._directory = path
        return self._directory

    # -- tool set --------------------------------------------------------------------------
    def policy(self) -> PolicyResult:
        return self.pegboard.tools(**self.selection.as_kwargs())

    def tools(self) -> PolicyResult:
        """Which tools this session's agent sees (``Pegboard.tools`` for its selection)."""
        return self.policy()

    def enabled_tools(self) -> list[Tool]:
        return self.pegboard.enabled_tools(**self.selection.as_kwargs())

    def loaded_deferred(self) -> set[str]:
        loaded: list[str] = self.state[LOADED_DEFERRED]
        return set(loaded)

    def load_deferred(self, names: Sequence[str]) -> list[str]:
        """Make the deferred tools ``names`` part of this session's tool set from the next request.

        A name may be an alias or differ in case; it is stored as the tool's own name, and the
        names stored are returned. A name no registered tool has raises ``SessionError`` naming
        the deferred tools there are, and loads nothing.
        """
        found = {n: self.pegboard.tool(n) for n in names if n}
        unknown = [n for n, tool in found.items() if tool is None]
        if unknown:
            deferred = sorted((t.name for t in self.enabled_tools() if t.deferred), key=str.casefold)
            offered = ", ".join(deferred) if deferred else "none in this session's tool set"
            raise SessionError(
                f"cannot load {', '.join(map(repr, unknown))}: no tool of that name is registered"
                f" (deferred tools: {offered})"
            )
        added = sorted({tool.name for tool in found.values() if tool is not None})

        def merge(current: list[str] | None) -> list[str]:
            return sorted(set(current or ()) | set(added))

        before = self.loaded_deferred()
        if not set(added) <= before:
            self.state.update(LOADED_DEFERRED, merge)
            self.pegboard.deferred.bump()
        return added

    def visible_tools(self) -> list[Tool]:
        """The enabled tools whose definitions go into the next request (deferred ones once loaded)."""
        return self.pegboard.deferred.visible(self.enabled_tools(), loaded=self.loaded_deferred())

    def pending_deferred(self) -> list[str]:
        return self.pegboard.deferred.pending(self.enabled_tools(), loaded=self.loaded_deferred())

    def schema(self, format: str = "anthropic") -> list[dict[str, Any]]:
        from pegboard.core.render import render_tools

        return render_tools(
            self.visible_tools(),
            format,
            self.pegboard.registry.provider_policies,
            provider=self.selection.provider,
            model=self.selection.model,
        )

    def prompt(self) -> str:
        from pegboard.core.prompt import render_prompt

        return render_prompt(self.pegboard, session=self, **self.selection.as_kwargs())

    # -- permissions -----------------------------------------------------------------------
    def session_rules(self) -> dict[str, tuple[str, ...]]:
        """Rules remembered for this session by approvers ("allow, and remember"); read from
        the store when the session opens and kept up to date by :meth:`remember`."""
        if self._rules is None:
            self._rules = {k: tuple(v) for k, v in self.state[SESSION_RULES].items() if v}
        return self._rules

    def remember(self, update: PermissionUpdate) -> None:
        def merge(current: dict[str, list[str]] | None) -> dict[str, list[str]]:
            current = dict(current or {})
            rules = list(current.get(update.behavior, []))
            rules += [r for r in update.rules if r not in rules]
            current[update.behavior] = rules
            return current

        stored = self.state.update(SESSION_RULES, merge) or {}
        self._rules = {k: tuple(v) for k, v in stored.items() if v}

    def check(self, tool: str, tool_input: Mapping[str, Any]) -> PermissionDecision:
        """May this call run in this session? (rules, mode, session rules, hooks)."""
        return self.pegboard.check(
            tool,
            tool_input,
            cwd=self.cwd,
            mode=self.mode,
            additional_dirs=self.additional_dirs,
            session_rules=self.session_rules(),
        )

    # -- calls -----------------------------------------------------------------------------
    async def call(self, name: str, tool_input: Any = None, *, tool_use_id: str | None = None) -> ToolResult:
        """Run one call through the whole pipeline. Never raises for anything a caller sends."""
        if self._closed:
            from pegboard.core.results import ToolResult

            return ToolResult.refusal("tool_error", f"session {self.id} is closed; open it again to make calls")
        self.touch()
        try:
            return await self.pegboard._call_in_session(self, name, tool_input, tool_use_id=tool_use_id)
        finally:
            self.touch()

    def call_sync(self, name: str, tool_input: Any = None, *, tool_use_id: str | None = None) -> ToolResult:
        from pegboard.core.awaitables import resolve_sync

        result: ToolResult = resolve_sync(self.call(name, tool_input, tool_use_id=tool_use_id))
        return result

    def record_message(self, role: str, content: Any) -> None:
        """Keep one message of the conversation, for tools that read transcripts."""
        import secrets

        key = f"{time.time_ns():020d}-{secrets.token_hex(3)}"
        self.state.map(TRANSCRIPT)[key] = {"role": role, "content": content, "time": time.time()}

    def messages(self) -> list[dict[str, Any]]:
        return [v for _k, v in sorted(self.state.map(TRANSCRIPT).items())]

    # -- events ----------------------------------------------------------------------------
    def emit(self, kind: str, data: Any = None, *, tool_use_id: str | None = None, tool: str | None = None) -> None:
        """Report an event to every ``events()`` reader and ``on_event`` hook; never blocks."""
        if not self._closed:
            self.touch()
        if not self.has_listeners(kind):
            return
        event = SessionEvent(kind, data, tool_use_id, tool)
        for consumer in list(self._consumers):
            consumer.push(event)
        self.pegboard._on_event(event, self)

    async def events(self, *, queue_size: int = DEFAULT_EVENT_QUEUE) -> AsyncGenerator[SessionEvent, None]:
        """Every event from now on, in order, until the session closes. A reader that falls
        behind loses its oldest events (``dropped`` counts them), never slowing a tool."""
        import asyncio

        consumer = _Consumer(asyncio.get_running_loop(), queue_size)
        self._consumers.append(consumer)
        try:
            while True:
                while True:
                    with consumer.lock:
                        item = consumer.queue.popleft() if consumer.queue else _EMPTY
                    if item is _EMPTY:
                        break
                    if item is None:
                        return
                    assert isinstance(item, SessionEvent)
                    yield item
                if self._closed:
                    return
                consumer.ready.clear()
                with consumer.lock:
                    pending = bool(consumer.queue)
                if not pending:
                    await consumer.ready.wait()
        finally:
            if consumer in self._consumers:
                self._consumers.remove(consumer)

    def has_listeners(self, kind: str | None = None) -> bool:
        """Would :meth:`emit` of ``kind`` reach anyone (an ``events()`` reader or an
        ``on_event`` hook that hears that kind; without ``kind``, any hook)? Callers check
        before building an event's data."""
        if self._consumers:
            return True
        hooks = self.pegboard.hooks
        return bool(hooks.listeners(kind)) if kind is not None else hooks.has("on_event")

    def has_readers(self) -> bool:
        """Is any ``events()`` reader listening?"""
        return bool(self._consumers)

    def dropped_events(self) -> int:
        return sum(c.dropped for c in self._consumers)

    # -- lifetime --------------------------------------------------------------------------
    def on_close(self, callback: Callable[[], Any]) -> None:
        """Run ``callback`` (sync or async) when the session closes: stop processes, flush files."""
        self._closers.append(callback)

    @property
    def closed(self) -> bool:
        return self._closed

    async def close(self) -> None:
        """Close the session: run close callbacks, end event readers. Its stored state stays."""
        if self._closed:
            return
        self._closed = True
        if self._used > self._touched:
            self._write_touch(self._used)
        from pegboard.core.awaitables import resolve

        for callback in reversed(self._closers):
            try:
                await resolve(callback())
            except Exception as exc:
                self._notice(f"a close callback failed: {type(exc).__name__}: {exc}")
        self._closers.clear()
        for consumer in list(self._consumers):
            consumer.push(None)
        if not self.persisted and self._directory is not None:
            import shutil

            shutil.rmtree(self._directory, ignore_errors=True)
        self.pegboard._forget_session(self)

    def close_sync(self) -> None:
        from pegboard.core.awaitables import resolve_sync

        resolve_sync(self.close())

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close_sync()

    def __repr__(self) -> str:
        return f"Session({self.id!r}, cwd={str(self.cwd)!r}, mode={self.mode!r})"


_EMPTY: Any = object()

__all__ = [
    "PermissionUpdate",
    "Selection",
    "Session",
    "SessionError",
    "SessionEvent",
    "SessionResults",
    "new_session_id",
    "validate_session_id",
]
