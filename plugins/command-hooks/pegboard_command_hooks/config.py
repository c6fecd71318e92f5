"""The ``hooks`` config key: handlers per event, gathered from every config scope.

Shape (the same in TOML, JSON and JSON5)::

    {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "..."}]}]}}

Hooks from every scope merge; the kernel's config merge replaces lists of objects, so this
module reads each layer itself. A handler that appears in several scopes (or under several
matchers of one event) runs once; every place it was found is kept for ``pegboard hooks list``.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, RootModel

from pegboard import NEUTRAL, ConfigLayer, ConfigSection, StashKey, ToolContext, Widens
from pegboard.trust import untrusted_message

# Events Pegboard fires, the kernel hook that carries each, and what the matcher is tested on.
EVENTS: dict[str, str] = {
    "PreToolUse": "pre_tool_use",
    "PostToolUse": "post_tool_use",
    "PostToolUseFailure": "post_tool_use_failure",
    "PermissionRequest": "permission_request",
    "SessionStart": "session_start",
    "SessionEnd": "session_end",
}
TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest"})
HANDLER_TYPES = frozenset({"command", "http"})
KNOWN_UNSUPPORTED_TYPES = frozenset({"prompt", "agent", "mcp_tool"})
DEFAULT_TIMEOUT = 60.0

# Lowest precedence first, like the kernel's own order; an unknown scope sorts before managed.
SCOPE_ORDER = ("default", "user", "project", "project-local", "cli", "code", "managed")

HTTP_ALLOWLIST_KEY = "allowedHttpHookUrls"
DISABLE_KEY = "disableAllHooks"
MANAGED_ONLY_KEY = "allowManagedHooksOnly"

#: Hook events of other products that Pegboard never fires: their handlers load but do not run.
FOREIGN_EVENTS = ("UserPromptSubmit", "Notification", "Stop", "SubagentStop", "PreCompact", "PostCompact")


def event_name(name: str) -> str:
    """``PreToolUse``, ``pre_tool_use`` or ``pretooluse`` -> ``PreToolUse``; unknown names are an error."""
    folded = name.replace("_", "").replace("-", "").lower()
    for event in EVENTS:
        if event.lower() == folded:
            return event
    raise ValueError(f"unknown hook event {name!r}; Pegboard fires {', '.join(EVENTS)}")


@dataclass(frozen=True)
class Source:
    """Where a handler was configured."""

    scope: str
    path: str | None

    @property
    def label(self) -> str:
        return f"{self.scope}:{self.path}" if self.path else self.scope


@dataclass
class Handler:
    """One configured hook handler (``command`` or ``http``), with where it came from."""

    event: str
    matcher: str
    spec: dict[str, Any]
    sources: list[Source] = field(default_factory=list)
    problem: str | None = None

    @property
    def type(self) -> str:
        return str(self.spec.get("type", "command"))

    @property
    def key(self) -> str:
        """Identity for de-duplication: the handler's own fields, not where it was written."""
        return json.dumps(self.spec, sort_keys=True, default=str)

    @property
    def timeout(self) -> float:
        value = self.spec.get("timeout")
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            return float(value)
        return DEFAULT_TIMEOUT

    @property
    def fail_closed(self) -> bool:
        return self.spec.get("failClosed") is True

    @property
    def condition(self) -> str | None:
        value = self.spec.get("if")
        return value if isinstance(value, str) and value.strip() else None

    @property
    def label(self) -> str:
        """A short human name: the command line or the URL."""
        if self.type == "http":
            text = str(self.spec.get("url", "?"))
        elif isinstance(self.spec.get("args"), list):
            argv = self.argv or []
            text = " ".join(argv)
        else:
            text = str(self.spec.get("command", "?"))
        text = " ".join(text.split())
        return text if len(text) <= 80 else text[:77] + "..."

    @property
    def argv(self) -> list[str] | None:
        """Exec form: ``command`` followed by ``args``, or ``args`` alone; ``None`` for shell form."""
        args = self.spec.get("args")
        if not isinstance(args, list):
            return None
        command = self.spec.get("command")
        argv = [str(a) for a in args]
        return [str(command), *argv] if isinstance(command, str) and command else argv

    @property
    def source_label(self) -> str:
        return self.sources[0].label if self.sources else "config"

    def to_json(self) -> dict[str, Any]:
        return {
            "event": self.event,
            "matcher": self.matcher,
            "type": self.type,
            "handler": self.label,
            "if": self.condition,
            "timeout": self.timeout,
            "failClosed": self.fail_closed,
            "sources": [{"scope": s.scope, "path": s.path} for s in self.sources],
            "problem": self.problem,
            "spec": self.spec,
        }


