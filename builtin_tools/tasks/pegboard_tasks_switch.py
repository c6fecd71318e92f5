"""Which of the two task families is on: the Task tools or TodoWrite.

Apart from the tools so that listing them asks the switch without importing them: the
availability checks here read the environment and the raw config value, and leave only a
value that is not a plain boolean to the section's model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

ENV_SWITCH = "PEGBOARD_ENABLE_TASKS"
SEED_ENV_SWITCH = "FUXI_CODE_ENABLE_TASKS"
SETTINGS_KEY = "tools.tasks"
#: the Task tools, in the order they are registered (a test keeps this equal to the tools)
TASK_TOOL_NAMES = ("TaskCreate", "TaskGet", "TaskList", "TaskUpdate", "task_complete")


def flag(value: object) -> bool | None:
    """A switch's value as written: a boolean, or one of the usual words for one."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        word = value.strip().lower()
        if word in ("1", "true", "yes", "on"):
            return True
        if word in ("0", "false", "no", "off"):
            return False
    return None


def decide(env: Mapping[str, str], enabled: bool | None) -> tuple[bool, str]:
    """Whether the Task tools (not TodoWrite) are on, and what decided it: the environment
    switches first, then ``tools.tasks.enabled``, else on."""
    for name in (ENV_SWITCH, SEED_ENV_SWITCH):
        found = flag(env.get(name))
        if found is not None:
            return found, f"{name}={env[name]}"
    if enabled is not None:
        return enabled, f"{SETTINGS_KEY}.enabled = {str(enabled).lower()}"
    return True, "the default"


def _enabled_setting(pegboard: Any) -> bool | None:
    value = pegboard.configured(f"{SETTINGS_KEY}.enabled")
    if value is None or isinstance(value, bool):
        return value
    found: bool | None = pegboard.settings(SETTINGS_KEY).enabled  # the model judges the rest
    return found


def task_tools_off(pegboard: Any) -> str | None:
    """Why the Task tools are off for ``pegboard`` (TodoWrite is on instead), or ``None``."""
    on, why = decide(pegboard.env, _enabled_setting(pegboard))
    return None if on else f"switched off by {why}: TodoWrite is enabled instead"


def todo_write_off(pegboard: Any) -> str | None:
    """Why TodoWrite is off for ``pegboard`` (the Task tools are on instead), or ``None``."""
    on, why = decide(pegboard.env, _enabled_setting(pegboard))
    if not on:
        return None
    names = ", ".join(TASK_TOOL_NAMES)
    return f"switched off: the Task tools ({names}) are enabled ({why}); set {ENV_SWITCH}=0 to use TodoWrite"


__all__ = ["ENV_SWITCH", "SEED_ENV_SWITCH", "SETTINGS_KEY", "TASK_TOOL_NAMES", "decide", "flag",
           "task_tools_off", "todo_write_off"]
