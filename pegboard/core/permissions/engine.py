"""The permission engine: may this call run — allow, ask or deny, and which rule decided.

Order (spec A2/A4): deny rules, then ask rules, then the checks no allow rule can lift
(critical ``rm``, unverifiable commands; protected paths unless bypass), then the mode,
then allow rules, then the tool's default; whatever is left asks (``dontAsk``: denies).
Rules from every scope are merged, highest scope first, so a deny anywhere wins and the
reported rule is the one from the most authoritative file. Rules are parsed and patterns
compiled once; per tool, the applicable rules are gathered once and cached.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pegboard.core.config import (
    PERMISSION_MODES,
    PROJECT_SCOPES,
    SCOPE_ORDER,
    ConfigError,
    ConfigLayer,
    PermissionsConfig,
)
from pegboard.core.decisions import PermissionDecision
from pegboard.core.permissions import families as fam
from pegboard.core.permissions.checkouts import sibling_checkout
from pegboard.core.permissions.family import (
    FamilyCall,
    FamilyRegistry,
    Outcome,
    PermissionFamily,
    parameter_reading,
)
from pegboard.core.permissions.pathdecisions import PathDecisions
from pegboard.core.permissions.paths import (
    PathContext,
    PathMatcher,
    absolute,
    compile_path_regex,
    is_windows_path,
    literal_base,
    normalize,
    pattern_to_abs,
    resolve,
)
from pegboard.core.permissions.rules import (
    Rule,
    RuleList,
    RuleSyntaxError,
    allow_glob_ok,
    glob_to_regex,
    parse_rule,
)
from pegboard.core.tools import Tool, name_key

MODES = PERMISSION_MODES
_LISTS: tuple[RuleList, ...] = ("deny", "ask", "allow")
#: tools whose input-blind decision an engine keeps before it starts over
_MAX_CONSTANT = 1024
#: read-family decisions an engine keeps (by input and resolved paths) before it starts over
_MAX_READS = 512


def _constant_key(tool: Tool) -> tuple[Any, ...]:
    """What of a tool its input-blind decision rests on; a tool changed in place is decided again."""
    return (tool.name, tool.permission_family, tool.specifier_matcher, tool.input_model, tool.server,
            tool.requires_permission)


@dataclass
class _View:
    """The rules that apply to one tool, by list: bare, parameter and path rules (the
    engine's), the family's own compiled matchers, and specifiers the tool's matcher judges."""

    family: PermissionFamily | None = None
    bare: dict[str, Rule | None] = field(default_factory=dict)
    params: dict[str, list[tuple[Rule, str, re.Pattern[str]]]] = field(default_factory=dict)
    path: dict[str, PathMatcher] = field(default_factory=dict)
    own: dict[str, Any] = field(default_factory=dict)
    custom: dict[str, list[tuple[Rule, str]]] = field(default_factory=dict)
    #: the tool's family is declared but no installed plugin provides it (then ``unjudged``
    #: holds its deny and ask rules with a specifier: they may apply to any call)
    unprovided: str | None = None
    unjudged: dict[str, list[Rule]] = field(default_factory=dict)


def _rank(layer: ConfigLayer) -> int:
    return SCOPE_ORDER.index(layer.scope) if layer.scope in SCOPE_ORDER else 0


def _source(layer: ConfigLayer) -> str:
    return str(layer.path) if layer.path else layer.scope


def _param_regex(value: str) -> str:
    return "".join(".*" if ch == "*" else re.escape(ch) for ch in value) + r"\Z"


def _scalar(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    return None


class PermissionEngine:
    """Decides allow / ask / deny for one call from the rules of every config layer."""

    def __init__(
        self,
        layers: Sequence[ConfigLayer],
        *,
        cwd: Path,
        additional_dirs: Sequence[Path | str] = (),
        mode: str | None = None,
        home: Path | None = None,
        tools: fam.ToolLookup | None = None,
        families: FamilyRegistry | None = None,
    ) -> None:
        self.diagnostics: list[str] = []
        self.families = fam.Families(tools, families)
        home_s = str(home) if home is not None else (os.environ.get("HOME") or str(Path.home()))
        cwd_s = str(cwd)
        self.windows = is_windows_path(cwd_s)
        self.home = normalize(home_s, "/", "/", self.windows)
        self.cwd = normalize(cwd_s, "/", self.home, self.windows)
        self.ctx = PathContext(self.cwd, self.home, self.windows)
        ordered = sorted(layers, key=lambda ly: -_rank(ly))
        perms = [(layer, p) for layer in ordered if (p := self._permissions(layer)) is not None]
        self.mode = self._pick_mode(mode, perms)
        self.workdirs = self._workdirs(perms, additional_dirs)
        self.rules: dict[str, list[Rule]] = {lst: [] for lst in _LISTS}
        self._load_rules(perms)
        self._views: dict[tuple[Any, ...], _View] = {}
        #: per tool (by id): its decision when no rule looks at the input (see _check)
        self._constant: dict[int, tuple[Tool, tuple[Any, ...], PermissionDecision]] = {}
        self._reads: dict[tuple[Any, ...], tuple[Tool, PermissionDecision]] = {}
        #: per tool: its name, family and the rules that apply to it (fixed for this engine)
        self._shapes: dict[int, tuple[Tool, tuple[Any, ...], tuple[str, str, _View]]] = {}
        self._regex_cache: dict[tuple[int, bool], str | None] = {}
        #: ``read`` / ``write`` -> the family whose path rules the path check uses
        self._file_heads = self.families.registry.file_heads()
        self._precompile()
        read_view = self._file_view("read")
        edit_view = self._file_view("write")
        self._deny_bases = self._bases(("deny", "ask"))
        self.decisions = PathDecisions(cwd=self.cwd, home=self.home, windows=self.windows, workdirs=self.workdirs,
                                       read=read_view.path, edit=edit_view.path, deny_bases=self._deny_bases)

    # -- setup -----------------------------------------------------------------------------
    def _permissions(self, layer: ConfigLayer) -> PermissionsConfig | None:
        """The layer's validated ``permissions`` section: the model loading already built when
        the layer validates, else one salvaged key by key (a layer built in code)."""
        raw = layer.data.get("permissions") if isinstance(layer.data, Mapping) else None
        if raw is None:
            return None
        try:
            return layer.model.permissions
        except ConfigError:
            return self._salvage(raw, _source(layer))

    def _salvage(self, raw: Any, source: str) -> PermissionsConfig | None:
        """A section that does not validate as a whole: every key that does is kept, every
        rule that is a string is kept (so one bad entry never drops a deny list), the rest is
        reported and ignored."""
        if not isinstance(raw, Mapping):
            self.diagnostics.append(f"{source}: permissions: expected an object (ignored)")
            return None
        kept: dict[str, Any] = {}
        lists: dict[str, list[Any]] = {}
        for key, value in raw.items():
            if key in _LISTS:
                if isinstance(value, str) or not isinstance(value, Sequence):
                    self.diagnostics.append(f"{source}: permissions.{key}: expected a list of rules (ignored)")
                else:
                    lists[key] = list(value)  # entries that are not strings are reported by position
                continue
            try:
                PermissionsConfig.model_validate({key: value})
            except ValidationError:
                if key == "defaultMode":
                    self.diagnostics.append(f"unknown permission mode {value!r}; using 'default'")
                else:
                    self.diagnostics.append(f"{source}: permissions.{key}: {value!r} is not valid (ignored)")
                continue
            kept[key] = value
        return PermissionsConfig.model_validate(kept).model_copy(update=lists)

    def _pick_mode(self, mode: str | None, perms: Sequence[tuple[ConfigLayer, PermissionsConfig]]) -> str:
        # The highest scope's mode; between layers of one scope the later one, as merging does.
        configured: str | None = None
        for _, p in sorted(perms, key=lambda lp: _rank(lp[0])):
            if p.default_mode is not None:
                configured = p.default_mode
        chosen: str = mode or configured or "default"
        if chosen == "manual":
            chosen = "default"
        if chosen not in MODES:
            self.diagnostics.append(f"unknown permission mode {chosen!r}; using 'default'")
            chosen = "default"
        if chosen == "bypassPermissions":
            for layer, p in perms:
                if p.disable_bypass_permissions_mode == "disable":
                    self.diagnostics.append(
                        f"{layer.path or layer.scope}: bypassPermissions is disabled; using 'default'"
                    )
                    return "default"
        return chosen

    def _workdirs(self, perms: Sequence[tuple[ConfigLayer, PermissionsConfig]], extra: Sequence[Path | str]
                  ) -> list[str]:
        dirs = [self.cwd]
        for layer, p in perms:
            base = normalize(str(layer.root), self.cwd, self.home, self.windows) if layer.root else self.cwd
            for i, d in enumerate(p.additional_directories):
                if not d.strip():
                    self.diagnostics.append(
                        f"{layer.path or layer.scope}: permissions.additionalDirectories[{i}]: "
                        "not a directory path (ignored)"
                    )
                    continue
                dirs.append(normalize(d, base, self.home, self.windows))
        for added in extra:
            dirs.append(normalize(str(added), self.cwd, self.home, self.windows))
        return list(dict.fromkeys(dirs))

    def _resolve(self, path: str) -> str | None:
        return None if self.windows else resolve(path)

    def _load_rules(self, perms: Sequence[tuple[ConfigLayer, PermissionsConfig]]) -> None:
        managed_only = any(layer.scope == "managed" and p.allow_managed_permission_rules_only is True
                           for layer, p in perms)
        for layer, p in perms:
            source = _source(layer)
            lists: dict[RuleList, list[Any]] = {"deny": p.deny, "ask": p.ask, "allow": p.allow}
            if managed_only and layer.scope != "managed":
                if any(lists.values()):
                    self.diagnostics.append(
                        f"{source}: permission rules ignored (allowManagedPermissionRulesOnly is set)"
                    )
                continue
            root = normalize(str(layer.root), self.cwd, self.home, self.windows) if layer.root else self.cwd
            before = {lst: len(self.rules[lst]) for lst in _LISTS}
            for lst in _LISTS:
                for i, text in enumerate(lists[lst]):
                    self._add_rule(text, lst, source, f"permissions.{lst}[{i}]", root)
            if layer.scope in PROJECT_SCOPES and (moved := sibling_checkout(root, self.cwd)) is not None:
                self._anchor_again(before, root, moved)

    def _anchor_again(self, before: Mapping[RuleList, int], root: str, moved: str) -> None:
        """A project's ``/path`` rules cover the worktree the session moved to as well."""
        for lst in _LISTS:
            for rule in self.rules[lst][before[lst]:]:
                spec = rule.specifier or ""
                if rule.root == root and spec.startswith("/") and not spec.startswith("//"):
                    self.rules[lst].append(replace(rule, root=moved, notes=[*rule.notes, f"anchored at {moved}"]))

    def _add_rule(self, text: Any, lst: RuleList, source: str, position: str, root: str) -> None:
        where = f"{source}: {position}"
        try:
            rule = parse_rule(text, lst, source, position)
        except RuleSyntaxError as exc:
            shown = text if isinstance(text, str) else repr(text)
            if lst != "allow" and isinstance(text, str):
                m = re.match(r"^\s*([A-Za-z0-9_.\-]+)", text)
                if m:
                    self.diagnostics.append(
                        f"{where}: malformed rule {shown!r}: {exc}; applied to every {m.group(1)} call "
                        "(a deny/ask rule that cannot be read fails closed)"
                    )
                    rule = Rule(text=text, lst=lst, source=source, position=position, tool=m.group(1),
                                specifier=None)
                    rule.root = root
                    rule.target = self.families.canonical(rule.tool) or rule.tool
                    rule.notes.append("malformed")
                    self.rules[lst].append(rule)
                    return
            self.diagnostics.append(f"{where}: malformed rule {shown!r}: {exc} (ignored)")
            return
        rule.root = root
        if rule.is_glob:
            if lst == "allow" and not allow_glob_ok(rule.tool):
                self.diagnostics.append(
                    f"{where}: allow rule {text!r} skipped: an allow rule may use a tool-name glob only "
                    "after a literal mcp__<server>__ prefix"
                )
                return
            if lst != "allow":
                assert rule.tool_regex is not None
                rule.tool_regex = re.compile(glob_to_regex(rule.tool), re.IGNORECASE)
            if rule.specifier is not None and lst != "allow":
                self.diagnostics.append(
                    f"{where}: {text!r}: a tool-name glob cannot carry a specifier; applied to every "
                    "matching tool"
                )
                rule.specifier = None
            elif rule.specifier is not None:
                self.diagnostics.append(f"{where}: {text!r}: a tool-name glob cannot carry a specifier (ignored)")
                return
            self.rules[lst].append(rule)
            return
        if rule.tool.startswith("mcp__") and "__" not in rule.tool[5:]:
            rule.server = rule.tool[5:]
        seed = self.families.canonical(rule.tool)
        rule.target = seed or rule.tool
        if seed is not None and seed != rule.tool:
            if lst == "allow":
                # Allow rules name tools exactly; a near miss approves nothing.
                self.diagnostics.append(f"{where}: {text!r} is not a canonical tool name (did you mean "
                                        f"{seed}?); the allow rule matches only a tool named {rule.tool!r}")
                rule.target = rule.tool
                seed = None
            else:
                self.diagnostics.append(f"{where}: {text!r}: the canonical tool name is {seed}; applied to it")
        if seed is None and not self.families.registry.declared(rule.tool) and lst != "allow" \
                and "_" not in rule.tool and not rule.tool.startswith("mcp"):
            self.diagnostics.append(f"{where}: {text!r} names no known tool (kept; it applies if one appears)")
        if seed is not None and rule.specifier is not None:
            family = self.families.family_of(seed)
            head = self.families.family(family) if family != seed else None
            if head is not None and head.file_rules is not None and rule.param() is None:
                if lst == "allow":
                    rule.notes.append(f"applies to {seed} only")
                else:
                    self.diagnostics.append(
                        f"{where}: {text!r}: path rules belong to {family}(...); applied as {family}({rule.specifier})"
                    )
                    rule.target = family
        self.rules[lst].append(rule)

    # -- rule views ------------------------------------------------------------------------
    def _applies(self, rule: Rule, name: str, family: str, tool: Tool | None) -> bool:
        if rule.tool_regex is not None:
            return bool(rule.tool_regex.match(name) or rule.tool_regex.match(family))
        if rule.server is not None:
            if name == rule.tool:
                return True
            if tool is not None:
                return tool.server == rule.server
            # a tool that is not installed is known by its name alone
            return name.startswith(f"mcp__{rule.server}__")
        if rule.lst == "allow":
            return rule.target in (name, family)
        return name_key(rule.target) in (name_key(name), name_key(family))

    def _interpret(self, rule: Rule, family: PermissionFamily | None, fields: frozenset[str] | None,
                   tool: Tool | None, report: bool, unprovided: str | None = None) -> list[tuple[str, Any]]:
        """How a rule's specifier reads for a family: bare / param / path / own / custom."""
        spec = rule.specifier
        lst = rule.lst
        if spec is None:
            return [("bare", None)]
        where = f"{rule.where}: {rule.text!r}"
        param = rule.param()

        def note(msg: str) -> None:
            if report:
                self.diagnostics.append(f"{where}: {msg}")

        if family is not None:
            try:
                return list(family.parse(rule, fields, note))
            except Exception as exc:  # a broken family never drops a deny rule
                note(f"the {family.name} family cannot read it ({type(exc).__name__}: {exc}); "
                     + ("ignored" if lst == "allow" else "applied to every call"))
                return [] if lst == "allow" else [("bare", None)]
        if unprovided is not None and not (tool is not None and tool.specifier_matcher is not None):
            if param and fields and param[0] in fields and lst != "allow":
                return [("param", param)]
            if lst == "allow":
                note(f"no installed plugin provides the {unprovided} family, so the rule is ignored until "
                     "one does (pegboard plugins --families lists them and where each comes from)")
                return []
            note(f"no installed plugin provides the {unprovided} family: the rule asks for every {rule.tool} "
                 "call (denies in dontAsk and bypassPermissions) until one does (pegboard plugins --families "
                 "lists them and where each comes from)")
            return [("unjudged", spec)]
        # tools with a family of their own that takes no specifier, MCP and third-party tools
        if tool is not None and tool.specifier_matcher is not None:
            items: list[tuple[str, Any]] = [("custom", spec)]
            if param and lst != "allow" and fields and param[0] in fields:
                items.append(("param", param))
            return items
        if param:
            return parameter_reading(rule, fields, note, primary=fam.PRIMARY_FIELDS)
        known = self.families.canonical(rule.tool) is not None
        unknown = "" if known else " unless an installed tool of that name declares a specifier matcher"
        if lst == "allow":
            note(f"{rule.tool} takes no specifier (ignored{unknown})")
            return []
        note(f"{rule.tool} takes no specifier; applied to every {rule.tool} call{unknown}")
        return [("bare", None)]

    def _path_regex(self, rule: Rule, spec: str, generous: bool, report: bool) -> str | None:
        key = (id(rule), generous)
        if key in self._regex_cache:
            return self._regex_cache[key]
        rx: str | None
        try:
            rx = compile_path_regex(pattern_to_abs(spec, rule.root or self.cwd, self.ctx, generous))
            re.compile(rx)
        except Exception as exc:
            rx = None
            if report:
                self.diagnostics.append(f"{rule.where}: {rule.text!r}: cannot read the path pattern: {exc}")
        self._regex_cache[key] = rx
        return rx

    def _view(self, name: str, family: str, tool: Tool | None, report: bool = False,
              head_only: bool = False) -> _View:
        key = (name, family, id(tool.specifier_matcher) if tool and tool.specifier_matcher else None,
               id(tool.input_model) if tool else None, tool.server if tool else None, tool is None, head_only)
        cached = self._views.get(key)
        if cached is not None:
            return cached
        head = self.families.family(family)
        if head_only:  # the family's own head, as the path check uses it: its fields, no tool to load
            fields: frozenset[str] | None = frozenset(head.fields) if head is not None and head.fields else None
        else:
            fields = self.families.known_fields(name, tool)
        v = _View(family=head, unprovided=None if head is not None else self._unprovided(name, family, tool))
        for lst in _LISTS:
            generous = lst != "allow"
            flags = re.IGNORECASE if generous else 0
            bare: Rule | None = None
            params: list[tuple[Rule, str, re.Pattern[str]]] = []
            paths: list[tuple[str, object]] = []
            own: list[tuple[Rule, Any]] = []
            custom: list[tuple[Rule, str]] = []
            unjudged: list[Rule] = []
            sources: list[tuple[Rule, PermissionFamily | None]] = [
                (r, head) for r in self.rules[lst] if self._applies(r, name, family, tool)
            ]
            # A family may take other families' rules as its own in a list: an Edit allow lets
            # the tool read there too (Edit works on the file's current text), and a Read deny
            # or ask covers edits (an edit's match and diff reveal the content).
            taken = {id(r) for r, _ in sources}
            for other in head.borrows.get(lst, ()) if head is not None else ():
                lender = self.families.family(other)
                sources += [(r, lender) for r in self.rules[lst]
                            if name_key(r.target) == name_key(other) and id(r) not in taken and r.specifier is not None]
            for r, reader in sources:
                for what, data in self._interpret(r, reader, fields, tool, report, v.unprovided):
                    if what == "bare":
                        if bare is None:
                            bare = r
                    elif what == "param":
                        params.append((r, data[0], re.compile(_param_regex(data[1]), flags | re.DOTALL)))
                    elif what == "path":
                        rx = self._path_regex(r, data, generous, report)
                        if rx is not None:
                            paths.append((rx, r))
                    elif what == "own" and reader is head:
                        own.append((r, data))
                    elif what == "custom":
                        custom.append((r, data))
                    elif what == "unjudged":
                        unjudged.append(r)
            v.bare[lst] = bare
            v.params[lst] = params
            v.path[lst] = PathMatcher(paths, ignore_case=generous or self.windows)
            v.own[lst] = head.compile(lst, own) if head is not None else own
            v.custom[lst] = custom
            v.unjudged[lst] = unjudged
        self._views[key] = v
        return v

    def _unprovided(self, name: str, family: str, tool: Tool | None) -> str | None:
        """``family`` when a tool declares it (or the table names it for ``name``) and no
        installed plugin provides it: its calls cannot be judged, so they fail closed."""
        if self.families.registry.declared(family):
            return None
        declared = tool or self.families.installed(name)
        if declared is not None:
            return family if declared.permission_family == family else None
        return family if family != name else None

    def _file_view(self, which: str) -> _View:
        head = self._file_heads.get(which)
        return self._view(head, head, None, head_only=True) if head is not None else _View(
            path={lst: PathMatcher([], ignore_case=True) for lst in _LISTS})

    def _precompile(self) -> None:
        """Interpret every rule once for its own family, so problems are reported up front."""
        seen: set[tuple[str, str]] = set()
        for lst in _LISTS:
            for r in self.rules[lst]:
                if r.tool_regex is not None or r.server is not None:
                    continue
                family = self.families.family_of(r.target)
                key = (r.target, family)
                if key in seen:
                    continue
                seen.add(key)
                self._view(r.target, family, None, report=True)

    def _bases(self, lists: Sequence[str]) -> list[tuple[str, Rule]]:
        file_keys = {name_key(h) for h in self._file_heads.values()}
        out: list[tuple[str, Rule]] = []
        for lst in lists:
            for r in self.rules[lst]:
                if r.specifier is None or name_key(r.target) not in file_keys:
                    continue
                try:
                    out.append((literal_base(pattern_to_abs(r.specifier, r.root or self.cwd, self.ctx, True)), r))
                except Exception:
                    continue
        return out

    # -- public ----------------------------------------------------------------------------
    def check(self, tool_name: str, tool_input: Mapping[str, Any], tool: Tool | None = None) -> PermissionDecision:
        """Decide one call; never raises (an internal error asks, or denies in dontAsk)."""
        try:
            return self._check(tool_name, tool_input, tool)
        except Exception as exc:  # the checker must never take the host down
            return self._ask(None, f"the permission check failed ({type(exc).__name__}); asking to be safe",
                             hard=True)
        except RecursionError:  # pragma: no cover - RecursionError is an Exception subclass
            return self._ask(None, "input nested too deeply to check", hard=True)

    def tool_denied(self, tool_name: str, tool: Tool | None = None) -> PermissionDecision | None:
        """The deny decision when a bare (or glob / server-level) deny rule removes the tool.

        Such a tool should not be offered to the model at all; a scoped deny
        (``Bash(rm *)``) keeps the tool and blocks matching calls only.
        """
        try:
            tool = tool or self.families.installed(tool_name)
            name = tool.name if tool is not None else (self.families.canonical(tool_name) or tool_name)
            family = self.families.family_of(name, tool)
            rule = self._view(name, family, tool).bare["deny"]
        except Exception:
            return None
        if rule is None:
            return None
        return self._decision("deny", rule, f"{name} is denied by {rule.text}")

    def file_head(self, which: str) -> str | None:
        """The family whose path rules govern reading (``"read"``) or writing (``"write"``) files."""
        return self._file_heads.get(which)

    def file_check(self, which: str, path: str) -> PermissionDecision:
        """The decision a call of the read (or write) file family on ``path`` gets: what a
        tool that reads or writes files on behalf of another asks before it does."""
        head = self._file_heads.get(which)
        if head is None:
            return self._decision("allow", None, f"no installed family holds the rules for {which}ing files")
        return self.check(head, {"file_path": path}, None)

    def is_read_denied(self, path: str) -> bool:
        """Whether Read deny rules cover ``path`` (for tools that filter search results)."""
        try:
            lexical = normalize(path, self.cwd, self.home, self.windows)
            return self.decisions.is_read_denied(lexical)
        except Exception:
            return True

    # -- decision helpers ------------------------------------------------------------------
    def _decision(self, decision: str, rule: Rule | None, reason: str) -> PermissionDecision:
        return PermissionDecision(
            decision=decision,  # type: ignore[arg-type]
            rule=rule.text if rule else None,
            source=rule.source if rule else None,
            reason=reason,
        )

    def _ask(self, rule: Rule | None, reason: str, hard: bool = False) -> PermissionDecision:
        if self.mode == "dontAsk":
            return self._decision("deny", rule, f"{reason} (dontAsk mode denies what would prompt)")
        decision = self._decision("ask", rule, reason)
        return decision.model_copy(update={"hard": True}) if hard else decision

    def _check(self, tool_name: str, tool_input: Mapping[str, Any], tool: Tool | None) -> PermissionDecision:
        data: Mapping[str, Any] = tool_input if isinstance(tool_input, Mapping) else {}
        if tool is None:
            found = self.families.installed(str(tool_name))
            if found is None:
                name = self.families.canonical(str(tool_name)) or str(tool_name)
                family, view = self._rules_for(name, None)
                return self._decide(view, name, data, None)
            tool = found
        shape = _constant_key(tool)
        known = self._constant.get(id(tool))
        if known is not None and known[0] is tool and known[1] == shape:
            return known[2]
        seen = self._shapes.get(id(tool))
        if seen is not None and seen[0] is tool and seen[1] == shape:
            name, family, view = seen[2]
        else:
            name = tool.name
            family, view = self._rules_for(name, tool)
            if len(self._shapes) >= _MAX_CONSTANT:
                self._shapes.clear()
            self._shapes[id(tool)] = (tool, shape, (name, family, view))
        if self._input_blind(view, tool):
            decision = self._decide(view, name, data, tool)
            if len(self._constant) >= _MAX_CONSTANT:
                self._constant.clear()
            self._constant[id(tool)] = (tool, shape, decision)
            return decision
        if self._caches_reads(view) and (key := self._read_key(view, name, data, tool, shape)) is not None:
            hit = self._reads.get(key)
            if hit is not None and hit[0] is tool:
                return hit[1]
            decision = self._decide(view, name, data, tool)
            if len(self._reads) >= _MAX_READS:
                self._reads.clear()
            self._reads[key] = (tool, decision)
            return decision
        return self._decide(view, name, data, tool)

    def requires_permission(self, name: str, tool: Tool | None = None) -> bool:
        """Whether a call of ``name`` asks by default (for families: ``FamilyContext``)."""
        return self.families.requires_permission(name, tool)

    def _rules_for(self, name: str, tool: Tool | None) -> tuple[str, _View]:
        """The family of ``name`` and the rules that apply to it."""
        family = self.families.family_of(name, tool)
        return family, self._view(name, family, tool)

    @staticmethod
    def _caches_reads(view: _View) -> bool:
        head = view.family
        return head is not None and head.file_rules == "read" and hasattr(head, "input_paths")

    def _read_key(
        self, view: _View, name: str, data: Mapping[str, Any], tool: Tool, shape: tuple[Any, ...]
    ) -> tuple[Any, ...] | None:
        """What a read-family decision rests on: the tool, the whole input and where each of
        its paths resolves now (the rules, mode and directories are fixed for this engine).
        A read of the same file is then decided once while no link on its way changes.
        ``None`` for an input that cannot be a key (a list or dict value)."""
        try:
            fields = tuple(sorted(data.items()))
            hash(fields)
        except TypeError:
            return None
        raws, _complete = view.family.input_paths(name, data)  # type: ignore[union-attr]
        resolved = tuple([self._resolve(absolute(raw, self.cwd, self.home, self.windows)) for raw in raws])
        if self.decisions.links.active and self.decisions.several_links(resolved):
            return None  # another name of a covered file may appear at any time: decided afresh
        return (id(tool), shape, name, fields, resolved)

    @staticmethod
    def _input_blind(view: _View, tool: Tool) -> bool:
        """Whether no step of the decision for ``tool`` reads the call's input: a family whose
        rules take no specifier (commands, paths, hosts and names do), no parameter rule to
        deny or ask, no specifier the tool's own matcher would judge. Its decision is then the
        same for every call in this engine (whose rules and mode are fixed)."""
        if view.family is not None or view.unprovided is not None or view.params["deny"] or view.params["ask"]:
            return False
        return tool.specifier_matcher is None or not any(view.custom[lst] for lst in _LISTS)

    def _decide(self, view: _View, name: str, data: Mapping[str, Any], tool: Tool | None) -> PermissionDecision:
        if tool is not None and tool.asks_user and self.mode == "dontAsk" and view.bare["allow"] is None:
            return self._decision("deny", None, f"dontAsk mode: {name} would ask the user, which this mode refuses")

        # 1. deny, 2. ask: bare and parameter rules
        for lst in ("deny", "ask"):
            r = view.bare[lst]
            if r is not None:
                reason = f"{name} is {'denied' if lst == 'deny' else 'set to ask'} by {r.text}"
                return self._decision("deny", r, reason) if lst == "deny" else self._ask(r, reason)
            for r, pname, rx in view.params[lst]:
                value = _scalar(data.get(pname)) if pname in data else None
                if value is not None and rx.match(value):
                    reason = f"{name} {pname}={value!r} matches {r.text}"
                    return self._decision("deny", r, reason) if lst == "deny" else self._ask(r, reason)

        if view.family is not None:
            out = view.family.judge(FamilyCall(name, data, tool, view.own, view.path, self))
        else:
            out = self._other(view, name, data, tool)
        return self._combine(view, name, out)

    def _combine(self, view: _View, name: str, out: Outcome) -> PermissionDecision:
        if out.deny is not None:
            return self._decision("deny", out.deny[0], out.deny[1])
        if out.refuse is not None:
            return self._decision("deny", None, out.refuse)
        if out.ask is not None:
            also = out.might[1] if out.might is not None else out.hard_ask
            if also is None:
                return self._ask(out.ask[0], out.ask[1])
            return self._ask(out.ask[0], f"{out.ask[1]}; {also}", hard=True)
        if out.might is not None:
            decision = self._ask(out.might[0], out.might[1], hard=True)
            files = out.might_files_only and not any(r.lst == "ask" for _base, r in self._deny_bases)
            return decision.model_copy(update={"unseen_files": True}) if files and decision.hard else decision
        if out.hard_ask is not None:
            return self._ask(None, out.hard_ask, hard=True)
        if self.mode == "bypassPermissions":
            return self._decision("allow", None, "bypassPermissions mode approves the call")
        if out.protected is not None:
            return self._ask(None, f"{out.protected}; protected paths always prompt", hard=True)
        if out.is_edit and self.mode == "plan":
            return self._ask(None, f"plan mode: {out.edit_reason or 'edits'} must wait for an approved plan", hard=True)
        if out.is_edit and out.edit_in_scope and self.mode == "acceptEdits":
            return self._decision("allow", None, f"acceptEdits mode approves {out.edit_reason or 'the edit'}")
        bare_allow = view.bare["allow"]
        if bare_allow is not None:
            return self._decision("allow", bare_allow, f"{name} is allowed by {bare_allow.text}")
        if out.allow is not None:
            return self._decision("allow", out.allow[0], out.allow[1])
        if out.default_ok is not None:
            return self._decision("allow", None, out.default_ok)
        return self._ask(None, out.unapproved or f"{name} needs permission and no rule allows it")

    # -- tools no family judges -------------------------------------------------------------
    def _other(self, view: _View, name: str, data: Mapping[str, Any], tool: Tool | None) -> Outcome:
        out = Outcome()
        if view.unprovided is not None:
            missing = (f"no installed plugin provides the {view.unprovided} family that judges {name} "
                       "(pegboard plugins --families lists them and where each comes from)")
            for lst in ("deny", "ask"):
                for r in view.unjudged.get(lst, ()):
                    if self.mode == "bypassPermissions":
                        out.note("deny", r, f"{missing}; {r.text} might apply, and bypassPermissions does not ask")
                    else:
                        out.might_apply(r, missing)
            out.hard_ask = out.hard_ask or missing
            out.unapproved = missing
            return out
        if tool is not None and tool.specifier_matcher is not None:
            for lst in _LISTS:
                for r, spec in view.custom[lst]:
                    try:
                        hit = bool(tool.specifier_matcher(spec, data))
                    except Exception:
                        hit = lst != "allow"  # a failing matcher never approves, always restricts
                    if hit:
                        reason = f"{name} matches {r.text}"
                        out.note(lst, r, reason)
        if not self.families.requires_permission(name, tool):
            out.default_ok = f"{name} needs no permission"
        out.unapproved = f"{name} needs permission and no rule allows it"
        return out
