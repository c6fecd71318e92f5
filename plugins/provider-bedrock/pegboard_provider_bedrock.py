"""Amazon Bedrock provider policy (seed 000): tools that cannot work there are removed, each with the
reason the tool reference gives.

Amazon Bedrock: the tools that need Anthropic-hosted infrastructure or a fuxi.ai plan are removed,
and WebSearch (Bedrock offers no server-side web search). The schemas are the Anthropic dialect, so
no transform is needed.
"""

from __future__ import annotations

from pegboard import ProviderPolicy, ProviderPolicyRegister, hookimpl

__all__ = ["POLICY", "PROVIDERS", "REMOVED"]

PROVIDERS = ("bedrock", "amazon-bedrock", "aws-bedrock", "anthropic-bedrock")
PLATFORM = "Amazon Bedrock"

REMOVED: dict[str, str] = {
    "PushNotification": f"push delivery runs through Anthropic-hosted infrastructure, which {PLATFORM} cannot reach",
    "RemoteTrigger": "routines live on fuxi.ai and need a Pro, Max, Team or Enterprise plan, "
    f"which {PLATFORM} cannot reach",
    "ScheduleWakeup": f"self-paced /loop is not available on {PLATFORM}; a /loop prompt without an interval "
    "runs on a fixed schedule instead",
    "SendUserFile": f"file delivery runs through Anthropic-hosted infrastructure, which {PLATFORM} cannot reach",
    "Monitor": f"the Monitor tool is not available on {PLATFORM}",
    "Artifact": "artifacts are published to fuxi.ai and need a Pro, Max, Team or Enterprise plan with /login, "
    f"which {PLATFORM} does not provide",
    "ShareOnboardingGuide": "sharing uploads to fuxi.ai and needs a Pro, Max, Team or Enterprise plan, "
    f"which {PLATFORM} does not provide",
    "WebSearch": "Amazon Bedrock does not offer the server-side web search tool WebSearch relies on",
}

POLICY = ProviderPolicy(
    "bedrock",
    providers=PROVIDERS,
    remove=REMOVED,
    description=f"Tools that need Anthropic-hosted services are not available on {PLATFORM}.",
)


@hookimpl
def register_provider_policies(register: ProviderPolicyRegister) -> None:
    register(POLICY)
