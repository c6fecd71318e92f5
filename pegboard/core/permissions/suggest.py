"""The narrowest allow rule that would let one call run, for refusal messages.

A refusal that says "add Read to permissions.allow" invites a rule far wider than the call
needed. Candidates go from narrow to wide (``Read(//etc/hosts)``, ``Bash(npm run test:*)``,
``WebFetch(domain:example.com)``) and each is checked with the real rule engine; the first
that allows the call is suggested, the bare family name only when nothing narrower does.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pegboard.core.config import ConfigLayer
from pegboard.core.permissions.families import kind_of
from pegboard.core.tools import Tool

_PATH_FIELDS = ("file_path", "notebook_path", "path", "filePath")
_PLAIN_WORD = re.compile(r"[A-Za-z0-9._:@+-]+")
_SIMPLE_COMMANDS = re.compile(r"\s*(?:&&|\|\||;|\||\n)\s*")


def _path_candidates(family: str, data: Mapping[str, Any], cwd: Path) -> Iterator[str]:
    value = next((data[f] for f in _PATH_FIELDS if isinstance(data.get(f), str) and data[f]), None)
    if value is None:
        return
    path = Path(value).expanduser()
    path = path if path.is_absolute() else cwd / path
    yield f"{family}(/{path.as_posix()})"
    yield f"{family}(/{path.parent.as_posix()}/**)"


def _command_candidates(family: str, command: str) -> Iterator[str]:
    """``Family(prefix:*)`` from the longest plain prefix (up to three words) down, then the exact command."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = []
    plain = []
    for word in words:
        if word.startswith("-") or not _PLAIN_WORD.fullmatch(word):
            break
        plain.append(word)
    for size in range(min(len(plain), 3), 0, -1):
        yield f"{family}({' '.join(plain[:size])}:*)"
    yield f"{family}({command})"


def _url_candidates(family: str, data: Mapping[str, Any]) -> Iterator[str]:
    url = data.get("url")
    host = urlsplit(url).hostname if isinstance(url, str) else None
    if host:
        yield f"{family}(domain:{host})"


def _named_candidates(family: str, data: Mapping[str, Any]) -> Iterator[str]:
    for key in ("skill", "subagent_type"):
        if isinstance(data.get(key), str) and data[key]:
            yield f"{family}({data[key]})"


def candidates(tool: Tool, data: Mapping[str, Any], cwd: Path) -> Iterator[list[str]]:
    """Sets of allow rules for this call, narrowest first (not yet checked). A compound shell
    command needs one rule per simple command in it, so each candidate is a list."""
    family = tool.family
    kind = kind_of(family)
    if kind in ("bash", "powershell"):
        command = data.get("command")
        if isinstance(command, str) and command.strip():
            parts = [p for p in _SIMPLE_COMMANDS.split(command.strip()) if p]
            if len(parts) == 1:
                yield from ([rule] for rule in _command_candidates(family, parts[0]))
            else:
                yield [next(_command_candidates(family, part)) for part in parts]
                yield [f"{family}({part})" for part in parts]
        return
    single: Iterator[str] = iter(())
    if kind in ("read", "edit"):
        single = _path_candidates(family, data, cwd)
    elif kind == "webfetch":
        single = _url_candidates(family, data)
    elif kind in ("skill", "agent"):
        single = _named_candidates(family, data)
    yield from ([rule] for rule in single)


def narrowest_rule(tool: Tool, data: Mapping[str, Any], cwd: Path) -> str:
    """The first candidate the rule engine says allows this call (rules joined with ``", "``
    for a compound command), else the family name."""
    from pegboard.core.permissions import PermissionEngine

    for rules in candidates(tool, data, cwd):
        layer = ConfigLayer("code", {"permissions": {"allow": rules}}, root=cwd)
        try:
            decision = PermissionEngine([layer], cwd=cwd, mode="default").check(tool.name, data, tool)
        except Exception:  # a suggestion must never cost the caller its refusal message
            continue
        if decision.decision == "allow" and (decision.rule in rules or len(rules) > 1):
            return '", "'.join(rules)
    return tool.family
