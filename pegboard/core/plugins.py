"""Finding and loading plugins, each in isolation.

A plugin is a module or object with ``@hookimpl`` functions, found through an entry point
in group ``pegboard`` or passed in code. An import error, a registration hook that raises,
or a tool that fails validation marks that one plugin ``failed`` with the error; nothing it
registered is kept, and every other plugin loads.
"""

from __future__ import annotations

import functools
import importlib
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Literal

import pluggy

from pegboard import hookspecs
from pegboard.core import outputcache
from pegboard.core.awaitables import resolve_sync
from pegboard.core.declarations import Declaration, read_declaration
from pegboard.core.markers import PROJECT_NAME
from pegboard.core.providers import ProviderPolicy
from pegboard.core.registry import DeclaredTool, Registry
from pegboard.core.sections import ConfigSection, DeclaredSection, widens_from_data
from pegboard.core.selection import PluginSelection
from pegboard.core.tools import Profile, Tool

ENTRY_POINT_GROUP = "pegboard"
REGISTRATION_HOOKS = (
    "register_config_sections",
    "register_tools",
    "register_groups",
    "register_profiles",
    "register_provider_policies",
    "register_permission_families",
)

Status = Literal["loaded", "failed", "blocked"]


@dataclass
class PluginInfo:
    """One plugin as ``pegboard plugins`` shows it."""

    name: str
    distribution: str | None = None
    version: str | None = None
    hooks: list[str] = field(default_factory=list)
    status: Status = "loaded"
    error: str | None = None
    module: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "hooks": list(self.hooks),
            "status": self.status,
            "error": self.error,
        }


class PluginManager(pluggy.PluginManager):
    """pluggy's manager, telling ``on_change`` listeners when the registered plugins change,
    so that the hook runner works out each hook's implementations once per set of plugins."""

    def __init__(self, project_name: str) -> None:
        super().__init__(project_name)
        self.on_change: list[Callable[[], None]] = []

    def register(self, plugin: object, name: str | None = None) -> str | None:
        try:
            return super().register(plugin, name)
        finally:
            self._changed()

    def unregister(self, plugin: object | None = None, name: str | None = None) -> Any:
        try:
            return super().unregister(plugin, name)
        finally:
            self._changed()

    def _changed(self) -> None:
        for listener in self.on_change:
            listener()


#: Entry-point group of hook contracts plugins declare for other plugins (name = a label,
#: value = a module of ``@hookspec`` functions), as pytest's ``pytest_addhooks``: the
#: WebSearch plugin's ``register_search_backends``, the Skill plugin's ``register_skills``.
HOOKSPEC_GROUP = "pegboard.hookspecs"


def plugin_hookspecs() -> list[ModuleType]:
    """The hookspec modules installed distributions declare, loaded (each is small)."""
    from pegboard.core.entrypoints import entry_points as group_entry_points

    selection = PluginSelection.from_settings()
    found: list[ModuleType] = []
    for ep in group_entry_points(HOOKSPEC_GROUP):
        if selection.blocked_reason(ep.dist_name, ep.name):
            continue
        try:
            module = importlib.import_module(ep.value.partition(":")[0])
        except Exception:  # a broken contract module leaves its hooks unknown, never the host down
            continue
        found.append(module)
    return found


