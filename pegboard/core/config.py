"""Configuration: one pydantic model, layered from files in TOML, JSON or JSON5.

Scopes, lowest precedence first: embedded default, user, project, project-local, command
line (``--config``, in order), managed. Scalars take the value of the highest scope; lists
of rules merge across scopes (so a deny anywhere stays a deny); mappings merge key by key.
Unknown keys load with a warning naming the key path; a wrong type is an error naming the
file, the key path, what was expected and what was found.
"""

from __future__ import annotations

import difflib
import json
import os
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, RootModel, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from pegboard.core.modes import PERMISSION_MODES as PERMISSION_MODES
from pegboard.core.modes import PermissionMode
from pegboard.core.sections import NARROWS, NEUTRAL, Widens

Scope = Literal["default", "user", "project", "project-local", "cli", "managed", "code"]
SCOPE_ORDER: tuple[Scope, ...] = ("default", "user", "project", "project-local", "cli", "code", "managed")
CONFIG_SUFFIXES = (".toml", ".json", ".json5")
MANAGED_DIR_ENV = "PEGBOARD_MANAGED_CONFIG_DIR"
USER_DIR_ENV = "PEGBOARD_CONFIG_DIR"


class ConfigError(ValueError):
    """A configuration file that cannot be used; the message names file, key and fix."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True, alias_generator=to_camel, validate_default=False)


class ProviderToolPolicy(_Section):
    """``tools.byProvider[key]``: can only narrow the tool set for that provider or model."""

    profile: str | None = None
    allow: list[str] | None = None
    also_allow: list[str] | None = None
    deny: list[str] | None = None


#: the tool policy picks which tools an agent is offered; permission rules still gate every call
_OFFERS = NEUTRAL


class ToolPolicyConfig(_Section):
    """``tools`` (and ``agents.list[].tools``): which tools an agent sees."""

    profile: Annotated[str | None, _OFFERS] = None
    allow: Annotated[list[str] | None, _OFFERS] = None
    also_allow: Annotated[list[str] | None, _OFFERS] = None
    deny: Annotated[list[str] | None, NARROWS] = None
    by_provider: Annotated[dict[str, ProviderToolPolicy], NARROWS] = Field(default_factory=dict)

    @field_validator("by_provider", mode="before")
    @classmethod
    def _by_provider_objects(cls, value: Any) -> Any:
        """Each ``byProvider`` value must be an object; say which key is wrong and what is valid."""
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise ValueError(
                "an object mapping 'provider' or 'provider/model' keys to {profile, allow, alsoAllow, deny} objects"
            )
        for key, entry in value.items():
            if not isinstance(entry, Mapping | BaseModel):
                raise ValueError(
                    f"an object {{profile, allow, alsoAllow, deny}} for each key; "
                    f"byProvider.{key} is {_type_name(entry)} {json.dumps(entry, default=str)[:40]}"
                )
        return value


class SubagentConfig(_Section):
    """A subagent definition: ``tools`` / ``disallowedTools`` narrow its parent's set."""

    tools: list[str] | str | None = None
    disallowed_tools: list[str] | str | None = None
    parent: str | None = None

    @field_validator("tools", "disallowed_tools", mode="before")
    @classmethod
    def _tool_list(cls, value: Any) -> Any:
        if value is None or isinstance(value, str):
            return value
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError('a list of tool-entry strings or one comma-separated string ("Read, Grep, Bash(git *)")')
        return value


class AgentConfig(_Section):
    """One entry of ``agents.list``."""

    id: str
    tools: ToolPolicyConfig | None = None


class AgentsConfig(_Section):
    entries: Annotated[list[AgentConfig], _OFFERS] = Field(default_factory=list, alias="list")


