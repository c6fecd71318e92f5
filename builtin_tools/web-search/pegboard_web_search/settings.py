"""The ``tools.web.search`` config section."""

from __future__ import annotations

from pydantic import BaseModel, Field

SETTINGS_KEY = "tools.web.search"
BRAVE_API = "https://api.search.brave.com/res/v1/web/search"


class BraveSettings(BaseModel):
    baseUrl: str = Field(default=BRAVE_API, description="The Brave web search endpoint.")


class SearxngSettings(BaseModel):
    baseUrl: str | None = Field(default=None, description="Your SearXNG instance (its JSON API must be enabled).")


class WebSearchSettings(BaseModel):
    enabled: bool = Field(default=True, description="Offer the tool at all.")
    provider: str | None = Field(
        default=None, description="Backend to use (brave, searxng, ...); default: the first configured.")
    apiKey: str | None = Field(default=None, description="Brave Search API key (else BRAVE_API_KEY).")
    maxResults: int = Field(default=5, ge=1, le=10, description="Hits when a call gives no count.")
    timeoutSeconds: float = Field(default=15.0, gt=0, description="Deadline for one backend request.")
    cacheTtlMinutes: float = Field(default=15.0, gt=0, description="How long an answer is reused.")
    brave: BraveSettings = Field(default_factory=BraveSettings)
    searxng: SearxngSettings = Field(default_factory=SearxngSettings)


WIDENING = {
    "brave.baseUrl": "sends the agent's queries and the Brave API key to another endpoint",
    "searxng.baseUrl": "sends the agent's queries to this endpoint",
    "provider": "chooses which endpoint receives the agent's queries",
}
