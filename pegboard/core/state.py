"""Typed per-session state: ``SessionKey`` slots, in the spirit of pytest's ``Stash``.

A tool never keeps state in module globals. It declares a key once, at module level::

    LEDGER = MapKey("pegboard-read-ledger", LedgerEntry, persist=True)
    CWD = SessionKey("pegboard-shell-cwd", str, persist=True)

and reads or writes ``ctx.session.state[CWD]`` / ``ctx.session.state.map(LEDGER)``.

A persisted slot lives in the session store as JSON (the key's codec turns the value into
JSON and back), so every read sees what the last write of any process committed. Because
a read-modify-write of a whole value can lose a concurrent change, ``update(key, fn)`` runs
``fn`` inside one store transaction, and a ``MapKey`` keeps each entry as its own record.
A value that no longer decodes (the tool changed its format) is reported once and reset,
never raised. Slots that are not persisted hold live Python objects for the session's life.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

if TYPE_CHECKING:
    from pegboard.core.store import SessionStore

T = TypeVar("T")

_MISSING: Any = object()


_ATOMS = (str, int, float, bool, type(None))
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


class _NotPlain(Exception):
    pass


def _plain(value: Any) -> Any:
    """``value`` as ``dataclasses.asdict`` copies it, for atoms and plain lists and dicts of them."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind is list:
        return [_plain(v) for v in value]
    if kind is dict:
        return {_plain(k): _plain(v) for k, v in value.items()}
    raise _NotPlain


def _dataclass_dict(value: Any) -> dict[str, Any]:
    """``dataclasses.asdict(value)``, without its generic deep copy when the fields are plain
    data (a session slot is encoded on every update)."""
    names = _FIELD_NAMES.get(type(value))
    if names is None:
        names = _FIELD_NAMES[type(value)] = tuple(f.name for f in dataclasses.fields(value))
    try:
        return {name: _plain(getattr(value, name)) for name in names}
    except _NotPlain:
        return dataclasses.asdict(value)


def _default_encode(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _dataclass_dict(value)
    if isinstance(value, set | frozenset | tuple):
        return sorted(value) if isinstance(value, set | frozenset) else list(value)
    return value


def _default_decode(kind: Any) -> Callable[[Any], Any]:
    validate = getattr(kind, "model_validate", None)
    if callable(validate):
        return cast(Callable[[Any], Any], validate)
    if dataclasses.is_dataclass(kind) and isinstance(kind, type):
        return lambda data: kind(**data)
    if kind in (set, frozenset, tuple):
        return lambda data: kind(data)
    return lambda data: data


class SessionKey(Generic[T]):
    """A typed slot of session state.

    ``kind`` is the value's type (used by the default codec: pydantic models, dataclasses,
    sets and tuples round-trip; other values must be JSON-ready). ``persist=True`` keeps the
    value in the session store, so it survives the process and is seen by other processes.
    ``default`` makes a value when the slot is empty. ``encode`` / ``decode`` replace the
    default codec. Keys compare by identity; ``name`` must be unique (prefix it with your
    distribution's name) and stable, since it names the stored record.
    """

    def __init__(
        self,
        name: str,
        kind: Any = object,
        *,
        persist: bool = False,
        default: Callable[[], T] | None = None,
        encode: Callable[[T], Any] | None = None,
        decode: Callable[[Any], T] | None = None,
    ) -> None:
        if not name or not isinstance(name, str):
            raise ValueError("a SessionKey needs a non-empty name")
        self.name = name
        self.kind = kind
        self.persist = persist
        self.default = default
        self.encode: Callable[[T], Any] = encode or _default_encode
        self.decode: Callable[[Any], T] = decode or _default_decode(kind)

    def dumps(self, value: T) -> str:
        return json.dumps(self.encode(value), ensure_ascii=False, separators=(",", ":"))

    def loads(self, text: str) -> T:
        return self.decode(json.loads(text))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, persist={self.persist})"


