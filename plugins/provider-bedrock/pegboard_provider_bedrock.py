"""Amazon Bedrock provider policy: tools that cannot work there are removed, each with the
reason the tool reference gives.

Amazon Bedrock: the tools that need Anthropic-hosted infrastructure or a fuxi.ai plan are removed,
and WebSearch (Bedrock offers no server-side web search). The schemas are the Anthropic dialect, so
no transform is needed.
"""

from __future__ import annotations

from pegboard import ProviderPolicy, ProviderPolicyRegister, hookimpl
from pegboard_provider_anthropic import removed_on_cloud

__all__ = ["POLICY", "PROVIDERS", "REMOVED"]

PROVIDERS = ("bedrock", "amazon-bedrock", "aws-bedrock", "anthropic-bedrock")
PLATFORM = "Amazon Bedrock"

REMOVED: dict[str, str] = {
    **removed_on_cloud(PLATFORM),
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
