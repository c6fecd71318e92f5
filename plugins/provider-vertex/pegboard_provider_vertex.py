"""Google Cloud's Agent Platform provider policy: tools that cannot work there are removed,
each with the reason Fuxi Code's tool reference gives.

Google Cloud's Agent Platform (Vertex AI): the tools that need Anthropic-hosted infrastructure or a
fuxi.ai plan are removed; WebSearch only on Fuxi 4 and later models. The schemas are the Anthropic
dialect, so no transform is needed.
"""

from __future__ import annotations

from pegboard import ProviderPolicy, ProviderPolicyRegister, hookimpl
from pegboard_provider_anthropic import removed_on_cloud

__all__ = ["POLICY", "PROVIDERS", "REMOVED", "WEB_SEARCH_POLICY"]

PROVIDERS = ("vertex", "vertex-ai", "google-vertex", "anthropic-vertex")
PLATFORM = "Google Cloud's Agent Platform"

REMOVED: dict[str, str] = removed_on_cloud(PLATFORM)

POLICY = ProviderPolicy(
    "vertex",
    providers=PROVIDERS,
    remove=REMOVED,
    description=f"Tools that need Anthropic-hosted services are not available on {PLATFORM}.",
)

#: WebSearch works on the Agent Platform with Fuxi 4 and later models only; older model ids lose it
OLD_MODELS = ("claude-3*", "claude-2*", "claude-instant*", "fuxi-3*", "fuxi-2*", "fuxi-instant*")

WEB_SEARCH_POLICY = ProviderPolicy(
    "vertex-web-search",
    providers=[f"{key}/{model}" for key in PROVIDERS for model in OLD_MODELS],
    remove={"WebSearch": "on Google Cloud's Agent Platform, WebSearch needs a Fuxi 4 or later model"},
    description="WebSearch only with Fuxi 4 and later models on Google Cloud's Agent Platform.",
)


@hookimpl
def register_provider_policies(register: ProviderPolicyRegister) -> None:
    register(POLICY)
    register(WEB_SEARCH_POLICY)
