"""The names a model sees: a field's alias (``-i``) rather than its Python name (``ignore_case``)."""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

__all__ = ["wire_location"]


def wire_location(model: type[BaseModel], loc: Sequence[int | str]) -> list[str]:
    """A validation error's location with every field named as the schema names it."""
    out: list[str] = []
    current: Any = model
    for part in loc:
        found = _model(current)
        fields = found.model_fields if found is not None else {}
        if isinstance(part, str) and part in fields:
            info = fields[part]
            out.append(info.alias or part)
            current = info.annotation
        else:
            out.append(str(part))
            current = _element(current)
    return out


def _model(annotation: Any) -> type[BaseModel] | None:
    for candidate in _unwrapped(annotation):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _element(annotation: Any) -> Any:
    """What one item (a list index, a dict key's value) of a container annotation holds."""
    for candidate in _unwrapped(annotation):
        args = typing.get_args(candidate)
        if args:
            return args[-1]
    return None


def _unwrapped(annotation: Any) -> list[Any]:
    """The alternatives of ``X | None`` and ``Annotated[X, ...]``."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [a for a in typing.get_args(annotation) if a is not type(None)]
    return [annotation]
