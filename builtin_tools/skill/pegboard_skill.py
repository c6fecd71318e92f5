"""``Skill``: load a skill (a directory with ``SKILL.md``) and hand its instructions to the model.

Skills come from the user's skill directory (``<user config dir>/skills``), the project's
(``<project>/.pegboard/skills``) and plugins (the ``register_skills`` hook); on a name clash
the first wins in that order. ``SKILL.md`` starts with front matter (``name``,
``description``, ``allowed-tools``). A loaded skill's ``allowed-tools`` run without an ask for
the rest of the session (or until the host calls :func:`end_skill`); deny and ask rules
still win, and only skills from trusted sources grant anything: an untrusted project's skills
load, but grant no tool.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from pegboard import (
    HookDecision,
    Pegboard,
    PermissionDecision,
    Session,
    SessionKey,
    StashKey,
    ToolCall,
    ToolContext,
    ToolResult,
    find_project_root,
    hookimpl,
    is_trusted,
    tool,
    user_config_dir,
)

OWNER = "skill"
MAX_SKILL_BYTES = 256 * 1024
#: the rules each loaded skill grants in this session (not persisted: a new session starts clean)
ACTIVE: SessionKey[dict[str, list[str]]] = SessionKey("pegboard-skills-active", dict, persist=False)
CATALOG: StashKey[Callable[[], dict[str, SkillInfo]]] = StashKey("pegboard-skills-catalog")
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$")


class SkillFormatError(ValueError):
    pass


@dataclass(frozen=True)
class SkillInfo:
    name: str
    description: str
    allowed_tools: tuple[str, ...]
    directory: Path
    source: str
    trusted: bool


def split_list(value: str) -> list[str]:
    """Split ``Bash(git add *), Read`` (commas or spaces outside parentheses)."""
    items, depth, current = [], 0, ""
    for ch in value.strip().strip("[]"):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        if depth == 0 and (ch == "," or ch.isspace()):
            if current.strip():
                items.append(current.strip().strip("'\""))
            current = ""
            continue
        current += ch
    if current.strip():
        items.append(current.strip().strip("'\""))
    return items


def parse_skill_md(text: str) -> tuple[dict[str, Any], str]:
    """Front matter (simple ``key: value`` lines and ``- item`` lists) and the body."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        raise SkillFormatError("SKILL.md must start with front matter between '---' lines")
    try:
        end = next(i for i, line in enumerate(lines[1:], 1) if line.strip() == "---")
    except StopIteration:
        raise SkillFormatError("SKILL.md front matter has no closing '---'") from None
    meta: dict[str, Any] = {}
    key: str | None = None
    for line in lines[1:end]:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line.lstrip().startswith("- ") and key is not None:
            existing = meta.get(key)
            listed = existing if isinstance(existing, list) else []
            listed.append(line.lstrip()[2:].strip().strip("'\""))
            meta[key] = listed
            continue
        if ":" not in line:
            raise SkillFormatError(f"SKILL.md front matter line is not 'key: value': {line.strip()!r}")
        key, _, value = line.partition(":")
        key = key.strip()
        meta[key] = value.strip().strip("'\"") if value.strip() else []
    return meta, "\n".join(lines[end + 1 :]).strip()


def read_skill(directory: Path, source: str, trusted: bool) -> SkillInfo:
    path = directory / "SKILL.md"
    if path.stat().st_size > MAX_SKILL_BYTES:
        raise SkillFormatError(f"{path} is larger than {MAX_SKILL_BYTES} bytes")
    meta, _body = parse_skill_md(path.read_text(encoding="utf-8"))
    name = str(meta.get("name") or directory.name).strip()
    if not NAME_RE.match(name):
        raise SkillFormatError(f"{path}: skill name {name!r} is not a valid name")
    allowed = meta.get("allowed-tools") or []
    tools = [str(t) for t in allowed] if isinstance(allowed, list) else split_list(str(allowed))
    description = meta.get("description")
    return SkillInfo(name, str(description or "").strip(), tuple(tools), directory, source, trusted)


def skills_in(root: Path, source: str, trusted: bool, warnings: list[str]) -> list[SkillInfo]:
    """The skills of ``root``: ``root`` itself when it holds ``SKILL.md``, else its subdirectories."""
    candidates = [root] if (root / "SKILL.md").is_file() else sorted(p for p in root.glob("*") if p.is_dir())
    found = []
    for directory in candidates:
        if not (directory / "SKILL.md").is_file():
            continue
        try:
            found.append(read_skill(directory, source, trusted))
        except (OSError, UnicodeDecodeError, SkillFormatError) as exc:
            warnings.append(f"skill in {directory} skipped: {exc}")
    return found