def new_plugin_manager() -> PluginManager:
    pm = PluginManager(PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    for module in plugin_hookspecs():
        try:
            pm.add_hookspecs(module)
        except Exception:
            continue
    return pm


def wrapper_problems(plugin_name: str, impls: Iterable[Any]) -> list[str]:
    """Hook wrappers (``hookwrapper=True`` / ``wrapper=True``) are refused: Pegboard calls each
    implementation on its own, awaits it and isolates its failure, so a wrapper around the
    others would never run as its author meant."""
    return [
        f"plugin {plugin_name!r} implements {hook} as a hook wrapper "
        f"({'hookwrapper' if impl.hookwrapper else 'wrapper'}=True), which Pegboard does not support; "
        f"make {hook} a plain @hookimpl (tryfirst=True or trylast=True set its place in the order)"
        for hook, impl in impls
        if impl.hookwrapper or impl.wrapper
    ]


def entry_points() -> list[Any]:
    """Entry points in group ``pegboard``, in a stable order."""
    from pegboard.core.entrypoints import entry_points as scan

    return sorted(scan(ENTRY_POINT_GROUP), key=lambda ep: (ep.name, ep.value))


def _distribution(ep: Any) -> tuple[str | None, str | None]:
    """Name and version of the distribution behind ``ep`` (ours, or an ``importlib.metadata`` one)."""
    if hasattr(ep, "dist_name"):
        return ep.dist_name, ep.version
    dist = getattr(ep, "dist", None)
    return (dist.metadata["Name"], dist.metadata["Version"]) if dist is not None else (None, None)


def _availability(declared: Any) -> bool | str | Mapping[str, Any]:
    """A declared tool's availability check: a reference to a light check (a
    ``"module:function"`` or a ``{"call", "args"}`` mapping), or whether it has one at all."""
    if isinstance(declared, str) and ":" in declared:
        return declared
    if isinstance(declared, Mapping) and isinstance(declared.get("call"), str):
        return declared
    return bool(declared)


def _error_text(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"


def _unknown_hook(name: str, pm: pluggy.PluginManager) -> str:
    """``unknown hook 'x'; did you mean 'y'?`` against every hook ``pm`` has a contract for."""
    import difflib

    known = [n for n, caller in vars(pm.hook).items() if not n.startswith("_") and caller.has_spec()]
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else "; see pegboard/hookspecs.py for the hooks"
    return f"unknown hook {name!r}{hint}"


class PluginLoader:
    """Registers plugins into a plugin manager and a registry, one at a time."""

    def __init__(
        self,
        pm: pluggy.PluginManager,
        registry: Registry,
        selection: PluginSelection,
        configured: Callable[[str], Any] | None = None,
    ) -> None:
        self.pm = pm
        #: the raw config value at a dotted key (``None``: unset), for ``when_configured`` hooks
        self._configured_value = configured
        self.registry = registry
        self.selection = selection
        self.infos: list[PluginInfo] = []
        #: declared plugins not imported yet, by name
        self._pending: dict[str, tuple[PluginInfo, Any]] = {}
        #: for each call-time hook, the declared plugins its first lookup imports
        self._pending_hooks: dict[str, list[str]] = {}
        #: the declared plugins not imported yet whose hooks wait for config keys, and the
        #: hooks already queued for each (see :meth:`config_changed`)
        self._waiting: dict[str, tuple[Declaration, set[str]]] = {}
        #: each plugin's place in load order, so hooks run in that order however late it loads
        self.rank: dict[str, int] = {}

    def _configured(self, key: str) -> bool:
        """Whether the config sets ``key``; without a config to ask, every key counts as set
        (so nothing a ``when_configured`` hook might do is skipped)."""
        return self._configured_value is None or self._configured_value(key) is not None

    def load_entry_points(self, eps: Sequence[Any] | None = None) -> None:
        self._block_families()
        for ep in entry_points() if eps is None else eps:
            dist, version = _distribution(ep)
            info = PluginInfo(ep.name, dist, version, module=ep.value)
            self.rank.setdefault(ep.name, len(self.rank))
            self.infos.append(info)
            if reason := self.selection.blocked_reason(ep.name, dist):
                info.status, info.error = "blocked", reason
                continue
            if self._declare(info, ep):
                continue
            self._load(info, ep)

    def _block_families(self) -> None:
        """Rule families whose distribution this selection disables (``plugins.disabled``)
        are unknown to this ``Pegboard``: their rules fail closed like any missing family."""
        from pegboard.core.permissions.families import default_families

        families = self.registry.permission_families
        for ep in default_families().sources.values():
            if reason := self.selection.blocked_reason(ep.dist_name, ep.name):
                families.blocked[ep.name] = reason

    def _load(self, info: PluginInfo, ep: Any) -> None:
        try:
            obj = ep.load()
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            self._fail(info, f"cannot import {ep.value}: {_error_text(exc)}")
            return
        self._register(info, obj)

    def _declare(self, info: PluginInfo, ep: Any) -> bool:
        """Register what ``ep``'s declaration file declares, leaving its module unimported;
        ``False`` (nothing registered) when it has no usable declaration."""
        declaration = read_declaration(ep.value)
        if declaration is None or not declaration.lazy_under(self._configured):
            return False
        owner = info.name
        registry = self.registry
        try:
            for t in declaration.tools:
                registry.add_declared_tool(DeclaredTool(
                    name=t["name"], owner=owner, load=functools.partial(self._declared_tool, owner, t["name"]),
                    aliases=tuple(t.get("aliases", ())), groups=tuple(t.get("groups", ())),
                    optional=bool(t.get("optional")), enabled_by=t.get("enabled_by"), server=t.get("server"),
                    permission_family=t.get("permission_family"), has_availability=_availability(t.get("availability")),
                    deferred=bool(t.get("deferred")), loads_deferred=bool(t.get("loads_deferred")),
                    reads_results=bool(t.get("reads_results")), has_result_note=bool(t.get("result_note")),
                ))
            for g in declaration.groups:
                registry.add_group(g["name"], g["members"], g.get("description", ""), owner=owner)
            for p in declaration.profiles:
                registry.add_profile(Profile(p["name"], p.get("allow"), p.get("description", "")), owner)
            for pol in declaration.provider_policies:
                registry.add_provider_policy(self._declared_policy(pol, owner), owner)
            for sec in declaration.config_sections:
                registry.add_declared_section(DeclaredSection(
                    sec["key"], sec.get("description", ""), owner,
                    {path: widens_from_data(mark) for path, mark in sec.get("keys", {}).items()},
                    functools.partial(self._declared_section, owner, sec["key"]),
                ))
        except Exception as exc:
            registry.remove_owner(owner)
            self._fail(info, f"{declaration.path}: {_error_text(exc)}")
            return True
        info.hooks = sorted(declaration.hooks)
        self._pending[owner] = (info, ep)
        queued = set(declaration.call_time_hooks_under(self._configured))
        for hook in queued:
            self._pending_hooks.setdefault(hook, []).append(owner)
        if declaration.when_configured:
            self._waiting[owner] = (declaration, queued)
        registry.materialize = self.materialize
        return True

    def waiting_for(self, hook: str) -> set[str]:
        """The declared plugins, not imported yet, whose ``hook`` waits for config keys."""
        return {owner for owner, (declaration, _) in self._waiting.items() if hook in declaration.when_configured}

    def config_changed(self) -> None:
        """The config changed: a declared plugin whose ``when_configured`` hooks now have their
        keys set gets those hooks queued (so the next lookup imports it), or is imported now
        when one of them must run at start-up (the caller fires its ``pegboard_ready``)."""
        for owner, (declaration, queued) in list(self._waiting.items()):
            if owner not in self._pending:
                del self._waiting[owner]
            elif not declaration.lazy_under(self._configured):
                del self._waiting[owner]
                self.materialize(owner)
            else:
                for hook in set(declaration.call_time_hooks_under(self._configured)) - queued:
                    queued.add(hook)
                    self._pending_hooks.setdefault(hook, []).append(owner)

    def _declared_section(self, owner: str, key: str) -> ConfigSection | None:
        self.materialize(owner)
        found = self.registry.config_sections.get(key)
        return found if isinstance(found, ConfigSection) else None

    def materialize_hook(self, hook_name: str) -> None:
        """Import every declared plugin that implements ``hook_name`` (before its first lookup)."""
        owners = self._pending_hooks.pop(hook_name, None)
        for owner in owners or ():
            self.materialize(owner)

    def _declared_policy(self, data: Mapping[str, Any], owner: str) -> ProviderPolicy:
        """A provider policy from its declaration; its schema hooks import the plugin and ask
        the real policy that replaced this one."""
        name = data["name"]

        def real() -> ProviderPolicy | None:
            self.materialize(owner)
            return next((p for p in self.registry.provider_policies
                         if p.name == name and getattr(p, "_owner", None) == owner), None)

        def transform(definitions: list[dict[str, Any]]) -> list[dict[str, Any]]:
            policy = real()
            return policy.transform_schema(definitions) if policy and policy.transform_schema else definitions

        def explain(definitions: list[dict[str, Any]]) -> list[str]:
            policy = real()
            return policy.explain_schema(definitions) if policy and policy.explain_schema else []

        return ProviderPolicy(
            name=name,
            providers=tuple(data["providers"]),
            remove=dict(data.get("remove", {})),
            exclusive=tuple(data.get("exclusive", ())),
            exclusive_unless=dict(data.get("exclusive_unless", {})),
            transform_schema=transform if data.get("transform_schema") else None,
            explain_schema=explain if data.get("explain_schema") else None,
            description=data.get("description", ""),
        )

    def _declared_tool(self, owner: str, name: str) -> Tool | None:
        self.materialize(owner)
        return self.registry.tools.get(name)

    def materialize(self, owner: str) -> None:
        """Import the declared plugin ``owner`` and register its real objects in place of the
        declared ones (once; a plugin already imported is left alone)."""
        pending = self._pending.pop(owner, None)
        if pending is None:
            return
        info, ep = pending
        registry = self.registry
        version = registry.version
        registry.forget_declared(owner)
        self._load(info, ep)
        if info.status == "loaded":
            registry.version = version  # the same set as declared: nothing changed for a host
        else:
            registry.remove_owner(owner)

    def load_objects(self, objects: Iterable[object]) -> None:
        taken = {i.name for i in self.infos}
        for obj in objects:
            base = getattr(obj, "__name__", None) or type(obj).__name__
            name, n = base, 2
            while name in taken:
                name, n = f"{base}-{n}", n + 1
            taken.add(name)
            info = PluginInfo(name, module=getattr(obj, "__module__", None))
            self.rank.setdefault(name, len(self.rank))
            self.infos.append(info)
            if reason := self.selection.blocked_reason(name):
                info.status, info.error = "blocked", reason
                continue
            self._register(info, obj)

    def _fail(self, info: PluginInfo, error: str) -> None:
        """A failed plugin is reported, and the start-up cache keeps nothing of this run: the next
        run tries the plugin again."""
        info.status, info.error = "failed", error
        outputcache.refuse(f"plugin {info.name} failed")

    def _register(self, info: PluginInfo, obj: object) -> None:
        try:
            self.pm.register(obj, name=info.name)
        except Exception as exc:
            self._fail(info, _error_text(exc))
            return
        callers = self.pm.get_hookcallers(obj) or []
        info.hooks = sorted(caller.name for caller in callers)
        unknown = [caller.name for caller in callers if not caller.has_spec()]
        if unknown:
            self.pm.unregister(obj)
            self._fail(info, "; ".join(_unknown_hook(name, self.pm) for name in unknown))
            return
        mine = [(c.name, i) for c in callers for i in c.get_hookimpls() if i.plugin is obj]
        if wrappers := wrapper_problems(info.name, mine):
            self.pm.unregister(obj)
            info.status, info.error = "failed", "; ".join(wrappers)
            return
        try:
            self._run_registration(info.name, obj)
        except Exception as exc:
            self.pm.unregister(obj)
            self.registry.remove_owner(info.name)
            self._fail(info, _error_text(exc))

    def _run_registration(self, owner: str, obj: object) -> None:
        registry = self.registry
        callbacks: dict[str, Callable[..., None]] = {
            "register_tools": lambda tool: registry.add_tool(tool, owner),
            "register_groups": lambda name, members, description="": registry.add_group(
                name, members, description, owner=owner
            ),
            "register_profiles": lambda profile: registry.add_profile(profile, owner),
            "register_provider_policies": lambda policy: registry.add_provider_policy(policy, owner),
            "register_config_sections": lambda section: registry.add_config_section(section, owner),
            "register_permission_families": lambda family: registry.add_permission_family(family, owner),
        }
        for hook_name in REGISTRATION_HOOKS:
            caller = getattr(self.pm.hook, hook_name)
            for impl in caller.get_hookimpls():
                if impl.plugin is obj:
                    kwargs = {"register": callbacks[hook_name]}
                    resolve_sync(impl.function(**{k: v for k, v in kwargs.items() if k in impl.argnames}))
