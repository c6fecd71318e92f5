"""Which rule family each tool answers to: the rule-format table of Fuxi Code's tool reference, kept as kernel data.

A rule or a ``check`` about a known tool that is not installed must still be judged by its
family (``Grep`` by ``Read(...)`` rules, ``Monitor`` by ``Bash(...)`` rules), so the table
lives here, in one place. An installed tool's own ``permission_family`` declaration wins.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pegboard.core.tools import Tool, name_key

#: How a family's specifiers are read.
Kind = Literal["bash", "powershell", "read", "edit", "webfetch", "skill", "agent", "bare"]

#: Family head name -> specifier kind. Families not listed take only the bare name.
FAMILY_KINDS: dict[str, Kind] = {
    "Bash": "bash",
    "PowerShell": "powershell",
    "Read": "read",
    "Edit": "edit",
    "WebFetch": "webfetch",
    "Skill": "skill",
    "Agent": "agent",
}


@dataclass(frozen=True)
class SeedTool:
    """One row of the tool table: its rule family and whether it asks by default."""

    family: str
    requires_permission: bool
    fields: tuple[str, ...] = ()


# Fuxi Code's tool table (whether each tool needs permission) plus its rule-format table.
SEED_TOOLS: dict[str, SeedTool] = {
    "Agent": SeedTool("Agent", False, ("description", "prompt", "subagent_type", "model", "isolation",
                                       "run_in_background", "name", "cwd", "team_name", "mode")),
    "Artifact": SeedTool("Artifact", True),
    "AskUserQuestion": SeedTool("AskUserQuestion", False, ("questions",)),
    "Bash": SeedTool("Bash", True, ("command", "timeout", "description", "run_in_background",
                                    "dangerouslyDisableSandbox")),
    "CronCreate": SeedTool("CronCreate", False),
    "CronDelete": SeedTool("CronDelete", False),
    "CronList": SeedTool("CronList", False),
    "Edit": SeedTool("Edit", True, ("file_path", "old_string", "new_string", "replace_all")),
    "EnterPlanMode": SeedTool("EnterPlanMode", False),
    "EnterWorktree": SeedTool("EnterWorktree", False),
    "ExitPlanMode": SeedTool("ExitPlanMode", True),
    "ExitWorktree": SeedTool("ExitWorktree", False),
    "Glob": SeedTool("Read", False, ("pattern", "path")),
    "Grep": SeedTool("Read", False, ("pattern", "path", "glob", "type", "output_mode", "-i", "-n", "-A",
                                     "-B", "-C", "multiline", "head_limit", "offset")),
    "ListMcpResourcesTool": SeedTool("ListMcpResourcesTool", False),
    "LSP": SeedTool("Read", False, ("operation", "file_path", "filePath", "line", "character", "query")),
    "Monitor": SeedTool("Bash", True, ("command", "ws", "description", "timeout_ms", "persistent")),
    "NotebookEdit": SeedTool("Edit", True, ("notebook_path", "cell_id", "new_source", "cell_type",
                                            "edit_mode")),
    "PowerShell": SeedTool("PowerShell", True, ("command", "timeout", "description", "run_in_background")),
    "PushNotification": SeedTool("PushNotification", False),
    "Read": SeedTool("Read", False, ("file_path", "offset", "limit", "pages")),
    "ReadMcpResourceTool": SeedTool("ReadMcpResourceTool", False),
    "RemoteTrigger": SeedTool("RemoteTrigger", False),
    "ReportFindings": SeedTool("ReportFindings", False),
    "ScheduleWakeup": SeedTool("ScheduleWakeup", False),
    "SendMessage": SeedTool("SendMessage", False),
    "SendUserFile": SeedTool("SendUserFile", False),
    "ShareOnboardingGuide": SeedTool("ShareOnboardingGuide", True),
    "Skill": SeedTool("Skill", True, ("skill", "args")),
    "TaskCreate": SeedTool("TaskCreate", False),
    "TaskGet": SeedTool("TaskGet", False),
    "TaskList": SeedTool("TaskList", False),
    "TaskOutput": SeedTool("TaskOutput", False),
    "TaskStop": SeedTool("TaskStop", False),
    "TaskUpdate": SeedTool("TaskUpdate", False),
    "TodoWrite": SeedTool("TodoWrite", False),
    "ToolSearch": SeedTool("ToolSearch", False),
    "WaitForMcpServers": SeedTool("WaitForMcpServers", False),
    "WebFetch": SeedTool("WebFetch", True, ("url", "prompt")),
    "WebSearch": SeedTool("WebSearch", True, ("query", "allowed_domains", "blocked_domains")),
    "Workflow": SeedTool("Workflow", True),
    "Write": SeedTool("Edit", True, ("file_path", "content")),
    # Not in Fuxi Code's table but named by the tool inventory as members of a path family.
    "ApplyPatch": SeedTool("Edit", True, ("patch", "input")),
    "MultiEdit": SeedTool("Edit", True, ("file_path", "edits")),
}

_SEED_BY_KEY = {name_key(n): n for n in SEED_TOOLS}

#: Input fields that hold a call's primary content; a ``Tool(param:value)`` rule on them is
#: bypassable (a compound command, another spelling of a path) and gets a warning.
PRIMARY_FIELDS = frozenset({"command", "file_path", "path", "notebook_path", "url"})

#: Input keys that name the file(s) a path-family tool touches.
PATH_FIELDS = ("file_path", "notebook_path", "path", "filePath", "file", "filename")


def canonical_seed_name(name: str) -> str | None:
    """The known tool ``name`` refers to (case- and separator-insensitively), if any."""
    if name in SEED_TOOLS:
        return name
    return _SEED_BY_KEY.get(name_key(name))


def family_of(name: str, tool: Tool | None = None) -> str:
    """The family a tool answers to: its explicit declaration, else the table above, else its name."""
    if tool is not None and tool.permission_family:
        return tool.permission_family
    seed = canonical_seed_name(tool.name if tool is not None else name)
    if seed is not None:
        return SEED_TOOLS[seed].family
    return tool.name if tool is not None else name


def kind_of(family: str) -> Kind:
    """How specifiers of ``family`` are read (``bare``: no specifier)."""
    return FAMILY_KINDS.get(family, "bare")


def requires_permission(name: str, tool: Tool | None = None) -> bool:
    """Whether a call asks by default: the tool's declaration, else the table above, else yes."""
    if tool is not None:
        return tool.requires_permission
    seed = canonical_seed_name(name)
    return SEED_TOOLS[seed].requires_permission if seed is not None else True


def known_fields(name: str, tool: Tool | None = None) -> frozenset[str] | None:
    """Top-level input fields of a tool, when known (``None``: unknown, accept any)."""
    if tool is not None:
        try:
            return frozenset(tool.input_model.model_fields) | frozenset(
                f.alias for f in tool.input_model.model_fields.values() if f.alias
            )
        except Exception:
            return None
    seed = canonical_seed_name(name)
    if seed is not None and SEED_TOOLS[seed].fields:
        return frozenset(SEED_TOOLS[seed].fields)
    return None
