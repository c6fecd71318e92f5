"""OpenAI provider policy: ApplyPatch only on OpenAI models, and strict function schemas.

- ``ApplyPatch`` (``apply_patch``) exists only for OpenAI models (as in OpenClaw): the policy
  declares it ``exclusive``, so the tool policy removes it for every other provider, unless
  ``tools.exec.applyPatch.allModels`` is true.
- Schemas: OpenAI's strict function calling constrains the model's arguments to the
  schema, but accepts only a subset of JSON Schema. :func:`to_strict_schema` rewrites one
  schema into that subset, or returns ``None`` when it cannot (a free-form object, an
  untyped value, ``not`` / ``if`` / ``patternProperties`` ...). :func:`transform` marks the
  whole inventory ``strict: true`` only when *every* schema qualifies; otherwise none is
  strict and the schemas are sent as they are (shape-normalised). :func:`explain` says which
  tools turned strict mode off (``pegboard schema`` and ``pegboard tools --explain`` print it).

Strict form: every object has ``additionalProperties: false`` and lists all its properties
in ``required``; a property that was optional becomes nullable (``["string", "null"]``,
or an added ``{"type": "null"}`` variant), so the model sends ``null`` for "not given".
Validation keywords strict mode rejects (``minLength``, ``pattern``, ``format``, bounds,
``default`` ...) are dropped; Pegboard still validates each call against the tool's model.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from pegboard import ProviderPolicy, ProviderPolicyRegister, hookimpl

__all__ = ["POLICY", "PROVIDERS", "explain", "normalize_schema", "strict_obstacle", "to_strict_schema", "transform"]

PROVIDERS = ("openai", "openai-codex", "azure-openai", "azure-openai-responses")

#: constructs strict mode cannot express: a schema holding one of these does not qualify
UNSUPPORTED = frozenset(
    {"not", "if", "then", "else", "dependentSchemas", "dependentRequired", "dependencies", "unevaluatedProperties",
     "unevaluatedItems", "propertyNames", "contains", "minContains", "maxContains", "prefixItems",
     "patternProperties"}
)
#: validation and annotation keywords strict mode rejects; dropped (the tool's model still checks them)
DROPPED = frozenset(
    {"minLength", "maxLength", "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
     "multipleOf", "minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties", "default", "examples",
     "$schema", "$id", "discriminator", "readOnly", "writeOnly", "deprecated", "title"}
)


class _NotStrict(Exception):
    """The schema uses something strict mode cannot express; ``path`` says where."""

    def __init__(self, what: str, path: tuple[str, ...] = ()) -> None:
        super().__init__(what)
        self.what = what
        self.path = path

    def inside(self, part: str) -> _NotStrict:
        return _NotStrict(self.what, (part, *self.path))

    def __str__(self) -> str:
        return f"{self.what} at {'.'.join(self.path)}" if self.path else f"{self.what} at the root"


def normalize_schema(schema: Any) -> dict[str, Any]:
    """A copy of a tool's parameter schema with an object root OpenAI accepts."""
    if not isinstance(schema, Mapping) or not schema:
        return {"type": "object", "properties": {}}
    out = copy.deepcopy(dict(schema))
    if "type" not in out and ("properties" in out or "required" in out):
        out["type"] = "object"
    if out.get("type") == "object" and not isinstance(out.get("properties"), Mapping):
        out["properties"] = {}
    return out


def to_strict_schema(schema: Any) -> dict[str, Any] | None:
    """``schema`` rewritten for strict mode, or ``None`` when it does not qualify."""
    try:
        return _strict_root(schema)
    except _NotStrict:
        return None


def strict_obstacle(schema: Any) -> str | None:
    """Why ``schema`` does not qualify for strict mode and where (``a free-form object at
    metadata``), or ``None`` when it does."""
    try:
        _strict_root(schema)
    except _NotStrict as exc:
        return str(exc)
    return None


def _strict_root(schema: Any) -> dict[str, Any]:
    root = normalize_schema(_inline_root_ref(schema))
    if root.get("type") != "object":
        raise _NotStrict("a root that is not an object")
    if any(k in root for k in ("anyOf", "oneOf", "allOf", "$ref")):
        raise _NotStrict("a root that is a union or a reference")
    return _strict(root, _definitions(root), ())


def _inline_root_ref(schema: Any) -> Any:
    """A root that is only a local ``$ref`` (pydantic does this for recursive models) becomes
    its target, keeping the definitions so the inner references still resolve."""
    if not isinstance(schema, Mapping) or not isinstance(schema.get("$ref"), str) or "properties" in schema:
        return schema
    ref: str = schema["$ref"]
    for key in ("$defs", "definitions"):
        prefix = f"#/{key}/"
        table = schema.get(key)
        if ref.startswith(prefix) and isinstance(table, Mapping) and isinstance(table.get(ref[len(prefix):]), Mapping):
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            return {**table[ref[len(prefix):]], **rest}
    return schema


def _definitions(root: Mapping[str, Any]) -> dict[str, Any]:
    defs: dict[str, Any] = {}
    for key in ("definitions", "$defs"):
        table = root.get(key)
        if isinstance(table, Mapping):
            defs.update({f"#/{key}/{name}": sub for name, sub in table.items()})
    return defs


