"""Anthropic provider policy: the Anthropic API takes full JSON Schema, so nothing is removed
and no keyword is stripped; only the root is made the object schema ``input_schema`` must be.

The tools that need Anthropic-hosted infrastructure (PushNotification, RemoteTrigger,
ScheduleWakeup, SendUserFile, Monitor, ...) stay available here; the Bedrock, Vertex and
Foundry policies remove them on those platforms.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from pegboard import ProviderPolicy, ProviderPolicyRegister, hookimpl

__all__ = ["POLICY", "PROVIDERS", "object_root", "removed_on_cloud", "transform"]

PROVIDERS = ("anthropic", "fuxi")


def removed_on_cloud(platform: str) -> dict[str, str]:
    """The tools that need Anthropic-hosted services, with why each cannot work on ``platform``
    (Amazon Bedrock, Google Cloud's Agent Platform, Microsoft Foundry): one table for every
    cloud provider plugin."""
    return {
        "PushNotification": f"push delivery runs through Anthropic-hosted infrastructure, which {platform} cannot "
        "reach",
        "RemoteTrigger": "routines live on fuxi.ai and need a Pro, Max, Team or Enterprise plan, "
        f"which {platform} cannot reach",
        "ScheduleWakeup": f"self-paced /loop is not available on {platform}; a /loop prompt without an interval "
        "runs on a fixed schedule instead",
        "SendUserFile": f"file delivery runs through Anthropic-hosted infrastructure, which {platform} cannot reach",
        "Monitor": f"the Monitor tool is not available on {platform}",
        "Artifact": "artifacts are published to fuxi.ai and need a Pro, Max, Team or Enterprise plan with /login, "
        f"which {platform} does not provide",
        "ShareOnboardingGuide": "sharing uploads to fuxi.ai and needs a Pro, Max, Team or Enterprise plan, "
        f"which {platform} does not provide",
    }


def object_root(schema: Any) -> dict[str, Any]:
    """A copy of ``schema`` whose root is ``{"type": "object", "properties": {...}}``.

    A root union (``anyOf`` / ``oneOf``) of object variants is flattened: properties merge
    (first definition wins) and only names every variant requires stay required.
    """
    if not isinstance(schema, Mapping) or not schema:
        return {"type": "object", "properties": {}}
    out = copy.deepcopy(dict(schema))
    variants = out.get("anyOf") or out.get("oneOf")
    if isinstance(variants, list) and variants and "properties" not in out:
        objects = [v for v in variants if isinstance(v, Mapping) and isinstance(v.get("properties"), Mapping)]
        if objects:
            props: dict[str, Any] = {}
            for v in objects:
                for name, sub in v["properties"].items():
                    props.setdefault(name, sub)
            common = set.intersection(*(set(v.get("required") or ()) for v in objects))
            out.pop("anyOf", None)
            out.pop("oneOf", None)
            out["properties"] = props
            out["required"] = [n for n in props if n in common]
            if not out["required"]:
                del out["required"]
    out["type"] = "object"
    if not isinstance(out.get("properties"), Mapping):
        out["properties"] = {}
    return out


def transform(definitions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**d, "parameters": object_root(d.get("parameters"))} for d in definitions]


POLICY = ProviderPolicy(
    "anthropic",
    providers=PROVIDERS,
    transform_schema=transform,
    description="Full JSON Schema accepted; the root is made an object schema.",
)


@hookimpl
def register_provider_policies(register: ProviderPolicyRegister) -> None:
    register(POLICY)