class PermissionsConfig(_Section):
    """``permissions``: allow / ask / deny rules, the default mode and extra working dirs."""

    allow: Annotated[list[str], Widens.when_set("allow rules let calls run without asking")] = Field(
        default_factory=list
    )
    ask: Annotated[list[str], NARROWS] = Field(default_factory=list)
    deny: Annotated[list[str], NARROWS] = Field(default_factory=list)
    default_mode: Annotated[
        PermissionMode | None,
        Widens.when_set("this permission mode asks less than the default", unless=("default", "plan")),
    ] = None
    additional_directories: Annotated[
        list[str], Widens.when_set("adds working directories the agent may read and edit")
    ] = Field(default_factory=list)
    disable_bypass_permissions_mode: Annotated[Literal["disable"] | None, NARROWS] = None
    allow_managed_permission_rules_only: Annotated[bool | None, NEUTRAL] = None  # read from managed settings only


class PluginsConfig(_Section):
    disabled: Annotated[
        list[str], Widens.when_set("blocking plugins can switch off a plugin that guards calls")
    ] = Field(default_factory=list)


class RedactionConfig(_Section):
    """``redaction``: secrets to keep out of every result, besides the known credential shapes.

    ``secrets`` are literal values; ``secretEnv`` names environment variables whose values
    are secrets whatever their names.
    """

    secrets: Annotated[list[str], NARROWS] = Field(default_factory=list)
    secret_env: Annotated[list[str], NARROWS] = Field(default_factory=list)


class SessionsConfig(_Section):
    """``sessions``: how long stored sessions are kept and how much of their results."""

    retention_days: Annotated[float, NEUTRAL] = Field(default=30.0, gt=0)
    result_quota_mib: Annotated[float, NEUTRAL] = Field(default=64.0, gt=0)
    #: which store plugin keeps sessions (``"postgres"``); unset or ``"sqlite"``: the SQLite file
    store: Annotated[
        str | None, Widens.when_set("chooses where every session's data is kept", unless=(None, "sqlite"))
    ] = None


class PegboardConfig(_Section):
    """The whole configuration, merged from every scope."""

    tools: ToolPolicyConfig = Field(default_factory=ToolPolicyConfig)
    agents: AgentsConfig = Field(default_factory=AgentsConfig)
    subagents: Annotated[dict[str, SubagentConfig], NARROWS] = Field(default_factory=dict)
    permissions: PermissionsConfig = Field(default_factory=PermissionsConfig)
    plugins: PluginsConfig = Field(default_factory=PluginsConfig)
    sessions: SessionsConfig = Field(default_factory=SessionsConfig)
    redaction: RedactionConfig = Field(default_factory=RedactionConfig)


@dataclass(frozen=True)
class ConfigLayer:
    """One source of configuration: its scope, the file it came from, its data and its root.

    ``root`` anchors ``/``-relative paths in rules: the project root for project settings,
    the file's own directory for ``--config`` files.
    """

    scope: Scope
    data: Mapping[str, Any]
    path: Path | None = None
    root: Path | None = None
    #: False for project config of a project the user has not trusted: its commands
    #: (hook handlers, MCP servers) do not run; see ``pegboard.core.projecttrust``
    trusted: bool = True

    @property
    def label(self) -> str:
        return f"{self.scope}:{self.path}" if self.path else self.scope

    @cached_property
    def model(self) -> PegboardConfig:
        """The layer validated, once: loading it and every permission engine built on it share
        this model. Raises ``ConfigError`` naming file, key, expected and found."""
        where = str(self.path) if self.path else f"{self.scope} config"
        try:
            return PegboardConfig.model_validate(dict(self.data))
        except ValidationError as exc:
            problems = []
            for err in exc.errors():
                loc = ".".join(str(p) for p in err["loc"] if not str(p).startswith(("function-", "literal[")))
                expected = err["msg"].removeprefix("Input should be ").removeprefix("Value error, ")
                problems.append(
                    f"{where}: key '{loc}': expected {expected}, found {_type_name(err.get('input'))}"
                    f" {json.dumps(err.get('input'), default=str)[:80]}"
                )
            raise ConfigError("\n".join(dict.fromkeys(problems))) from None


