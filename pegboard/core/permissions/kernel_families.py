"""The built-in permission families, on the public family interface.

Each class reads its own specifiers and judges a call; the engine knows none of them by
name. They are registered by default until each moves into a distribution of its own.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pegboard.core.permissions import bash as bashmod
from pegboard.core.permissions import powershell as ps
from pegboard.core.permissions import webfetch as wf
from pegboard.core.permissions.family import FamilyCall, FamilyTool, Outcome, Reading, parameter_reading
from pegboard.core.permissions.paths import absolute, collapse, is_protected
from pegboard.core.permissions.rules import Rule
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


class ShellFamily(_Base):
    """``Bash(...)``: command patterns, judged by the Bash analysis of the whole line."""

    name = "Bash"
    asks = True
    fields: tuple[str, ...] = ("command", "timeout", "description", "run_in_background", "dangerouslyDisableSandbox")
    ignore_case_allow = False

    def parse(self, rule: Rule, fields: frozenset[str] | None, note: Callable[[str], None]) -> Sequence[Reading]:
        spec = rule.specifier or ""
        if spec.strip() == "*":
            return [("bare", None)]
        param = rule.param()
        items: list[Reading] = [("own", spec)]
        if param and rule.lst != "allow" and param[0] == "command":
            note(f"'command' is the call's primary content; read as the command pattern {rule.tool}({param[1]})")
            items.append(("own", param[1]))
        elif param and rule.lst != "allow" and fields and param[0] in fields:
            items.append(("param", param))
        return items

    def compile(self, rule_list: str, own: Sequence[tuple[Rule, Any]]) -> Any:
        return bashmod.CommandRules(list(own), ignore_case=rule_list != "allow" or self.ignore_case_allow)

    def simple_commands(self, command: str) -> list[tuple[list[str], bool]] | None:
        """Each simple command as (its leading literal words, whether those are all of it: no
        expansion, glob or assignment); ``None`` when the line cannot be split."""
        from pegboard.core.permissions.bashparse import parse

        parsed = parse(command)
        if parsed.problems:
            return None
        parts = []
        for seg in parsed.segments:
            if not seg.words:
                continue
            literal = []
            for word in seg.words:
                if word.dynamic or word.glob:
                    break
                literal.append(word.value)
            parts.append((literal, len(literal) == len(seg.words) and not seg.assignments))
        return parts

    def suggest(self, family: str, data: Mapping[str, Any], cwd: Path, allows: Allows) -> RuleSuggestion | None:
        """One rule per simple command: its longest plain prefix (``Bash(npm run *)``) that
        allows it alone, else that prefix, else the exact command."""
        command = data.get("command")
        parts = self.simple_commands(command) if isinstance(command, str) and command.strip() else None
        if not parts:
            return RuleSuggestion((), False)
        rules: list[str] = []
        for words, whole in parts:
            options = list(_command_candidates(family, words, " ".join(words) if whole else None))
            if not options:
                return RuleSuggestion((), False)  # a command word the shell computes: no rule names it
            alone = {**data, "command": shlex.join(words)} if whole else None
            chosen = next((r for r in options if alone and allows([r], alone)), options[0])
            if chosen not in rules:
                rules.append(chosen)
        return RuleSuggestion(tuple(rules), allows(rules, data))


    def judge(self, call: FamilyCall) -> Outcome:
        out = Outcome()
        data, name, rules, ctx = call.data, call.name, call.rules, call.context
        command = data.get("command")
        if not isinstance(command, str):
            socket = "ws" in data
            out.unapproved = f"{name}: opening a WebSocket always asks" if socket else f"{name}: no command to check"
            return out
        result = bashmod.analyse(command, ctx.decisions, rules["deny"], rules["ask"], rules["allow"])
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
            might = bashmod.unseen_rule(rules["deny"], rules["ask"], ctx.decisions)
            if out.hard_ask is None and out.might is None and might is not None:
                out.might_apply(might, result.unverifiable)
                out.might_files_only = False
            elif result.unapproved is None:
                result.unapproved = result.unverifiable
        out.protected = result.protected
        if result.writes is not None and ctx.mode == "plan":
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


_PLAIN_WORD = re.compile(r"[A-Za-z0-9._:@+-]+")
_SIMPLE_COMMANDS = re.compile(r"\s*(?:&&|\|\||;|\||\n)\s*")
_MAX_PREFIX_WORDS = 3


def _plain_prefix(words: Sequence[str]) -> list[str]:
    plain = []
    for word in words[:_MAX_PREFIX_WORDS]:
        if word.startswith("-") or not _PLAIN_WORD.fullmatch(word):
            break
        plain.append(word)
    return plain


def _command_candidates(family: str, words: Sequence[str], exact: str | None) -> Iterator[str]:
    """``Family(prefix *)`` from the longest plain prefix (up to three words) down, then the exact command."""
    plain = _plain_prefix(words)
    for size in range(len(plain), 0, -1):
        yield f"{family}({' '.join(plain[:size])} *)"
    if exact:
        yield f"{family}({exact})"

class PowerShellFamily(ShellFamily):
    """``PowerShell(...)``: command patterns (case-insensitive), statement by statement."""

    name = "PowerShell"
    fields = ("command", "timeout", "description", "run_in_background")
    ignore_case_allow = True

    def simple_commands(self, command: str) -> list[tuple[list[str], bool]] | None:
        parts = []
        for text in (p for p in _SIMPLE_COMMANDS.split(command.strip()) if p):
            try:
                words = shlex.split(text)
            except ValueError:
                words = []
            parts.append((words, bool(words) and "$" not in text))
        return parts

    def judge(self, call: FamilyCall) -> Outcome:
        out = Outcome()
        rules, ctx = call.rules, call.context
        command = call.data.get("command")
        if not isinstance(command, str) or not command.strip():
            out.unapproved = "PowerShell: no command to check"
            return out
        script = ps.split(command)
        allow_rule: Rule | None = None
        unapproved = ""
        for stmt in script.statements:
            canon = ps.canonical(stmt)
            views = list(dict.fromkeys([canon, " ".join(stmt.split())]))
            for lst in ("deny", "ask"):
                r = rules[lst].match(views)
                if r is not None:
                    out.note(lst, r, f"'{canon}' matches {r.text}")
            head = canon.split(" ", 1)[0].lower()
            if out.might is None and (head in ps.DYNAMIC_COMMANDS or "$" in canon):
                words = canon.split(" ")
                shape = [None if "$" in w or (i == 0 and w.lower() in ps.DYNAMIC_COMMANDS) else w
                         for i, w in enumerate(words)]
                rule = rules["deny"].might_match(shape) or rules["ask"].might_match(shape)
                if rule is None and shape[0] is None:
                    rule = bashmod.unseen_rule(rules["deny"], rules["ask"], ctx.decisions)
                if rule is not None:
                    out.might_apply(rule, f"cannot tell what '{canon}' runs or touches")
            redirect_ok = self._files(call, stmt, head, out)
            r = rules["allow"].match([canon], exact_only=head in ps.DYNAMIC_COMMANDS or "$" in canon)
            if r is not None and redirect_ok:
                allow_rule = allow_rule or r
            elif not unapproved:
                unapproved = f"'{canon}' needs permission" + ("" if redirect_ok else " (it redirects output)")
        if script.problems:
            out.hard_ask = f"cannot analyse the PowerShell command: {script.problems[0]}"
        if not unapproved and allow_rule is not None:
            out.allow = (allow_rule, f"every statement is allowed ({allow_rule.text})")
        out.unapproved = unapproved or "PowerShell command needs permission"
        return out

    @staticmethod
    def _files(call: FamilyCall, stmt: str, head: str, out: Outcome) -> bool:
        """Read/Edit rules on a statement's file arguments; False: a redirect needs approval."""
        ctx = call.context
        oracle = ctx.decisions
        redirect_ok = True
        known = head in ps.FILE_READERS or head in ps.FILE_WRITERS
        for kind, value in ps.arguments(stmt):
            if not value or value.startswith(("$", "@", "(")):
                redirect_ok = redirect_ok and kind != "write"
                rule = oracle.unseen_rule(kind == "write" or head in ps.FILE_WRITERS)
                if value and rule is not None and (known or kind == "write"):
                    out.might_apply(rule, f"PowerShell {head}: cannot tell which file {value} names")
                continue
            if kind == "write" and value.lower() in ("$null", "nul", "/dev/null"):
                continue
            path = absolute(value, ctx.cwd, ctx.home, ctx.windows)
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
        return [(r, re.compile(bashmod.bash_pattern_regex(spec), flags)) for r, spec in own]

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
        ShellFamily(),
        PowerShellFamily(),
        PathFamily("Read", write=False),
        PathFamily("Edit", write=True),
        WebFamily(),
        NamedFamily("Skill", True, ("skill", "args"), skill=True),
        NamedFamily("Agent", False, ("description", "prompt", "subagent_type", "model", "run_in_background"),
                    skill=False),
    ]
