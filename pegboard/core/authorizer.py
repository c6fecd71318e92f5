"""May this call run: the rule engines, a subagent's call rules and ``check_permission`` hooks.

One ``Authorizer`` per ``Pegboard``. Building a rule engine parses every configured rule, so
engines are cached per working directory, mode, extra directories, home and the rules a
session remembered; a subagent's ``Tool(specifier)`` entries get small engines of their own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pegboard.core.config import ConfigLayer
from pegboard.core.decisions import PermissionDecision, strongest_permission
from pegboard.core.hookrunner import HookError, HookRunner
from pegboard.core.tools import name_key

if TYPE_CHECKING:
    from pegboard.core.call import ToolCall
    from pegboard.core.permissions import PermissionEngine
    from pegboard.core.permissions.families import ToolLookup
    from pegboard.core.permissions.family import FamilyRegistry
    from pegboard.core.registry import Registry
    from pegboard.core.tools import ToolContext

#: engines kept before the cache starts over (each cwd x mode x session rules is one)
MAX_ENGINES = 256


class Authorizer:
    """Decides calls against the configured rules (``layers``, relative to ``cwd``) and hooks.

    Rules name tools, and an installed tool declares the family its rules belong to, so the
    engines look tools up in ``registry``; an engine is rebuilt when the registry changes.
    """

    def __init__(
        self, layers: Sequence[ConfigLayer], cwd: Path, hooks: HookRunner, registry: Registry | None = None
    ) -> None:
        self.layers = list(layers)
        self.cwd = cwd
        self.hooks = hooks
        self.registry = registry
        self._engines: dict[tuple[Any, ...], PermissionEngine] = {}
        self._check_call: Callable[..., PermissionDecision] | None = None

    def engine(
        self,
        *,
        cwd: Path | str | None = None,
        mode: str | None = None,
        additional_dirs: Sequence[Path | str] = (),
        home: Path | str | None = None,
        session_rules: Mapping[str, Sequence[str]] | None = None,
    ) -> PermissionEngine:
        """The rule engine for one working directory and mode; ``session_rules`` are the rules
        a session remembered from approvals, added to the configured ones."""
        rules = tuple(sorted((k, tuple(v)) for k, v in session_rules.items() if v)) if session_rules else ()
        dirs = tuple(str(d) for d in additional_dirs) if additional_dirs else ()
        key = (str(cwd or self.cwd), mode, dirs, str(home) if home else None, rules, self._tools_version())
        found = self._engines.get(key)
        if found is None:
            from pegboard.core.permissions import PermissionEngine

            root = Path(cwd) if cwd is not None else self.cwd
            layers = list(self.layers)
            if rules:
                layers.append(ConfigLayer("code", {"permissions": {k: list(v) for k, v in rules}}, root=root))
            if len(self._engines) >= MAX_ENGINES:
                self._engines.clear()
            found = self._engines[key] = PermissionEngine(
                layers,
                cwd=root,
                additional_dirs=[Path(d) for d in additional_dirs],
                mode=mode,
                home=Path(home) if home is not None else None,
                tools=self._lookup(),
                families=self._families(),
            )
        return found

    def _tools_version(self) -> int:
        return self.registry.version if self.registry is not None else 0

    def _families(self) -> FamilyRegistry | None:
        return self.registry.permission_families if self.registry is not None else None

    def _lookup(self) -> ToolLookup | None:
        return self.registry.find if self.registry is not None else None

    def engine_for(self, ctx: ToolContext) -> PermissionEngine:
        """The engine a call in ``ctx`` is judged by (with its session's remembered rules)."""
        return self.engine(
            cwd=ctx.cwd,
            mode=ctx.mode,
            additional_dirs=ctx.additional_dirs,
            session_rules=ctx.session.session_rules() if ctx.session is not None else None,
        )

    async def decide(self, call: ToolCall, ctx: ToolContext, errors: list[HookError]) -> PermissionDecision:
        """The rules' answer; a subagent's call rules may narrow it, ``check_permission`` hooks
        may make it stricter (the strongest opinion wins)."""
        decision, final = self.rules_decision(call, ctx)
        if final or not self.hooks.has("check_permission"):
            return decision
        return await self.with_hooks(decision, call, ctx, errors)

    def rules_decision(
        self, call: ToolCall, ctx: ToolContext, model: Any = None
    ) -> tuple[PermissionDecision, bool]:
        """The rules' answer, narrowed by a subagent's call rules; ``True`` when they narrowed
        it, so that no ``check_permission`` hook is asked (see :meth:`decide`). ``model`` is
        ``call.input`` validated, when the caller knows the two agree."""
        if self._check_call is None:  # imported on the first call: listing tools never loads the engine
            from pegboard.core.permissions.subjects import check_call

            self._check_call = check_call
        decision = self._check_call(self.engine_for(ctx), call.name, call.input, call.tool, model)
        if (narrowed := self.subagent_decision(call, ctx)) is not None:
            return narrowed, True
        return decision, False

    async def with_hooks(
        self, decision: PermissionDecision, call: ToolCall, ctx: ToolContext, errors: list[HookError]
    ) -> PermissionDecision:
        """``decision`` combined with what ``check_permission`` hooks answer for ``call``."""
        if not self.hooks.has("check_permission"):
            return decision
        opinions = [decision]
        async for plugin, answer in self.hooks.each("check_permission", errors, call=call, context=ctx):
            if isinstance(answer, PermissionDecision):
                opinions.append(answer if answer.source else answer.model_copy(update={"source": plugin}))
            else:
                errors.append(HookError("check_permission", plugin, f"returned {type(answer).__name__}"))
        return strongest_permission(opinions) or decision

    def subagent_decision(self, call: ToolCall, ctx: ToolContext) -> PermissionDecision | None:
        """A subagent's ``Tool(specifier)`` list entries: a call matching a disallowed one is
        denied; a tool its ``tools`` list names only with specifiers runs only as those."""
        rules = ctx.call_rules
        if not rules:
            return None
        deny = tuple(rules.get("deny", ()))
        if deny:
            hit = self._rules_engine("deny", deny, ctx.cwd).check(call.name, call.input, call.tool)
            if hit.decision == "deny":
                return PermissionDecision(
                    decision="deny",
                    rule=hit.rule,
                    source=f"subagents.{ctx.subagent}.disallowedTools",
                    reason=f"subagent {ctx.subagent!r} may not run {hit.rule}",
                )
        keys = {name_key(n) for n in (call.tool.family, call.tool.name, *call.tool.aliases)}
        allow = tuple(r for r in rules.get("allow", ()) if name_key(r.split("(", 1)[0]) in keys)
        if allow:
            hit = self._rules_engine("allow", allow, ctx.cwd).check(call.name, call.input, call.tool)
            if hit.decision != "allow" or hit.rule not in allow:
                return PermissionDecision(
                    decision="deny",
                    source=f"subagents.{ctx.subagent}.tools",
                    reason=f"subagent {ctx.subagent!r} may use {call.name} only as {', '.join(allow)}",
                )
        return None

    def _rules_engine(self, behavior: str, rules: tuple[str, ...], cwd: Path) -> PermissionEngine:
        key = ("rules", behavior, rules, str(cwd), self._tools_version())
        found = self._engines.get(key)
        if found is None:
            from pegboard.core.permissions import PermissionEngine

            layer = ConfigLayer("code", {"permissions": {behavior: list(rules)}}, root=cwd)
            if len(self._engines) >= MAX_ENGINES:
                self._engines.clear()
            found = self._engines[key] = PermissionEngine([layer], cwd=cwd, mode="default", tools=self._lookup(),
                                                          families=self._families())
        return found


__all__ = ["Authorizer"]
