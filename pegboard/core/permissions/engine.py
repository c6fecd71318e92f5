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
from pegboard.core.permissions import bash as bashmod
from pegboard.core.permissions import families as fam
from pegboard.core.permissions import powershell as ps
from pegboard.core.permissions import webfetch as wf
from pegboard.core.permissions.checkouts import sibling_checkout
from pegboard.core.permissions.pathdecisions import PathDecisions
from pegboard.core.permissions.paths import (
    PathContext,
    PathMatcher,
    absolute,
    collapse,
    compile_path_regex,
    is_protected,
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
_PATH_KINDS = ("read", "edit")
#: Tools whose whole job is to ask the user: denied in dontAsk like any other prompt.
_USER_INTERACTION_TOOLS = frozenset({"AskUserQuestion"})
#: tools whose input-blind decision an engine keeps before it starts over
_MAX_CONSTANT = 1024
#: read-family decisions an engine keeps (by input and resolved paths) before it starts over
_MAX_READS = 512


def _constant_key(tool: Tool) -> tuple[Any, ...]:
    """What of a tool its input-blind decision rests on; a tool changed in place is decided again."""
    return (tool.name, tool.permission_family, tool.specifier_matcher, tool.input_model, tool.server,
            tool.requires_permission)


@dataclass
class _Outcome:
    """What a family handler found; the engine turns it into a decision with the mode."""

    deny: tuple[Rule, str] | None = None
    refuse: str | None = None  # denied without a rule (a command with raw control characters)
    ask: tuple[Rule, str] | None = None
    might: tuple[Rule, str] | None = None  # a deny or ask rule may apply to what cannot be seen
    might_files_only: bool = False  # ... and only Read/Edit deny rules may (an OS sandbox enforces them)
    hard_ask: str | None = None
    protected: str | None = None
    allow: tuple[Rule, str] | None = None
    default_ok: str | None = None  # approved by the tool's default / read-only set
    unapproved: str = ""
    is_edit: bool = False
    edit_in_scope: bool = False
    edit_reason: str = ""

    def might_apply(self, rule: Rule, reason: str) -> None:
        """Record the first rule that may cover a part of the call the engine cannot see."""
        if self.might is None:
            self.might = (rule, f"{reason}; {rule.text} might apply")

    def note(self, lst: str, rule: Rule, reason: str) -> None:
        """Record a rule hit: the first deny, the first ask and the first allow each win."""
        if lst == "deny":
            self.deny = self.deny or (rule, reason)
        elif lst == "ask":
            self.ask = self.ask or (rule, reason)
        elif self.allow is None:
            self.allow = (rule, reason)


@dataclass
class _View:
    """The rules that apply to one tool, by list, compiled for its family kind."""

    bare: dict[str, Rule | None] = field(default_factory=dict)
    params: dict[str, list[tuple[Rule, str, re.Pattern[str]]]] = field(default_factory=dict)
    cmd: dict[str, bashmod.CommandRules] = field(default_factory=dict)
    path: dict[str, PathMatcher] = field(default_factory=dict)
    names: dict[str, list[tuple[Rule, re.Pattern[str]]]] = field(default_factory=dict)
    custom: dict[str, list[tuple[Rule, str]]] = field(default_factory=dict)
    domain_rules_exist: bool = False


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
    ) -> None:
        self.diagnostics: list[str] = []
        self.families = fam.Families(tools)
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
        #: per tool: its name, family, kind and the rules that apply to it (fixed for this engine)
        self._shapes: dict[int, tuple[Tool, tuple[Any, ...], tuple[str, str, fam.Kind, _View]]] = {}
        self._regex_cache: dict[tuple[int, bool], str | None] = {}
        self._precompile()
        read_view = self._view("Read", "Read", "read", None)
        edit_view = self._view("Edit", "Edit", "edit", None)
        self._read_view, self._edit_view = read_view, edit_view
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
        if seed is None and rule.tool not in fam.FAMILIES and lst != "allow" \
                and "_" not in rule.tool and not rule.tool.startswith("mcp"):
            self.diagnostics.append(f"{where}: {text!r} names no known tool (kept; it applies if one appears)")
        if seed is not None and rule.specifier is not None:
            family = self.families.family_of(seed)
            if family != seed and fam.kind_of(family) in _PATH_KINDS and rule.param() is None:
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

    def _interpret(self, rule: Rule, kind: str, fields: frozenset[str] | None, tool: Tool | None,
                   report: bool) -> list[tuple[str, Any]]:
        """How a rule's specifier reads for a family kind: bare / param / path / cmd / ..."""
        spec = rule.specifier
        lst = rule.lst
        if spec is None:
            return [("bare", None)]
        where = f"{rule.where}: {rule.text!r}"
        param = rule.param()

        def note(msg: str) -> None:
            if report:
                self.diagnostics.append(f"{where}: {msg}")

        def as_param() -> list[tuple[str, Any]]:
            assert param is not None
            if lst == "allow":
                note("parameter rules (param:value) work only in deny and ask lists (ignored)")
                return []
            if param[0] in fam.PRIMARY_FIELDS:
                note(f"'{param[0]}' is the call's primary content; a parameter rule on it is easy to bypass "
                     "(applied to the literal value)")
            return [("param", param)]

        if kind in ("bash", "powershell"):
            if spec.strip() == "*":
                return [("bare", None)]
            items: list[tuple[str, Any]] = [("cmd", spec)]
            if param and lst != "allow" and param[0] == "command":
                note("'command' is the call's primary content; read as the command pattern "
                     f"{rule.tool}({param[1]})")
                items.append(("cmd", param[1]))
            elif param and lst != "allow" and fields and param[0] in fields:
                items.append(("param", param))
            return items
        if kind in _PATH_KINDS:
            if param and fields is not None and param[0] in fields:
                return as_param()
            return [("path", spec)]
        if kind == "webfetch":
            if param and param[0] == "domain":
                return [("domain", param[1])]
            if param:
                return as_param()
            if spec.strip() == "*":
                return [("bare", None)]
            if lst == "allow":
                note("WebFetch rules take 'domain:HOST' (ignored)")
                return []
            note("WebFetch rules take 'domain:HOST'; read as a domain")
            return [("domain", spec)]
        if kind in ("skill", "agent"):
            if param and fields is not None and param[0] in fields:
                return as_param()
            return [("name", spec)]
        # bare families, MCP and third-party tools
        if tool is not None and tool.specifier_matcher is not None:
            items = [("custom", spec)]
            if param and lst != "allow" and fields and param[0] in fields:
                items.append(("param", param))
            return items
        if param:
            return as_param()
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

    def _view(self, name: str, family: str, kind: str, tool: Tool | None, report: bool = False) -> _View:
        key = (name, family, kind, id(tool.specifier_matcher) if tool and tool.specifier_matcher else None,
               id(tool.input_model) if tool else None, tool.server if tool else None, tool is None)
        cached = self._views.get(key)
        if cached is not None:
            return cached
        fields = self.families.known_fields(name, tool)
        v = _View()
        for lst in _LISTS:
            generous = lst != "allow"
            flags = re.IGNORECASE if generous else 0
            bare: Rule | None = None
            params: list[tuple[Rule, str, re.Pattern[str]]] = []
            cmds: list[tuple[Rule, str]] = []
            paths: list[tuple[str, object]] = []
            names: list[tuple[Rule, re.Pattern[str]]] = []
            custom: list[tuple[Rule, str]] = []
            sources = [r for r in self.rules[lst] if self._applies(r, name, family, tool)]
            # An Edit allow lets the tool read there too: Edit works on the file's current text,
            # so a place one may change but not read could only be edited blind. A Read deny
            # (or ask) also covers edits: an edit's old_string match and its diff reveal the
            # content, and overwriting a file one may not see is no safer than reading it.
            if kind == "read" and lst == "allow":
                sources += [r for r in self.rules["allow"] if r.target == "Edit" and r not in sources
                            and r.specifier is not None]
            if kind == "edit" and lst != "allow":
                sources += [r for r in self.rules[lst] if name_key(r.target) == name_key("Read")
                            and r not in sources and r.specifier is not None]
            for r in sources:
                r_kind = kind
                if kind == "read" and r.target == "Edit":
                    r_kind = "edit"
                for what, data in self._interpret(r, kind if r_kind == kind else "edit", fields, tool, report):
                    if what == "bare":
                        if bare is None:
                            bare = r
                    elif what == "param":
                        params.append((r, data[0], re.compile(_param_regex(data[1]), flags | re.DOTALL)))
                    elif what == "cmd":
                        cmds.append((r, data))
                    elif what == "path":
                        rx = self._path_regex(r, data, generous, report)
                        if rx is not None:
                            paths.append((rx, r))
                    elif what == "domain":
                        names.append((r, re.compile(wf.domain_regex(data), re.IGNORECASE)))
                        v.domain_rules_exist = True
                    elif what == "name":
                        names.append((r, re.compile(bashmod.bash_pattern_regex(data), flags)))
                    elif what == "custom":
                        custom.append((r, data))
            v.bare[lst] = bare
            v.params[lst] = params
            v.cmd[lst] = bashmod.CommandRules(cmds, ignore_case=generous or kind == "powershell")
            v.path[lst] = PathMatcher(paths, ignore_case=generous or self.windows)
            v.names[lst] = names
            v.custom[lst] = custom
        self._views[key] = v
        return v

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
                self._view(r.target, family, fam.kind_of(family), None, report=True)

    def _bases(self, lists: Sequence[str]) -> list[tuple[str, Rule]]:
        out: list[tuple[str, Rule]] = []
        for lst in lists:
            for r in self.rules[lst]:
                if r.specifier is None or name_key(r.target) not in (name_key("Read"), name_key("Edit")):
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
            rule = self._view(name, family, fam.kind_of(family), tool).bare["deny"]
        except Exception:
            return None
        if rule is None:
            return None
        return self._decision("deny", rule, f"{name} is denied by {rule.text}")

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
                family, kind, view = self._rules_for(name, None)
                return self._decide(view, name, kind, data, None)
            tool = found
        shape = _constant_key(tool)
        known = self._constant.get(id(tool))
        if known is not None and known[0] is tool and known[1] == shape:
            return known[2]
        seen = self._shapes.get(id(tool))
        if seen is not None and seen[0] is tool and seen[1] == shape:
            name, family, kind, view = seen[2]
        else:
            name = tool.name
            family, kind, view = self._rules_for(name, tool)
            if len(self._shapes) >= _MAX_CONSTANT:
                self._shapes.clear()
            self._shapes[id(tool)] = (tool, shape, (name, family, kind, view))
        if self._input_blind(view, kind, tool):
            decision = self._decide(view, name, kind, data, tool)
            if len(self._constant) >= _MAX_CONSTANT:
                self._constant.clear()
            self._constant[id(tool)] = (tool, shape, decision)
            return decision
        if kind == "read" and (key := self._read_key(name, data, tool, shape)) is not None:
            hit = self._reads.get(key)
            if hit is not None and hit[0] is tool:
                return hit[1]
            decision = self._decide(view, name, kind, data, tool)
            if len(self._reads) >= _MAX_READS:
                self._reads.clear()
            self._reads[key] = (tool, decision)
            return decision
        return self._decide(view, name, kind, data, tool)

    def _rules_for(self, name: str, tool: Tool | None) -> tuple[str, fam.Kind, _View]:
        """The family and kind of ``name`` and the rules that apply to it."""
        family = self.families.family_of(name, tool)
        kind = fam.kind_of(family)
        return family, kind, self._view(name, family, kind, tool)

    def _read_key(
        self, name: str, data: Mapping[str, Any], tool: Tool, shape: tuple[Any, ...]
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
        raws, _complete = self._input_paths("read", name, data)
        resolved = tuple([self._resolve(absolute(raw, self.cwd, self.home, self.windows)) for raw in raws])
        if self.decisions.links.active and self.decisions.several_links(resolved):
            return None  # another name of a covered file may appear at any time: decided afresh
        return (id(tool), shape, name, fields, resolved)

    @staticmethod
    def _input_blind(view: _View, kind: str, tool: Tool) -> bool:
        """Whether no step of the decision for ``tool`` reads the call's input: a family whose
        rules take no specifier (commands, paths, hosts and names do), no parameter rule to
        deny or ask, no specifier the tool's own matcher would judge. Its decision is then the
        same for every call in this engine (whose rules and mode are fixed)."""
        if kind != "bare" or view.params["deny"] or view.params["ask"]:
            return False
        return tool.specifier_matcher is None or not any(view.custom[lst] for lst in _LISTS)

    def _decide(
        self, view: _View, name: str, kind: str, data: Mapping[str, Any], tool: Tool | None
    ) -> PermissionDecision:
        if name in _USER_INTERACTION_TOOLS and self.mode == "dontAsk" and view.bare["allow"] is None:
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

        if kind == "bash":
            out = self._bash(view, data, name)
        elif kind == "powershell":
            out = self._powershell(view, data)
        elif kind in _PATH_KINDS:
            out = self._paths(view, kind, name, data, tool)
        elif kind == "webfetch":
            out = self._webfetch(view, data)
        elif kind in ("skill", "agent"):
            out = self._named(view, kind, name, data, tool)
        else:
            out = self._other(view, name, data, tool)
        return self._combine(view, name, kind, out)

    def _combine(self, view: _View, name: str, kind: str, out: _Outcome) -> PermissionDecision:
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

    # -- families --------------------------------------------------------------------------
    def _input_paths(self, kind: str, name: str, data: Mapping[str, Any]) -> tuple[list[str], bool]:
        """Raw paths a path-family call touches; the bool says the list is complete."""
        raws: list[str] = []
        complete = True
        for key in fam.PATH_FIELDS:
            v = data.get(key)
            if isinstance(v, str) and v:
                raws.append(v)
            elif v is not None and not isinstance(v, str):
                complete = False
        for key in ("paths", "file_paths", "files"):
            v = data.get(key)
            if isinstance(v, list):
                for item in v:
                    if isinstance(item, str):
                        raws.append(item)
                    else:
                        complete = False
        patch = data.get("patch") if isinstance(data.get("patch"), str) else data.get("input")
        if isinstance(patch, str) and kind == "edit":
            for m in re.finditer(r"^(?:\*\*\* (?:Add|Update|Delete) File: |\*\*\* Move to: |\+\+\+ |--- )(.+)$",
                                 patch, re.MULTILINE):
                p = m.group(1).strip()
                if p == "/dev/null":
                    continue
                if re.match(r"^[ab]/", p) and m.group(0).startswith(("+++", "---")):
                    p = p[2:]
                raws.append(p.split("\t")[0])
        pattern = data.get("pattern")
        if name == "Glob" and isinstance(pattern, str) and pattern:
            base = data.get("path") if isinstance(data.get("path"), str) and data.get("path") else "."
            joined = pattern if pattern.startswith(("/", "~")) else f"{base}/{pattern}"
            raws = [p for p in raws if p != base] + [_glob_literal(joined)]
        return list(dict.fromkeys(raws)), complete  # a path given twice (path and file_path) is named once

    def _paths(self, view: _View, kind: str, name: str, data: Mapping[str, Any], tool: Tool | None) -> _Outcome:
        out = _Outcome(is_edit=kind == "edit")
        raws, complete = self._input_paths(kind, name, data)
        if not raws:
            if kind == "edit" or not complete:
                out.unapproved = f"{name}: no file path to check"
                return out
            raws = ["."]
        all_allowed: Rule | None = None
        allow_ok = True
        inside_all = True
        protected = None
        for raw in raws:
            full = absolute(raw, self.cwd, self.home, self.windows)
            lexical = collapse(full)
            resolved = self._resolve(full)
            for lst in ("deny", "ask"):
                r = self.decisions.rule(view.path, lst, lexical, resolved)
                if r is not None:
                    shown = lexical if resolved in (None, lexical) else f"{lexical} (-> {resolved})"
                    verb = "denies" if lst == "deny" else "requires a prompt for"
                    out.note(lst, r, f"{r.text} {verb} {name} on {shown}")
            link = None if out.deny else self.decisions.other_name(resolved or full, kind)
            if link is not None:
                verb = "denies" if link.lst == "deny" else "requires a prompt for"
                out.note(link.lst, link.rule, f"{link.rule.text} {verb} {name} on {lexical}: {link.reason}")
            a = self.decisions.rule(view.path, "allow", lexical, resolved)
            if a is None:
                allow_ok = False
            elif all_allowed is None:
                all_allowed = a
            if not self.decisions.inside(lexical, resolved):
                inside_all = False
            if kind == "edit" and protected is None and (
                is_protected(lexical) or (resolved is not None and is_protected(resolved))
            ):
                protected = f"{name} writes the protected path {lexical}"
        if kind == "edit":
            out.protected = protected
            out.edit_in_scope = inside_all and protected is None
            out.edit_reason = f"{name} on {', '.join(raws)}"
        if allow_ok and all_allowed is not None:
            out.allow = (all_allowed, f"{all_allowed.text} allows {name} on {', '.join(raws)}")
        if kind == "read":
            needs = self.families.requires_permission(name, tool)
            if inside_all and not needs:
                out.default_ok = f"{name} inside the working directories needs no permission"
            elif not inside_all:
                out.unapproved = f"{name} outside the working directories ({', '.join(raws)}) needs permission"
        if not out.unapproved:
            out.unapproved = f"{name} on {', '.join(raws)} needs permission and no rule allows it"
        return out

    def _webfetch(self, view: _View, data: Mapping[str, Any]) -> _Outcome:
        out = _Outcome()
        url = data.get("url")
        hosts, clean = wf.url_hosts(url) if isinstance(url, str) else ([], False)
        if not hosts:
            out.unapproved = f"WebFetch: cannot find a host in {url!r}"
            rule = next((r for lst in ("deny", "ask") for r, _rx in view.names[lst]), None)
            if rule is not None:
                out.might_apply(rule, out.unapproved)
            return out
        for lst in ("deny", "ask"):
            for r, rx in view.names[lst]:
                hit = next((h for h in hosts if rx.match(h)), None)
                if hit is not None:
                    reason = f"{r.text} matches host {hit}"
                    out.note(lst, r, reason)
        if clean:
            for r, rx in view.names["allow"]:
                if all(rx.match(h) for h in hosts):
                    out.allow = (r, f"{r.text} allows host {hosts[0]}")
                    break
            if hosts[0] in wf.PREAPPROVED_DOMAINS:
                out.default_ok = f"{hosts[0]} is a preapproved documentation domain"
        out.unapproved = (f"WebFetch of host {hosts[0]} needs permission" if clean
                          else f"WebFetch: the host of {url!r} is ambiguous ({', '.join(hosts)})")
        return out

    def _named(self, view: _View, kind: str, name: str, data: Mapping[str, Any], tool: Tool | None) -> _Outcome:
        out = _Outcome()
        if kind == "skill":
            skill = data.get("skill") if isinstance(data.get("skill"), str) else data.get("name")
            skill = skill.lstrip("/") if isinstance(skill, str) else ""
            args = data.get("args")
            argstr = " ".join(args.split()) if isinstance(args, str) else ""
            views = [skill, f"{skill} {argstr}".strip()]
        else:
            sub = data.get("subagent_type")
            views = [sub if isinstance(sub, str) else "general-purpose"]
        for lst in _LISTS:
            for r, rx in view.names[lst]:
                if (lst == "allow" and all(rx.match(v) for v in views[-1:])) or (
                    lst != "allow" and any(rx.match(v) for v in views)
                ):
                    reason = f"{name} {views[-1]!r} matches {r.text}"
                    out.note(lst, r, reason)
        if not self.families.requires_permission(name, tool):
            out.default_ok = f"{name} needs no permission"
        out.unapproved = f"{name} {views[-1]!r} needs permission"
        return out

    def _other(self, view: _View, name: str, data: Mapping[str, Any], tool: Tool | None) -> _Outcome:
        out = _Outcome()
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

    def _powershell(self, view: _View, data: Mapping[str, Any]) -> _Outcome:
        out = _Outcome()
        command = data.get("command")
        if not isinstance(command, str) or not command.strip():
            out.unapproved = "PowerShell: no command to check"
            return out
        script = ps.split(command)
        approved: list[str] = []
        allow_rule: Rule | None = None
        unapproved = ""
        for stmt in script.statements:
            canon = ps.canonical(stmt)
            views = list(dict.fromkeys([canon, " ".join(stmt.split())]))
            for lst in ("deny", "ask"):
                r = view.cmd[lst].match(views)
                if r is not None:
                    reason = f"'{canon}' matches {r.text}"
                    out.note(lst, r, reason)
            head = canon.split(" ", 1)[0].lower()
            if out.might is None and (head in ps.DYNAMIC_COMMANDS or "$" in canon):
                words = canon.split(" ")
                shape = [None if "$" in w or (i == 0 and w.lower() in ps.DYNAMIC_COMMANDS) else w
                         for i, w in enumerate(words)]
                rule = view.cmd["deny"].might_match(shape) or view.cmd["ask"].might_match(shape)
                if rule is None and shape[0] is None:
                    rule = bashmod.unseen_rule(view.cmd["deny"], view.cmd["ask"], self.decisions)
                if rule is not None:
                    out.might_apply(rule, f"cannot tell what '{canon}' runs or touches")
            redirect_ok = self._ps_files(stmt, head, out)
            r = view.cmd["allow"].match([canon], exact_only=head in ps.DYNAMIC_COMMANDS or "$" in canon)
            if r is not None and redirect_ok:
                allow_rule = allow_rule or r
                approved.append(canon)
            elif not unapproved:
                unapproved = f"'{canon}' needs permission" + ("" if redirect_ok else " (it redirects output)")
        if script.problems:
            out.hard_ask = f"cannot analyse the PowerShell command: {script.problems[0]}"
        if not unapproved and allow_rule is not None:
            out.allow = (allow_rule, f"every statement is allowed ({allow_rule.text})")
        out.unapproved = unapproved or "PowerShell command needs permission"
        return out

    def _ps_files(self, stmt: str, head: str, out: _Outcome) -> bool:
        """Read/Edit rules on a PowerShell statement's file arguments; False: a redirect needs approval."""
        oracle = self.decisions
        redirect_ok = True
        known = head in ps.FILE_READERS or head in ps.FILE_WRITERS
        for kind, value in ps.arguments(stmt):
            if not value or value.startswith(("$", "@", "(")):
                redirect_ok = redirect_ok and kind != "write"
                rule = self.decisions.unseen_rule(kind == "write" or head in ps.FILE_WRITERS)
                if value and rule is not None and (known or kind == "write"):
                    out.might_apply(rule, f"PowerShell {head}: cannot tell which file {value} names")
                continue
            if kind == "write" and value.lower() in ("$null", "nul", "/dev/null"):
                continue
            path = absolute(value, self.cwd, self.home, self.windows)
            write = kind == "write" or head in ps.FILE_WRITERS
            v = oracle.write_verdict(path) if write else oracle.read_verdict(path)
            if v.deny is not None:
                reason = f"PowerShell {head} on {collapse(path)}: {v.deny.text} denies it"
                if known or kind == "write":
                    out.note("deny", v.deny, reason)
                elif out.hard_ask is None:
                    out.hard_ask = f"PowerShell {head} may touch {collapse(path)}, which {v.deny.text} denies"
            elif v.ask is not None:
                out.note("ask", v.ask, f"PowerShell {head} on {collapse(path)}: {v.ask.text} covers it")
            if write and v.protected and out.protected is None and (known or kind == "write"):
                out.protected = f"PowerShell {head} writes the protected path {collapse(path)}"
            if kind == "write" and v.allow is None:
                redirect_ok = False
        return redirect_ok

    def _bash(self, view: _View, data: Mapping[str, Any], name: str) -> _Outcome:
        out = _Outcome()
        command = data.get("command")
        if not isinstance(command, str):
            if "ws" in data:
                out.unapproved = f"{name}: opening a WebSocket always asks"
            else:
                out.unapproved = f"{name}: no command to check"
            return out
        result = bashmod.analyse(command, self.decisions, view.cmd["deny"], view.cmd["ask"], view.cmd["allow"])
        if bashmod.has_control_characters(command):
            out.refuse = f"{name}: the command contains raw control characters, which are refused"
        if result.deny is not None:
            out.note("deny", result.deny, result.deny_reason)
        if result.ask_rule is not None:
            out.note("ask", result.ask_rule, result.ask_reason)
        out.hard_ask = result.hard_ask
        out.might = result.might
        out.might_files_only = result.might_files_only
        if result.unverifiable is not None:
            might = bashmod.unseen_rule(view.cmd["deny"], view.cmd["ask"], self.decisions)
            if out.hard_ask is None and out.might is None and might is not None:
                out.might_apply(might, result.unverifiable)
                out.might_files_only = False
            elif result.unapproved is None:
                result.unapproved = result.unverifiable
        out.protected = result.protected
        if result.writes is not None and self.mode == "plan":
            out.is_edit = True
            out.edit_reason = result.writes
        if result.unapproved is None:
            if result.needs_edit_mode is None:
                if result.allow_rule is not None:
                    out.allow = (result.allow_rule, "every subcommand is approved: " + "; ".join(result.approvals))
                else:
                    out.default_ok = "read-only command: " + "; ".join(result.approvals)
            else:
                out.is_edit = True
                out.edit_in_scope = True
                out.edit_reason = result.needs_edit_mode
                out.unapproved = f"{result.needs_edit_mode}: needs permission"
        else:
            out.unapproved = result.unapproved
            if result.needs_edit_mode is not None:
                out.is_edit = True
                out.edit_reason = result.needs_edit_mode
        return out


def _glob_literal(pattern: str) -> str:
    parts = pattern.split("/")
    out: list[str] = []
    for seg in parts:
        if any(c in seg for c in "*?[{"):
            break
        out.append(seg)
    joined = "/".join(out)
    return joined or ("/" if pattern.startswith("/") else ".")
