"""Microsoft Foundry provider policy: tools that cannot work there are removed, each with
the reason Fuxi Code's tool reference gives.

Microsoft Foundry: the tools that need Anthropic-hosted infrastructure or a fuxi.ai plan are
removed. The schemas are the Anthropic dialect, so no transform is needed.
"""

from __future__ import annotations

from pegboard import ProviderPolicy, ProviderPolicyRegister, hookimpl
from pegboard_provider_anthropic import removed_on_cloud

__all__ = ["POLICY", "PROVIDERS", "REMOVED"]

PROVIDERS = ("foundry", "azure-foundry", "azure-ai-foundry", "microsoft-foundry", "anthropic-foundry")
PLATFORM = "Microsoft Foundry"

REMOVED: dict[str, str] = removed_on_cloud(PLATFORM)

POLICY = ProviderPolicy(
    "foundry",
    providers=PROVIDERS,
    remove=REMOVED,
    description=f"Tools that need Anthropic-hosted services are not available on {PLATFORM}.",
)


@hookimpl
def register_provider_policies(register: ProviderPolicyRegister) -> None:
    register(POLICY)
