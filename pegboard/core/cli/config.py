"""``pegboard config show`` and ``pegboard config validate``."""

from __future__ import annotations

import difflib
import re
import sys
from pathlib import Path
from typing import Any

import click

from pegboard.core.cli.common import EXIT_USAGE, config_options, emit_json, fail, json_option, print_table


def _flatten(data: Any, origins: Any, prefix: str = "") -> list[tuple[str, Any, Any]]:
    if isinstance(data, dict):
        rows = []
        for key, value in data.items():
            sub = origins.get(key) if isinstance(origins, dict) else origins
            rows += _flatten(value, sub, f"{prefix}.{key}" if prefix else key)
        return rows
    if isinstance(data, list) and any(isinstance(v, dict) for v in data):
        rows = []
        for i, value in enumerate(data):
            sub = origins[i] if isinstance(origins, list) and i < len(origins) else origins
            rows += _flatten(value, sub, f"{prefix}[{i}]")
        return rows
    if isinstance(data, list):
        srcs = origins if isinstance(origins, list) else [origins] * len(data)
        return [(f"{prefix}[{i}]", v, srcs[i] if i < len(srcs) else None) for i, v in enumerate(data)]
    return [(prefix, data, origins)]


@click.group("config")
def command() -> None:
    """Show the merged configuration or validate a config file."""


@command.command("show")
@config_options
@json_option
def show(config_files: tuple[Path, ...], cwd: Path | None, as_json: bool) -> None:
    """Print the merged config and where each value came from."""
    from pegboard.core.config import ConfigError, load_config

    try:
        loaded = load_config(cwd, list(config_files))
    except ConfigError as exc:
        fail(str(exc), EXIT_USAGE)
    data, origins = loaded.data, loaded.origins
    if as_json:
        emit_json(
            {
                "config": data,
                "origins": origins,
                "layers": [{"scope": ly.scope, "path": str(ly.path) if ly.path else None} for ly in loaded.layers],
                "warnings": loaded.warnings,
            }
        )
        return
    for warning in loaded.warnings:
        click.echo(f"warning: {warning}", err=True)
    import json

    print_table(["KEY", "VALUE", "FROM"], [[k, json.dumps(v), o or ""] for k, v, o in _flatten(data, origins)])


def _rule_diagnostics(layer: Any, pb: Any) -> list[str]:
    """Permission rules that are malformed or take no specifier, and path rules anchored with
    one slash at a directory the file's base does not hold, with file and position (rules are
    read as ``pb``'s installed tools declare them)."""
    if not layer.data.get("permissions"):
        return []
    from pegboard.core.permissions import PermissionEngine
    from pegboard.core.permissions.anchors import missing_anchor_warnings

    try:
        engine = PermissionEngine([layer], cwd=layer.root or Path.cwd(), tools=pb.registry.find)
    except Exception:  # a wrong type under permissions is already reported as an error
        return []
    rules = (r for rules in engine.rules.values() for r in rules)
    return [*engine.diagnostics, *missing_anchor_warnings(rules, engine.families)]


def _layer_of(file: Path) -> Any:
    """The file as the layer it would be: a project file (``.pegboard/settings*``) is anchored
    at the project root, any other file at its own directory, as ``--config`` files are."""
    from pegboard.core.config import CONFIG_SUFFIXES, ConfigLayer, read_config_file

    data = read_config_file(file)
    stem = file.name[: -len(file.suffix)] if file.suffix in CONFIG_SUFFIXES else file.name
    if file.parent.name == ".pegboard" and stem in ("settings", "settings.local"):
        return ConfigLayer("project" if stem == "settings" else "project-local", data, file, file.parent.parent)
    return ConfigLayer("cli", data, file, file.parent)


def _suggest(word: str, choices: Any) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in choices}
        close = [lowered[word.lower()]] if word.lower() in lowered else []
    return f"; did you mean {close[0]!r}?" if close else ""


def _profile_fields(data: Any) -> list[tuple[str, Any]]:
    """``(key path, value)`` of every ``profile`` setting in raw config data."""
    blocks: list[tuple[str, Any]] = [("tools", data.get("tools"))]
    agents = data.get("agents")
    entries = agents.get("list") if isinstance(agents, dict) else None
    for i, agent in enumerate(entries if isinstance(entries, list) else []):
        if isinstance(agent, dict):
            blocks.append((f"agents.list[{i}].tools", agent.get("tools")))
    found = []
    for label, block in blocks:
        if not isinstance(block, dict):
            continue
        if "profile" in block:
            found.append((f"{label}.profile", block["profile"]))
        by_provider = block.get("byProvider", block.get("by_provider"))
        for key, entry in (by_provider.items() if isinstance(by_provider, dict) else []):
            if isinstance(entry, dict) and "profile" in entry:
                found.append((f"{label}.byProvider.{key}.profile", entry["profile"]))
    return found


def _section_problems(pb: Any, layer: Any, warnings: list[str]) -> tuple[list[str], list[str]]:
    """Plugins' config sections: their keys are not unknown, and their own checks apply."""
    from pegboard.core.sections import covered_by, section_checks, section_problems

    sections = list(pb.registry.config_sections.values())
    if not sections:
        return [], warnings
    unknown = re.compile(r"unknown key '(.+?)' \(ignored\)")
    kept = [w for w in warnings if not ((m := unknown.search(w)) and covered_by(m.group(1), sections))]
    errors, more = section_problems([layer], sections)
    checked_errors, checked_warnings = section_checks(layer, sections)
    return errors + checked_errors, kept + more + checked_warnings