@dataclass
class LoadedConfig:
    """The merged config, the layers it came from, where each value came from, and warnings."""

    config: PegboardConfig
    layers: list[ConfigLayer]
    origins: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @cached_property
    def data(self) -> dict[str, Any]:
        """The merged raw data, computed once: tools read settings from it on every call."""
        return merge_layers(self.layers)[0]


def parse_config_text(text: str, suffix: str, where: str) -> dict[str, Any]:
    """Parse TOML, JSON or JSON5 text; errors name the file and the position."""
    try:
        if suffix == ".toml":
            data: Any = tomllib.loads(text)
        elif suffix == ".json":
            data = json.loads(text)
        elif suffix == ".json5":
            import json5

            data = json5.loads(text)
        else:
            raise ConfigError(f"{where}: unknown config format {suffix!r}; use .toml, .json or .json5")
    except ConfigError:
        raise
    except Exception as exc:
        raise ConfigError(f"{where}: cannot parse as {suffix[1:].upper()}: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: the top level must be an object, found {type(data).__name__}")
    return data


def read_config_file(path: Path) -> dict[str, Any]:
    suffix = path.suffix.lower()
    if suffix not in CONFIG_SUFFIXES:
        suffix = ".json5" if path.name.endswith(".json5") else ".json"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read config file: {exc}") from None
    return parse_config_text(text, suffix, str(path))


