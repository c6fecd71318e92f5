"""Parsing ``Tool`` / ``Tool(specifier)`` rules and matching their tool-name part.

Parsing is separate from matching so every rule is read once, when the engine is built,
and every problem (malformed text, a glob allow rule, a specifier on a tool that takes
none) becomes a diagnostic naming the file and the position instead of vanishing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

RuleList = Literal["deny", "ask", "allow"]

_RULE = re.compile(r"^\s*([A-Za-z0-9_.*?\-]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)
_PARAM = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_\-]*)\s*:\s*(.*?)\s*$", re.DOTALL)
_MCP_ALLOW_GLOB = re.compile(r"^mcp__[A-Za-z0-9_.\-]+?__[A-Za-z0-9_.\-]*\*[A-Za-z0-9_.*\-]*$")


class RuleSyntaxError(ValueError):
    """A rule that cannot be read; the message says why."""


@dataclass
class Rule:
    """One rule as written, where it came from, and its parsed parts."""

    text: str
    lst: RuleList
    source: str
    position: str
    tool: str
    specifier: str | None
    is_glob: bool = False
    tool_regex: re.Pattern[str] | None = None
    notes: list[str] = field(default_factory=list)
    root: str = ""  # where a ``/path`` specifier is anchored (the settings source)
    target: str = ""  # the tool or family name the rule applies to
    server: str | None = None  # server-level MCP rule: ``mcp__<server>``

    @property
    def where(self) -> str:
        return f"{self.source}: {self.position}"

    def param(self) -> tuple[str, str] | None:
        """``(name, value)`` when the specifier has the ``param:value`` shape."""
        if self.specifier is None:
            return None
        m = _PARAM.match(self.specifier)
        return (m.group(1), m.group(2)) if m else None


def parse_rule(text: str, list_name: RuleList, source: str, position: str) -> Rule:
    """Parse one rule; raise ``RuleSyntaxError`` when it is malformed."""
    if not isinstance(text, str):
        raise RuleSyntaxError(f"a rule must be a string, found {type(text).__name__}")
    if not text.strip():
        raise RuleSyntaxError("empty rule")
    m = _RULE.match(text)
    if not m:
        raise RuleSyntaxError(
            "expected 'Tool' or 'Tool(specifier)' with a closing ')' and a tool name of letters, "
            "digits, '_', '-', '.' or '*'"
        )
    tool, spec = m.group(1), m.group(2)
    if spec is not None and not spec.strip():
        raise RuleSyntaxError("empty specifier '()'; write the bare tool name to match every call")
    is_glob = "*" in tool or "?" in tool
    rule = Rule(text=text, lst=list_name, source=source, position=position, tool=tool,
                specifier=spec, is_glob=is_glob)
    if is_glob:
        rule.tool_regex = re.compile(glob_to_regex(tool))
    return rule


def glob_to_regex(glob: str) -> str:
    """A whole-name regex for a tool-name glob (``*`` any run, ``?`` one character)."""
    out = []
    for ch in glob:
        if ch == "*":
            out.append(".*")
        elif ch == "?":
            out.append(".")
        else:
            out.append(re.escape(ch))
    return "".join(out) + r"\Z"


def allow_glob_ok(tool: str) -> bool:
    """Allow rules accept a tool-name glob only after a literal ``mcp__<server>__`` prefix."""
    if not _MCP_ALLOW_GLOB.match(tool):
        return False
    server = tool[len("mcp__"):].split("__", 1)[0]
    return bool(server) and "*" not in server and "?" not in server


def word_pattern_regex(spec: str) -> str:
    """The regex for a word pattern (``Bash(npm run *)``, ``Skill(review *)``): ``*`` anywhere,
    a trailing `` *`` or ``:*`` word-bounded, runs of whitespace as one space."""
    s = " ".join(spec.split())
    if s.endswith(":*"):
        s = s[:-2].rstrip() + " *"
    if s in ("*", ""):
        return r"(?s:.*)\Z"
    tail = ""
    if s.endswith(" *"):
        s = s[:-2]
        tail = r"(?: .*)?"
    out = [".*" if ch == "*" else re.escape(ch) for ch in s]
    return "(?s:" + "".join(out) + tail + r")\Z"
