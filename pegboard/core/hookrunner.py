"""Calling per-call hooks: one implementation at a time, awaited, isolated from each other."""

from __future__ import annotations

import inspect
import types
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pluggy

from pegboard.core.awaitables import resolve

_COROUTINE = types.CoroutineType


def _awaitable(value: Any) -> bool:
    return type(value) is _COROUTINE or inspect.isawaitable(value)


def _invoke(impl: Any, kwargs: dict[str, Any]) -> Any:
    """Call one implementation with the arguments it names (pluggy's convention)."""
    try:
        args = [kwargs[a] for a in impl.argnames]
    except KeyError:  # it names one the caller does not pass: it gets the others, by name
        return impl.function(**{a: kwargs[a] for a in impl.argnames if a in kwargs})
    return impl.function(*args)


@dataclass(frozen=True)
class HookError:
    """A hook implementation that raised; reported, never propagated."""

    hook: str
    plugin: str
    error: str

    def to_json(self) -> dict[str, str]:
        return {"hook": self.hook, "plugin": self.plugin, "error": self.error}


class _Answers:
    """``(plugin name, answer)`` for each implementation that answered, asked one at a time as
    the caller iterates (a caller that stops early asks no more). A class, not an async
    generator: the loop keeps no record of it, and a plain answer costs no coroutine."""

    __slots__ = ("errors", "hook_name", "impls", "kwargs", "next")

    def __init__(self, impls: list[Any], hook_name: str, errors: list[HookError], kwargs: dict[str, Any]) -> None:
        self.impls = impls
        self.hook_name = hook_name
        self.errors = errors
        self.kwargs = kwargs
        self.next = 0

    def __aiter__(self) -> _Answers:
        return self

    async def __anext__(self) -> tuple[str, Any]:
        impls = self.impls
        while self.next < len(impls):
            impl = impls[self.next]
            self.next += 1
            try:
                value = _invoke(impl, self.kwargs)
                if value is not None and _awaitable(value):
                    value = await resolve(value)
            except Exception as exc:
                self.errors.append(HookError(self.hook_name, impl.plugin_name, f"{type(exc).__name__}: {exc}"))
                continue
            if value is not None:
                return impl.plugin_name, value
        raise StopAsyncIteration


