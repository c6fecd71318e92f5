"""The ``coding`` tool profile: OpenClaw's list (files, runtime, sessions, memory, image), plus
``cron`` (as in the catalog OpenClaw's docs describe) and ``tool_result_read`` so that results
cut to their limit can be read on (its notes point at it).

Entries are group and tool names as the agents' tool references spell them; names compare without case,
``_`` and ``-`` (``session_status`` names a tool called ``SessionStatus``), and groups
expand to whatever tools declare them. Entries naming tools that are not installed
are not an error: they simply match nothing.
"""

from __future__ import annotations

from pegboard import Profile, ProfileRegister, hookimpl

PROFILE = Profile(
    "coding",
    allow=["group:fs", "group:runtime", "group:sessions", "group:memory", "image", "cron", "tool_result_read"],
    description="Files, shell, sessions, memory, scheduled jobs and image analysis: for coding agents.",
)


@hookimpl
def register_profiles(register: ProfileRegister) -> None:
    register(PROFILE)