def _check(spec: Mapping[str, Any]) -> str | None:
    kind = spec.get("type", "command")
    if kind in KNOWN_UNSUPPORTED_TYPES:
        return f"handler type {kind!r} is not supported by pegboard-command-hooks (only command and http)"
    if kind not in HANDLER_TYPES:
        return f"unknown handler type {kind!r} (expected command or http)"
    if kind == "http":
        if not isinstance(spec.get("url"), str) or not spec["url"]:
            return "http handler without a 'url'"
        if "headers" in spec and not isinstance(spec["headers"], Mapping):
            return "http handler 'headers' must be an object"
        return None
    args = spec.get("args")
    if args is not None:
        if not isinstance(args, list) or not all(isinstance(a, str | int | float) for a in args):
            return "command handler 'args' must be a list of strings"
        if not args and not spec.get("command"):
            return "command handler with empty 'args' and no 'command'"
        return None
    if not isinstance(spec.get("command"), str) or not spec["command"].strip():
        return "command handler without a 'command'"
    return None


def _scope_rank(layer: ConfigLayer) -> int:
    return SCOPE_ORDER.index(layer.scope) if layer.scope in SCOPE_ORDER else len(SCOPE_ORDER) - 1


def ordered_layers(layers: Iterable[ConfigLayer]) -> list[ConfigLayer]:
    """Layers lowest precedence first (stable for layers of one scope)."""
    return sorted(layers, key=_scope_rank)


def _hooks_enabled_layers(layers: Sequence[ConfigLayer]) -> list[ConfigLayer]:
    """Apply ``disableAllHooks`` (by precedence) and ``allowManagedHooksOnly`` (managed only)."""
    ordered = ordered_layers(layers)
    managed_only = any(ly.scope == "managed" and ly.data.get(MANAGED_ONLY_KEY) is True for ly in ordered)
    disabled_by: ConfigLayer | None = None
    for layer in ordered:  # the highest scope that sets the key decides
        if isinstance(layer.data.get(DISABLE_KEY), bool):
            disabled_by = layer if layer.data[DISABLE_KEY] else None
    if disabled_by is not None:
        if disabled_by.scope == "managed":
            return []
        managed_only = True
    if managed_only:
        return [ly for ly in ordered if ly.scope == "managed"]
    return ordered


def collect_handlers(layers: Sequence[ConfigLayer], event: str | None = None) -> list[Handler]:
    """Every handler configured for ``event`` (all events if ``None``), de-duplicated, in config order.

    Order: scopes lowest precedence first, then the order within each file. A handler seen
    again (same matcher, same fields) is not repeated; the new place is added to its
    ``sources``. (The same handler under two matchers that both match runs once too; the
    engine drops the repeat when it selects handlers for a call.)
    """
    found: dict[tuple[str, str, str], Handler] = {}
    for layer in _hooks_enabled_layers(layers):
        hooks = layer.data.get("hooks")
        if not isinstance(hooks, Mapping):
            continue
        source = Source(layer.scope, str(layer.path) if layer.path else None)
        for name, groups in hooks.items():
            if (event is not None and name != event) or not isinstance(groups, list):
                continue
            for group in groups:
                if not isinstance(group, Mapping):
                    continue
                matcher = group.get("matcher")
                matcher = matcher if isinstance(matcher, str) else ""
                for spec in group.get("hooks") or []:
                    if not isinstance(spec, Mapping):
                        continue
                    untrusted = None if getattr(layer, "trusted", True) else untrusted_message(layer.root)
                    handler = Handler(str(name), matcher, dict(spec), problem=_check(spec) or untrusted)
                    key = (handler.event, handler.matcher, handler.key)
                    if key in found:
                        if source not in found[key].sources:
                            found[key].sources.append(source)
                        if untrusted is None and found[key].problem == _untrusted(found[key]):
                            found[key].problem = _check(spec)  # a trusted scope names it too
                        continue
                    handler.sources.append(source)
                    found[key] = handler
    return list(found.values())


def _untrusted(handler: Handler) -> str | None:
    problem = handler.problem or ""
    return problem if "is not trusted" in problem else None


def http_allowlist(layers: Sequence[ConfigLayer]) -> list[str]:
    """URL patterns from ``allowedHttpHookUrls`` in every scope (merged; ``*`` is a wildcard)."""
    patterns: list[str] = []
    for layer in ordered_layers(layers):
        value = layer.data.get(HTTP_ALLOWLIST_KEY)
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list):
            patterns.extend(p for p in value if isinstance(p, str) and p not in patterns)
    return patterns


def url_allowed(url: str, patterns: Iterable[str]) -> bool:
    """Does ``url`` match one pattern exactly, where ``*`` stands for any run of characters?"""
    for pattern in patterns:
        regex = "".join(".*" if part == "*" else re.escape(part) for part in re.split(r"(\*)", pattern))
        if re.fullmatch(regex, url):
            return True
    return False


def project_root(layers: Sequence[ConfigLayer], start: Path) -> Path:
    """The project root: a project layer's root, else the nearest dir with ``.pegboard`` or ``.git``."""
    for layer in layers:
        if layer.scope in ("project", "project-local") and layer.root is not None:
            return Path(layer.root)
    start = start.resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".pegboard").is_dir() or (candidate / ".git").exists():
            return candidate
    return start


# --------------------------------------------------------------------------- parsed config

