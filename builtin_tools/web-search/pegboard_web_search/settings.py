"""The ``tools.web.search`` config section."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from pegboard import NEUTRAL, Widens

SETTINGS_KEY = "tools.web.search"
BRAVE_API = "https://api.search.brave.com/res/v1/web/search"


class BraveSettings(BaseModel):
    baseUrl: Annotated[
        str, Widens.when_set("sends the agent's queries and the Brave API key to another endpoint")
    ] = Field(default=BRAVE_API, description="The Brave web search endpoint.")


class SearxngSettings(BaseModel):
    baseUrl: Annotated[str | None, Widens.when_set("sends the agent's queries to this endpoint")] = Field(
        default=None, description="Your SearXNG instance (its JSON API must be enabled)."
    )


class WebSearchSettings(BaseModel):
    enabled: Annotated[bool, NEUTRAL] = Field(default=True, description="Offer the tool at all.")
    provider: Annotated[str | None, Widens.when_set("chooses which endpoint receives the agent's queries")] = Field(
        default=None, description="Backend to use (brave, searxng, ...); default: the first configured.")
    apiKey: Annotated[
        str | None, Widens.when_set("sends the agent's queries under an account of the config's choosing")
    ] = Field(default=None, description="Brave Search API key (else BRAVE_API_KEY).")
    maxResults: Annotated[int, NEUTRAL] = Field(default=5, ge=1, le=10, description="Hits when a call gives no count.")
    timeoutSeconds: Annotated[float, NEUTRAL] = Field(default=15.0, gt=0,
                                                      description="Deadline for one backend request.")
    cacheTtlMinutes: Annotated[float, NEUTRAL] = Field(default=15.0, gt=0, description="How long an answer is reused.")
    brave: BraveSettings = Field(default_factory=BraveSettings)
    searxng: SearxngSettings = Field(default_factory=SearxngSettings)

