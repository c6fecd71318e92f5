"""The names of the policy steps, in the order a tool meets them (see the package docstring)."""

from __future__ import annotations

STEP_PROVIDER_POLICY = "provider-policy"
STEP_DENY = "deny"
STEP_PROFILE = "profile"
STEP_ALLOW = "allow"
STEP_AGENT = "agent"
STEP_BY_PROVIDER = "byProvider"
STEP_SUBAGENT = "subagent"
STEP_OPTIONAL = "optional"
STEP_AVAILABILITY = "availability"
STEP_DEFAULT = "default"
STEPS: tuple[str, ...] = (
    STEP_PROVIDER_POLICY,
    STEP_DENY,
    STEP_PROFILE,
    STEP_ALLOW,
    STEP_AGENT,
    STEP_BY_PROVIDER,
    STEP_SUBAGENT,
    STEP_OPTIONAL,
    STEP_AVAILABILITY,
    STEP_DEFAULT,
)

#: the phrase every "this entry names nothing" warning carries (tests and tools grep for it)
UNKNOWN_MARKER = "match no tool"
