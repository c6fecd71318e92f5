"""What the selected provider and model change: the ``byProvider`` entry that applies, and the
tools provider policies remove."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pegboard.core.config import PegboardConfig, ProviderToolPolicy
from pegboard.core.policy.index import ToolIndex
from pegboard.core.providers import ProviderPolicy, provider_keys


def select_by_provider(
    by_provider: Mapping[str, ProviderToolPolicy], provider: str | None, model: str | None
) -> tuple[str, ProviderToolPolicy] | None:
    """The one ``byProvider`` entry that applies (``provider/model`` beats ``provider``;
    the two are never merged), as ``(key as written, entry)``."""
    if not by_provider:
        return None
    lowered: dict[str, tuple[str, ProviderToolPolicy]] = {}
    for key in sorted(by_provider, key=lambda k: (k.strip().lower(), k)):
        if key.strip():
            lowered.setdefault(key.strip().lower(), (key, by_provider[key]))
    for candidate in provider_keys(provider, model):
        if candidate in lowered:
            return lowered[candidate]
    return None


def provider_policy_applies(policy: ProviderPolicy, provider: str | None, model: str | None) -> bool:
    """True when ``policy`` names ``provider`` or ``provider/model`` (keys may use ``*``)."""
    return policy.applies_to(provider, model)


def config_flag(config: Any, key: str) -> bool:
    """Whether the dotted config ``key`` (camelCase as in config files) is ``true``; keys the
    config model does not declare are read from the sections' extra keys."""
    value: Any = config
    for part in key.split("."):
        if isinstance(value, Mapping):
            value = value.get(part)
            continue
        extra = getattr(value, "model_extra", None) or {}
        if part in extra:
            value = extra[part]
            continue
        fields = getattr(type(value), "model_fields", {})
        name = next((n for n, f in fields.items() if part in (n, f.alias)), None)
        if name is None:
            return False
        value = getattr(value, name)
    return value is True


def provider_removals(
    index: ToolIndex, provider: str | None, model: str | None, config: PegboardConfig | None = None
) -> dict[int, str]:
    """``{tool position: reason}`` for the tools a provider policy removes on ``provider``/``model``:
    those it removes there, and those exclusive to other providers (unless a config flag lifts that)."""
    removed: dict[int, str] = {}
    if not provider:
        return removed
    for policy in index.provider_policies:
        applies = provider_policy_applies(policy, provider, model)
        where = f"{provider}/{model}" if model and "/" not in model else (model or provider)
        if applies:
            for entry in sorted(policy.remove, key=str.casefold):
                for i in index.compile([entry]).hits():
                    removed.setdefault(
                        i, f"not available on {where} (provider policy {policy.name!r}): {policy.remove[entry]}"
                    )
        elif policy.exclusive:
            only = ", ".join(policy.providers)
            lifted = {e for e, key in policy.exclusive_unless.items()
                      if config is not None and config_flag(config, key)}
            entries = [e for e in policy.exclusive if e not in lifted]
            for i in index.compile(entries).hits() if entries else ():
                removed.setdefault(i, f"only available on {only}, not on {where} (provider policy {policy.name!r})")
    return removed