#: Handlers by event and the http allowlist, per loaded config object (configs are immutable
#: once loaded), kept in the ``Pegboard``'s stash and dropped in ``pegboard_close``.
Parsed = tuple[object, dict[str, list[Handler]], list[str]]
PARSED: StashKey[dict[int, Parsed]] = StashKey("pegboard-command-hooks-parsed")
PARSED_LIMIT = 16


def _parse(layers: Sequence[ConfigLayer]) -> tuple[dict[str, list[Handler]], list[str]]:
    by_event: dict[str, list[Handler]] = {}
    for handler in collect_handlers(layers):
        by_event.setdefault(handler.event, []).append(handler)
    return by_event, http_allowlist(layers)


def configured(ctx: ToolContext) -> tuple[dict[str, list[Handler]], list[str]]:
    """Handlers by event and the http allowlist for the context's config."""
    loaded = ctx.config
    if loaded is None:
        return {}, []
    try:
        stash = ctx.stash
    except RuntimeError:  # a context built by hand: nothing to keep the parse in
        return _parse(loaded.layers)
    parsed = stash.setdefault(PARSED, {})
    hit = parsed.get(id(loaded))
    if hit is not None and hit[0] is loaded:
        return hit[1], hit[2]
    by_event, allow = _parse(loaded.layers)
    if len(parsed) >= PARSED_LIMIT:
        parsed.pop(next(iter(parsed)))
    parsed[id(loaded)] = (loaded, by_event, allow)
    return by_event, allow


def configured_events(pegboard: Any) -> set[str]:
    """The events that ``pegboard``'s config sets handlers for (what a call may have to run)."""
    return set(_parse(pegboard.layers)[0])


def has_handlers(ctx: ToolContext, event: str) -> bool:
    return bool(configured(ctx)[0].get(event))


# --------------------------------------------------------------------------- config sections


class HooksSetting(RootModel[dict[str, list[dict[str, Any]]]]):
    """``hooks``: event name -> matcher groups, each with its ``hooks`` handlers. Neutral for
    trust: an untrusted project's handlers never run (see ``pegboard trust``)."""

    root: Annotated[dict[str, list[dict[str, Any]]], NEUTRAL] = Field(default_factory=dict)


class UrlPatterns(RootModel[list[str]]):
    """``allowedHttpHookUrls``: URL patterns http handlers may post to (``*`` is a wildcard)."""

    root: Annotated[list[str], Widens.when_set("lets hooks send call data to more endpoints")] = Field(
        default_factory=list
    )


class Switch(RootModel[bool | None]):
    """A switch that is unset, ``true`` or ``false``."""

    root: bool | None = None


class DisableAllHooks(Switch):
    """``disableAllHooks``: switch off every configured hook."""

    root: Annotated[bool | None, Widens.when_true("switches off every hook, the user's own included")] = None


class ManagedHooksOnly(Switch):
    """``allowManagedHooksOnly``: run only the hooks of managed config."""

    root: Annotated[bool | None, Widens.when_true("switches off the user's own hooks")] = None


def _suggest(word: str, choices: Iterable[str]) -> str:
    choices = list(choices)
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in choices}
        close = [lowered[word.lower()]] if word.lower() in lowered else []
    return f"; did you mean {close[0]!r}?" if close else ""


def check_hooks(hooks: Any) -> tuple[list[str], list[str]]:
    """Unknown event names and handler types: a typo there means a guard that never runs."""
    errors: list[str] = []
    warnings: list[str] = []
    if not isinstance(hooks, Mapping):
        return errors, warnings
    for event, groups in hooks.items():
        if event in FOREIGN_EVENTS:
            warnings.append(f"hooks.{event}: Pegboard never fires {event!r}; these handlers do not run")
        elif event not in EVENTS:
            errors.append(
                f"hooks.{event}: unknown hook event {event!r}{_suggest(event, EVENTS)} "
                f"Pegboard fires {', '.join(EVENTS)}."
            )
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            handlers = group.get("hooks") if isinstance(group, Mapping) else None
            for h, spec in enumerate(handlers if isinstance(handlers, list) else []):
                kind = spec.get("type", "command") if isinstance(spec, Mapping) else None
                at = f"hooks.{event}[{g}].hooks[{h}].type"
                if kind in KNOWN_UNSUPPORTED_TYPES:
                    warnings.append(f"{at}: handler type {kind!r} is not supported; this handler does not run")
                elif kind not in HANDLER_TYPES:
                    errors.append(
                        f"{at}: unknown handler type {kind!r}{_suggest(str(kind), sorted(HANDLER_TYPES))} "
                        f"Types: {', '.join(sorted(HANDLER_TYPES))}."
                    )
    return errors, warnings


SECTIONS = (
    ConfigSection("hooks", HooksSetting, description="hook handlers per event (commands, http)", check=check_hooks),
    ConfigSection(HTTP_ALLOWLIST_KEY, UrlPatterns, description="URLs http hook handlers may post to"),
    ConfigSection(DISABLE_KEY, DisableAllHooks, description="switch off every configured hook"),
    ConfigSection(MANAGED_ONLY_KEY, ManagedHooksOnly, description="run only the hooks of managed config"),
)