def _type_name(value: Any) -> str:
    return {
        dict: "object",
        list: "array",
        str: "string",
        bool: "boolean",
        int: "integer",
        float: "number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def validate_layer(layer: ConfigLayer) -> tuple[PegboardConfig, list[str]]:
    """Validate one layer; return the model and warnings about keys Pegboard does not know."""
    return layer.model, unknown_key_warnings(layer)


def unknown_key_warnings(layer: ConfigLayer) -> list[str]:
    """``unknown key 'tools.alow' (ignored); did you mean 'tools.allow'?`` for each key no field
    declares. Read from the raw data, so a file with type errors still gets these warnings."""
    where = str(layer.path) if layer.path else f"{layer.scope} config"
    out = []
    for path, suggestion in _raw_unknown_keys(PegboardConfig, layer.data, ""):
        hint = f"; did you mean '{suggestion}'?" if suggestion else ""
        out.append(f"{where}: unknown key '{path}' (ignored){hint}")
    return out


def _model_of(annotation: Any) -> tuple[str, type[BaseModel]] | None:
    """``("one"|"map"|"list", Model)`` for a field holding a model, a mapping or a list of them."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "one", annotation
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (dict, Mapping) and len(args) == 2:
        inner = _model_of(args[1])
        return ("map", inner[1]) if inner and inner[0] == "one" else None
    if origin is list and args:
        inner = _model_of(args[0])
        return ("list", inner[1]) if inner and inner[0] == "one" else None
    for arg in args:  # X | None
        if (inner := _model_of(arg)) is not None:
            return inner
    return None


def _raw_unknown_keys(model: type[BaseModel], data: Any, prefix: str) -> list[tuple[str, str | None]]:
    if not isinstance(data, Mapping):
        return []
    fields: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        fields[name] = fields[info.alias or name] = info
    spelled = sorted({info.alias or name for name, info in model.model_fields.items()})
    found: list[tuple[str, str | None]] = []
    for key, value in data.items():
        path = f"{prefix}{key}"
        declared = fields.get(str(key))
        if declared is None:
            close = difflib.get_close_matches(str(key), spelled, n=1, cutoff=0.7)
            found.append((path, f"{prefix}{close[0]}" if close else None))
            continue
        holder = _model_of(declared.annotation)
        if holder is None:
            continue
        kind, child = holder
        if kind == "one":
            found += _raw_unknown_keys(child, value, f"{path}.")
        elif kind == "map" and isinstance(value, Mapping):
            for k, item in value.items():
                found += _raw_unknown_keys(child, item, f"{path}.{k}.")
        elif kind == "list" and isinstance(value, list):
            for i, item in enumerate(value):
                found += _raw_unknown_keys(child, item, f"{path}[{i}].")
    return found


def unknown_keys(model: BaseModel, prefix: str = "") -> list[str]:
    """Key paths in ``model`` that no field declares."""
    found: list[str] = []
    if isinstance(model, RootModel):  # a section holding a map or list of models
        base = prefix[:-1] if prefix.endswith(".") else prefix
        for child_key, child in _children(base, model.root):
            found.extend(unknown_keys(child, f"{child_key.lstrip('.')}."))
        return found
    for key in model.model_extra or {}:
        found.append(f"{prefix}{key}")
    for name, info in type(model).model_fields.items():
        value = getattr(model, name)
        key = f"{prefix}{info.alias or name}"
        for child_key, child in _children(key, value):
            found.extend(unknown_keys(child, f"{child_key}."))
    return found


def _children(key: str, value: Any) -> Iterable[tuple[str, BaseModel]]:
    if isinstance(value, BaseModel):
        yield key, value
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, BaseModel):
                yield f"{key}[{i}]", item
    elif isinstance(value, dict):
        for k, item in value.items():
            if isinstance(item, BaseModel):
                yield f"{key}.{k}", item


def _merge(base: Any, over: Any, origin_base: Any, label: str, path: str) -> tuple[Any, Any]:
    if isinstance(base, dict) and isinstance(over, dict):
        merged = dict(base)
        origins = dict(origin_base) if isinstance(origin_base, dict) else {}
        for key, value in over.items():
            if key in merged:
                merged[key], origins[key] = _merge(
                    merged[key], value, origins.get(key), label, f"{path}.{key}" if path else key
                )
            else:
                merged[key], origins[key] = value, _origin_of(value, label)
        return merged, origins
    if isinstance(base, list) and isinstance(over, list):
        if path == "agents.list":
            return _merge_agents(base, over, origin_base, label)
        if all(isinstance(v, str | int | float | bool | dict) for v in base + over):
            merged_list = list(base)
            origins_list = list(origin_base) if isinstance(origin_base, list) else [None] * len(base)
            for item in over:
                if item not in merged_list:
                    merged_list.append(item)
                    origins_list.append(label)
            return merged_list, origins_list
    return over, _origin_of(over, label)


def _merge_agents(base: list[Any], over: list[Any], origin_base: Any, label: str) -> tuple[Any, Any]:
    merged = list(base)
    origins = list(origin_base) if isinstance(origin_base, list) else [label] * len(base)
    index = {a.get("id"): i for i, a in enumerate(merged) if isinstance(a, dict)}
    for agent in over:
        i = index.get(agent.get("id")) if isinstance(agent, dict) else None
        if i is None:
            merged.append(agent)
            origins.append(_origin_of(agent, label))
        else:
            merged[i], origins[i] = _merge(merged[i], agent, origins[i], label, f"agents.list[{i}]")
    return merged, origins


def _origin_of(value: Any, label: str) -> Any:
    if isinstance(value, dict):
        return {k: _origin_of(v, label) for k, v in value.items()}
    if isinstance(value, list):
        return [label for _ in value]
    return label


def merge_layers(layers: Sequence[ConfigLayer]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Merge layers (given lowest precedence first); return the data and the origin of each value."""
    data: dict[str, Any] = {}
    origins: dict[str, Any] = {}
    for layer in sorted(layers, key=lambda ly: SCOPE_ORDER.index(ly.scope)):
        data, origins = _merge(data, dict(layer.data), origins, layer.label, "")
    return data, origins


def find_project_root(cwd: Path) -> Path:
    """The nearest directory at or above ``cwd`` holding ``.pegboard`` or ``.git``, else ``cwd``."""
    for candidate in (cwd, *cwd.parents):
        if (candidate / ".pegboard").is_dir() or (candidate / ".git").exists():
            return candidate
    return cwd


def user_config_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get(USER_DIR_ENV):
        return Path(env[USER_DIR_ENV])
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", str(Path.home()))) / ".config")
    return Path(base) / "pegboard"


def managed_config_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env.get(MANAGED_DIR_ENV) or "/etc/pegboard")


