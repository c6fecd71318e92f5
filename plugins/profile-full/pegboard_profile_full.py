"""The ``full`` tool profile: no restriction, the same as leaving ``tools.profile`` unset.
"""

from __future__ import annotations

from pegboard import Profile, ProfileRegister, hookimpl

PROFILE = Profile(
    "full",
    allow=None,
    description="No restriction: every installed tool (the same as no profile).",
)


@hookimpl
def register_profiles(register: ProfileRegister) -> None:
    register(PROFILE)
