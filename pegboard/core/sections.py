"""Config sections: plugins' own settings, typed, validated, documented, and classed for trust.

A plugin registers the part of the config it reads (``tools.read``, ``sandbox``,
``models.small``) with a pydantic model, so its settings get the same treatment as the
kernel's: a wrong type is an error naming the file and key, an unknown key a warning.

Each section declares which of its keys can **widen** what an agent may do (an allow list,
a private host the network guard may reach, an endpoint that receives data, a switch that
turns a check off). An untrusted project (a cloned repository the user has not trusted with
``pegboard trust``) can only narrow: every widening key in its config is ignored, and
reported once. The kernel declares its own widening keys the same way, so one mechanism
covers every key, present and future.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, RootModel, ValidationError
from pydantic.alias_generators import to_snake

if TYPE_CHECKING:
    from pegboard.core.config import ConfigLayer

#: A section's own checks for ``pegboard config validate``: ``(errors, warnings)`` about the raw
#: value of one file (an unknown hook event), beyond what its model's types say.
Check = Callable[[Any], "tuple[list[str], list[str]]"]

#: A widening declaration: a reason (the key always widens) or a function of the value that
#: returns a reason when this value widens (``defaultMode = "plan"`` does not).
Widening = str | Callable[[Any], "str | None"]

UNTRUSTED_SCOPES = ("project", "project-local")
TRUST_HINT = "ignored until you trust this project (pegboard trust)"


@dataclass(frozen=True)
class ConfigSection:
    """The settings a plugin reads, at ``key`` (dotted, as written in the config file).

    ``widening`` maps a key inside the section (as written: ``allowedDomains``,
    ``network.allowPrivateHosts``; ``""`` for the section itself) to why it widens, or to a
    function of its value that says so. ``description`` is shown by ``pegboard config``.
    A section that is not an object (a list, a switch, a map of named entries) takes a
    pydantic ``RootModel``. ``check`` adds the section's own problems to
    ``pegboard config validate`` (a running Pegboard does not refuse them).
    """

    key: str
    model: type[BaseModel]
    description: str = ""
    widening: Mapping[str, Widening] = field(default_factory=dict)
    owner: str = ""
    check: Check | None = None

    def __post_init__(self) -> None:
        if not self.key or any(not part for part in self.key.split(".")):
            raise ValueError(f"a config section needs a dotted key such as 'tools.read', got {self.key!r}")
        if not (isinstance(self.model, type) and issubclass(self.model, BaseModel)):
            raise ValueError(f"config section {self.key!r}: model must be a pydantic BaseModel subclass")

    def widening_keys(self) -> dict[str, Widening]:
        """Full dotted paths of the widening keys."""
        return {f"{self.key}.{k}" if k else self.key: why for k, why in self.widening.items()}


def _not_default_or_plan(value: Any) -> str | None:
    if value in (None, "default", "plan"):
        return None
    return f"permission mode {value!r} asks less than the default"


#: The kernel's own keys that widen what an agent may do.
KERNEL_WIDENING: dict[str, Widening] = {
    "permissions.allow": "allow rules let calls run without asking",
    "permissions.additionalDirectories": "adds working directories the agent may read and edit",
    "permissions.defaultMode": _not_default_or_plan,
    "plugins": "blocking or loading plugins can switch off a plugin that guards calls",
}


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


def widening_table(sections: Iterable[ConfigSection]) -> dict[str, Widening]:
    """Every registered widening key, the kernel's first."""
    table = dict(KERNEL_WIDENING)
    for section in sections:
        table.update(section.widening_keys())
    return table


def only_narrowing(
    layers: Sequence[ConfigLayer], sections: Iterable[ConfigSection] = ()
) -> tuple[list[ConfigLayer], list[str]]:
    """The layers with every widening key removed from untrusted project layers, and one
    notice per key removed. Trusted layers, and every other scope, pass unchanged."""
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
        out.append(replace(layer, data=data) if removed else layer)
    return out, notices


def section_problems(
    layers: Sequence[ConfigLayer], sections: Iterable[ConfigSection]
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


def section_checks(layer: ConfigLayer, sections: Iterable[ConfigSection]) -> tuple[list[str], list[str]]:
    """What each section's own ``check`` finds in one layer, each line naming the file."""
    where = str(layer.path) if layer.path else f"{layer.scope} config"
    errors: list[str] = []
    warnings: list[str] = []
    for section in sections:
        value = get_path(layer.data, section.key)
        if section.check is None or value is None:
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


def covered_by(path: str, sections: Iterable[ConfigSection]) -> bool:
    """Whether an "unknown key" of the kernel model belongs to a registered section."""
    return any(path == s.key or path.startswith(s.key + ".") or s.key.startswith(path + ".") for s in sections)


__all__ = [
    "KERNEL_WIDENING",
    "TRUST_HINT",
    "ConfigSection",
    "covered_by",
    "get_path",
    "only_narrowing",
    "section_checks",
    "section_problems",
    "widening_table",
]
