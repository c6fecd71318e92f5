"""``pegboard config show`` and ``pegboard config validate``."""

from __future__ import annotations

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


def _rule_diagnostics(layer: Any) -> list[str]:
    """Permission rules that are malformed or take no specifier, with file and position."""
    if not layer.data.get("permissions"):
        return []
    from pegboard.core.permissions import PermissionEngine

    return list(PermissionEngine([layer], cwd=layer.root or Path.cwd()).diagnostics)


@command.command("validate")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@json_option
def validate(file: Path, as_json: bool) -> None:
    """Check one config file: parse errors and wrong types fail; unknown keys warn."""
    from pegboard.core.config import ConfigError, ConfigLayer, read_config_file, validate_layer

    try:
        layer = ConfigLayer("cli", read_config_file(file), file, file.parent)
        _model, warnings = validate_layer(layer)
        warnings += _rule_diagnostics(layer)
    except ConfigError as exc:
        if as_json:
            emit_json({"valid": False, "errors": str(exc).splitlines(), "warnings": []})
            sys.exit(1)
        fail(str(exc))
    if as_json:
        emit_json({"valid": True, "errors": [], "warnings": warnings})
        return
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(f"{file}: valid")
