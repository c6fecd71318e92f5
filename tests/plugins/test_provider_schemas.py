"""Schema transforms of the provider plugins: pure functions, checked against each provider's rules."""

from __future__ import annotations

import copy
import json
from enum import StrEnum
from typing import Any, Literal

import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

import pegboard_provider_anthropic as anthropic_plugin
import pegboard_provider_google as google_plugin
import pegboard_provider_openai as openai_plugin

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------- sample models


class Color(StrEnum):
    red = "red"
    green = "green"


class Point(BaseModel):
    x: int = Field(ge=0, description="x coordinate")
    y: int = 0


class Shape(BaseModel):
    kind: Literal["polygon"] = "polygon"
    points: list[Point] = Field(min_length=1, description="Corners")
    color: Color | None = None
    label: str | None = Field(default=None, max_length=20, pattern="^[a-z]+$")
    tags: list[str] = Field(default_factory=list)
    mode: Literal["a", "b"] | None = None
    anchor: Point | None = None


class Tree(BaseModel):
    name: str
    children: list[Tree] = []
    best: Point | None = Field(default=None, description="The best point")
    origin: Point = Field(description="Where it starts")


class FreeForm(BaseModel):
    data: dict[str, Any]


def walk(schema: Any, visit: Any) -> None:
    """Call ``visit(node)`` on every schema node (not on property-name maps)."""
    if not isinstance(schema, dict):
        return
    visit(schema)
    for sub in (schema.get("properties") or {}).values():
        walk(sub, visit)
    items = schema.get("items")
    if isinstance(items, dict):
        walk(items, visit)
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(key) or []:
            walk(sub, visit)
    for key in ("$defs", "definitions"):
        for sub in (schema.get(key) or {}).values():
            walk(sub, visit)
    if isinstance(schema.get("additionalProperties"), dict):
        walk(schema["additionalProperties"], visit)


# --------------------------------------------------------------------------- Gemini


def assert_gemini_clean(schema: dict[str, Any]) -> None:
    def visit(node: dict[str, Any]) -> None:
        bad = set(node) & google_plugin.FORBIDDEN_KEYWORDS
        assert not bad, (bad, node)
        assert set(node) <= google_plugin.KEPT_KEYWORDS, node
        assert not ("anyOf" in node and "type" in node), node
        if "required" in node:
            assert node["required"] and set(node["required"]) <= set(node.get("properties") or {}), node
        if "enum" in node:
            assert all(isinstance(v, str) for v in node["enum"]), node
        if isinstance(node.get("type"), list):
            raise AssertionError(f"type arrays are not allowed: {node}")

    walk(schema, visit)
    json.dumps(schema)


def test_gemini_cleans_a_real_pydantic_schema() -> None:
    original = Shape.model_json_schema()
    frozen = copy.deepcopy(original)
    cleaned = google_plugin.clean_gemini_schema(original)
    assert original == frozen  # pure
    assert_gemini_clean(cleaned)
    props = cleaned["properties"]
    assert props["points"]["items"]["properties"]["x"] == {"type": "integer", "title": "X",
                                                           "description": "x coordinate"}
    assert props["points"]["description"] == "Corners"
    assert props["kind"]["enum"] == ["polygon"]
    assert props["color"]["enum"] == ["red", "green"] and props["color"]["nullable"] is True
    assert props["label"]["type"] == "string" and props["label"]["nullable"] is True
    assert props["mode"] == {"type": "string", "title": "Mode", "nullable": True, "enum": ["a", "b"]}
    assert props["anchor"]["properties"]["x"]["type"] == "integer" and props["anchor"]["nullable"] is True
    assert cleaned["required"] == ["points"]


def test_gemini_breaks_reference_cycles() -> None:
    cleaned = google_plugin.clean_gemini_schema(Tree.model_json_schema())
    assert_gemini_clean(cleaned)
    assert cleaned["properties"]["name"]["type"] == "string"
    assert cleaned["properties"]["children"]["items"] == {}  # the cycle, cut


