"""Calling per-call hooks: one implementation at a time, awaited, isolated from each other."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pluggy

from pegboard.core.awaitables import resolve


@dataclass(frozen=True)
class HookError:
    """A hook implementation that raised; reported, never propagated."""

    hook: str
    plugin: str
    error: str

    def to_json(self) -> dict[str, str]:
        return {"hook": self.hook, "plugin": self.plugin, "error": self.error}


class HookRunner:
    """Runs the implementations of one hook in a fixed order.

    Order: ``tryfirst`` implementations, then the rest in registration order, then
    ``trylast`` ones. Deterministic, so rewrites by several hooks always compose the same way.
    """

    def __init__(self, pm: pluggy.PluginManager) -> None:
        self.pm = pm

    def implementations(self, hook_name: str) -> list[Any]:
        impls: list[Any] = getattr(self.pm.hook, hook_name).get_hookimpls()
        if len(impls) < 2:
            return impls
        first = [i for i in impls if i.tryfirst]
        last = [i for i in impls if i.trylast]
        rest = [i for i in impls if not i.tryfirst and not i.trylast]
        return list(reversed(first)) + rest + list(reversed(last))

    def has(self, hook_name: str) -> bool:
        return bool(getattr(self.pm.hook, hook_name).get_hookimpls())

    async def each(self, hook_name: str, errors: list[HookError], /, **kwargs: Any) -> AsyncIterator[tuple[str, Any]]:
        """Yield ``(plugin name, result)`` for every implementation that returned non-``None``."""
        impls = self.implementations(hook_name)
        if not impls:
            return
        for impl in impls:
            try:
                value = await resolve(impl.function(**{a: kwargs[a] for a in impl.argnames if a in kwargs}))
            except Exception as exc:
                errors.append(HookError(hook_name, impl.plugin_name, f"{type(exc).__name__}: {exc}"))
                continue
            if value is not None:
                yield impl.plugin_name, value

    async def first(self, hook_name: str, errors: list[HookError], /, **kwargs: Any) -> Any:
        """The first non-``None`` result, or ``None``."""
        async for _plugin, value in self.each(hook_name, errors, **kwargs):
            return value
        return None

    async def all(self, hook_name: str, errors: list[HookError], /, **kwargs: Any) -> list[tuple[str, Any]]:
        return [item async for item in self.each(hook_name, errors, **kwargs)]

    def all_sync(self, hook_name: str, errors: list[HookError], /, **kwargs: Any) -> list[tuple[str, Any]]:
        """:meth:`all` for synchronous code; asyncio is used only if an implementation is async."""
        from pegboard.core.awaitables import resolve_sync

        answers = []
        for impl in self.implementations(hook_name):
            try:
                value = resolve_sync(impl.function(**{a: kwargs[a] for a in impl.argnames if a in kwargs}))
            except Exception as exc:
                errors.append(HookError(hook_name, impl.plugin_name, f"{type(exc).__name__}: {exc}"))
                continue
            if value is not None:
                answers.append((impl.plugin_name, value))
        return answers
