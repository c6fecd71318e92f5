"""Config sections: plugins' own settings, typed, validated, documented, and classed for trust.

A plugin registers the part of the config it reads (``tools.read``, ``sandbox``,
``models.small``) with a pydantic model, so its settings get the same treatment as the
kernel's: a wrong type is an error naming the file and key, an unknown key a warning.

Every key of a section's model declares, on its field, how it bears on what an agent may do
(:class:`Widens`): it widens when true, when false or whenever it is set (an allow list, a
private host the network guard may reach, an endpoint that receives data, a switch that
turns a check off), or it narrows, or it is neutral. An untrusted project (a cloned
repository the user has not trusted with ``pegboard trust``) can only narrow: every key its
config sets in a widening direction is ignored, and reported once. The kernel's own config
model declares its keys the same way, so one mechanism covers every key, present and
future. In a plugin's section, a key that declares nothing, or that no field declares,
counts as widening.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, RootModel, ValidationError
from pydantic.alias_generators import to_snake

if TYPE_CHECKING:
    from pegboard.core.config import ConfigLayer

#: A section's own checks for ``pegboard config validate``: ``(errors, warnings)`` about the raw
#: value of one file (an unknown hook event), beyond what its model's types say.
Check = Callable[[Any], "tuple[list[str], list[str]]"]

#: Why a key widens, as :func:`widening_table` gives it: a reason (the key always widens) or a
#: function of the value that returns a reason when this value widens (``defaultMode = "plan"``
#: does not).
Widening = str | Callable[[Any], "str | None"]

UNTRUSTED_SCOPES = ("project", "project-local")
TRUST_HINT = "ignored until you trust this project (pegboard trust)"

#: what a key that declares no direction, or that no field declares, counts as
UNDECLARED = "it declares no widening direction, so it counts as widening"


class Direction(StrEnum):
    """Which values of a key widen what an agent may do."""

    WHEN_TRUE = "widens when true"
    WHEN_FALSE = "widens when false"
    WHEN_SET = "widens when set"
    NARROWS = "narrows"
    NEUTRAL = "neutral"


@dataclass(frozen=True)
class Widens:
    """How one config key bears on what an agent may do, declared on its model field::

        allowPrivateHosts: Annotated[list[str], Widens.when_set("lets fetches reach private hosts")] = []
        enabled: Annotated[bool, Widens.when_false("turns the sandbox off")] = True
        deniedDomains: Annotated[list[str], NARROWS] = []
        maxChars: Annotated[int, NEUTRAL] = 50_000

    An untrusted project's value is ignored when it widens: for ``when_true`` any value but
    ``false``, for ``when_false`` any value but ``true``, for ``when_set`` any value not in
    ``unless``. A field holding a model declares nothing itself; its own fields do.
    """

    direction: Direction
    why: str = ""
    unless: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.direction, Direction):
            raise ValueError(f"Widens: direction must be a pegboard Direction, got {self.direction!r}")
        if self.widening and not self.why.strip():
            raise ValueError(
                f"Widens ({self.direction}): say why the key widens, e.g. 'lets fetches reach private hosts'"
            )

    @classmethod
    def when_true(cls, why: str) -> Widens:
        """A switch whose ``true`` lets the agent do more (``allowUnsandboxedCommands``)."""
        return cls(Direction.WHEN_TRUE, why)

    @classmethod
    def when_false(cls, why: str) -> Widens:
        """A switch whose ``false`` turns a check off (``sandbox.enabled``)."""
        return cls(Direction.WHEN_FALSE, why)

    @classmethod
    def when_set(cls, why: str, *, unless: Iterable[Any] = ()) -> Widens:
        """A key whose every value (every entry added) widens, except those in ``unless``
        (``defaultMode`` widens unless it is ``default`` or ``plan``)."""
        return cls(Direction.WHEN_SET, why, tuple(unless))

    @property
    def widening(self) -> bool:
        return self.direction in (Direction.WHEN_TRUE, Direction.WHEN_FALSE, Direction.WHEN_SET)

    def reason(self, value: Any) -> str | None:
        """Why ``value`` widens, or ``None`` when it does not."""
        if value is None or not self.widening:
            return None
        if self.direction is Direction.WHEN_TRUE:
            return None if value is False else self.why
        if self.direction is Direction.WHEN_FALSE:
            return None if value is True else self.why
        return None if any(value == kept for kept in self.unless) else self.why


#: a key that can only take permissions away (a deny list, a switch that adds a check)
NARROWS = Widens(Direction.NARROWS)
#: a key that neither widens nor narrows (a timeout, a cache size)
NEUTRAL = Widens(Direction.NEUTRAL)


@dataclass(frozen=True)
class ConfigSection:
    """The settings a plugin reads, at ``key`` (dotted, as written in the config file).

    Every field of ``model`` declares its widening direction with :class:`Widens` in its
    ``Annotated`` type (a field holding a model, through the fields of that model).
    ``description`` is shown by ``pegboard config``. A section that is not an object (a list, a
    switch, a map of named entries) takes a pydantic ``RootModel`` whose ``root`` declares it.
    ``check`` adds the section's own problems to ``pegboard config validate`` (a running
    Pegboard does not refuse them).
    """

    key: str
    model: type[BaseModel]
    description: str = ""
    widening: Mapping[str, Any] = field(default_factory=dict)
    owner: str = ""
    check: Check | None = None

    def __post_init__(self) -> None:
        if not self.key or any(not part for part in self.key.split(".")):
            raise ValueError(f"a config section needs a dotted key such as 'tools.read', got {self.key!r}")
        if not (isinstance(self.model, type) and issubclass(self.model, BaseModel)):
            raise ValueError(f"config section {self.key!r}: model must be a pydantic BaseModel subclass")
        if self.widening:
            raise ValueError(
                f"config section {self.key!r}: widening= is no longer read; declare each key on its field, "
                "e.g. Annotated[list[str], Widens.when_set('lets fetches reach private hosts')] (pegboard.Widens)"
            )

    def declarations(self) -> dict[str, Widens | None]:
        """Every key's full dotted path and its declaration (``None``: it declares none)."""
        return {_join(self.key, path): marker for path, marker in declarations(self.model)}