class MapKey(SessionKey[T]):
    """A slot holding a mapping of string keys to values of ``kind``, one record per entry.

    Two processes changing different entries never overwrite each other; ``update`` of one
    entry is a transaction. Read it through ``state.map(key)``.
    """


class SlotError(RuntimeError):
    """A stored slot value that could not be decoded (reported, then the slot is reset)."""


class SessionState:
    """The slots of one session; see the module docstring.

    ``state[key]`` returns the value (or the key's default, or raises ``KeyError``);
    ``state[key] = value`` stores it; ``update(key, fn)`` applies ``fn`` to the current
    value (``None`` when empty) atomically and stores the result (``None`` clears it).
    """

    def __init__(self, store: SessionStore, session_id: str, report: Callable[[str], None] | None = None) -> None:
        self._store = store
        self._id = session_id
        self._live: dict[SessionKey[Any], Any] = {}
        self._lock = threading.Lock()
        self._report = report or (lambda message: None)

    def _decode(self, key: SessionKey[T], raw: str | None, where: str) -> T | None:
        if raw is None:
            return None
        try:
            return key.loads(raw)
        except Exception as exc:
            self._report(f"session slot {where} could not be loaded ({type(exc).__name__}: {exc}); it was reset")
            return None

    # -- whole-value slots -----------------------------------------------------------------
    def get(self, key: SessionKey[T], default: Any = None) -> T | Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __getitem__(self, key: SessionKey[T]) -> T:
        if isinstance(key, MapKey):
            raise TypeError(f"{key!r} is a MapKey; use state.map(key)")
        if not key.persist:
            with self._lock:
                if key in self._live:
                    return cast(T, self._live[key])
                if key.default is None:
                    raise KeyError(key.name)
                value = self._live[key] = key.default()
                return value
        stored = self._decode(key, self._store.get(self._id, key.name), key.name)
        if stored is None:
            if key.default is None:
                raise KeyError(key.name)
            return key.default()
        return stored

    def __setitem__(self, key: SessionKey[T], value: T) -> None:
        if isinstance(key, MapKey):
            raise TypeError(f"{key!r} is a MapKey; use state.map(key)")
        if not key.persist:
            with self._lock:
                self._live[key] = value
            return
        self._store.put(self._id, key.name, key.dumps(value))

    def __delitem__(self, key: SessionKey[Any]) -> None:
        if not key.persist:
            with self._lock:
                self._live.pop(key, None)
            return
        self._store.put(self._id, key.name, None)

    def __contains__(self, key: SessionKey[Any]) -> bool:
        if not key.persist:
            return key in self._live
        return self._store.get(self._id, key.name) is not None

    def update(self, key: SessionKey[T], fn: Callable[[T | None], T | None]) -> T | None:
        """Apply ``fn`` to the slot's value in one transaction and store what it returns."""
        if not key.persist:
            with self._lock:
                current = self._live.get(key, key.default() if key.default else None)
                new = fn(current)
                if new is None:
                    self._live.pop(key, None)
                else:
                    self._live[key] = new
                return new
        box: dict[str, T | None] = {}

        def step(raw: str | None) -> str | None:
            current = self._decode(key, raw, key.name)
            if current is None and key.default is not None:
                current = key.default()
            new = fn(current)
            box["value"] = new
            return None if new is None else key.dumps(new)

        self._store.update(self._id, key.name, step)
        return box.get("value")

    # -- map slots -------------------------------------------------------------------------
    def map(self, key: MapKey[T]) -> SlotMap[T]:
        if not isinstance(key, MapKey):
            raise TypeError(f"{key!r} is not a MapKey")
        return SlotMap(self, key)


