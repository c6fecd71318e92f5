"""Tool definitions in each provider's format, after the provider's schema transforms."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pegboard.core.providers import ProviderPolicy
from pegboard.core.tools import Tool

FORMAT_PROVIDER = {"anthropic": "anthropic", "openai": "openai", "openai-responses": "openai", "gemini": "google"}


def neutral_definition(tool: Tool) -> dict[str, Any]:
    """``{"name", "description", "parameters"}``: the form provider transforms work on."""
    schema = tool.input_schema()
    schema.pop("title", None)
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return {"name": tool.name, "description": tool.description, "parameters": schema}


def _anthropic(d: dict[str, Any], tool: Tool) -> dict[str, Any]:
    return {"name": d["name"], "description": d["description"], "input_schema": d["parameters"]}


def _openai_chat(d: dict[str, Any], tool: Tool) -> dict[str, Any]:
    fn: dict[str, Any] = {"name": d["name"], "description": d["description"], "parameters": d["parameters"]}
    if "strict" in d:
        fn["strict"] = d["strict"]
    return {"type": "function", "function": fn}


def _openai_responses(d: dict[str, Any], tool: Tool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "function",
        "name": d["name"],
        "description": d["description"],
        "parameters": d["parameters"],
    }
    out["strict"] = bool(d.get("strict", False))
    return out


def _gemini(d: dict[str, Any], tool: Tool) -> dict[str, Any]:
    return {"name": d["name"], "description": d["description"], "parameters": d["parameters"]}


def _mcp(d: dict[str, Any], tool: Tool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": d["name"], "description": d["description"], "inputSchema": d["parameters"]}
    if tool.title:
        out["title"] = tool.title
    out["annotations"] = {
        "title": tool.title or tool.name,
        "readOnlyHint": tool.read_only,
        "destructiveHint": tool.destructive,
        "idempotentHint": tool.idempotent,
        "openWorldHint": tool.open_world,
    }
    return out


FORMATTERS: dict[str, Callable[[dict[str, Any], Tool], dict[str, Any]]] = {
    "anthropic": _anthropic,
    "openai": _openai_chat,
    "openai-responses": _openai_responses,
    "gemini": _gemini,
    "mcp": _mcp,
}


def render_tools(
    tools: Sequence[Tool],
    format: str,
    policies: Sequence[ProviderPolicy] = (),
    *,
    provider: str | None = None,
    model: str | None = None,
) -> list[dict[str, Any]]:
    """Render ``tools`` for ``format``; provider policies for ``provider`` (or the format's own
    provider when none is given) transform the schemas first."""
    if format not in FORMATTERS:
        raise ValueError(f"unknown schema format {format!r}; choose one of {', '.join(FORMATTERS)}")
    definitions = [neutral_definition(t) for t in tools]
    target = provider or FORMAT_PROVIDER.get(format)
    for policy in policies:
        if policy.transform_schema is not None and policy.applies_to(target, model):
            definitions = policy.transform_schema(definitions)
    by_name = {t.name: t for t in tools}
    return [FORMATTERS[format](d, by_name[d["name"]]) for d in definitions]


def schema_notes(
    tools: Sequence[Tool],
    policies: Sequence[ProviderPolicy] = (),
    *,
    format: str | None = None,
    provider: str | None = None,
    model: str | None = None,
) -> list[str]:
    """What the provider policies' transforms decide about ``tools`` as a set that the
    rendered definitions do not say, each note led by the policy's name (``openai: strict
    function schemas: off ..., because the schema of X ...``).

    The policies apply as in :func:`render_tools`; a policy whose ``explain_schema`` fails is
    named instead of its notes, so the schema itself still renders."""
    target = provider or FORMAT_PROVIDER.get(format or "")
    if not target or not tools:
        return []
    definitions = [neutral_definition(t) for t in tools]
    notes: list[str] = []
    for policy in policies:
        if not policy.applies_to(target, model):
            continue
        if policy.explain_schema is not None:
            try:
                said = policy.explain_schema([dict(d) for d in definitions])
            except Exception as exc:
                said = [f"its explanation failed: {type(exc).__name__}: {exc}"]
            notes.extend(f"{policy.name}: {note}" for note in said if isinstance(note, str))
        if policy.transform_schema is not None:
            definitions = policy.transform_schema(definitions)
    return notes
