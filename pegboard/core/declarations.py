"""Declarations: what a plugin module registers, written down so that it need not be imported.

A plugin module ``pegboard_x`` may ship a JSON file beside it (``pegboard_x.pegboard.json``
next to ``pegboard_x.py``; ``pegboard.json`` inside a package ``pegboard_x/``) that lists the
hooks it implements and the tools, groups, profiles and provider policies its registration
hooks register. When every hook it implements is a declarable registration hook
(:data:`DECLARABLE_HOOKS`), the loader registers the declared entries and imports the module
only when something needs a real object: a tool is called, its definition rendered, its
availability checked, a provider's schema transform applied.

The files are generated from the code (``python -m pegboard.core.declarations write MODULE...``,
which ``python3 dev.py declarations`` runs) and a test checks that each one equals what its
module registers. A module without a file, or with one this version cannot read, is imported
at start-up as before.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: The version of the file format this kernel reads and writes.
FORMAT = 2

#: Hooks whose effect a declaration describes completely.
DECLARABLE_HOOKS = frozenset({
    "register_tools", "register_groups", "register_profiles", "register_provider_policies",
    "register_config_sections",
})

#: Hooks that need no import ahead of time: a module not imported yet has nothing to close.
UNLOADED_SKIP_HOOKS = frozenset({"pegboard_close"})

#: Hooks that must run at start-up in every plugin implementing them (a module implementing
#: one is imported at start-up, declaration or not). Every other hook (``pre_tool_use``,
#: ``check_permission``, ``register_commands``...) imports its declared implementers the first
#: time the kernel looks the hook up.
START_UP_HOOKS = frozenset({"pegboard_ready", "register_permission_families"})


@dataclass(frozen=True)
class Declaration:
    """A parsed declaration file."""

    module: str
    hooks: tuple[str, ...]
    tools: tuple[Mapping[str, Any], ...] = ()
    groups: tuple[Mapping[str, Any], ...] = ()
    profiles: tuple[Mapping[str, Any], ...] = ()
    provider_policies: tuple[Mapping[str, Any], ...] = ()
    config_sections: tuple[Mapping[str, Any], ...] = ()
    #: hook name -> the config keys its implementation waits for (``when_configured``)
    when_configured: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    path: str = field(default="", compare=False)

    @property
    def lazy(self) -> bool:
        """True when the module can wait until something needs it whatever the config says:
        no hook it implements has to run at start-up."""
        return self.lazy_under(lambda key: True)

    def lazy_under(self, configured: Callable[[str], bool]) -> bool:
        """True when, with the config keys for which ``configured(key)`` is true set, no hook
        the module implements has to run at start-up."""
        return not set(self.active_hooks(configured)) & START_UP_HOOKS

    def active_hooks(self, configured: Callable[[str], bool]) -> tuple[str, ...]:
        """The hooks that would be called: a ``when_configured`` one only when one of its
        keys is set."""
        return tuple(h for h in self.hooks
                     if h not in self.when_configured or any(configured(k) for k in self.when_configured[h]))

    @property
    def call_time_hooks(self) -> tuple[str, ...]:
        """The hooks whose first lookup imports the module."""
        return self.call_time_hooks_under(lambda key: True)

    def call_time_hooks_under(self, configured: Callable[[str], bool]) -> tuple[str, ...]:
        """:attr:`call_time_hooks` with the config keys ``configured`` says are set."""
        return tuple(h for h in self.active_hooks(configured)
                     if h not in DECLARABLE_HOOKS and h not in UNLOADED_SKIP_HOOKS)


def _module_location(module: str, path: list[str] | None = None) -> tuple[str, bool] | None:
    """Where ``module`` (dotted) would be imported from, found without importing anything:
    ``(file or package directory, is_package)``; ``None`` when it cannot be found this way."""
    parts = module.split(".")
    if not all(p.isidentifier() for p in parts):
        return None
    search = sys.path if path is None else path
    for entry in search:
        base = os.path.join(entry or ".", *parts[:-1])
        leaf = os.path.join(base, parts[-1])
        if os.path.isfile(os.path.join(leaf, "__init__.py")):
            return leaf, True
        if os.path.isfile(leaf + ".py"):
            return leaf + ".py", False
    return None


def declaration_path(module: str, path: list[str] | None = None) -> str | None:
    """The file that declares ``module`` (which may not exist), or ``None`` when the module is
    not a plain file or package on the path."""
    found = _module_location(module, path)
    if found is None:
        return None
    where, package = found
    return os.path.join(where, "pegboard.json") if package else where[: -len(".py")] + ".pegboard.json"


def read_declaration(value: str, path: list[str] | None = None) -> Declaration | None:
    """The declaration of the entry point ``value`` (``module``; an ``module:attr`` entry point
    has none), or ``None`` when there is no readable file of this format for it."""
    module = value.strip()
    if ":" in module:
        return None
    file = declaration_path(module, path)
    if file is None:
        return None
    try:
        with open(file, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("module") != module:
        return None
    try:
        return Declaration(
            module=module,
            hooks=tuple(data["hooks"]),
            tools=tuple(data.get("tools", ())),
            groups=tuple(data.get("groups", ())),
            profiles=tuple(data.get("profiles", ())),
            provider_policies=tuple(data.get("provider_policies", ())),
            config_sections=tuple(data.get("config_sections", ())),
            when_configured={str(h): tuple(str(k) for k in keys)
                             for h, keys in dict(data.get("when_configured", {})).items()},
            path=file,
        )
    except (KeyError, TypeError, ValueError):
        return None


# -- writing ------------------------------------------------------------------------------------
def _tool_entry(tool: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": tool.name,
        "aliases": list(tool.aliases),
        "groups": list(tool.groups),
        "optional": tool.optional,
        "server": tool.server,
        "permission_family": tool.permission_family,
        "availability": availability_reference(tool.availability),
        "deferred": tool.deferred,
        "loads_deferred": tool.loads_deferred,
        "reads_results": tool.reads_results,
        "result_note": tool.result_note is not None,
    }
    if tool.enabled_by is not None:  # written only where used, so older files stay current
        entry["enabled_by"] = tool.enabled_by
    return entry


def availability_reference(check: Any) -> str | bool | dict[str, Any]:
    """How a declaration names a tool's availability check: ``"module:function"`` for a
    module-level function and ``{"call": "module:Class", "args": {...}}`` for a frozen
    dataclass of plain values (each asked by importing only that module), ``True`` for any
    other check (asked by importing the tool's plugin), ``False`` for none."""
    if check is None:
        return False
    if dataclasses.is_dataclass(check) and not isinstance(check, type):
        cls = type(check)
        args = {f.name: getattr(check, f.name) for f in dataclasses.fields(check)}
        try:
            json.dumps(args)
        except (TypeError, ValueError):
            return True
        if getattr(sys.modules.get(cls.__module__), cls.__qualname__, None) is cls:
            return {"call": f"{cls.__module__}:{cls.__qualname__}", "args": args}
        return True
    module, qualname = getattr(check, "__module__", None), getattr(check, "__qualname__", "")
    if not module or not qualname or "<" in qualname or "." in qualname:
        return True
    if getattr(sys.modules.get(module), qualname, None) is not check:
        return True
    return f"{module}:{qualname}"


def resolve_check(reference: str | Mapping[str, Any]) -> Any:
    """The availability check a declaration names (see :func:`availability_reference`)."""
    if isinstance(reference, str):
        return resolve_reference(reference)
    return resolve_reference(reference["call"])(**reference.get("args", {}))


def resolve_reference(reference: str) -> Any:
    """The object a ``"module:attribute"`` reference names (its module imported)."""
    import importlib

    module, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(module), attribute)


