"""The narrowest allow rules that would let one call run, for refusal messages and "always".

A refusal that says "add Bash to permissions.allow" invites a rule far wider than the call
needed. Candidates go from narrow to wide (``Read(//etc/hosts)``, ``Bash(npm run test *)``,
``WebFetch(domain:example.com)``) and each is checked with the real rule engine. A shell
command gets one rule per simple command, split by the same grammar the engine uses, so a
loop or a pipeline is never answered with the bare tool: a command no rule can allow as
written (``echo t$i`` holds an expansion) gets the pattern of its command words
(``Bash(echo *)``) and is marked as not allowed by it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pegboard.core.config import ConfigLayer
from pegboard.core.permissions.families import kind_of
from pegboard.core.tools import Tool

_PATH_FIELDS = ("file_path", "notebook_path", "path", "filePath")
_PLAIN_WORD = re.compile(r"[A-Za-z0-9._:@+-]+")
_SIMPLE_COMMANDS = re.compile(r"\s*(?:&&|\|\||;|\||\n)\s*")
_MAX_PREFIX_WORDS = 3


@dataclass(frozen=True, slots=True)
class RuleSuggestion:
    """Allow rules for one call; ``allows``: the engine lets exactly this call run with them."""

    rules: tuple[str, ...]
    allows: bool

    @property
    def text(self) -> str:
        """The rules as they are quoted in a message: ``Bash(make *)", "Bash(rm *)``."""
        return '", "'.join(self.rules)


def _path_candidates(family: str, data: Mapping[str, Any], cwd: Path) -> Iterator[str]:
    value = next((data[f] for f in _PATH_FIELDS if isinstance(data.get(f), str) and data[f]), None)
    if value is None:
        return
    path = Path(value).expanduser()
    path = path if path.is_absolute() else cwd / path
    yield f"{family}(/{path.as_posix()})"
    yield f"{family}(/{path.parent.as_posix()}/**)"


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


def _shell_parts(kind: str, command: str) -> list[tuple[list[str], bool]] | None:
    """Each simple command as (its leading literal words, whether those are all of it: no
    expansion, glob or assignment); ``None`` when the line cannot be split."""
    if kind == "bash":
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
    parts = []
    for text in (p for p in _SIMPLE_COMMANDS.split(command.strip()) if p):
        try:
            words = shlex.split(text)
        except ValueError:
            words = []
        parts.append((words, bool(words) and "$" not in text))
    return parts


def _url_candidates(family: str, data: Mapping[str, Any]) -> Iterator[str]:
    url = data.get("url")
    host = urlsplit(url).hostname if isinstance(url, str) else None
    if host:
        yield f"{family}(domain:{host})"


def _named_candidates(family: str, data: Mapping[str, Any]) -> Iterator[str]:
    for key in ("skill", "subagent_type"):
        if isinstance(data.get(key), str) and data[key]:
            yield f"{family}({data[key]})"


def _allows(rules: Sequence[str], tool: Tool, data: Mapping[str, Any], cwd: Path) -> bool:
    layer = ConfigLayer("code", {"permissions": {"allow": list(rules)}}, root=cwd)
    try:
        from pegboard.core.permissions import PermissionEngine

        decision = PermissionEngine([layer], cwd=cwd, mode="default").check(tool.name, data, tool)
    except Exception:  # a suggestion must never cost the caller its refusal message
        return False
    return decision.decision == "allow" and (decision.rule in rules or len(rules) > 1)


def _shell_suggestion(tool: Tool, kind: str, data: Mapping[str, Any], cwd: Path) -> RuleSuggestion:
    command = data.get("command")
    parts = _shell_parts(kind, command) if isinstance(command, str) and command.strip() else None
    if not parts:
        return RuleSuggestion((), False)
    family = tool.family
    rules: list[str] = []
    for words, whole in parts:
        options = list(_command_candidates(family, words, " ".join(words) if whole else None))
        if not options:
            return RuleSuggestion((), False)  # a command word the shell computes: no rule names it
        alone = {**data, "command": shlex.join(words)} if whole else None
        chosen = next((r for r in options if alone and _allows([r], tool, alone, cwd)), options[0])
        if chosen not in rules:
            rules.append(chosen)
    return RuleSuggestion(tuple(rules), _allows(rules, tool, data, cwd))


def suggest_allow_rules(tool: Tool, data: Mapping[str, Any], cwd: Path) -> RuleSuggestion:
    """The narrowest rules that allow this call; for a shell command one per simple command,
    with ``allows`` false when no rule narrower than the whole tool can (``rules`` may then be
    empty). Any other tool falls back to its bare family name."""
    kind = kind_of(tool.family)
    if kind in ("bash", "powershell"):
        return _shell_suggestion(tool, kind, data, cwd)
    single: Iterator[str] = iter(())
    if kind in ("read", "edit"):
        single = _path_candidates(tool.family, data, cwd)
    elif kind == "webfetch":
        single = _url_candidates(tool.family, data)
    elif kind in ("skill", "agent"):
        single = _named_candidates(tool.family, data)
    for rule in single:
        if _allows([rule], tool, data, cwd):
            return RuleSuggestion((rule,), True)
    return RuleSuggestion((tool.family,), _allows([tool.family], tool, data, cwd))


def narrowest_rule(tool: Tool, data: Mapping[str, Any], cwd: Path) -> str:
    """:func:`suggest_allow_rules`'s rules as one quoted text (``", "`` between the rules of
    a compound command); the family name when there is nothing narrower."""
    found = suggest_allow_rules(tool, data, cwd)
    return found.text if found.rules else tool.family
