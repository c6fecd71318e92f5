"""The built-in permission families, on the public family interface.

Each class reads its own specifiers and judges a call; the engine knows none of them by
name. They are registered by default until each moves into a distribution of its own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pegboard.core.permissions import webfetch as wf
from pegboard.core.permissions.family import FamilyCall, FamilyTool, Outcome, Reading, parameter_reading
from pegboard.core.permissions.paths import absolute, collapse, is_protected
from pegboard.core.permissions.rules import Rule, word_pattern_regex
from pegboard.core.permissions.suggest import Allows, RuleSuggestion, first_allowing

#: Input fields that hold a call's primary content; a ``Tool(param:value)`` rule on them is
#: bypassable (a compound command, another spelling of a path) and gets a warning.
PRIMARY_FIELDS = frozenset({"command", "file_path", "path", "notebook_path", "url"})

#: Input keys that name the file(s) a path-family tool touches.
PATH_FIELDS = ("file_path", "notebook_path", "path", "filePath", "file", "filename")

_NO_TOOLS: Mapping[str, FamilyTool] = {}
_NO_BORROWS: Mapping[str, tuple[str, ...]] = {}


class _Base:
    name: str
    asks: bool
    fields: tuple[str, ...]
    tools: Mapping[str, FamilyTool] = _NO_TOOLS
    file_rules: Literal["read", "write"] | None = None
    borrows: Mapping[str, tuple[str, ...]] = _NO_BORROWS

    def compile(self, rule_list: str, own: Sequence[tuple[Rule, Any]]) -> Any:
        return list(own)


def _glob_literal(pattern: str) -> str:
    out: list[str] = []
    for seg in pattern.split("/"):
        if any(c in seg for c in "*?[{"):
            break
        out.append(seg)
    joined = "/".join(out)
    return joined or ("/" if pattern.startswith("/") else ".")


_SUGGEST_FIELDS = ("file_path", "notebook_path", "path", "filePath")


class PathFamily(_Base):
    """``Read(...)`` and ``Edit(...)``: gitignore patterns over the files a call names."""

    def __init__(self, name: str, write: bool) -> None:
        self.name = name
        self.write = write
        self.asks = write
        self.fields = ("file_path", "old_string", "new_string", "replace_all") if write else (
            "file_path", "offset", "limit", "pages")
        self.file_rules = "write" if write else "read"
        self.borrows = {"deny": ("Read",), "ask": ("Read",)} if write else {"allow": ("Edit",)}

    def parse(self, rule: Rule, fields: frozenset[str] | None, note: Callable[[str], None]) -> Sequence[Reading]:
        param = rule.param()
        if param and fields is not None and param[0] in fields:
            return parameter_reading(rule, fields, note, primary=PRIMARY_FIELDS)
        return [("path", rule.specifier)]

    def input_paths(self, name: str, data: Mapping[str, Any]) -> tuple[list[str], bool]:
        """Raw paths a call touches; the bool says the list is complete."""
        raws: list[str] = []
        complete = True
        for key in PATH_FIELDS:
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
        if isinstance(patch, str) and self.write:
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

    def suggest(self, family: str, data: Mapping[str, Any], cwd: Path, allows: Allows) -> RuleSuggestion | None:
        """The file itself (``Read(//etc/hosts)``), else its directory."""
        value = next((data[f] for f in _SUGGEST_FIELDS if isinstance(data.get(f), str) and data[f]), None)
        if value is None:
            return None
        path = Path(value).expanduser()
        path = path if path.is_absolute() else cwd / path
        return first_allowing([f"{family}(/{path.as_posix()})", f"{family}(/{path.parent.as_posix()}/**)"], data,
                              allows)

    def judge(self, call: FamilyCall) -> Outcome:
        name, ctx = call.name, call.context
        decisions = ctx.decisions
        kind = "edit" if self.write else "read"
        out = Outcome(is_edit=self.write)
        raws, complete = self.input_paths(name, call.data)
        if not raws:
            if self.write or not complete:
                out.unapproved = f"{name}: no file path to check"
                return out
            raws = ["."]
        all_allowed: Rule | None = None
        allow_ok = True
        inside_all = True
        protected = None
        for raw in raws:
            full = absolute(raw, ctx.cwd, ctx.home, ctx.windows)
            lexical = collapse(full)
            resolved = decisions.resolve(full)
            for lst in ("deny", "ask"):
                r = decisions.rule(call.paths, lst, lexical, resolved)
                if r is not None:
                    shown = lexical if resolved in (None, lexical) else f"{lexical} (-> {resolved})"
                    verb = "denies" if lst == "deny" else "requires a prompt for"
                    out.note(lst, r, f"{r.text} {verb} {name} on {shown}")
            link = None if out.deny else decisions.other_name(resolved or full, kind)
            if link is not None:
                verb = "denies" if link.lst == "deny" else "requires a prompt for"
                out.note(link.lst, link.rule, f"{link.rule.text} {verb} {name} on {lexical}: {link.reason}")
            a = decisions.rule(call.paths, "allow", lexical, resolved)
            if a is None:
                allow_ok = False
            elif all_allowed is None:
                all_allowed = a
            if not decisions.inside(lexical, resolved):
                inside_all = False
            if self.write and protected is None and (
                is_protected(lexical) or (resolved is not None and is_protected(resolved))
            ):
                protected = f"{name} writes the protected path {lexical}"
        if self.write:
            out.protected = protected
            out.edit_in_scope = inside_all and protected is None
            out.edit_reason = f"{name} on {', '.join(raws)}"
        if allow_ok and all_allowed is not None:
            out.allow = (all_allowed, f"{all_allowed.text} allows {name} on {', '.join(raws)}")
        if not self.write:
            needs = ctx.requires_permission(name, call.tool)
            if inside_all and not needs:
                out.default_ok = f"{name} inside the working directories needs no permission"
            elif not inside_all:
                out.unapproved = f"{name} outside the working directories ({', '.join(raws)}) needs permission"
        if not out.unapproved:
            out.unapproved = f"{name} on {', '.join(raws)} needs permission and no rule allows it"
        return out


class WebFamily(_Base):
    """``WebFetch(domain:HOST)``: the hosts a URL names."""

    name = "WebFetch"
    asks = True
    fields = ("url", "prompt")

    def parse(self, rule: Rule, fields: frozenset[str] | None, note: Callable[[str], None]) -> Sequence[Reading]:
        spec = rule.specifier or ""
        param = rule.param()
        if param and param[0] == "domain":
            return [("own", param[1])]
        if param:
            return parameter_reading(rule, fields, note, primary=PRIMARY_FIELDS)
        if spec.strip() == "*":
            return [("bare", None)]
        if rule.lst == "allow":
            note("WebFetch rules take 'domain:HOST' (ignored)")
            return []
        note("WebFetch rules take 'domain:HOST'; read as a domain")
        return [("own", spec)]

    def compile(self, rule_list: str, own: Sequence[tuple[Rule, Any]]) -> Any:
        return [(r, re.compile(wf.domain_regex(spec), re.IGNORECASE)) for r, spec in own]

    def judge(self, call: FamilyCall) -> Outcome:
        out = Outcome()
        rules = call.rules
        url = call.data.get("url")
        hosts, clean = wf.url_hosts(url) if isinstance(url, str) else ([], False)
        if not hosts:
            out.unapproved = f"WebFetch: cannot find a host in {url!r}"
            rule = next((r for lst in ("deny", "ask") for r, _rx in rules[lst]), None)
            if rule is not None:
                out.might_apply(rule, out.unapproved)
            return out
        for lst in ("deny", "ask"):
            for r, rx in rules[lst]:
                hit = next((h for h in hosts if rx.match(h)), None)
                if hit is not None:
                    out.note(lst, r, f"{r.text} matches host {hit}")
        if clean:
            for r, rx in rules["allow"]:
                if all(rx.match(h) for h in hosts):
                    out.allow = (r, f"{r.text} allows host {hosts[0]}")
                    break
            if hosts[0] in wf.PREAPPROVED_DOMAINS:
                out.default_ok = f"{hosts[0]} is a preapproved documentation domain"
        out.unapproved = (f"WebFetch of host {hosts[0]} needs permission" if clean
                          else f"WebFetch: the host of {url!r} is ambiguous ({', '.join(hosts)})")
        return out

    def suggest(self, family: str, data: Mapping[str, Any], cwd: Path, allows: Allows) -> RuleSuggestion | None:
        """``WebFetch(domain:HOST)`` for the URL's host."""
        from urllib.parse import urlsplit

        url = data.get("url")
        host = urlsplit(url).hostname if isinstance(url, str) else None
        return first_allowing([f"{family}(domain:{host})"] if host else [], data, allows)


class NamedFamily(_Base):
    """``Skill(name)`` and ``Agent(type)``: a name pattern."""

    def __init__(self, name: str, asks: bool, fields: tuple[str, ...], skill: bool) -> None:
        self.name, self.asks, self.fields, self.skill = name, asks, fields, skill

    def parse(self, rule: Rule, fields: frozenset[str] | None, note: Callable[[str], None]) -> Sequence[Reading]:
        param = rule.param()
        if param and fields is not None and param[0] in fields:
            return parameter_reading(rule, fields, note, primary=PRIMARY_FIELDS)
        return [("own", rule.specifier)]

    def compile(self, rule_list: str, own: Sequence[tuple[Rule, Any]]) -> Any:
        flags = re.IGNORECASE if rule_list != "allow" else 0
        return [(r, re.compile(word_pattern_regex(spec), flags)) for r, spec in own]

    def judge(self, call: FamilyCall) -> Outcome:
        out = Outcome()
        data, name = call.data, call.name
        if self.skill:
            skill = data.get("skill") if isinstance(data.get("skill"), str) else data.get("name")
            skill = skill.lstrip("/") if isinstance(skill, str) else ""
            args = data.get("args")
            argstr = " ".join(args.split()) if isinstance(args, str) else ""
            views = [skill, f"{skill} {argstr}".strip()]
        else:
            sub = data.get("subagent_type")
            views = [sub if isinstance(sub, str) else "general-purpose"]
        for lst in ("deny", "ask", "allow"):
            for r, rx in call.rules[lst]:
                if (lst == "allow" and all(rx.match(v) for v in views[-1:])) or (
                    lst != "allow" and any(rx.match(v) for v in views)
                ):
                    out.note(lst, r, f"{name} {views[-1]!r} matches {r.text}")
        if not call.context.requires_permission(name, call.tool):
            out.default_ok = f"{name} needs no permission"
        out.unapproved = f"{name} {views[-1]!r} needs permission"
        return out

    def suggest(self, family: str, data: Mapping[str, Any], cwd: Path, allows: Allows) -> RuleSuggestion | None:
        """``Skill(name)`` / ``Agent(type)`` for the name the call gives."""
        key = "skill" if self.skill else "subagent_type"
        value = data.get(key)
        return first_allowing([f"{family}({value})"] if isinstance(value, str) and value else [], data, allows)


def builtin_families() -> list[Any]:
    """The families the kernel registers by default."""
    return [
        PathFamily("Read", write=False),
        PathFamily("Edit", write=True),
        WebFamily(),
        NamedFamily("Skill", True, ("skill", "args"), skill=True),
        NamedFamily("Agent", False, ("description", "prompt", "subagent_type", "model", "run_in_background"),
                    skill=False),
    ]
