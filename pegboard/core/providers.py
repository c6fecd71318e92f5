"""Provider policies: what a provider or ``provider/model`` changes about the tool set."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pegboard.core.tools import ToolDefinitionError

SchemaTransform = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
SchemaExplanation = Callable[[list[dict[str, Any]]], list[str]]


@dataclass(frozen=True)
class ProviderPolicy:
    """One provider's rules for the tool set.

    ``providers`` are the keys it applies to (``openai``, ``openai/gpt-5``; case-insensitive).
    ``remove`` maps a tool entry to the reason it is unavailable on those providers.
    ``exclusive`` lists tool entries that exist only on these providers and are removed
    everywhere else; ``exclusive_unless`` maps such an entry to a config key (dotted, as
    written in config files, e.g. ``tools.exec.applyPatch.allModels``) that, when ``true``,
    offers it on every provider after all. ``transform_schema`` rewrites the rendered definitions (a list of
    ``{"name", "description", "parameters"}`` dicts) into what the provider accepts.
    ``explain_schema`` gets the same definitions and returns notes on how the transform renders
    them that the output alone does not show (OpenAI: which tool turned strict mode off).
    """

    name: str
    providers: Sequence[str]
    remove: Mapping[str, str] = field(default_factory=dict)
    exclusive: Sequence[str] = ()
    exclusive_unless: Mapping[str, str] = field(default_factory=dict)
    transform_schema: SchemaTransform | None = None
    explain_schema: SchemaExplanation | None = None
    description: str = ""

    def __post_init__(self) -> None:
        if not self.name:
            raise ToolDefinitionError("a provider policy needs a name")
        if isinstance(self.providers, str) or not self.providers:
            raise ToolDefinitionError(f"provider policy {self.name!r}: providers must be a non-empty list of keys")
        object.__setattr__(self, "providers", tuple(p.lower() for p in self.providers))
        object.__setattr__(self, "exclusive", tuple(self.exclusive))

    def applies_to(self, provider: str | None, model: str | None) -> bool:
        """True when one of this policy's keys names ``provider`` or ``provider/model``.

        Keys compare without case and may use ``*`` (``vertex/claude-3*``). Never true
        without a provider.
        """
        candidates = provider_keys(provider, model)
        return bool(provider) and any(key_matches(k, c) for k in self.providers for c in candidates)


def provider_keys(provider: str | None, model: str | None) -> list[str]:
    """The keys that name a provider and model, most specific first: ``provider/model`` (a
    model id that already contains ``/`` is used as is), then ``provider``. All lower-case."""
    keys: list[str] = []
    prov = (provider or "").strip().lower()
    mod = (model or "").strip().lower()
    if mod:
        if "/" in mod:
            keys.append(mod)
        elif prov:
            keys.append(f"{prov}/{mod}")
    if prov:
        keys.append(prov)
    return keys


def key_matches(pattern: str, key: str) -> bool:
    """Anchored match of a lower-case key against a pattern where ``*`` is the only wildcard."""
    if "*" not in pattern:
        return pattern == key
    return re.fullmatch(".*".join(re.escape(p) for p in pattern.split("*")), key) is not None
