"""Google Gemini provider policy: tool parameter schemas cleaned into the subset Gemini accepts.

Gemini's function declarations take a restricted, OpenAPI-flavoured schema. The transform
here rewrites each tool's ``parameters`` (a pure function, no I/O):

- local ``$ref`` (``#/$defs/X``, ``#/definitions/X``) are inlined and ``$defs`` /
  ``definitions`` removed; a reference cycle becomes an empty schema; the referring
  node's own ``description`` / ``title`` win over the target's;
- ``const: v`` becomes ``enum: [v]``; ``oneOf`` becomes ``anyOf``; a one-part ``allOf`` is
  merged, several parts are merged into one object;
- nullable unions are simplified: ``type: ["string", "null"]`` and ``anyOf: [X, {"type":
  "null"}]`` become ``X`` with ``nullable: true``; a union of string literals becomes one
  ``enum``; a union with one remaining variant becomes that variant;
- only the keywords Gemini accepts are kept (``type``, ``description``, ``title``, ``enum``,
  ``properties``, ``required``, ``items``, ``anyOf``, ``nullable``, ``propertyOrdering``):
  ``additionalProperties``, ``patternProperties``, ``format``, ``pattern``, bounds,
  ``default``, ``examples`` and the rest are dropped at every depth. Pegboard validates each
  call's input against the tool's own model, so dropped constraints still hold;
- an enum of non-string values (Gemini takes string enums only) is listed in the
  description instead; ``required`` keeps only names present in ``properties``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pegboard import ProviderPolicy, ProviderPolicyRegister, hookimpl

__all__ = ["FORBIDDEN_KEYWORDS", "KEPT_KEYWORDS", "POLICY", "PROVIDERS", "clean_gemini_schema", "transform"]

PROVIDERS = ("google", "gemini", "google-gemini", "google-gemini-cli", "google-ai-studio", "google-antigravity",
             "vertex-gemini")

KEPT_KEYWORDS = frozenset(
    {"type", "description", "title", "enum", "properties", "required", "items", "anyOf", "nullable",
     "propertyOrdering"}
)
#: keywords that must not appear at any depth of a cleaned schema
FORBIDDEN_KEYWORDS = frozenset(
    {"$ref", "$defs", "definitions", "$schema", "$id", "additionalProperties", "patternProperties", "const",
     "oneOf", "allOf", "not", "examples", "default", "format", "pattern", "minLength", "maxLength", "minimum",
     "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "uniqueItems",
     "minProperties", "maxProperties", "prefixItems", "if", "then", "else", "dependentSchemas",
     "dependentRequired", "unevaluatedProperties", "propertyNames", "contains", "discriminator"}
)
_META = ("description", "title")


def clean_gemini_schema(schema: Any) -> dict[str, Any]:
    """Return a cleaned copy of ``schema`` that Gemini accepts; the input is not modified."""
    if not isinstance(schema, Mapping):
        return {"type": "object", "properties": {}}
    defs: dict[str, Any] = {}
    for key in ("definitions", "$defs"):
        table = schema.get(key)
        if isinstance(table, Mapping):
            defs.update({str(k): v for k, v in table.items()})
    return _clean(schema, defs, ())


def _meta(node: Mapping[str, Any]) -> dict[str, Any]:
    return {k: node[k] for k in _META if isinstance(node.get(k), str)}


def _ref_name(ref: str) -> str | None:
    for prefix in ("#/$defs/", "#/definitions/"):
        if ref.startswith(prefix):
            return ref[len(prefix):].replace("~1", "/").replace("~0", "~")
    return None


def _is_null(node: Any) -> bool:
    if not isinstance(node, Mapping):
        return False
    if node.get("type") == "null":
        return True
    if "const" in node and node["const"] is None:
        return True
    enum = node.get("enum")
    return isinstance(enum, list) and len(enum) > 0 and all(v is None for v in enum)


def _merge_all_of(node: Mapping[str, Any], parts: Sequence[Any], defs: Mapping[str, Any],
                  stack: tuple[str, ...]) -> dict[str, Any]:
    rest = {k: v for k, v in node.items() if k != "allOf"}
    cleaned = [_clean(p, defs, stack) for p in parts if isinstance(p, Mapping)]
    cleaned.append(_clean(rest, defs, stack) if rest else {})
    out: dict[str, Any] = {}
    props: dict[str, Any] = {}
    required: list[str] = []
    has_props = any("properties" in part for part in cleaned)
    for part in cleaned:
        for key, value in part.items():
            if key == "properties":
                for name, sub in value.items():
                    props.setdefault(name, sub)
            elif key == "required":
                required.extend(r for r in value if r not in required)
            elif key in _META:
                out[key] = value  # the node's own meta comes last and wins
            else:
                out.setdefault(key, value)
    if has_props:
        out["properties"] = props
        out["type"] = "object"
        out.pop("anyOf", None)
    kept = [r for r in required if r in props]
    if kept:
        out["required"] = kept
    if "anyOf" in out:  # a union keeps only what a union carries, as a second cleaning would
        out = {k: v for k, v in out.items() if k in _META or k in ("anyOf", "nullable")}
    return {k: out[k] for k in sorted(out, key=_key_order)}


def _clean(node: Any, defs: Mapping[str, Any], stack: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(node, Mapping):
        return {}  # true / false / junk: no constraint Gemini can express
    meta = _meta(node)
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = _ref_name(ref)
        if name is None or name in stack or name not in defs:
            return meta  # a cycle or a reference we cannot resolve: keep only what it says about itself
        target = _clean(defs[name], defs, (*stack, name))
        return {**target, **meta}
    all_of = node.get("allOf")
    if isinstance(all_of, list) and all_of:
        return _merge_all_of(node, all_of, defs, stack)
    variants: list[Any] = []
    for key in ("anyOf", "oneOf"):
        value = node.get(key)
        if isinstance(value, list):
            variants.extend(value)
    if variants:
        return _clean_union(node, variants, defs, stack)

    raw_type = node.get("type")
    nullable = node.get("nullable") is True
    type_: str | None = None
    if isinstance(raw_type, list):
        names = [t for t in raw_type if isinstance(t, str)]
        nullable = nullable or "null" in names
        non_null = list(dict.fromkeys(t for t in names if t != "null"))
        if len(non_null) > 1:
            base = {k: v for k, v in node.items() if k != "type"}
            return _clean_union(base, [{**base, "type": t} for t in non_null] + ([{"type": "null"}] if nullable
                                                                                  else []), defs, stack)
        type_ = non_null[0] if non_null else None
    elif isinstance(raw_type, str):
        if raw_type == "null":
            return {**meta, "nullable": True}
        type_ = raw_type

    out: dict[str, Any] = {}
    enum: list[Any] | None = None
    if "const" in node:
        enum = [node["const"]]
    elif isinstance(node.get("enum"), list):
        enum = list(node["enum"])
    description = meta.get("description")
    if enum is not None:
        non_null_values = [v for v in enum if v is not None]
        nullable = nullable or len(non_null_values) < len(enum)
        if non_null_values and all(isinstance(v, str) for v in non_null_values):
            out["enum"] = list(dict.fromkeys(non_null_values))
            type_ = type_ or "string"
        elif non_null_values:
            allowed = ", ".join(_literal(v) for v in non_null_values)
            description = f"{description} (allowed values: {allowed})" if description else f"Allowed values: {allowed}"
            if type_ is None:
                kinds = {_json_type(v) for v in non_null_values}
                type_ = kinds.pop() if len(kinds) == 1 else None

    properties = node.get("properties")
    if properties is not None or type_ == "object":
        cleaned_props = (
            {str(k): _clean(v, defs, stack) for k, v in properties.items()} if isinstance(properties, Mapping) else {}
        )
        out["properties"] = cleaned_props
        type_ = type_ or "object"
        required = node.get("required")
        if isinstance(required, list):
            kept = [r for r in dict.fromkeys(required) if isinstance(r, str) and r in cleaned_props]
            if kept:
                out["required"] = kept
        ordering = node.get("propertyOrdering")
        if isinstance(ordering, list):
            kept_order = [p for p in ordering if isinstance(p, str) and p in cleaned_props]
            if kept_order:
                out["propertyOrdering"] = kept_order

    items = node.get("items")
    prefix = node.get("prefixItems")
    if isinstance(items, Mapping):
        out["items"] = _clean(items, defs, stack)
        type_ = type_ or "array"
    elif isinstance(items, list) and items:
        out["items"] = _clean({"anyOf": items}, defs, stack)
        type_ = type_ or "array"
    elif isinstance(prefix, list) and prefix:
        out["items"] = _clean({"anyOf": prefix}, defs, stack)
        type_ = type_ or "array"

    if type_ is not None:
        out["type"] = type_
    if "title" in meta:
        out["title"] = meta["title"]
    if description is not None:
        out["description"] = description
    if nullable:
        out["nullable"] = True
    return {k: out[k] for k in sorted(out, key=_key_order)}


def _clean_union(node: Mapping[str, Any], variants: Sequence[Any], defs: Mapping[str, Any],
                 stack: tuple[str, ...]) -> dict[str, Any]:
    meta = _meta(node)
    nullable = any(_is_null(v) for v in variants) or node.get("nullable") is True
    rest = [_clean(v, defs, stack) for v in variants if not _is_null(v)]
    rest = [r for r in rest if r != {"nullable": True}]
    if not rest:
        return {**meta, "nullable": True}
    out: dict[str, Any]
    if len(rest) == 1:
        out = {**rest[0], **meta}
    elif all("enum" in r and r.get("type") == "string" and "anyOf" not in r for r in rest):
        values: list[Any] = []
        for r in rest:
            values.extend(v for v in r["enum"] if v not in values)
        out = {"type": "string", "enum": values, **meta}
    else:
        unique: list[dict[str, Any]] = []
        for r in rest:
            if r not in unique:
                unique.append(r)
        out = {"anyOf": unique, **meta} if len(unique) > 1 else {**unique[0], **meta}
    if nullable:
        out["nullable"] = True
    return {k: out[k] for k in sorted(out, key=_key_order)}


_ORDER = {k: n for n, k in enumerate(
    ["type", "title", "description", "nullable", "enum", "properties", "required", "propertyOrdering", "items",
     "anyOf"])}


def _key_order(key: str) -> int:
    return _ORDER.get(key, len(_ORDER))


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _literal(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def transform(definitions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Clean every definition's ``parameters`` for Gemini (a new list; the input is untouched)."""
    return [{**d, "parameters": clean_gemini_schema(d.get("parameters"))} for d in definitions]


POLICY = ProviderPolicy(
    "google",
    providers=PROVIDERS,
    transform_schema=transform,
    description="Gemini accepts a restricted schema dialect: refs inlined, unsupported keywords dropped.",
)


@hookimpl
def register_provider_policies(register: ProviderPolicyRegister) -> None:
    register(POLICY)