def _strict(node: Any, defs: Mapping[str, Any], stack: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(node, Mapping) or not node:
        raise _NotStrict("an untyped value")
    if any(k in node for k in UNSUPPORTED):
        raise _NotStrict("an unsupported keyword")
    out = {k: v for k, v in node.items() if k not in DROPPED}
    if "allOf" in out:
        parts = out.pop("allOf")
        if not (isinstance(parts, list) and len(parts) == 1 and isinstance(parts[0], Mapping)):
            raise _NotStrict("allOf")
        out = {**{k: v for k, v in parts[0].items() if k not in DROPPED}, **out}
        if any(k in out for k in UNSUPPORTED):
            raise _NotStrict("an unsupported keyword")
    if "oneOf" in out:
        if "anyOf" in out:
            raise _NotStrict("anyOf and oneOf")
        out["anyOf"] = out.pop("oneOf")
    if "const" in out:
        out["enum"] = [out.pop("const")]
    for key in ("$defs", "definitions"):
        if key in out:
            table = out[key]
            if not isinstance(table, Mapping):
                raise _NotStrict(key)
            out[key] = {name: _inside(f"{key}.{name}", sub, defs, stack) for name, sub in table.items()}
    if "$ref" in out:
        # strict mode takes a bare $ref; one with siblings (a description) is inlined, once per cycle
        ref = out["$ref"]
        siblings = {k: v for k, v in out.items() if k != "$ref"}
        target = defs.get(ref) if isinstance(ref, str) else None
        if not siblings or not isinstance(target, Mapping) or ref in stack:
            return {"$ref": ref}
        return _strict({**target, **siblings}, defs, (*stack, ref))
    if "anyOf" in out:
        variants = out["anyOf"]
        if not isinstance(variants, list) or not variants or set(out) - {"anyOf", "description", "$defs",
                                                                           "definitions"}:
            raise _NotStrict("anyOf with sibling constraints")
        out["anyOf"] = [_inside(f"anyOf.{n}", v, defs, stack) for n, v in enumerate(variants)]
        return out
    types = out.get("type")
    if types is None:
        if "properties" in out:
            out["type"] = types = "object"
        elif "items" in out:
            out["type"] = types = "array"
        elif "enum" in out:
            return out
        else:
            raise _NotStrict("an untyped value")
    names = set(types) if isinstance(types, list) else {types}
    if not names or not all(isinstance(t, str) for t in names):
        raise _NotStrict("a type that is not a name or a list of names")
    if "object" in names or "properties" in out:
        props = out.get("properties")
        extra = out.get("additionalProperties")
        if not isinstance(props, Mapping) or (extra not in (None, False, True)):
            raise _NotStrict("a free-form object")
        if not props and extra is True:
            raise _NotStrict("a free-form object")
        required = set(out.get("required") or ())
        strict_props: dict[str, Any] = {}
        for name, sub in props.items():
            converted = _inside(name, sub, defs, stack)
            strict_props[name] = converted if name in required else _nullable(converted)
        out["properties"] = strict_props
        out["required"] = list(strict_props)
        out["additionalProperties"] = False
    if "array" in names or "items" in out:
        items = out.get("items")
        if not isinstance(items, Mapping):
            raise _NotStrict("an array without one item schema")
        out["items"] = _inside("items", items, defs, stack)
    return out


def _inside(part: str, node: Any, defs: Mapping[str, Any], stack: tuple[str, ...]) -> dict[str, Any]:
    try:
        return _strict(node, defs, stack)
    except _NotStrict as exc:
        raise exc.inside(part) from None


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in schema:
        return {"anyOf": [schema, {"type": "null"}]}
    if "anyOf" in schema:
        if not any(isinstance(v, Mapping) and v.get("type") == "null" for v in schema["anyOf"]):
            schema["anyOf"] = [*schema["anyOf"], {"type": "null"}]
        return schema
    types = schema.get("type")
    if isinstance(types, str) and types != "null":
        schema["type"] = [types, "null"]
    elif isinstance(types, list) and "null" not in types:
        schema["type"] = [*types, "null"]
    elif types is None:
        return {"anyOf": [schema, {"type": "null"}]}
    if isinstance(schema.get("enum"), list) and None not in schema["enum"]:
        schema["enum"] = [*schema["enum"], None]
    return schema


def transform(definitions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Strict schemas for all tools when every one qualifies, else none (``strict: false``)."""
    strict = [to_strict_schema(d.get("parameters")) for d in definitions]
    if definitions and all(s is not None for s in strict):
        return [{**d, "parameters": s, "strict": True} for d, s in zip(definitions, strict, strict=True)]
    return [{**d, "parameters": normalize_schema(d.get("parameters")), "strict": False} for d in definitions]


def explain(definitions: list[dict[str, Any]]) -> list[str]:
    """Whether :func:`transform` renders these definitions strict, and when not, which tools
    turned it off and why: one tool that does not qualify turns strict mode off for all."""
    if not definitions:
        return []
    obstacles = [(d.get("name"), strict_obstacle(d.get("parameters"))) for d in definitions]
    culprits = [f"{name} ({why})" for name, why in obstacles if why is not None]
    if not culprits:
        return ["strict function schemas: on (every tool's schema qualifies)"]
    one = len(culprits) == 1
    return [
        "strict function schemas: off for every tool, because "
        f"{'the schema of ' if one else 'the schemas of '}{'; '.join(culprits)} "
        f"{'does' if one else 'do'} not qualify; without {'that tool' if one else 'those tools'} "
        "(or with a schema strict mode can express) the set renders strict"
    ]


POLICY = ProviderPolicy(
    "openai",
    providers=PROVIDERS,
    exclusive=["ApplyPatch"],
    exclusive_unless={"ApplyPatch": "tools.exec.applyPatch.allModels"},
    transform_schema=transform,
    explain_schema=explain,
    description="ApplyPatch only on OpenAI models; strict function schemas when every schema qualifies.",
)


@hookimpl
def register_provider_policies(register: ProviderPolicyRegister) -> None:
    register(POLICY)