class SlotMap(Generic[T]):
    """The entries of one ``MapKey`` slot; each entry is its own record in the store."""

    def __init__(self, state: SessionState, key: MapKey[T]) -> None:
        self._state = state
        self._key = key
        self._live: dict[str, T] = cast(dict[str, T], state._live.setdefault(key, {})) if not key.persist else {}

    def get(self, entry: str, default: Any = None) -> T | Any:
        if not self._key.persist:
            return self._live.get(entry, default)
        st = self._state
        value = st._decode(self._key, st._store.get(st._id, self._key.name, entry), f"{self._key.name}[{entry!r}]")
        return default if value is None else value

    def __getitem__(self, entry: str) -> T:
        value = self.get(entry, _MISSING)
        if value is _MISSING:
            raise KeyError(entry)
        return cast(T, value)

    def __setitem__(self, entry: str, value: T) -> None:
        if not self._key.persist:
            self._live[entry] = value
            return
        st = self._state
        st._store.put(st._id, self._key.name, self._key.dumps(value), entry)

    def __delitem__(self, entry: str) -> None:
        if not self._key.persist:
            self._live.pop(entry, None)
            return
        st = self._state
        st._store.put(st._id, self._key.name, None, entry)

    def __contains__(self, entry: object) -> bool:
        return isinstance(entry, str) and self.get(entry, _MISSING) is not _MISSING

    def update(self, entry: str, fn: Callable[[T | None], T | None]) -> T | None:
        """Apply ``fn`` to one entry in one transaction and store what it returns."""
        if not self._key.persist:
            new = fn(self._live.get(entry))
            if new is None:
                self._live.pop(entry, None)
            else:
                self._live[entry] = new
            return new
        st = self._state
        box: dict[str, T | None] = {}
        where = f"{self._key.name}[{entry!r}]"

        def step(raw: str | None) -> str | None:
            new = fn(st._decode(self._key, raw, where))
            box["value"] = new
            return None if new is None else self._key.dumps(new)

        st._store.update(st._id, self._key.name, step, entry)
        return box.get("value")

    def items(self) -> list[tuple[str, T]]:
        if not self._key.persist:
            return list(self._live.items())
        st = self._state
        out: list[tuple[str, T]] = []
        for entry, raw in st._store.entries(st._id, self._key.name).items():
            value = st._decode(self._key, raw, f"{self._key.name}[{entry!r}]")
            if value is not None:
                out.append((entry, value))
        return out

    def keys(self) -> list[str]:
        return [k for k, _ in self.items()]

    def values(self) -> list[T]:
        return [v for _, v in self.items()]

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.items())

    def clear(self) -> None:
        if not self._key.persist:
            self._live.clear()
            return
        st = self._state
        st._store.clear_slot(st._id, self._key.name)


class StashKey(Generic[T]):
    """A typed key of a :class:`Stash`; compares by identity."""

    def __init__(self, name: str = "") -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"StashKey({self.name!r})"


class Stash:
    """Per-``Pegboard`` storage for plugins (pytest's ``Stash``): ``pb.stash[KEY] = value``.

    A plugin keeps its per-instance objects here (an MCP connection manager), never in a
    module-global dict keyed by the instance, and cleans them up in ``pegboard_close``.
    """

    def __init__(self) -> None:
        self._data: dict[StashKey[Any], Any] = {}

    def __getitem__(self, key: StashKey[T]) -> T:
        return cast(T, self._data[key])

    def __setitem__(self, key: StashKey[T], value: T) -> None:
        self._data[key] = value

    def __delitem__(self, key: StashKey[Any]) -> None:
        del self._data[key]

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def get(self, key: StashKey[T], default: Any = None) -> T | Any:
        return self._data.get(key, default)

    def setdefault(self, key: StashKey[T], default: T) -> T:
        return cast(T, self._data.setdefault(key, default))

    def pop(self, key: StashKey[T], default: Any = None) -> T | Any:
        return self._data.pop(key, default)


__all__ = ["MapKey", "SessionKey", "SessionState", "SlotError", "SlotMap", "Stash", "StashKey"]