def default_layer() -> ConfigLayer:
    """The embedded default configuration shipped inside the kernel."""
    text = resources.files("pegboard.core").joinpath("default_config.toml").read_text(encoding="utf-8")
    return ConfigLayer("default", parse_config_text(text, ".toml", "embedded default config"))


@cache
def default_profile() -> str | None:
    """The ``tools.profile`` the embedded default config selects."""
    tools = default_layer().data.get("tools")
    profile = tools.get("profile") if isinstance(tools, dict) else None
    return profile.strip() if isinstance(profile, str) and profile.strip() else None


@dataclass(frozen=True)
class ConfigSource:
    """A file a config layer is read from when it exists; a ``--config`` file must exist."""

    scope: Scope
    path: Path
    root: Path
    required: bool = False


PROJECT_SCOPES: tuple[Scope, ...] = ("project", "project-local")


def config_sources(
    cwd: Path,
    config_files: Sequence[Path] = (),
    *,
    env: Mapping[str, str] | None = None,
    include_scopes: bool = True,
) -> list[ConfigSource]:
    """Every file :func:`discover_layers` reads in ``cwd``, in precedence order, whether it
    exists yet or not (a watcher polls the missing ones too)."""
    sources: list[ConfigSource] = []
    if include_scopes:
        root = find_project_root(cwd)
        user_dir = user_config_dir(env)
        sources += [ConfigSource("user", user_dir / f"settings{s}", user_dir) for s in CONFIG_SUFFIXES]
        for scope, stem in (("project", "settings"), ("project-local", "settings.local")):
            sources += [ConfigSource(scope, root / ".pegboard" / f"{stem}{s}", root) for s in CONFIG_SUFFIXES]  # type: ignore[arg-type]
    for path in config_files:
        given = Path(path).expanduser().resolve()
        sources.append(ConfigSource("cli", given, given.parent, required=True))
    if include_scopes:
        managed = managed_config_dir(env)
        sources += [ConfigSource("managed", managed / f"settings{s}", managed) for s in CONFIG_SUFFIXES]
    return sources


def layers_of(
    read: Sequence[tuple[ConfigSource, Mapping[str, Any]]], env: Mapping[str, str] | None = None
) -> list[ConfigLayer]:
    """The embedded default, then one layer per source read (``(source, data)``, in order);
    project layers are trusted only when the user trusts the project."""
    from pegboard.core.projecttrust import is_trusted

    project = next((source.root for source, _data in read if source.scope in PROJECT_SCOPES), None)
    trusted = is_trusted(project, env) if project is not None else True
    return [default_layer()] + [
        ConfigLayer(s.scope, data, s.path, s.root, trusted=trusted if s.scope in PROJECT_SCOPES else True)
        for s, data in read
    ]


def discover_layers(
    cwd: Path,
    config_files: Sequence[Path] = (),
    *,
    env: Mapping[str, str] | None = None,
    include_scopes: bool = True,
) -> list[ConfigLayer]:
    """Every layer that applies in ``cwd``: default, user, project, local, ``--config``, managed."""
    sources = config_sources(cwd, config_files, env=env, include_scopes=include_scopes)
    return layers_of([(s, read_config_file(s.path)) for s in sources if s.required or s.path.is_file()], env)


def load_layers(layers: Sequence[ConfigLayer]) -> LoadedConfig:
    """Validate each layer, then merge them into one ``PegboardConfig``."""
    warnings: list[str] = []
    for layer in layers:
        warnings.extend(validate_layer(layer)[1])
    data, origins = merge_layers(layers)
    config = PegboardConfig.model_validate(data)
    return LoadedConfig(config=config, layers=list(layers), origins=origins, warnings=warnings)


def load_config(
    cwd: Path | None = None,
    config_files: Sequence[Path] = (),
    *,
    env: Mapping[str, str] | None = None,
    include_scopes: bool = True,
) -> LoadedConfig:
    """Discover and load every config layer that applies in ``cwd``."""
    cwd = (cwd or Path.cwd()).resolve()
    return load_layers(discover_layers(cwd, config_files, env=env, include_scopes=include_scopes))
