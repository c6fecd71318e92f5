"""``null`` for a field the model may leave out means "not given".

Strict function schemas (OpenAI) list every property in ``required`` and make the optional
ones nullable, so a strict model sends ``null`` wherever it means "use the default", at any
depth. The tool's own model may not accept ``null`` there (``-i: bool = False``), so before
validation such a ``null`` is removed: the field is then omitted and takes its default.
Which fields qualify comes from the tool's input schema (wire names, nested objects, array
items): every property an object does not require, so ``null`` means the default even where
the field's own type accepts ``null``. At the top level the model's field names count too,
for Python callers that pass ``ignore_case=None`` rather than the wire name ``-i``.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from pegboard.core.tools import Tool

__all__ = ["NullPlan", "null_plan", "omit_nulls"]


@dataclass(frozen=True)
class NullPlan:
    """Where in an input a ``null`` means "omitted": ``omit`` names the keys of this object,
    ``properties`` the plans of its nested values, ``items`` the plan of each array item."""

    omit: frozenset[str] = frozenset()
    properties: Mapping[str, NullPlan] = field(default_factory=dict)
    items: NullPlan | None = None

    @property
    def empty(self) -> bool:
        return not self.omit and not self.properties and self.items is None

    @property
    def flat(self) -> bool:
        """Only top-level keys can be omitted: the common case, checked without a walk."""
        return not self.properties and self.items is None


EMPTY = NullPlan()
_PLANS: weakref.WeakKeyDictionary[type[BaseModel], NullPlan] = weakref.WeakKeyDictionary()


def null_plan(tool: Tool) -> NullPlan:
    """The tool's plan, from its input schema (computed once per input model)."""
    plan = _PLANS.get(tool.input_model)
    if plan is None:
        try:
            schema = tool.input_schema()
        except Exception:
            schema = {}
        plan = _compile(schema, _definitions(schema), ()) if isinstance(schema, Mapping) else EMPTY
        names = {n for n, info in tool.input_model.model_fields.items() if not info.is_required()}
        if names - plan.omit:
            plan = NullPlan(plan.omit | names, plan.properties, plan.items)
        _PLANS[tool.input_model] = plan
    return plan


def omit_nulls(plan: NullPlan, value: Any) -> Any:
    """``value`` without the ``null`` values ``plan`` marks as "omitted"; the same object when
    there were none."""
    if plan.empty:
        return value
    if isinstance(value, Mapping):
        out: dict[str, Any] | None = None
        for key, item in value.items():
            if item is None and key in plan.omit:
                new: Any = _OMIT
            elif (sub := plan.properties.get(key)) is not None and item is not None:
                new = omit_nulls(sub, item)
            else:
                continue
            if new is item:
                continue
            if out is None:
                out = dict(value)
            if new is _OMIT:
                del out[key]
            else:
                out[key] = new
        return value if out is None else out
    if plan.items is not None and isinstance(value, list):
        items = [omit_nulls(plan.items, item) for item in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value


_OMIT = object()


def _definitions(root: Mapping[str, Any]) -> dict[str, Any]:
    defs: dict[str, Any] = {}
    for key in ("$defs", "definitions"):
        table = root.get(key)
        if isinstance(table, Mapping):
            defs.update({f"#/{key}/{name}": sub for name, sub in table.items()})
    return defs


def _resolve(node: Any, defs: Mapping[str, Any], stack: tuple[str, ...]) -> tuple[Any, tuple[str, ...]]:
    while isinstance(node, Mapping) and isinstance(ref := node.get("$ref"), str):
        if ref in stack or ref not in defs:
            return {}, stack
        stack = (*stack, ref)
        node = defs[ref]
    if isinstance(node, Mapping) and isinstance(parts := node.get("allOf"), list) and len(parts) == 1:
        inner, stack = _resolve(parts[0], defs, stack)
        if isinstance(inner, Mapping):
            node = {**inner, **{k: v for k, v in node.items() if k != "allOf"}}
    return node, stack


def _variants(node: Mapping[str, Any]) -> list[Any]:
    out: list[Any] = []
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list):
            out.extend(node[key])
    return out


def _compile(node: Any, defs: Mapping[str, Any], stack: tuple[str, ...]) -> NullPlan:
    node, stack = _resolve(node, defs, stack)
    if not isinstance(node, Mapping):
        return EMPTY
    variants = [v for v in _variants(node) if not (isinstance(v, Mapping) and v.get("type") == "null")]
    if variants:
        return _merge([_compile(v, defs, stack) for v in variants])
    omit: set[str] = set()
    properties: dict[str, NullPlan] = {}
    props = node.get("properties")
    if isinstance(props, Mapping):
        required = set(node.get("required") or ())
        for name, sub in props.items():
            if name not in required:
                omit.add(name)
            inner = _compile(sub, defs, stack)
            if not inner.empty:
                properties[name] = inner
    items = node.get("items")
    item_plan = _compile(items, defs, stack) if isinstance(items, Mapping) else EMPTY
    return NullPlan(frozenset(omit), properties, None if item_plan.empty else item_plan)


def _merge(plans: list[NullPlan]) -> NullPlan:
    """A union's plan: a key is omitted only when every variant that has a plan for it agrees."""
    useful = [p for p in plans if not p.empty]
    if not useful:
        return EMPTY
    omit = frozenset.intersection(*(p.omit for p in useful))
    keys = set.intersection(*(set(p.properties) for p in useful))
    properties = {k: merged for k in keys if not (merged := _merge([p.properties[k] for p in useful])).empty}
    items = [p.items for p in useful if p.items is not None]
    item_plan = _merge(items) if len(items) == len(useful) else EMPTY
    return NullPlan(omit, properties, None if item_plan.empty else item_plan)
