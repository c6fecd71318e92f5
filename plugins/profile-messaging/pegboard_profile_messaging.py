"""The ``messaging`` tool profile: OpenClaw's list (messaging tools and session messaging), plus
``tool_result_read`` so that results cut to their limit can be read on.

Entries are group and tool names as the agents' tool references spell them; names compare without case,
``_`` and ``-`` (``session_status`` names a tool called ``SessionStatus``), and groups
expand to whatever tools declare them. Entries naming tools that are not installed
are not an error: they simply match nothing.
"""

from __future__ import annotations

from pegboard import Profile, ProfileRegister, hookimpl

PROFILE = Profile(
    "messaging",
    allow=[
        "group:messaging",
        "sessions_list",
        "sessions_history",
        "sessions_send",
        "session_status",
        "tool_result_read",
    ],
    description="Messaging plus listing, reading and messaging sessions: for chat agents.",
)


@hookimpl
def register_profiles(register: ProfileRegister) -> None:
    register(PROFILE)
