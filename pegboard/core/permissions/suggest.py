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
from pegboard.core.permissions.families import FAMILY_KINDS
from pegboard.core.tools import Tool

_PATH_FIELDS = ("file_path", "notebook_path", "path", "filePath")
_PLAIN_WORD = re.compile(r"[A-Za-z0-9._:@+-]+")
_SHELL_OPERATORS = ("&&", "||", ";", "|", "&", ">", "<", "`", "$(", "\n")


def _path_candidates(family: str, data: Mapping[str, Any], cwd: Path) -> Iterator[str]:
    value = next((data[f] for f in _PATH_FIELDS if isinstance(data.get(f), str) and data[f]), None)
    if value is None:
        return
    path = Path(value).expanduser()
    path = path if path.is_absolute() else cwd / path
    yield f"{family}(/{path.as_posix()})"
    yield f"{family}(/{path.parent.as_posix()}/**)"


def _command_candidates(family: str, data: Mapping[str, Any]) -> Iterator[str]:
    command = data.get("command")
    if not isinstance(command, str) or not command.strip():
        return
    command = command.strip()
    if any(op in command for op in _SHELL_OPERATORS):
        yield f"{family}({command})"
        return
    try:
        words = shlex.split(command)
    except ValueError:
        yield f"{family}({command})"
        return
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


def candidates(tool: Tool, data: Mapping[str, Any], cwd: Path) -> Iterator[str]:
    """Allow rules for this call, narrowest first (not yet checked)."""
    family = tool.family
    kind = FAMILY_KINDS.get(family)
    if kind in ("read", "edit"):
        yield from _path_candidates(family, data, cwd)
    elif kind in ("bash", "powershell"):
        yield from _command_candidates(family, data)
    elif kind == "webfetch":
        yield from _url_candidates(family, data)
    elif kind in ("skill", "agent"):
        yield from _named_candidates(family, data)


def narrowest_rule(tool: Tool, data: Mapping[str, Any], cwd: Path) -> str:
    """The first candidate the rule engine says allows this call, else the family name."""
    from pegboard.core.permissions import PermissionEngine

    for rule in candidates(tool, data, cwd):
        layer = ConfigLayer("code", {"permissions": {"allow": [rule]}}, root=cwd)
        engine = PermissionEngine([layer], cwd=cwd, mode="default")
        decision = engine.check(tool.name, data, tool)
        if decision.decision == "allow" and decision.rule == rule:
            return rule
    return tool.family
