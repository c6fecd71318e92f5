"""The ``minimal`` tool profile: session status only (as in OpenClaw).

Entries are group and tool names as the agents' tool references spell them; names compare without case,
``_`` and ``-`` (``session_status`` names a tool called ``SessionStatus``), and groups
expand to whatever tools declare them. Entries naming tools that are not installed
are not an error: they simply match nothing.
"""

from __future__ import annotations

from pegboard import Profile, ProfileRegister, hookimpl

PROFILE = Profile(
    "minimal",
    allow=["session_status"],
    description="Session status only: the smallest tool set an agent can have.",
)


@hookimpl
def register_profiles(register: ProfileRegister) -> None:
    register(PROFILE)