def test_gemini_unions_and_literals() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": ["integer", "null"]},
            "multi": {"type": ["integer", "string"]},
            "lit": {"anyOf": [{"const": "a"}, {"const": "b"}, {"type": "null"}]},
            "one": {"oneOf": [{"$ref": "#/definitions/P"}], "description": "mine"},
            "num": {"enum": [1, 2, 3]},
        },
        "required": ["n", "ghost"],
        "definitions": {"P": {"type": "object", "properties": {"q": {"type": "string"}}, "description": "theirs"}},
    }
    cleaned = google_plugin.clean_gemini_schema(schema)
    assert_gemini_clean(cleaned)
    p = cleaned["properties"]
    assert p["n"] == {"type": "integer", "nullable": True}
    assert p["multi"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert p["lit"] == {"type": "string", "nullable": True, "enum": ["a", "b"]}
    assert p["one"]["description"] == "mine" and p["one"]["properties"] == {"q": {"type": "string"}}
    assert p["num"] == {"type": "integer", "description": "Allowed values: 1, 2, 3"}
    assert cleaned["required"] == ["n"]


def test_gemini_transform_keeps_names_and_descriptions() -> None:
    defs = [{"name": "Shape", "description": "d", "parameters": Shape.model_json_schema()}]
    out = google_plugin.transform(defs)
    assert out[0]["name"] == "Shape" and out[0]["description"] == "d"
    assert "$defs" in defs[0]["parameters"]  # input untouched
    assert_gemini_clean(out[0]["parameters"])


_types = st.sampled_from(["string", "integer", "number", "boolean", "object", "array", "null"])
_scalar = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.text(max_size=3))
_refs = st.sampled_from(["#/$defs/A", "#/$defs/B", "#/definitions/C", "#/$defs/missing", "http://x/y"])
_leaf = st.fixed_dictionaries(
    {},
    optional={
        "type": st.one_of(_types, st.lists(_types, max_size=3)),
        "format": st.just("date-time"),
        "pattern": st.just("^a$"),
        "minLength": st.integers(0, 3),
        "maximum": st.integers(0, 3),
        "const": _scalar,
        "enum": st.lists(_scalar, max_size=3),
        "default": _scalar,
        "examples": st.lists(_scalar, max_size=2),
        "description": st.text(max_size=4),
        "title": st.text(max_size=4),
        "$ref": _refs,
        "nullable": st.booleans(),
        "$schema": st.just("https://json-schema.org/draft/2020-12/schema"),
    },
)
_names = st.sampled_from(["a", "b", "format", "pattern", "$ref", "type", "items"])


def _compound(children: Any) -> Any:
    return st.one_of(
        st.fixed_dictionaries(
            {"type": st.just("object"), "properties": st.dictionaries(_names, children, max_size=3)},
            optional={
                "required": st.lists(_names, max_size=3),
                "additionalProperties": st.one_of(st.booleans(), children),
                "patternProperties": st.dictionaries(st.just("^x"), children, max_size=1),
                "minProperties": st.integers(0, 2),
                "propertyOrdering": st.lists(_names, max_size=3),
            },
        ),
        st.fixed_dictionaries({"type": st.just("array"), "items": st.one_of(children, st.lists(children, max_size=2))},
                              optional={"minItems": st.integers(0, 2), "uniqueItems": st.booleans(),
                                        "prefixItems": st.lists(children, max_size=2)}),
        st.fixed_dictionaries({"anyOf": st.lists(children, min_size=1, max_size=3)},
                              optional={"type": _types, "description": st.text(max_size=3)}),
        st.fixed_dictionaries({"oneOf": st.lists(children, min_size=1, max_size=3)}),
        st.fixed_dictionaries({"allOf": st.lists(children, min_size=1, max_size=2)},
                              optional={"description": st.text(max_size=3)}),
        st.fixed_dictionaries({"not": children}, optional={"type": _types}),
        st.fixed_dictionaries({"properties": st.one_of(st.just([]), st.just("x"))}),
    )


_schemas = st.recursive(_leaf, _compound, max_leaves=6)
_roots = st.builds(
    lambda body, defs, old: {**body, "$defs": defs, "definitions": old},
    _schemas,
    st.dictionaries(st.sampled_from(["A", "B"]), _schemas, max_size=2),
    st.dictionaries(st.just("C"), _schemas, max_size=1),
)


@FAST
@given(_roots)
def test_gemini_output_never_has_a_forbidden_keyword(schema: dict[str, Any]) -> None:
    frozen = copy.deepcopy(schema)
    cleaned = google_plugin.clean_gemini_schema(schema)
    assert schema == frozen
    assert_gemini_clean(cleaned)
    assert google_plugin.clean_gemini_schema(cleaned) == cleaned  # idempotent


# --------------------------------------------------------------------------- OpenAI strict