def _policy_entry(policy: Any) -> dict[str, Any]:
    return {
        "name": policy.name,
        "providers": list(policy.providers),
        "remove": dict(policy.remove),
        "exclusive": list(policy.exclusive),
        "exclusive_unless": dict(policy.exclusive_unless),
        "description": policy.description,
        "transform_schema": policy.transform_schema is not None,
        "explain_schema": policy.explain_schema is not None,
    }


def _section_entry(section: Any) -> dict[str, Any]:
    from pegboard.core.sections import widens_to_data

    return {
        "key": section.key,
        "description": section.description,
        "keys": {path: widens_to_data(marker) for path, marker in section.declarations().items()},
    }


def declare(module: str) -> dict[str, Any]:
    """Import ``module``, run its registration hooks and return its declaration as data."""
    import importlib

    from pegboard.core.awaitables import resolve_sync
    from pegboard.core.plugins import REGISTRATION_HOOKS, new_plugin_manager

    obj = importlib.import_module(module)
    pm = new_plugin_manager()
    pm.register(obj, name=module)
    hooks = sorted(caller.name for caller in pm.get_hookcallers(obj) or [])
    out: dict[str, Any] = {"format": FORMAT, "module": module, "hooks": hooks,
                           "tools": [], "groups": [], "profiles": [], "provider_policies": [],
                           "config_sections": []}
    callbacks: dict[str, Callable[..., None]] = {
        "register_tools": lambda tool: out["tools"].append(_tool_entry(tool)),
        "register_groups": lambda name, members, description="": out["groups"].append(
            {"name": name, "members": list(members), "description": description}
        ),
        "register_profiles": lambda profile: out["profiles"].append(
            {"name": profile.name, "allow": None if profile.allow is None else list(profile.allow),
             "description": profile.description}
        ),
        "register_provider_policies": lambda policy: out["provider_policies"].append(_policy_entry(policy)),
        "register_config_sections": lambda section: out["config_sections"].append(_section_entry(section)),
        "register_permission_families": lambda family: None,
    }
    from pegboard.core.markers import WHEN_CONFIGURED_ATTR

    waits = {caller.name: list(keys) for caller in pm.get_hookcallers(obj) or []
             for impl in caller.get_hookimpls()
             if impl.plugin is obj and (keys := getattr(impl.function, WHEN_CONFIGURED_ATTR, None))}
    if waits:  # written only where used, so older files stay current
        out["when_configured"] = waits
    for hook_name in REGISTRATION_HOOKS:
        for impl in getattr(pm.hook, hook_name).get_hookimpls():
            if impl.plugin is obj and "register" in impl.argnames:
                resolve_sync(impl.function(register=callbacks[hook_name]))
    return out


def render(data: Mapping[str, Any]) -> str:
    """The file's text: stable, one key per line, ending in a newline."""
    return json.dumps(data, indent=2, sort_keys=False, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    """``write MODULE...``: (re)generate each module's declaration file;
    ``check MODULE...``: exit 1 naming every file that differs from its module."""
    if len(argv) < 2 or argv[0] not in {"write", "check"}:
        print("usage: python -m pegboard.core.declarations write|check MODULE...", file=sys.stderr)
        return 2
    stale = 0
    for module in argv[1:]:
        file = declaration_path(module)
        if file is None:
            print(f"{module}: not a module file or package on sys.path; no declaration", file=sys.stderr)
            stale += 1
            continue
        text = render(declare(module))
        try:
            with open(file, encoding="utf-8") as fh:
                current = fh.read()
        except OSError:
            current = None
        if current == text:
            continue
        if argv[0] == "write":
            with open(file, "w", encoding="utf-8") as fh:
                fh.write(text)
            print(f"wrote {file}")
        else:
            print(f"{file} is out of date; run python3 dev.py declarations", file=sys.stderr)
            stale += 1
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
