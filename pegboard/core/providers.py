"""Provider policies: what a provider or ``provider/model`` changes about the tool set."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pegboard.core.tools import ToolDefinitionError

SchemaTransform = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


@dataclass(frozen=True)
class ProviderPolicy:
    """One provider's rules for the tool set.

    ``providers`` are the keys it applies to (``openai``, ``openai/gpt-5``; case-insensitive).
    ``remove`` maps a tool entry to the reason it is unavailable on those providers.
    ``exclusive`` lists tool entries that exist only on these providers and are removed
    everywhere else. ``transform_schema`` rewrites the rendered definitions (a list of
    ``{"name", "description", "parameters"}`` dicts) into what the provider accepts.
    """

    name: str
    providers: Sequence[str]
    remove: Mapping[str, str] = field(default_factory=dict)
    exclusive: Sequence[str] = ()
    transform_schema: SchemaTransform | None = None
    description: str = ""

    def __post_init__(self) -> None:
        if not self.name:
            raise ToolDefinitionError("a provider policy needs a name")
        if isinstance(self.providers, str) or not self.providers:
            raise ToolDefinitionError(f"provider policy {self.name!r}: providers must be a non-empty list of keys")
        object.__setattr__(self, "providers", tuple(p.lower() for p in self.providers))
        object.__setattr__(self, "exclusive", tuple(self.exclusive))

    def applies_to(self, provider: str | None, model: str | None) -> bool:
        """True when this policy's keys name ``provider`` or ``provider/model``."""
        if not provider:
            return False
        keys = {provider.lower()}
        if model:
            keys.add(model.lower() if "/" in model else f"{provider}/{model}".lower())
        return any(k in keys for k in self.providers)