def assert_openai_strict(schema: dict[str, Any], *, check_meta: bool = True) -> None:
    """The strict-mode rules: closed objects, every property required, no unsupported constructs."""
    assert schema["type"] == "object"
    if check_meta:  # a valid JSON Schema at all (slow, so not in the property test)
        jsonschema.Draft202012Validator.check_schema(schema)

    def visit(node: dict[str, Any]) -> None:
        assert not set(node) & (openai_plugin.UNSUPPORTED | openai_plugin.DROPPED | {"oneOf", "allOf"}), node
        if "$ref" in node:
            assert set(node) == {"$ref"}, node  # strict mode takes a bare reference
            return
        types = node.get("type")
        names = set(types) if isinstance(types, list) else {types}
        if "object" in names:
            assert node["additionalProperties"] is False, node
            assert node["required"] == list(node["properties"]), node
        if "array" in names:
            assert isinstance(node["items"], dict), node

    walk(schema, visit)


def test_openai_strict_schema_of_a_real_model() -> None:
    original = Shape.model_json_schema()
    frozen = copy.deepcopy(original)
    strict = openai_plugin.to_strict_schema(original)
    assert original == frozen
    assert strict is not None
    assert_openai_strict(strict)
    # optional fields are nullable: an input with every optional field null validates
    validator = jsonschema.Draft202012Validator(strict)
    validator.validate({"kind": None, "points": [{"x": 1, "y": None}], "color": None, "label": None, "tags": None,
                        "mode": None, "anchor": None})
    validator.validate({"kind": "polygon", "points": [{"x": 1, "y": 2}], "color": "red", "label": "abc",
                        "tags": ["t"], "mode": "a", "anchor": {"x": 0, "y": 0}})
    assert not validator.is_valid({"points": [], "kind": "polygon", "color": None, "label": None, "tags": None,
                                   "mode": None, "anchor": None, "extra": 1})
    # required stays non-nullable
    assert not validator.is_valid({"kind": None, "points": None, "color": None, "label": None, "tags": None,
                                   "mode": None, "anchor": None})


def test_openai_recursive_models_qualify_through_defs() -> None:
    strict = openai_plugin.to_strict_schema(Tree.model_json_schema())
    assert strict is not None
    assert_openai_strict(strict)
    origin = {"x": 0, "y": None}
    jsonschema.Draft202012Validator(strict).validate(
        {"name": "a", "best": None, "origin": origin,
         "children": [{"name": "b", "children": None, "best": origin, "origin": origin}]})
    assert strict["properties"]["origin"]["description"] == "Where it starts"


def test_openai_free_form_objects_do_not_qualify() -> None:
    assert openai_plugin.to_strict_schema(FreeForm.model_json_schema()) is None
    assert openai_plugin.to_strict_schema({"type": "object", "properties": {"x": {}}}) is None
    assert openai_plugin.to_strict_schema({"type": "object", "properties": {"x": {"not": {"type": "string"}}}}) is None


def test_openai_all_or_nothing() -> None:
    good = {"name": "Shape", "description": "s", "parameters": Shape.model_json_schema()}
    bad = {"name": "Free", "description": "f", "parameters": FreeForm.model_json_schema()}
    out = openai_plugin.transform([good])
    assert out[0]["strict"] is True
    assert_openai_strict(out[0]["parameters"])
    out = openai_plugin.transform([good, bad])
    assert [d["strict"] for d in out] == [False, False]
    assert out[0]["parameters"] == Shape.model_json_schema()  # sent as it is
    assert openai_plugin.transform([]) == []


def test_openai_empty_parameters_become_a_closed_object() -> None:
    (out,) = openai_plugin.transform([{"name": "Now", "description": "n", "parameters": {}}])
    assert out["strict"] is True
    assert out["parameters"] == {"type": "object", "properties": {}, "required": [], "additionalProperties": False}


@FAST
@given(_roots)
def test_openai_strict_output_always_passes_the_rules(schema: dict[str, Any]) -> None:
    schema = {**schema, "type": "object", "properties": schema.get("properties") if isinstance(
        schema.get("properties"), dict) else {"p": schema}}
    schema.pop("anyOf", None), schema.pop("oneOf", None), schema.pop("allOf", None), schema.pop("$ref", None)
    frozen = copy.deepcopy(schema)
    strict = openai_plugin.to_strict_schema(schema)
    assert schema == frozen
    if strict is not None:
        assert_openai_strict(strict, check_meta=False)


# --------------------------------------------------------------------------- Anthropic


def test_anthropic_root_is_an_object_and_nothing_is_stripped() -> None:
    schema = Shape.model_json_schema()
    (out,) = anthropic_plugin.transform([{"name": "S", "description": "s", "parameters": schema}])
    assert out["parameters"] == schema
    union = {"anyOf": [{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                       {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
                        "required": ["a", "b"]}]}
    assert anthropic_plugin.object_root(union) == {
        "type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["a"]}
    assert anthropic_plugin.object_root(None) == {"type": "object", "properties": {}}
