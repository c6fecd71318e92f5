"""``Pegboard``: one configured tool layer — plugins loaded, policy, permissions, calls."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

from pegboard.core.authorizer import Authorizer
from pegboard.core.awaitables import resolve_sync
from pegboard.core.call import ToolCall
from pegboard.core.config import ConfigLayer, LoadedConfig, PegboardConfig, discover_layers, load_layers
from pegboard.core.decisions import HookDecision, PermissionDecision
from pegboard.core.deferred import DeferredTools
from pegboard.core.hookrunner import HookError, HookRunner
from pegboard.core.plugins import PluginInfo, PluginLoader, PluginSelection, new_plugin_manager
from pegboard.core.policy import PolicyCatalog, PolicyResult, PolicyTool, ToolDecision, resolve_policy
from pegboard.core.prepared import PreparedCall
from pegboard.core.projection import secret_values
from pegboard.core.registry import Registry, ToolEntry
from pegboard.core.results import ToolResult
from pegboard.core.session import (
    OPENED_CWD,
    CallOptions,
    Selection,
    Session,
    SessionError,
    SessionEvent,
    check_call_options,
    new_session_id,
    selection_of,
    validate_session_id,
)
from pegboard.core.state import Stash
from pegboard.core.store import MemorySessionStore, SessionRecord, SessionStore
from pegboard.core.tools import Tool, ToolContext

if TYPE_CHECKING:
    from pegboard.core.permissions import PermissionEngine
    from pegboard.core.pipeline import Approver, CallPipeline

DEFAULT_MEMORY_SESSION = "default"

SESSION_EVENTS = ("session_start", "session_end")


class Pegboard:
    """The tool layer of one agent harness.

    Build it once; it loads plugins (entry points in group ``pegboard`` and the objects in
    ``plugins``) and the config layers that apply in ``cwd``. Then ask it which tools an
    agent sees (:meth:`tools`), their definitions (:meth:`schema`), whether a call may run
    (:meth:`check`), and run calls (:meth:`call`) — a refusal is a result, never an exception.
    """

    def __init__(
        self,
        *,
        plugins: Sequence[object] = (),
        load_entrypoints: bool = True,
        config_files: Sequence[Path | str] = (),
        layers: Sequence[ConfigLayer] | None = None,
        cwd: Path | str | None = None,
        env: Mapping[str, str] | None = None,
        default_timeout: float = 600.0,
        store: SessionStore | None = None,
    ) -> None:
        self.env: Mapping[str, str] = dict(os.environ if env is None else env)
        self.cwd = Path(cwd) if cwd is not None else Path.cwd()
        #: where the layers came from, for a watcher (``None``: given in code, nothing to watch)
        self._config_files: list[Path] | None = [Path(p) for p in config_files] if layers is None else None
        if layers is None:
            layers = discover_layers(self.cwd.resolve(), self._config_files or [], env=self.env)
        #: the layers as read, before an untrusted project's widening keys were taken out
        self._source_layers: list[ConfigLayer] = list(layers)
        loaded, config_warnings = self._narrowed(layers)
        self._loaded_config = loaded
        self.config: PegboardConfig = loaded.config
        self.layers = loaded.layers
        self.warnings: list[str] = config_warnings
        self._config_generation = 0
        self._default_timeout = default_timeout
        self._pm = new_plugin_manager()
        self.registry = Registry()
        self.hooks = HookRunner(self._pm, owner=self)
        loader = PluginLoader(
            self._pm, self.registry, PluginSelection.from_settings(self.config.plugins.disabled, self.env),
            configured=self.configured,
        )
        if load_entrypoints:
            loader.load_entry_points()
        loader.load_objects(plugins)
        self.hooks.rank = loader.rank
        self.hooks.before_lookup = loader.materialize_hook
        self.plugins: list[PluginInfo] = loader.infos
        self._loader = loader
        self._settings: dict[str, Any] = {}
        loaded, self.warnings = self._with_config_sections(loaded, self.warnings)
        if loaded is not self._loaded_config:
            self._loaded_config, self.config, self.layers = loaded, loaded.config, loaded.layers
            self.hooks.forget()  # ``active_when`` predicates may read the config
        self._config_warnings = list(self.warnings)
        failed = [p.name for p in loader.infos if p.status == "failed"]
        self.warnings += [f"plugin {name} failed to load; see pegboard plugins" for name in failed]
        self.secrets = self._secrets(self.config)
        self.stash = Stash()
        self._authorizer = Authorizer(self.layers, self.cwd, self.hooks, self.registry)
        self._tool_sources: list[Callable[[], None]] = []
        self._syncing = threading.local()
        self._pending_explainers: list[Callable[[str], str | None]] = []
        self._store: SessionStore | None = store
        self._memory_store = MemorySessionStore()
        self._memory_sessions: dict[str, Session] = {}
        self._open_sessions: dict[str, Session] = {}
        self._closed = False
        self.deferred = DeferredTools(self._memory_session)
        self._policy_cache: dict[tuple[Any, ...], PolicyResult] = {}
        self._registered_cache: tuple[tuple[int, int], Sequence[ToolEntry]] = ((-1, -1), ())
        self._availability: tuple[int, tuple[str | None, ...], dict[str, int]] = (-1, (), {})
        self._call_set_cache: dict[int, tuple[PolicyResult, set[str], dict[str, str]]] = {}
        self._announce_ready()

    @staticmethod
    def _narrowed(layers: Sequence[ConfigLayer]) -> tuple[LoadedConfig, list[str]]:
        """The layers loaded once an untrusted project lost its kernel widening keys; with the
        load's warnings and one notice per key taken out."""
        from pegboard.core.sections import only_narrowing

        narrowed, trust_notices = only_narrowing(layers)
        loaded = load_layers(narrowed)
        return loaded, list(loaded.warnings) + trust_notices

    def _with_config_sections(
        self, loaded: LoadedConfig, warnings: list[str]
    ) -> tuple[LoadedConfig, list[str]]:
        """Plugins' config sections: untrusted projects lose their widening keys, each section
        is validated in every layer (``ConfigError`` otherwise), and its keys stop counting as
        unknown. Returns the config to use and the warnings; changes nothing on ``self``."""
        import re

        from pegboard.core.config import ConfigError
        from pegboard.core.sections import covered_by, only_narrowing, section_problems

        sections = list(self.registry.config_sections.values())
        if not sections:
            return loaded, warnings
        narrowed, notices = only_narrowing(loaded.layers, sections)
        if notices:
            loaded = load_layers(narrowed)
            warnings = warnings + notices
        errors, section_warnings = section_problems(loaded.layers, sections)
        if errors:
            raise ConfigError("\n".join(dict.fromkeys(errors)))
        unknown = re.compile(r"unknown key '(.+?)' \(ignored\)")
        kept = []
        for warning in warnings:
            match = unknown.search(warning)
            if match is None or not covered_by(match.group(1), sections):
                kept.append(warning)
        loaded.warnings = [w for w in loaded.warnings if w in kept] + section_warnings
        return loaded, kept + section_warnings

    def _secrets(self, config: PegboardConfig) -> list[str]:
        """The values every result is cleaned of: credential-shaped environment values and the
        configured ``redaction`` secrets, longest first."""
        configured = config.redaction
        named = [self.env[n] for n in configured.secret_env if self.env.get(n)]
        return sorted(
            {*secret_values(self.env), *(v for v in [*configured.secrets, *named] if len(v) >= 4)},
            key=len,
            reverse=True,
        )

    def reload_config(self, layers: Sequence[ConfigLayer]) -> list[str]:
        """Put ``layers`` (as read from the files) in force for the next call.

        They go through the start-up path: an untrusted project loses its widening keys, every
        layer and plugin section is validated. Everything derived from config (tool policy,
        permission engines, hooks' view of it, redaction) is built first and then swapped in at
        once; a call already running finishes under the config it started with. Raises
        ``ConfigError`` and changes nothing when the layers do not load. Returns the config's
        warnings (unknown keys, keys an untrusted project may not set). Plugins stay as loaded
        at start-up (``plugins.disabled`` applies at the next start).
        """
        from pydantic import ValidationError

        from pegboard.core.config import ConfigError

        try:
            loaded, warnings = self._narrowed(layers)
            loaded, warnings = self._with_config_sections(loaded, warnings)
        except ValidationError as exc:  # the merged layers (each one alone validated)
            raise ConfigError(f"the merged config does not validate: {exc}") from None
        secrets = self._secrets(loaded.config)
        authorizer = Authorizer(loaded.layers, self.cwd, self.hooks, self.registry)
        kept = [w for w in self.warnings if w not in self._config_warnings]
        self._source_layers = list(layers)
        self._loaded_config, self.config, self.layers = loaded, loaded.config, loaded.layers
        self._settings = {}
        self.secrets = secrets
        self._authorizer = authorizer
        self.__dict__.pop("_pipeline", None)  # the next call builds one with the new rules
        self._policy_cache = {}
        self._call_set_cache = {}
        self._config_warnings = list(warnings)
        self.warnings = warnings + kept
        self._config_generation += 1
        self.hooks.forget()
        self._loader.config_changed()
        self._ready_late()
        return list(warnings)

    def configured(self, key: str) -> Any:
        """The merged config value at the dotted ``key`` as the files wrote it, unvalidated
        (``None`` when no layer sets it); each part may be spelled as written or by field name
        (``tools.exec.applyPatch`` or ``tools.exec.apply_patch``), as the models accept.

        For the few answers a plugin needs before it is imported (is this section set, is
        this switch on); anything a tool uses reads :meth:`settings`, which validates."""
        from pegboard.core.sections import get_path, spellings

        data = self._loaded_config.data
        for spelling in spellings(key):
            value = get_path(data, spelling)
            if value is not None:
                return value
        return None

    def settings(self, key: str) -> Any:
        """The merged, validated value of the config section ``key`` (its model's defaults
        when no file sets it); ``KeyError`` when no plugin registered that section."""
        section = self.registry.config_sections.get(key)
        if section is None:
            known = ", ".join(sorted(self.registry.config_sections)) or "(none)"
            raise KeyError(f"no plugin registered the config section {key!r}; registered: {known}")
        if key not in self._settings:
            from pydantic import RootModel

            from pegboard.core.config import merge_layers
            from pegboard.core.sections import get_path

            value = get_path(merge_layers(self.layers)[0], key)
            if value is None:  # unset: the model's defaults (a root model's own default value)
                value = None if issubclass(section.model, RootModel) else {}
            self._settings[key] = section.model() if value is None else section.model.model_validate(value)
        return self._settings[key]

    @cached_property
    def _pipeline(self) -> CallPipeline:
        """The call pipeline, built (and asyncio imported) on the first call."""
        from pegboard.core.pipeline import CallPipeline

        return CallPipeline(
            registry=self.registry,
            hooks=self.hooks,
            authorizer=self._authorizer,
            pending_reason=self._pending_reason,
            plugins=self.plugins,
            default_timeout=self._default_timeout,
            secrets=self.secrets,
            fallback_results=lambda: self._memory_session(None).results,
        )

    def hook_implementations(self, name: str) -> list[Any]:
        """The loaded plugins' implementations of hook ``name``, in the order they run (each
        with ``plugin_name``, ``function`` and ``argnames``): for tools that list or dry-run hooks."""
        return self.hooks.implementations(name)

    # -- what is registered -------------------------------------------------------------------
    def tool(self, name: str) -> Tool | None:
        """The registered tool called ``name`` (or an alias; case and ``_``/``-`` ignored)."""
        if self._tool_sources:
            self._sync_tool_sources()
        return self.registry.find(name)

    # -- tools that come and go (MCP servers connecting later) ---------------------------------
    def _announce_ready(self) -> None:
        """Fire ``pegboard_ready``: plugins with run-time tool sources start here."""
        errors: list[HookError] = []
        self.hooks.all_sync("pegboard_ready", errors, pegboard=self)
        self.warnings.extend(f"plugin {e.plugin}: pegboard_ready failed: {e.error}" for e in errors)
        ran = {impl.plugin_name for impl in self.hooks.implementations("pegboard_ready")}
        #: plugins whose ``when_configured`` pegboard_ready has not run: it runs when a
        #: reloaded config sets its keys (see :meth:`_ready_late`)
        self._ready_waiting: set[str] = {
            impl.plugin_name for impl in self._pm.hook.pegboard_ready.get_hookimpls()
            if impl.plugin_name not in ran
        } | self._loader.waiting_for("pegboard_ready")

    def _ready_late(self) -> None:
        """Fire the ``pegboard_ready`` of plugins that waited for config keys a reloaded
        config now sets (importing a declared plugin first)."""
        if not self._ready_waiting:
            return
        for impl in self.hooks.implementations("pegboard_ready"):
            if impl.plugin_name not in self._ready_waiting:
                continue
            self._ready_waiting.discard(impl.plugin_name)
            try:
                impl.function(pegboard=self)
            except Exception as exc:
                self.warnings.append(f"plugin {impl.plugin_name}: pegboard_ready failed: {type(exc).__name__}: {exc}")

    def add_tool_source(self, sync: Callable[[], None]) -> None:
        """Register ``sync()``, which brings a plugin's dynamic tools up to date with
        :meth:`add_tool` / :meth:`remove_tools`. It runs in the caller's thread before every
        catalog (so before ``tools()``, ``schema()`` and each ``call()``); keep it cheap."""
        self._tool_sources.append(sync)

    def add_pending_tools(self, explain: Callable[[str], str | None]) -> None:
        """Register ``explain(name)``: why a tool called ``name`` may exist but is not registered
        yet (its MCP server is still connecting), or ``None``. A call to such a name is refused
        as ``unavailable`` with that reason instead of ``unknown_tool``."""
        self._pending_explainers.append(explain)

    def _pending_reason(self, name: str) -> str | None:
        """The first reason an explainer gives for the unregistered tool ``name``, if any."""
        for explain in self._pending_explainers:
            try:
                reason = explain(name)
            except Exception:
                continue
            if reason:
                return reason
        return None

    def add_tool(self, tool: Tool, *, owner: str) -> None:
        """Register a tool after construction; raises ``RegistrationConflict`` if its name is taken."""
        self.registry.add_tool(tool, owner)

    def remove_tools(self, owner: str) -> None:
        """Forget every tool that ``owner`` registered (through :meth:`add_tool` or a hook)."""
        self.registry.remove_owner(owner)

    def refresh(self) -> None:
        """Bring run-time tool sources up to date now. ``tools()``, ``schema()``, ``tool()`` and
        each ``call()`` do this themselves; a source that looks tools up while it syncs does not
        start another sync."""
        if self._tool_sources:
            self._sync_tool_sources()

    @property
    def tool_set_version(self) -> int:
        """Grows whenever a tool is registered or removed, a session loads deferred tools or a
        new config is put in force (:meth:`reload_config`):
        a host compares it before and after a call to learn that its tool list changed."""
        return self.registry.version + self.deferred.version + self._config_generation

    def _sync_tool_sources(self) -> None:
        if getattr(self._syncing, "active", False):
            return
        self._syncing.active = True
        try:
            for sync in list(self._tool_sources):
                try:
                    sync()
                except Exception as exc:
                    message = f"a dynamic tool source failed: {type(exc).__name__}: {exc}"
                    if message not in self.warnings:
                        self.warnings.append(message)
        finally:
            self._syncing.active = False

    def _catalog_now(self) -> PolicyCatalog:
        """Everything registered, with tool sources brought up to date, as the policy sees it."""
        if self._tool_sources:
            self._sync_tool_sources()
        return self._catalog(self._policy_tools())

    def _policy_tools(self) -> list[PolicyTool]:
        registered = self._registered()
        return self._described(registered, tuple(t.unavailable_reason(self) for t in registered))

    def _registered(self) -> Sequence[ToolEntry]:
        """The registered and declared tools in catalog order, sorted once per state of the
        registry; a declared tool's plugin is not imported for this."""
        key = (self.registry.version, self.registry.loads)
        version, tools = self._registered_cache
        if version != key:
            tools = tuple(self.registry.sorted_entries())
            self._registered_cache = (key, tools)
        return tools

    def _described(self, registered: Sequence[ToolEntry], unavailable: tuple[str | None, ...]) -> list[PolicyTool]:
        return [
            PolicyTool(t.name, tuple(t.aliases), tuple(t.groups), self._optional(t), reason, t.server)
            for t, reason in zip(registered, unavailable, strict=True)
        ]

    def _optional(self, tool: ToolEntry) -> bool:
        """``Tool.optional``, unless the config key its ``enabled_by`` names is ``true``."""
        return tool.optional and not (tool.enabled_by and self.configured(tool.enabled_by) is True)

    def _catalog(self, tools: list[PolicyTool]) -> PolicyCatalog:
        groups = self.registry.group_members()
        return PolicyCatalog(
            tools=tools,
            groups=groups,
            profiles={
                name: (list(p.allow) if p.allow is not None else None) for name, p in self.registry.profiles.items()
            },
            provider_policies=list(self.registry.provider_policies),
        )

    # -- policy -------------------------------------------------------------------------------
    def tools(
        self,
        *,
        agent: str | None = None,
        provider: str | None = None,
        model: str | None = None,
        profile: str | None = None,
        subagent: str | None = None,
    ) -> PolicyResult:
        """Which tools this agent sees on this provider and model, each with the step that decided.

        Results are cached per selection and per state of the registered tools (names, groups,
        availability), so calling this on every request is cheap. Treat the result as read-only.

        A bare-name permission deny rule (``Bash``, ``Bash(*)``, ``mcp__*``) removes the tool
        from the list too: a tool that can never run is not offered to the model.
        """
        if self._tool_sources:
            self._sync_tool_sources()
        registered = self._registered()
        return self._resolved(
            registered, self._check_availability(registered), agent, provider, model, profile, subagent
        )

    def _check_availability(self, registered: Sequence[ToolEntry]) -> tuple[str | None, ...]:
        """Every registered tool's availability, checked now and kept for :meth:`_call_policy`."""
        unavailable = tuple(t.unavailable_reason(self) for t in registered)
        self._availability = (self.registry.version, unavailable, {t.name: i for i, t in enumerate(registered)})
        return unavailable

    def _call_availability(
        self, name: Any
    ) -> tuple[Sequence[ToolEntry], tuple[str | None, ...], tuple[Tool, str | None] | None]:
        """The availability a call is authorized against: the last full check, kept while the
        registry is unchanged and the called tool's own answer (available or not) still agrees
        with it; otherwise every tool is checked again. Only the called tool's availability
        decides a call, so the other tools are re-checked when the tool list is asked for.
        The third item is the called tool and its fresh answer, so the pipeline need not ask again."""
        registered = self._registered()
        version, unavailable, position = self._availability
        tool = self.registry.find(name) if isinstance(name, str) else None
        if version != self.registry.version:
            unavailable = self._check_availability(registered)
            position = self._availability[2]
            i = position.get(tool.name) if tool is not None else None
            return registered, unavailable, (tool, unavailable[i]) if tool is not None and i is not None else None
        if tool is None:
            return registered, unavailable, None
        reason = tool.unavailable_reason(self)
        i = position.get(tool.name)
        if i is None or (reason is None) != (unavailable[i] is None):
            return registered, self._check_availability(registered), (tool, reason)
        return registered, unavailable, (tool, reason)

    def _resolved(
        self,
        registered: Sequence[ToolEntry],
        unavailable: tuple[str | None, ...],
        agent: str | None,
        provider: str | None,
        model: str | None,
        profile: str | None,
        subagent: str | None,
    ) -> PolicyResult:
        key = (agent, provider, model, profile, subagent, self.registry.version, unavailable)
        cached = self._policy_cache.get(key)
        if cached is None:
            cached = self._remove_denied_tools(
                resolve_policy(
                    self._catalog(self._described(registered, unavailable)),
                    self.config,
                    provider=provider,
                    model=model,
                    agent=agent,
                    profile=profile,
                    subagent=subagent,
                )
            )
            if len(self._policy_cache) >= 64:
                self._policy_cache.clear()
            self._policy_cache[key] = cached
        return cached

    def _remove_denied_tools(self, result: PolicyResult) -> PolicyResult:
        if not self.config.permissions.deny:
            return result
        engine = self._permission_engine()
        removed: dict[str, ToolDecision] = {}
        for name in result.enabled:
            verdict = engine.tool_denied(name, self.registry.find(name))
            if verdict is not None:
                where = f" in {verdict.source}" if verdict.source else ""
                removed[name] = ToolDecision(
                    name, False, "permissions", f"removed by deny rule {verdict.rule!r}{where}"
                )
        if not removed:
            return result
        decisions = [removed.get(d.name, d) for d in result.decisions]
        return PolicyResult(
            enabled=[n for n in result.enabled if n not in removed],
            disabled=[d for d in decisions if not d.enabled],
            warnings=result.warnings,
            decisions=decisions,
            call_rules=result.call_rules,
            errors=result.errors,
        )

    def enabled_tools(self, **selection: Any) -> list[Tool]:
        return [t for name in self.tools(**selection).enabled if (t := self.registry.find(name)) is not None]

    def visible_tools(self, session_id: str | None = None, **selection: Any) -> list[Tool]:
        """The enabled tools whose full definitions go into the next request of the in-memory
        session ``session_id``: deferred tools only once a search loaded them."""
        return self.deferred.visible(self.enabled_tools(**selection), session_id)

    def schema(
        self, format: str = "anthropic", *, session_id: str | None = None, **selection: Any
    ) -> list[dict[str, Any]]:
        """Definitions of the visible tools in a provider's format (see ``pegboard.core.render``)."""
        from pegboard.core.render import render_tools

        return render_tools(
            self.visible_tools(session_id, **selection),
            format,
            self.registry.provider_policies,
            provider=selection.get("provider"),
            model=selection.get("model"),
        )

    def prompt(self, **selection: Any) -> str:
        """The human-readable tool list for a system prompt (the second presentation channel)."""
        from pegboard.core.prompt import render_prompt

        return render_prompt(self, **selection)

    # -- permissions --------------------------------------------------------------------------
    @property
    def _permission_engine(self) -> Callable[..., PermissionEngine]:
        """The rule engine for one working directory and mode (the authorizer's, cached)."""
        return self._authorizer.engine

    def check(
        self,
        tool: str,
        tool_input: Mapping[str, Any],
        *,
        cwd: Path | str | None = None,
        mode: str | None = None,
        additional_dirs: Sequence[Path | str] = (),
        home: Path | str | None = None,
        session_rules: Mapping[str, Sequence[str]] | None = None,
    ) -> PermissionDecision:
        """May this call run? The rule engine's answer combined with ``check_permission`` hooks.
        The reason quotes the call, so it is redacted like every text that leaves the kernel."""
        engine = self._authorizer.engine(
            cwd=cwd, mode=mode, additional_dirs=additional_dirs, home=home, session_rules=session_rules
        )
        registered = self.tool(tool)
        from pegboard.core.permissions.subjects import check_call

        decision = check_call(engine, registered.name if registered else tool, tool_input, registered)
        if registered is not None and self.hooks.has("check_permission"):
            ctx = self.context(cwd=cwd, mode=engine.mode, additional_dirs=additional_dirs)
            call = ToolCall(registered, dict(tool_input), requested_name=tool)
            decision = resolve_sync(self._authorizer.with_hooks(decision, call, ctx, []))
        from pegboard.core.redaction import redact

        reason = redact(decision.reason, self.secrets)
        return decision if reason == decision.reason else decision.model_copy(update={"reason": reason})

    # -- calls --------------------------------------------------------------------------------
    def context(
        self,
        *,
        cwd: Path | str | None = None,
        mode: str | None = None,
        additional_dirs: Sequence[Path | str] = (),
        **fields: Any,
    ) -> ToolContext:
        """A ``ToolContext`` for this instance, with config-derived defaults filled in."""
        perms = self.config.permissions
        dirs = [*perms.additional_directories, *additional_dirs]
        return ToolContext(
            cwd=self.cwd if cwd is None else cwd if isinstance(cwd, Path) else Path(cwd),
            mode=mode or perms.default_mode or "default",
            additional_dirs=tuple(Path(d).expanduser() for d in dirs) if dirs else (),
            env=self.env,
            config=self._loaded_config,
            project_dir=self.cwd,
            _pegboard=self,
            **fields,
        )

    async def call(
        self, name: str, tool_input: Any = None, *, tool_use_id: str | None = None, **options: Unpack[CallOptions]
    ) -> ToolResult:
        """Run one call through the whole pipeline. Never raises for anything a caller sends.

        ``options`` are those of :meth:`session` (:class:`~pegboard.core.session.CallOptions`).
        The call runs in an in-memory session (``session_id``, or this instance's default
        one) that is not persisted; use :meth:`session` for state that outlives the process.
        """
        check_call_options("call", options)
        try:
            session = self._memory_session(options.get("session_id"))
        except SessionError as exc:
            return ToolResult.refusal("invalid_input", str(exc))
        cwd = options.get("cwd")
        return await self._run_call(
            session,
            name,
            tool_input,
            selection=selection_of(options),
            cwd=Path(cwd) if cwd is not None else session.cwd,
            mode=options.get("mode"),
            additional_dirs=tuple(Path(d) for d in extra) if (extra := options.get("additional_dirs")) else (),
            tool_use_id=tool_use_id,
            approver=options.get("approver"),
        )

    async def _call_in_session(
        self, session: Session, name: str, tool_input: Any, *, tool_use_id: str | None = None
    ) -> ToolResult:
        return await self._run_call(
            session,
            name,
            tool_input,
            selection=session.selection,
            cwd=session.cwd,
            mode=session.mode,
            additional_dirs=session.additional_dirs,
            tool_use_id=tool_use_id,
            approver=session.approver,
        )

    async def _run_call(
        self,
        session: Session,
        name: str,
        tool_input: Any,
        *,
        selection: Selection,
        cwd: Path,
        mode: str | None,
        additional_dirs: Sequence[Path],
        tool_use_id: str | None,
        approver: Approver | None,
    ) -> ToolResult:
        try:
            if self._tool_sources:
                self._sync_tool_sources()
            registered, unavailable, checked = self._call_availability(name)
            prepared = session._prepared_call
            if (
                prepared is None
                or prepared.context.config is not self._loaded_config
                or not prepared.fits(self.registry.version, unavailable, selection, cwd, mode, additional_dirs)
            ):
                policy = self._resolved(
                    registered,
                    unavailable,
                    selection.agent,
                    selection.provider,
                    selection.model,
                    selection.profile,
                    selection.subagent,
                )
                enabled, why = self._call_sets(policy)
                template = self.context(
                    cwd=cwd,
                    mode=mode,
                    additional_dirs=additional_dirs,
                    agent=selection.agent,
                    subagent=selection.subagent,
                    provider=selection.provider,
                    model=selection.model,
                    profile=selection.profile,
                    session_id=session.id,
                    call_rules=policy.call_rules,
                    session=session,
                )
                prepared = session._prepared_call = PreparedCall(
                    self.registry.version, unavailable, selection, cwd, mode, additional_dirs, enabled, why, template
                )
            ctx = prepared.context._for_call(tool_use_id)
        except Exception as exc:
            return ToolResult.refusal("tool_error", f"Pegboard could not prepare the call: {type(exc).__name__}: {exc}")
        return await self._pipeline.run(
            name,
            tool_input,
            ctx,
            enabled=prepared.enabled,
            approver=approver,
            disabled=prepared.disabled,
            availability=checked,
        )

    def _call_sets(self, policy: PolicyResult) -> tuple[set[str], dict[str, str]]:
        """The enabled names and the reasons for disabled ones, built once per cached policy."""
        found = self._call_set_cache.get(id(policy))
        if found is None or found[0] is not policy:
            if len(self._call_set_cache) >= 64:
                self._call_set_cache.clear()
            found = (policy, set(policy.enabled), {d.name: d.reason for d in policy.disabled})
            self._call_set_cache[id(policy)] = found
        return found[1], found[2]

    def call_sync(self, name: str, tool_input: Any = None, **options: Any) -> ToolResult:
        """:meth:`call` for synchronous code."""
        result: ToolResult = resolve_sync(self.call(name, tool_input, **options))
        return result

    # -- sessions -------------------------------------------------------------------------------
    def data_env(self) -> Mapping[str, str]:
        """The environment that locates the data directory: this instance's, then the process's."""
        from pegboard.core.store import DATA_DIR_ENV

        if self.env.get(DATA_DIR_ENV) or self.env.get("HOME"):
            return self.env
        return {**os.environ, **self.env}

    @property
    def session_store(self) -> SessionStore:
        """The store sessions live in: a ``session_store`` hook's, else SQLite in the data dir.

        Opened on first use, so listing tools never touches it.
        """
        if self._store is None:
            errors: list[HookError] = []
            answer = self.hooks.first_sync("session_store", errors, pegboard=self)
            self.warnings.extend(f"plugin {e.plugin}: session_store failed: {e.error}" for e in errors)
            wanted = self.config.sessions.store
            if answer is not None:
                self._store = answer
            elif wanted not in (None, "sqlite"):
                from pegboard.core.store import SessionStoreError

                why = "; ".join(str(e.error) for e in errors) or (
                    "no installed plugin supplies it (for postgres: install pegboard-store-postgres)"
                )
                raise SessionStoreError(f"sessions.store is {wanted!r} but that store cannot be opened: {why}")
            else:
                from pegboard.core.sqlitestore import SQLiteSessionStore
                from pegboard.core.store import STORE_FILE, default_data_dir

                sqlite = SQLiteSessionStore(default_data_dir(self.data_env()) / STORE_FILE)
                self.warnings.extend(sqlite.notices)
                self._store = sqlite
        return self._store

    def _retention_seconds(self) -> float:
        """How long an untouched session is kept (``sessions.retentionDays``, default 30 days)."""
        return float(self.config.sessions.retention_days) * 86400.0

    def prune_sessions(self, older_than: float | None = None, *, now: float | None = None) -> list[str]:
        """Remove stored sessions untouched for ``older_than`` seconds (default: the retention)."""
        import shutil
        import time

        from pegboard.core.store import default_data_dir

        age = self._retention_seconds() if older_than is None else older_than
        cutoff = (time.time() if now is None else now) - age
        removed: list[str] = []
        store = self.session_store
        open_ids = {s.id for s in self._open_sessions.values()}
        prune = getattr(store, "prune", None)  # a store that deletes them in one statement
        if callable(prune):
            removed = list(prune(cutoff, keep=open_ids))
        else:
            for record in store.sessions():
                if record.updated < cutoff and record.id not in open_ids and store.delete(record.id):
                    removed.append(record.id)
        for sid in removed:
            shutil.rmtree(default_data_dir(self.data_env()) / "sessions" / sid, ignore_errors=True)
        return removed

    def _prune_now_and_then(self, store: SessionStore) -> None:
        """Prune expired sessions at most once a day, when a persisted session opens."""
        import time

        now = time.time()
        last = store.get("", "pegboard-last-prune")
        try:
            due = last is None or now - float(last) > 86400.0
        except ValueError:
            due = True
        if due:
            store.put("", "pegboard-last-prune", repr(now))
            self.prune_sessions()

    def _memory_session(self, session_id: str | None = None) -> Session:
        if session_id is None and (found := self._memory_sessions.get(DEFAULT_MEMORY_SESSION)) is not None:
            return found
        sid = validate_session_id(session_id) if session_id is not None else DEFAULT_MEMORY_SESSION
        found = self._memory_sessions.get(sid)
        if found is None:
            record = self._memory_store.create(SessionRecord(id=sid, cwd=str(self.cwd)))
            found = Session(self, record, self._memory_store, persisted=False)
            self._memory_sessions[sid] = found
        return found

    def session(
        self, *, owner: str | None = None, persist: bool = True, **options: Unpack[CallOptions]
    ) -> Session:
        """Open a session (``async with pb.session(...) as s``): one conversation's calls.

        ``session_id`` of a stored session resumes it (its cwd, mode, selection and every
        persisted slot come back; arguments given here override the stored choices); an
        unknown id creates a session with that id. ``owner`` names who may resume it
        (``pegboard serve`` passes the MCP session or token); another owner gets a
        ``SessionError``. ``persist=False`` keeps it in memory only. ``options`` are those
        of :meth:`call` (:class:`~pegboard.core.session.CallOptions`).
        """
        check_call_options("session", options)
        session_id = options.get("session_id")
        mode = options.get("mode")
        cwd = options.get("cwd")
        additional_dirs = options.get("additional_dirs", ())
        if session_id is not None:
            validate_session_id(session_id)
        if mode is not None:
            from pegboard.core.config import PERMISSION_MODES

            if mode not in PERMISSION_MODES:
                raise SessionError(f"unknown permission mode {mode!r}; use one of {', '.join(PERMISSION_MODES)}")
        store = self.session_store if persist else self._memory_store
        if persist:
            self._prune_now_and_then(store)
        sid = session_id or new_session_id()
        existing = store.load(sid) if session_id is not None else None
        if existing is not None and existing.owner is not None and existing.owner != owner:
            raise SessionError(f"session {sid!r} belongs to another client; open a new session instead")
        wanted: dict[str, Any] = {**selection_of(options).as_kwargs(), "mode": mode}
        if cwd is not None:
            wanted["cwd"] = str(Path(cwd).resolve())
        if additional_dirs:
            wanted["additional_dirs"] = tuple(str(Path(d)) for d in additional_dirs)
        from dataclasses import replace as _replace

        if existing is None:
            fresh = SessionRecord(id=sid, owner=owner, cwd=str(self.cwd.resolve()))
            record = _replace(fresh, **{k: v for k, v in wanted.items() if v is not None})
            record = store.create(_replace(record, meta={**record.meta, OPENED_CWD: record.cwd}))
        else:
            changes = {k: v for k, v in wanted.items() if v is not None}
            if changes.get("cwd") == existing.meta.get(OPENED_CWD):
                changes.pop("cwd", None)  # the directory it was opened in: a tool's move (a worktree) stays
            elif "cwd" in changes:
                changes["meta"] = {**existing.meta, OPENED_CWD: changes["cwd"]}
            record = _replace(existing, **changes)
            if changes:
                store.save(record)
        quota = int(self.config.sessions.result_quota_mib * 1024 * 1024)
        session = Session(
            self, record, store, persisted=persist, approver=options.get("approver"), resumed=existing is not None,
            result_quota=quota,
        )
        self._open_sessions[session.id + f"#{id(session)}"] = session
        if self.hooks.has("session_opened"):
            errors: list[HookError] = []
            self.hooks.all_sync("session_opened", errors, session=session)
            session.notices.extend(f"plugin {e.plugin}: session_opened failed: {e.error}" for e in errors)
        return session

    def session_sync(self, **options: Any) -> Session:
        """:meth:`session` for synchronous code: ``with pb.session_sync() as s: s.call_sync(...)``."""
        return self.session(**options)

    def _forget_session(self, session: Session) -> None:
        self._open_sessions.pop(session.id + f"#{id(session)}", None)

    def _on_event(self, event: SessionEvent, session: Session) -> None:
        errors: list[HookError] = []
        self.hooks.tell(event.kind, errors, event=event, session=session)

    async def aclose(self) -> None:
        """Close every open session and let plugins clean up (``pegboard_close``)."""
        if self._closed:
            return
        self._closed = True
        for session in list(self._open_sessions.values()) + list(self._memory_sessions.values()):
            await session.close()
        errors: list[HookError] = []
        await self.hooks.all("pegboard_close", errors, pegboard=self)
        self.warnings.extend(f"plugin {e.plugin}: pegboard_close failed: {e.error}" for e in errors)
        if self._store is not None:
            self._store.close()

    def close(self) -> None:
        """:meth:`aclose` for synchronous code (no event loop is started when no session is
        open and every ``pegboard_close`` implementation is synchronous)."""
        if self._open_sessions or self._memory_sessions:
            resolve_sync(self.aclose())
            return
        if self._closed:
            return
        self._closed = True
        errors: list[HookError] = []
        self.hooks.all_sync("pegboard_close", errors, pegboard=self)
        self.warnings.extend(f"plugin {e.plugin}: pegboard_close failed: {e.error}" for e in errors)
        if self._store is not None:
            self._store.close()

    async def __aenter__(self) -> Pegboard:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __enter__(self) -> Pegboard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- session events -----------------------------------------------------------------------
    async def fire(self, event: str, **kwargs: Any) -> list[HookDecision]:
        """Fire a session event (``session_start``, ``session_end``); returns the hooks' answers.

        A hook that raised is reported as an answer with a notice naming it, never raised.
        """
        if event not in SESSION_EVENTS:
            raise ValueError(f"unknown event {event!r}; Pegboard fires {', '.join(SESSION_EVENTS)}")
        kwargs.setdefault("context", self.context(session_id=kwargs.get("session_id")))
        errors: list[HookError] = []
        answers = [a for _p, a in await self.hooks.all(event, errors, **kwargs) if isinstance(a, HookDecision)]
        return answers + [
            HookDecision(notices=(f"{e.hook} hook of {e.plugin} failed: {e.error}",), source=e.plugin) for e in errors
        ]