def _disabled_by(pb: Any, data: Any, profile: str) -> bool:
    """Whether the file's own ``plugins.disabled`` turns off the plugin that registers ``profile``."""
    from pegboard.core.selection import PluginSelection

    plugins = data.get("plugins") if isinstance(data, dict) else None
    disabled = plugins.get("disabled") if isinstance(plugins, dict) else None
    if not isinstance(disabled, list) or not disabled:
        return False
    owner = pb.registry.profile_owner.get(profile)
    distribution = next((p.distribution for p in pb.plugins if p.name == owner), None)
    selection = PluginSelection(frozenset(str(d) for d in disabled))
    return selection.blocked_reason(owner, distribution) is not None


def _policy_problems(pb: Any, layer: Any, model: Any, where: str) -> tuple[list[str], list[str]]:
    """Unknown profiles (errors, read from the raw data so they show beside type errors) and,
    for a valid file, entries that name no installed tool; both against the plugins installed here."""
    from pegboard.core.install_hints import profile_hint
    from pegboard.core.policy import policy_problems

    catalog = pb._catalog_now()
    names = sorted(n for n in catalog.index().profile_names() if not _disabled_by(pb, layer.data, n))
    errors = [
        f"{where}: {key}: unknown profile {value!r}{_suggest(str(value), names) or '.'}{profile_hint(str(value))}"
        f" Valid profiles: {', '.join(names)}."
        for key, value in _profile_fields(layer.data)
        if isinstance(value, str) and value.strip() and value.strip().casefold() not in {n.casefold() for n in names}
    ]
    warnings = [f"{where}: {w}" for w in policy_problems(catalog, model)[1]] if model is not None else []
    return errors, warnings


def _without_bad_values(layer: Any) -> Any:
    """The layer with every value that fails validation left out, or ``None`` when it still
    fails: a type error in one key then does not hide what the rest of the file says."""
    import copy
    import dataclasses

    from pydantic import ValidationError

    from pegboard.core.config import PegboardConfig

    data = copy.deepcopy(dict(layer.data))
    for _ in range(8):
        try:
            PegboardConfig.model_validate(data)
        except ValidationError as exc:
            removed = [_drop(data, err["loc"]) for err in exc.errors()]
            if not any(removed):
                return None
            continue
        return dataclasses.replace(layer, data=data)
    return None


def _drop(data: Any, loc: tuple[Any, ...]) -> bool:
    """Remove the value at ``loc`` (pydantic's error location; its validator steps such as
    ``function-after[...]`` are not keys) from nested ``data``; the deepest key found goes."""
    path = [p for p in loc if not str(p).startswith(("function-", "literal[", "union["))]
    parent: Any = None
    key: Any = None
    node = data
    for part in path:
        in_dict = isinstance(node, dict) and part in node
        if not (in_dict or (isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node))):
            break
        parent, key, node = node, part, node[part]
    if parent is None:
        return False
    del parent[key]
    return True


def validate_file(file: Path) -> tuple[list[str], list[str]]:
    """``(errors, warnings)`` for one config file, all in one pass: a file with type errors
    still gets the warnings of everything else in it (read with the bad values left out)."""
    from pegboard.core.config import ConfigError, unknown_key_warnings, validate_layer

    try:
        layer = _layer_of(file.resolve())
    except ConfigError as exc:
        return str(exc).splitlines(), []
    where = str(file)
    errors: list[str] = []
    warnings = unknown_key_warnings(layer)
    checked: Any = layer
    model: Any = None
    try:
        model, _ = validate_layer(layer)
    except ConfigError as exc:
        errors += str(exc).splitlines()
        checked = _without_bad_values(layer)
        model = None if checked is None else checked.model
    from pegboard.core.app import Pegboard

    pb = Pegboard(layers=[])
    warnings += [f"{w}; what it registers is not checked" for w in pb.warnings if "failed to load" in w]
    section_errors, warnings = _section_problems(pb, layer, warnings)
    errors += section_errors
    more_errors, more_warnings = _policy_problems(pb, layer, model, where)
    errors += more_errors
    warnings += more_warnings
    if checked is not None:
        warnings += _rule_diagnostics(checked, pb)
    return errors, warnings


@command.command("validate")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--strict", is_flag=True, help="Fail (exit 1) on warnings too.")
@json_option
def validate(file: Path, strict: bool, as_json: bool) -> None:
    """Check one config file against the installed plugins.

    Errors (exit 1): parse errors, wrong types, unknown profiles, unknown hook events and
    handler types. Warnings (exit 0 unless --strict): unknown keys, entries that name no
    installed tool, hook events Pegboard never fires, rules that take no specifier. Each
    unknown name comes with the nearest known one.
    """
    errors, warnings = validate_file(file)
    failed = bool(errors) or (strict and bool(warnings))
    if as_json:
        emit_json({"valid": not errors, "errors": errors, "warnings": warnings})
    else:
        for error in errors:
            click.echo(f"error: {error}", err=True)
        for warning in warnings:
            click.echo(f"warning: {warning}", err=True)
        verdict = "valid" if not errors else f"invalid ({len(errors)} error{'s' if len(errors) != 1 else ''})"
        if not errors and warnings:
            verdict += f", {len(warnings)} warning{'s' if len(warnings) != 1 else ''}"
            verdict += " (failing: --strict)" if strict else ""
        click.echo(f"{file}: {verdict}")
    if failed:
        sys.exit(1)
