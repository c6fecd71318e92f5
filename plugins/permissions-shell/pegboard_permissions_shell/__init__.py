"""Pegboard's shell permission families: ``Bash(...)`` and ``PowerShell(...)`` rules.

The families are declared here and cost nothing to import; the analysis (the tree-sitter
Bash grammar, every command table) is imported the first time a shell rule is compiled or
a shell call judged. Offered through entry-point group ``pegboard.permission_families``.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pegboard.permissions import (
    Allows,
    FamilyCall,
    FamilyTool,
    Outcome,
    Reading,
    Rule,
    RuleSuggestion,
    absolute,
    collapse,
)

_NO_TOOLS: Mapping[str, FamilyTool] = {}
_NO_BORROWS: Mapping[str, tuple[str, ...]] = {}


class ShellFamily:
    """``Bash(...)``: command patterns, judged by the Bash analysis of the whole line."""

    name = "Bash"
    asks = True
    tools: Mapping[str, FamilyTool] = _NO_TOOLS
    file_rules: Literal["read", "write"] | None = None
    borrows: Mapping[str, tuple[str, ...]] = _NO_BORROWS
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
        from pegboard_permissions_shell import bash as bashmod

        return bashmod.CommandRules(list(own), ignore_case=rule_list != "allow" or self.ignore_case_allow)

    def simple_commands(self, command: str) -> list[tuple[list[str], bool]] | None:
        """Each simple command as (its leading literal words, whether those are all of it: no
        expansion, glob or assignment); ``None`` when the line cannot be split."""
        from pegboard_permissions_shell.bashparse import parse

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
        from pegboard_permissions_shell import bash as bashmod

        out = Outcome()
        data, name, rules, ctx = call.data, call.name, call.rules, call.context
        command = data.get("command")
        if not isinstance(command, str):
            if "ws" in data:
                out.hard_ask = f"{name}: opening a WebSocket always asks; no rule can allow it"
            else:
                out.unapproved = f"{name}: no command to check"
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
        from pegboard_permissions_shell import bash as bashmod
        from pegboard_permissions_shell import powershell as ps

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
        from pegboard_permissions_shell import powershell as ps

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


__all__ = ["PowerShellFamily", "ShellFamily"]