class DeclaredSection:
    """A config section its plugin's declaration file describes, its module not imported yet.

    Everything trust and change-watching need (the key, each key's widening direction) comes
    from the file; ``model`` and ``check`` import the plugin, which happens only when a config
    file sets the section or a tool reads its settings."""

    def __init__(self, key: str, description: str, owner: str,
                 keys: Mapping[str, Widens | None], load: Callable[[], ConfigSection | None]) -> None:
        self.key = key
        self.description = description
        self.owner = owner
        self._keys = dict(keys)
        self._load = load

    def declarations(self) -> dict[str, Widens | None]:
        return dict(self._keys)

    def real(self) -> ConfigSection:
        """The section the imported plugin registered; ``RuntimeError`` when it did not."""
        section = self._load()
        if section is None:
            raise RuntimeError(f"plugin {self.owner} declared the config section {self.key!r} but did not "
                               "register it when imported (see pegboard plugins)")
        return section

    @property
    def model(self) -> type[BaseModel]:
        return self.real().model

    @property
    def check(self) -> Check | None:
        return self.real().check

    def __repr__(self) -> str:
        return f"DeclaredSection({self.key!r}, owner={self.owner!r})"


#: A registered section or one declared by a plugin not imported yet.
SectionEntry = ConfigSection | DeclaredSection


def widens_to_data(marker: Widens | None) -> list[Any] | None:
    """A key's declaration as JSON data for a declaration file."""
    if marker is None:
        return None
    return [marker.direction.value, marker.why, list(marker.unless)]


def widens_from_data(data: Any) -> Widens | None:
    if data is None:
        return None
    direction, why, unless = data
    return Widens(Direction(direction), why, tuple(unless))


def _join(head: str, tail: str) -> str:
    return f"{head}.{tail}" if head and tail else head or tail


def _marker(info: Any) -> Widens | None:
    return next((m for m in info.metadata if isinstance(m, Widens)), None)


@functools.cache
def declarations(model: type[BaseModel]) -> tuple[tuple[str, Widens | None], ...]:
    """``(path, declaration)`` for every key of ``model``, paths as written in config files
    (``network.allowedDomains``; ``""`` for a root model's value). A field holding a model is
    not a key of its own unless it declares itself: its fields are."""
    from pegboard.core.config import _model_of

    found: list[tuple[str, Widens | None]] = []

    def walk(current: type[BaseModel], prefix: str, seen: frozenset[type[BaseModel]]) -> None:
        for name, info in current.model_fields.items():
            path = prefix if issubclass(current, RootModel) else _join(prefix, info.alias or name)
            marker = _marker(info)
            held = _model_of(info.annotation)
            if marker is None and held is not None and held[0] == "one" and held[1] not in seen:
                walk(held[1], path, seen | {held[1]})
            else:
                found.append((path, marker))

    walk(model, "", frozenset({model}))
    return tuple(found)


def kernel_declarations() -> dict[str, Widens | None]:
    """The kernel's own keys (``permissions.allow`` ...) and their declarations."""
    from pegboard.core.config import PegboardConfig

    return dict(declarations(PegboardConfig))