class HookRunner:
    """Runs the implementations of one hook in a fixed order.

    Order: ``tryfirst`` implementations, then the rest in registration order, then
    ``trylast`` ones. Deterministic, so rewrites by several hooks always compose the same way.
    The order of each hook is worked out once per set of registered plugins (the plugin
    manager says when it changes), so a hook nobody implements costs one dictionary lookup.

    :meth:`first` serves the hooks declared ``firstresult=True`` (one answer wins),
    :meth:`each` and :meth:`all` the others; asking the wrong way is a ``TypeError``, so a call
    site cannot drift from its hook's declaration.
    """

    def __init__(self, pm: pluggy.PluginManager, owner: Any = None) -> None:
        self.pm = pm
        #: the Pegboard that ``active_when`` predicates are asked about (none: every one is in)
        self.owner = owner
        self._order: dict[str, list[Any]] = {}
        self._any: dict[tuple[str, ...], bool] = {}
        self._firstresult: dict[str, bool] = {}
        self._listeners: dict[str, list[Any]] = {}
        #: called with a hook's name before its implementations are looked up: imports the
        #: declared plugins that implement it (the plugin loader's ``materialize_hook``)
        self.before_lookup: Callable[[str], None] | None = None
        #: each plugin's place in load order; implementations run in it however late a plugin loads
        self.rank: Mapping[str, int] = {}
        listeners = getattr(pm, "on_change", None)
        self._cached = listeners is not None  # else nothing says when the plugins change
        if listeners is not None:
            listeners.append(self.forget)

    def forget(self) -> None:
        """Work the order of every hook out again (the plugins or the owner's config changed)."""
        self._order.clear()
        self._any.clear()
        self._listeners.clear()

    def implementations(self, hook_name: str) -> list[Any]:
        found = self._order.get(hook_name)
        if found is None:
            found = self._ordered(hook_name)
            if self._cached:
                self._order[hook_name] = found
        return found

    def _ordered(self, hook_name: str) -> list[Any]:
        if self.before_lookup is not None:
            self.before_lookup(hook_name)
        impls: list[Any] = getattr(self.pm.hook, hook_name).get_hookimpls()
        if self.owner is not None:
            impls = [i for i in impls if self._active(i)]
        if len(impls) < 2:
            return impls
        if self.rank:
            rank, last_place = self.rank, len(self.rank)
            # pluggy's own order, as if every plugin had loaded at start-up: trylast ones newest first
            impls = sorted(impls, key=lambda i: -rank.get(i.plugin_name, last_place) if i.trylast
                           else rank.get(i.plugin_name, last_place))
        first = [i for i in impls if i.tryfirst]
        last = [i for i in impls if i.trylast]
        rest = [i for i in impls if not i.tryfirst and not i.trylast]
        return list(reversed(first)) + rest + list(reversed(last))

    def listeners(self, kind: str) -> list[Any]:
        """The ``on_event`` implementations that hear events of ``kind`` (all but those whose
        ``event_kinds`` leave it out), in hook order."""
        found = self._listeners.get(kind)
        if found is None:
            from pegboard.core.markers import EVENT_KINDS_ATTR

            found = [
                i for i in self.implementations("on_event")
                if (kinds := getattr(i.function, EVENT_KINDS_ATTR, None)) is None or kind in kinds
            ]
            if self._cached and len(self._listeners) < 256:
                self._listeners[kind] = found
        return found

    def tell(self, kind: str, errors: list[HookError], /, **kwargs: Any) -> None:
        """Run the ``on_event`` implementations that hear ``kind``; answers are ignored."""
        listeners = self.listeners(kind)
        if listeners:
            for _answer in self._answers_sync(listeners, "on_event", errors, kwargs):
                pass

    def _active(self, impl: Any) -> bool:
        from pegboard.core.markers import ACTIVE_WHEN_ATTR

        predicate = getattr(impl.function, ACTIVE_WHEN_ATTR, None)
        if predicate is None:
            return True
        try:
            return bool(predicate(self.owner))
        except Exception:  # a broken predicate must not drop a hook (it might block calls)
            return True

    def has(self, hook_name: str) -> bool:
        return bool(self.implementations(hook_name))

    def has_any(self, hook_names: tuple[str, ...]) -> bool:
        found = self._any.get(hook_names)
        if found is None:
            found = any(self.implementations(h) for h in hook_names)
            if self._cached:
                self._any[hook_names] = found
        return found

    def firstresult(self, hook_name: str) -> bool:
        """Whether the hookspec declares that the first answer wins."""
        found = self._firstresult.get(hook_name)
        if found is None:
            spec = getattr(self.pm.hook, hook_name).spec
            found = bool(spec is not None and spec.opts.get("firstresult"))
            if spec is not None:  # a spec, once added, does not change
                self._firstresult[hook_name] = found
        return found

    def _expect(self, hook_name: str, firstresult: bool) -> None:
        if self.firstresult(hook_name) != firstresult:
            if firstresult:
                raise TypeError(f"hook {hook_name!r} is not declared firstresult=True; call it with each() or all()")
            raise TypeError(f"hook {hook_name!r} is declared firstresult=True; call it with first()")

    def each(self, hook_name: str, errors: list[HookError], /, **kwargs: Any) -> AsyncIterator[tuple[str, Any]]:
        """Yield ``(plugin name, result)`` for every implementation that returned non-``None``."""
        impls = self.implementations(hook_name)
        if impls:
            self._expect(hook_name, False)
        return _Answers(impls, hook_name, errors, kwargs)

    async def first(self, hook_name: str, errors: list[HookError], /, **kwargs: Any) -> Any:
        """The first non-``None`` result, or ``None``."""
        impls = self.implementations(hook_name)
        if not impls:
            return None
        self._expect(hook_name, True)
        async for _plugin, value in _Answers(impls, hook_name, errors, kwargs):
            return value
        return None

    def first_sync(self, hook_name: str, errors: list[HookError], /, **kwargs: Any) -> Any:
        """:meth:`first` for synchronous code."""
        impls = self.implementations(hook_name)
        if impls:
            self._expect(hook_name, True)
        for _plugin, value in self._answers_sync(impls, hook_name, errors, kwargs):
            return value
        return None

    async def all(self, hook_name: str, errors: list[HookError], /, **kwargs: Any) -> list[tuple[str, Any]]:
        return [item async for item in self.each(hook_name, errors, **kwargs)]

    def all_sync(self, hook_name: str, errors: list[HookError], /, **kwargs: Any) -> list[tuple[str, Any]]:
        """:meth:`all` for synchronous code; asyncio is used only if an implementation is async."""
        impls = self.implementations(hook_name)
        if impls:
            self._expect(hook_name, False)
        return list(self._answers_sync(impls, hook_name, errors, kwargs))

    def _answers_sync(
        self, impls: list[Any], hook_name: str, errors: list[HookError], kwargs: dict[str, Any]
    ) -> Iterator[tuple[str, Any]]:
        from pegboard.core.awaitables import resolve_sync

        for impl in impls:
            try:
                value = _invoke(impl, kwargs)
                if value is not None and _awaitable(value):
                    value = resolve_sync(value)
            except Exception as exc:
                errors.append(HookError(hook_name, impl.plugin_name, f"{type(exc).__name__}: {exc}"))
                continue
            if value is not None:
                yield impl.plugin_name, value
