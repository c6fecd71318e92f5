"""The ``pegboard`` command line: a click group whose commands load lazily.

``pegboard --help`` imports no command module and no plugin. Built-in commands live one per
module in this package; plugins add commands through the ``register_commands`` hook, which
runs only when a name that is not built in is asked for.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from pegboard.core.install_hints import command_hint

BUILTIN_COMMANDS: dict[str, tuple[str, str]] = {
    "call": ("pegboard.core.cli.call", "Run a tool call through the whole pipeline."),
    "check": ("pegboard.core.cli.check", "May this call run? allow / ask / deny and the rule that decided."),
    "config": ("pegboard.core.cli.config", "Show the merged config or validate a config file."),
    "groups": ("pegboard.core.cli.groups", "List tool groups and their members."),
    "plugins": ("pegboard.core.cli.plugins", "List plugins: distribution, version, status, error."),
    "profiles": ("pegboard.core.cli.profiles", "List tool profiles."),
    "prompt": ("pegboard.core.cli.prompt", "Print the tool list for a system prompt."),
    "schema": ("pegboard.core.cli.schema", "Print tool definitions in a provider's format."),
    "sessions": ("pegboard.core.cli.sessions", "List, show, remove and prune stored sessions."),
    "tools": ("pegboard.core.cli.tools", "Which tools an agent sees, and why."),
    "trust": ("pegboard.core.cli.trust", "Let a project's config run commands (hooks, MCP servers)."),
}


def _command_entry_points() -> dict[str, Any]:
    """Commands declared in entry-point group ``pegboard.commands`` (metadata only, no import)."""
    from pegboard.core.entrypoints import entry_points
    from pegboard.core.selection import PluginSelection

    selection = PluginSelection.from_settings()
    found: dict[str, Any] = {}
    for ep in entry_points("pegboard.commands"):
        if (
            ep.name not in BUILTIN_COMMANDS
            and ep.name not in found
            and not selection.blocked_reason(ep.dist_name, ep.name)
        ):
            found[ep.name] = ep
    return found


def _json_usage_error(exc: click.UsageError, args: list[str]) -> None:
    """With ``--json`` on the command line, a usage error is also a JSON object on stdout."""
    if "--json" in args and not getattr(exc, "json_shown", False):
        from pegboard.core.cli.common import json_error

        json_error(exc.format_message(), exc.exit_code)
        exc.json_shown = True  # type: ignore[attr-defined]


class LazyGroup(click.Group):
    """Imports a command's module only when that command runs.

    Plugin commands come from entry-point group ``pegboard.commands`` (name = the command,
    value = ``module:click_command``; only that module is imported) or, as a fallback, from
    the ``register_commands`` hook, which imports every plugin.
    """

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        given = list(args)  # parsing consumes ``args``
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as exc:
            if parent is None and isinstance(exc, click.NoSuchOption) and exc.option_name == "--json":
                where = "--json is an option of each command: put it after the command (pegboard tools --json)."
                moved = click.UsageError(where, exc.ctx)
                _json_usage_error(moved, given)
                raise moved from None
            _json_usage_error(exc, given)
            raise

    def invoke(self, ctx: click.Context) -> Any:
        args = [*getattr(ctx, "_protected_args", ()), *ctx.args]  # click 8.2 deprecates protected_args
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            _json_usage_error(exc, args)
            raise

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*BUILTIN_COMMANDS, *_command_entry_points(), *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        if cmd_name in BUILTIN_COMMANDS:
            module = importlib.import_module(BUILTIN_COMMANDS[cmd_name][0])
            command: click.Command = module.command
            return command
        declared = _command_entry_points().get(cmd_name)
        if declared is not None:
            try:
                loaded = declared.load()
            except Exception as exc:
                click.echo(f"warning: command {cmd_name!r} from {declared.value} cannot load: {exc}", err=True)
            else:
                if isinstance(loaded, click.Command):
                    self.add_command(loaded, cmd_name)
                    return loaded
        self._load_plugin_commands()
        found = self.commands.get(cmd_name)
        if found is None and (hint := command_hint(cmd_name)) is not None:
            ctx.fail(hint)
        return found

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, BUILTIN_COMMANDS[name][1]) for name in sorted(BUILTIN_COMMANDS)]
        rows += [
            (name, f"(from {ep.dist_name})")
            for name, ep in sorted(_command_entry_points().items())
            if name not in self.commands
        ]
        rows += [(name, cmd.get_short_help_str()) for name, cmd in sorted(self.commands.items())]
        with formatter.section("Commands"):
            formatter.write_dl(rows)
        formatter.write_paragraph()
        formatter.write_text("Plugins may add commands; `pegboard plugins` lists what is installed.")

    def _load_plugin_commands(self) -> None:
        if getattr(self, "_plugins_loaded", False):
            return
        self._plugins_loaded = True
        from pegboard.core.plugins import PluginLoader, PluginSelection, new_plugin_manager
        from pegboard.core.registry import Registry

        pm = new_plugin_manager()
        loader = PluginLoader(pm, Registry(), PluginSelection.from_settings())
        loader.load_entry_points()
        loader.materialize_hook("register_commands")
        for impl in pm.hook.register_commands.get_hookimpls():
            try:
                impl.function(**({"cli": self} if "cli" in impl.argnames else {}))
            except Exception as exc:
                click.echo(f"warning: plugin {impl.plugin_name} failed to add commands: {exc}", err=True)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="pegboard", prog_name="pegboard")
def cli() -> None:
    """Pegboard: the tool layer for AI agents.

    Which tools an agent sees, their definitions in each provider's format, and running a
    call after policy, permission rules and hooks have had their say.
    """


def main(argv: list[str] | None = None) -> Any:
    """Entry point: every error becomes a message and a non-zero exit, never a traceback."""
    # The CLI loads no pydantic plugins; scanning every installed distribution for them
    # would cost more than the rest of start-up.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    try:
        return cli.main(args=argv, prog_name="pegboard", standalone_mode=True)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except SystemExit:
        raise
    except Exception as exc:
        click.echo(f"error: {type(exc).__name__}: {exc}", err=True)
        sys.exit(1)