def get_path(data: Mapping[str, Any], dotted: str) -> Any:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def spellings(dotted: str) -> list[str]:
    """Every spelling of a key path the config models accept: as written (``defaultMode``) and
    by field name (``default_mode``), part by part."""
    out = [""]
    for part in dotted.split("."):
        forms = dict.fromkeys([part, to_snake(part)])
        out = [f"{head}.{form}" if head else form for head in out for form in forms]
    return out


def _pop_path(data: dict[str, Any], dotted: str) -> bool:
    parts = dotted.split(".")
    node: Any = data
    for part in parts[:-1]:
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    if isinstance(node, dict) and parts[-1] in node:
        del node[parts[-1]]
        return True
    return False


def _reason(why: Widening, value: Any) -> str | None:
    return why(value) if callable(why) else why


def _declares_nothing(_value: Any) -> str:
    return UNDECLARED


def widening_table(sections: Iterable[SectionEntry]) -> dict[str, Widening]:
    """Every key that can widen, the kernel's first, with why: each key declared widening, and
    each key that declares nothing."""
    table: dict[str, Widening] = {}
    for declared in (kernel_declarations(), *(s.declarations() for s in sections)):
        for path, marker in declared.items():
            if marker is None:
                table[path] = _declares_nothing
            elif marker.widening:
                table[path] = marker.reason
    return table


def only_narrowing(
    layers: Sequence[ConfigLayer], sections: Iterable[SectionEntry] = ()
) -> tuple[list[ConfigLayer], list[str]]:
    """The layers with every widening key removed from untrusted project layers, and one
    notice per key removed. Trusted layers, and every other scope, pass unchanged.

    Inside a registered section a key that no field declares is removed too: a plugin may
    read keys its model lets through, and an undeclared key must not widen."""
    sections = list(sections)
    table = widening_table(sections)
    out: list[ConfigLayer] = []
    notices: list[str] = []
    for layer in layers:
        if layer.trusted or layer.scope not in UNTRUSTED_SCOPES:
            out.append(layer)
            continue
        data = copy.deepcopy(dict(layer.data))
        removed = False
        for declared, why in table.items():
            for key in spellings(declared):
                value = get_path(data, key)
                if value is None:
                    continue
                reason = _reason(why, value)
                if reason is None:
                    continue
                if _pop_path(data, key):
                    removed = True
                    where = str(layer.path) if layer.path else f"{layer.scope} config"
                    notices.append(f"{where}: {key} = {json.dumps(value, default=str)[:60]} {TRUST_HINT}: {reason}")
        for key in _keys_no_field_declares(data, sections):
            value = get_path(data, key)
            if _pop_path(data, key):
                removed = True
                where = str(layer.path) if layer.path else f"{layer.scope} config"
                notices.append(f"{where}: {key} = {json.dumps(value, default=str)[:60]} {TRUST_HINT}: no field of "
                               f"its section declares it, so it counts as widening")
        out.append(replace(layer, data=data) if removed else layer)
    return out, notices


def _keys_no_field_declares(data: Mapping[str, Any], sections: Sequence[SectionEntry]) -> list[str]:
    """Paths in ``data`` inside a registered section (an object, not a root model) that no
    field of its model declares and no other registered section covers."""
    from pegboard.core.config import _model_of

    keys = [spelled for s in sections for spelled in spellings(s.key)]

    def walk(model: type[BaseModel], raw: Any, prefix: str) -> list[str]:
        if not isinstance(raw, Mapping) or issubclass(model, RootModel):
            return []
        fields: dict[str, Any] = {}
        for name, info in model.model_fields.items():
            fields[name] = fields[info.alias or name] = fields[to_snake(info.alias or name)] = info
        found: list[str] = []
        for key, value in raw.items():
            path = f"{prefix}.{key}"
            declared = fields.get(str(key))
            if declared is None:
                if not any(k == path or k.startswith(path + ".") for k in keys):
                    found.append(path)
                continue
            held = _model_of(declared.annotation)
            if _marker(declared) is None and held is not None and held[0] == "one":
                found += walk(held[1], value, path)
        return found

    out: list[str] = []
    for section in sections:
        raw = get_path(data, section.key)
        if raw is not None:
            out += walk(section.model, raw, section.key)
    return out


def section_problems(
    layers: Sequence[ConfigLayer], sections: Iterable[SectionEntry]
) -> tuple[list[str], list[str]]:
    """Errors (a wrong type) and warnings (an unknown key) in every layer's plugin sections."""
    from pegboard.core.config import unknown_keys

    errors: list[str] = []
    warnings: list[str] = []
    for section in sections:
        for layer in layers:
            value = get_path(layer.data, section.key)
            if value is None:
                continue
            where = str(layer.path) if layer.path else f"{layer.scope} config"
            try:
                model = section.model.model_validate(value)
            except ValidationError as exc:
                for err in exc.errors():
                    loc = ".".join(str(p) for p in err["loc"])
                    key = f"{section.key}.{loc}" if loc else section.key
                    found = json.dumps(err.get("input"), default=str)[:80]
                    errors.append(f"{where}: key '{key}': {err['msg']}, found {found}")
                continue
            unknown = set(unknown_keys(model)) | set(_undeclared(model, value))
            unknown = {p for p in unknown if not any(o.key.startswith(f"{section.key}.{p}") for o in sections)}
            names = _declared_names(section.model)
            warnings += [f"{where}: unknown key '{section.key}.{p}' (ignored){_hint(section.key, p, names)}"
                         for p in sorted(unknown)]
    return errors, warnings