def discover(pegboard: Pegboard) -> dict[str, SkillInfo]:
    """Every skill this ``Pegboard`` offers, by name; the first of a name wins."""
    warnings: list[str] = []
    root = find_project_root(pegboard.cwd.resolve())
    sources: list[tuple[Path, str, bool]] = [
        (user_config_dir(pegboard.env) / "skills", "user", True),
        (root / ".pegboard" / "skills", "project", is_trusted(root, pegboard.env)),
    ]
    registered: list[tuple[Path, str, bool]] = []

    def register(directory: Path | str, *, trusted: bool = True) -> None:
        registered.append((Path(directory), "plugin", trusted))

    errors: list[Any] = []
    for plugin, _ in pegboard.hooks.all_sync("register_skills", errors, register=register):
        del plugin
    sources += registered
    catalog: dict[str, SkillInfo] = {}
    for directory, source, trusted in sources:
        if not directory.is_dir():
            continue
        for skill in skills_in(directory, source, trusted, warnings):
            catalog.setdefault(skill.name, skill)
    for message in warnings + [f"register_skills failed: {e.plugin}: {e.error}" for e in errors]:
        if message not in pegboard.warnings:
            pegboard.warnings.append(message)
    return catalog


def skills(pegboard: Pegboard) -> dict[str, SkillInfo]:
    """The skills the ``Skill`` tool of ``pegboard`` loads, by name (empty without the tool)."""
    return pegboard.stash[CATALOG]() if CATALOG in pegboard.stash else {}


def end_skill(session: Session, name: str) -> None:
    """The host ends skill ``name``: its ``allowed-tools`` need asks again."""

    def drop(current: dict[str, list[str]] | None) -> dict[str, list[str]]:
        return {k: v for k, v in (current or {}).items() if k != name}

    session.state.update(ACTIVE, drop)


def granted_rules(session: Session) -> list[str]:
    return [rule for rules in (session.state.get(ACTIVE) or {}).values() for rule in rules]


class SkillInput(BaseModel):
    skill: str = Field(min_length=1, description="The skill's name, e.g. 'pdf' or 'review-pr'.")
    args: str | None = Field(default=None, description="Optional arguments for the skill.")


@tool(
    name="Skill",
    groups=["skills", "pegboard"],
    requires_permission=True,
    read_only=True,
    usage="Load a skill by name when the task matches one of the available skills.",
)
async def skill_tool(input: SkillInput, ctx: ToolContext) -> ToolResult:
    """Load a skill: specialised instructions (and helper files) for a kind of task. Call it as soon as
    a task matches a skill's description, before doing the work, then follow the instructions."""
    pb: Any = ctx.pegboard
    catalog = pb.stash[CATALOG]() if pb is not None and CATALOG in pb.stash else {}
    wanted = input.skill.strip().lstrip("/")
    info = catalog.get(wanted)
    if info is None:
        known = ", ".join(sorted(catalog)) or "none"
        return ToolResult.error(f"unknown skill {wanted!r}; available: {known}", error_kind="not_found")
    try:
        _meta, body = parse_skill_md((info.directory / "SKILL.md").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SkillFormatError) as exc:
        return ToolResult.error(f"skill {info.name!r} cannot be read: {exc}", error_kind="bad_skill")
    granted: list[str] = []
    if info.allowed_tools and info.trusted and ctx.session is not None:
        granted = list(info.allowed_tools)
        ctx.session.state.update(ACTIVE, lambda current: {**(current or {}), info.name: granted})
    text = f"Base directory for this skill: {info.directory}\n\n{body}"
    if input.args:
        text += f"\n\nARGUMENTS: {input.args}"
    if info.allowed_tools and not granted:
        text += "\n\n(This skill's allowed-tools were not granted: its source is not trusted.)"
    structured = {
        "name": info.name, "source": info.source, "allowedTools": list(info.allowed_tools), "granted": granted,
    }
    return ToolResult.from_text(text, structured=structured)


@hookimpl
def register_skills(register: Callable[..., None]) -> None:
    """This plugin brings no skills of its own."""


@hookimpl
def permission_request(call: ToolCall, decision: PermissionDecision, context: ToolContext) -> HookDecision | None:
    """Approve an ask that a loaded skill's ``allowed-tools`` cover. An ask rule
    (``decision.rule``) or a hard ask is left to the person."""
    session = context.session
    if session is None or decision.rule is not None or decision.hard:
        return None
    rules = granted_rules(session)
    if not rules:
        return None
    merged = {k: list(v) for k, v in session.session_rules().items()}
    merged["allow"] = [*merged.get("allow", []), *rules]
    check = session.pegboard.check(
        call.name, call.input, cwd=session.cwd, mode=session.mode,
        additional_dirs=session.additional_dirs, session_rules=merged,
    )
    if check.decision == "allow":
        return HookDecision(decision="allow", reason=f"allowed by a loaded skill ({check.rule})")
    return None


@hookimpl
def pegboard_ready(pegboard: Pegboard) -> None:
    cache: dict[str, dict[str, SkillInfo]] = {}

    def catalog() -> dict[str, SkillInfo]:
        if "skills" not in cache:
            cache["skills"] = discover(pegboard)
        return cache["skills"]

    pegboard.stash[CATALOG] = catalog

    def describe() -> str:
        listed = "\n".join(f"- {s.name}: {s.description}" for s in catalog().values())
        return skill_tool.description + ("\n\nAvailable skills:\n" + listed if listed else "")

    def unavailable() -> str | None:
        return None if catalog() else "no skills found (add <project>/.pegboard/skills/NAME/SKILL.md)"

    pegboard.add_tool(
        dataclasses.replace(skill_tool, description=describe(), availability=unavailable), owner=OWNER
    )
