"""Pegboard's file permission families: ``Read(...)`` and ``Edit(...)`` rules.

Their path rules are the ones the kernel's path and inode check applies to every file a
call touches (a shell command's redirections as much as a Read call), so every other family
sees them through ``FamilyContext.decisions``. Offered through entry-point group
``pegboard.permission_families``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pegboard.permissions import (
    PRIMARY_FIELDS,
    Allows,
    FamilyCall,
    FamilyTool,
    Outcome,
    Reading,
    Rule,
    RuleSuggestion,
    absolute,
    collapse,
    first_allowing,
    is_protected,
    parameter_reading,
)

#: Input keys that name the file(s) a path-family tool touches.
PATH_FIELDS = ("file_path", "notebook_path", "path", "filePath", "file", "filename")

_NO_TOOLS: Mapping[str, FamilyTool] = {}


def _glob_literal(pattern: str) -> str:
    out: list[str] = []
    for seg in pattern.split("/"):
        if any(c in seg for c in "*?[{"):
            break
        out.append(seg)
    joined = "/".join(out)
    return joined or ("/" if pattern.startswith("/") else ".")


_SUGGEST_FIELDS = ("file_path", "notebook_path", "path", "filePath")

#: The file headers of a patch (ApplyPatch's, padded with spaces or tabs as it accepts them,
#: and a unified diff's): a patch none of them matches names no file and can write none.
_PATCH_HEADER = re.compile(
    r"^(?:[ \t]*\*\*\* (?:Add|Update|Delete) File: |[ \t]*\*\*\* Move to: |\+\+\+ |--- )(.+)$", re.MULTILINE)
_PATCH_FIELDS = ("patch", "input")


def _patch_only(data: Mapping[str, Any]) -> bool:
    """The call's whole input is one patch text (ApplyPatch's ``input``)."""
    given = {k for k, v in data.items() if v is not None}
    return len(given) == 1 and next(iter(given)) in _PATCH_FIELDS and isinstance(data[next(iter(given))], str)


class PathFamily:
    """``Read(...)`` and ``Edit(...)``: gitignore patterns over the files a call names."""

    tools: Mapping[str, FamilyTool] = _NO_TOOLS

    def __init__(self, name: str, write: bool) -> None:
        self.name = name
        self.write = write
        self.asks = write
        self.fields = ("file_path", "old_string", "new_string", "replace_all") if write else (
            "file_path", "offset", "limit", "pages")
        self.file_rules: Literal["read", "write"] | None = "write" if write else "read"
        self.borrows = {"deny": ("Read",), "ask": ("Read",)} if write else {"allow": ("Edit",)}

    def compile(self, rule_list: str, own: Sequence[tuple[Rule, Any]]) -> Any:
        return list(own)  # path rules are the engine's ("path" readings); nothing of their own

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
            for m in _PATCH_HEADER.finditer(patch):
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
            if self.write and complete and _patch_only(call.data):
                out.is_edit = False
                out.default_ok = f"{name}: the patch names no file, so it can change none; the tool says what is wrong"
                return out
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




class ReadFamily(PathFamily):
    """``Read(...)``: files a call reads; a read inside the working directories needs no permission."""

    def __init__(self) -> None:
        super().__init__("Read", write=False)


class EditFamily(PathFamily):
    """``Edit(...)``: files a call writes; outside ``acceptEdits`` it asks unless a rule allows it."""

    def __init__(self) -> None:
        super().__init__("Edit", write=True)


__all__ = ["PATH_FIELDS", "EditFamily", "PathFamily", "ReadFamily"]