def _declared_names(model: type[BaseModel], seen: set[type[BaseModel]] | None = None) -> set[str]:
    """Every field name (as written in config) of ``model`` and of the models it holds."""
    from pegboard.core.config import _model_of

    seen = set() if seen is None else seen
    if model in seen:
        return set()
    seen.add(model)
    names: set[str] = set()
    for name, info in model.model_fields.items():
        if not issubclass(model, RootModel):
            names.add(info.alias or name)
        held = _model_of(info.annotation)
        if held is not None:
            names |= _declared_names(held[1], seen)
    return names


def _hint(key: str, path: str, names: set[str]) -> str:
    """``; did you mean 'mcpServers.x.command'?`` for a misspelt last part of ``path``."""
    import difflib

    head, _, last = path.rpartition(".")
    close = difflib.get_close_matches(last, sorted(names), n=1, cutoff=0.7)
    if not close:
        return ""
    return f"; did you mean '{key}.{head + '.' if head else ''}{close[0]}'?"


def section_checks(layer: ConfigLayer, sections: Iterable[SectionEntry]) -> tuple[list[str], list[str]]:
    """What each section's own ``check`` finds in one layer, each line naming the file."""
    where = str(layer.path) if layer.path else f"{layer.scope} config"
    errors: list[str] = []
    warnings: list[str] = []
    for section in sections:
        value = get_path(layer.data, section.key)
        if value is None or section.check is None:
            continue
        try:
            found_errors, found_warnings = section.check(value)
        except Exception as exc:  # a plugin's check must not stop validation of the rest
            found_errors, found_warnings = [], [f"{section.key}: the check of {section.owner} failed: {exc}"]
        errors += [f"{where}: {e}" for e in found_errors]
        warnings += [f"{where}: {w}" for w in found_warnings]
    return errors, warnings


def _undeclared(model: BaseModel, raw: Any, prefix: str = "") -> list[str]:
    """Keys of ``raw`` that no field of ``model`` declares (for models that ignore extras)."""
    if isinstance(model, RootModel):
        return _undeclared_in(model.root, raw, prefix)
    if not isinstance(raw, Mapping):
        return []
    fields = type(model).model_fields
    names: dict[str, str] = {}
    for name, info in fields.items():
        names[name] = name
        if info.alias:
            names[info.alias] = name
        if info.validation_alias and isinstance(info.validation_alias, str):
            names[info.validation_alias] = name
    found: list[str] = []
    for key, value in raw.items():
        field_name = names.get(key)
        if field_name is None:
            if not (model.model_extra and key in model.model_extra):
                found.append(f"{prefix}{key}")
            continue
        child = getattr(model, field_name, None)
        if isinstance(child, BaseModel):
            found += _undeclared(child, value, f"{prefix}{key}.")
    return found


def _undeclared_in(value: Any, raw: Any, prefix: str) -> list[str]:
    """``_undeclared`` through a root value: a model, or a mapping or list of models."""
    if isinstance(value, BaseModel):
        return _undeclared(value, raw, prefix)
    found: list[str] = []
    if isinstance(value, Mapping) and isinstance(raw, Mapping):
        for key, item in value.items():
            found += _undeclared_in(item, raw.get(key), f"{prefix}{key}.")
    elif isinstance(value, list) and isinstance(raw, list):
        for i, (item, raw_item) in enumerate(zip(value, raw, strict=False)):
            found += _undeclared_in(item, raw_item, f"{prefix[:-1]}[{i}]." if prefix else f"[{i}].")
    return found


def covered_by(path: str, sections: Iterable[SectionEntry]) -> bool:
    """Whether an "unknown key" of the kernel model belongs to a registered section."""
    return any(path == s.key or path.startswith(s.key + ".") or s.key.startswith(path + ".") for s in sections)


__all__ = [
    "NARROWS",
    "NEUTRAL",
    "TRUST_HINT",
    "UNDECLARED",
    "ConfigSection",
    "DeclaredSection",
    "Direction",
    "SectionEntry",
    "Widens",
    "covered_by",
    "declarations",
    "get_path",
    "kernel_declarations",
    "only_narrowing",
    "section_checks",
    "section_problems",
    "widening_table",
]
