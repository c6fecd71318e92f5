"""Helpers for testing Pegboard plugins: an isolated ``Pegboard`` and a tool conformance check.

Use them from a plugin's own test suite::

    from pegboard.testing import check_tool, isolated_pegboard

    def test_echo_conforms():
        check_tool(echo)

    async def test_echo_runs(tmp_path):
        pb = isolated_pegboard(my_plugin, cwd=tmp_path)
        result = await pb.call("Echo", {"text": "hi"})
        assert result.text == "hi"

With pytest, the ``pegboard_factory`` fixture (registered by this module as a pytest plugin
via ``pytest_plugins = ["pegboard.testing"]``) builds the same thing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pegboard.core.app import Pegboard
from pegboard.core.config import ConfigLayer
from pegboard.core.tools import TOOL_NAME_PATTERN, Tool

__all__ = ["ToolConformanceError", "check_tool", "isolated_pegboard", "pegboard_factory"]


class ToolConformanceError(AssertionError):
    """A tool that does not meet Pegboard's conformance rules; the message lists each problem."""


def isolated_pegboard(
    *plugins: object,
    config: Mapping[str, Any] | None = None,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
) -> Pegboard:
    """A ``Pegboard`` with exactly ``plugins``: no entry points, no config files but ``config``."""
    root = Path(cwd) if cwd is not None else Path.cwd()
    layers = [ConfigLayer("project", dict(config or {}), path=None, root=root)]
    return Pegboard(plugins=list(plugins), load_entrypoints=False, layers=layers, cwd=root, env=env or {})


def check_tool(tool: Tool, example: Mapping[str, Any] | None = None) -> None:
    """Assert that ``tool`` is fit to register: valid name, a description, a JSON-serialisable
    object schema every provider accepts, and an input model that round-trips ``example``."""
    problems: list[str] = []
    if not isinstance(tool, Tool):
        raise ToolConformanceError(f"expected a pegboard.Tool, got {type(tool).__name__}")
    if not TOOL_NAME_PATTERN.match(tool.name):
        problems.append(f"name {tool.name!r} does not match {TOOL_NAME_PATTERN.pattern}")
    if len(tool.description.strip()) < 10:
        problems.append("description is shorter than 10 characters; tell the model what the tool does")
    try:
        schema = tool.input_schema()
        json.dumps(schema)
    except Exception as exc:
        problems.append(f"input schema cannot be generated as JSON: {exc}")
        schema = {}
    if schema and schema.get("type", "object") != "object":
        problems.append(f"input schema must describe an object, got type {schema.get('type')!r}")
    try:
        from jsonschema import Draft202012Validator

        Draft202012Validator.check_schema(schema)
        validator: Callable[[Any], Any] | None = Draft202012Validator(schema).validate
    except ImportError:
        validator = None
    except Exception as exc:
        problems.append(f"input schema is not valid JSON Schema: {exc}")
        validator = None
    if example is not None:
        try:
            model = tool.input_model.model_validate(dict(example))
            dumped = model.model_dump(mode="json", exclude_unset=True)
            again = tool.input_model.model_validate(dumped).model_dump(mode="json", exclude_unset=True)
            if dumped != again:
                problems.append(f"input does not round-trip: {dumped} became {again}")
            if validator is not None:
                validator(dumped)
        except Exception as exc:
            problems.append(f"example input {dict(example)} is rejected: {exc}")
    if problems:
        raise ToolConformanceError(f"tool {tool.name!r}:\n- " + "\n- ".join(problems))


try:
    import pytest
except ImportError:  # pragma: no cover - pytest is only needed for the fixture
    pass
else:

    @pytest.fixture
    def pegboard_factory(tmp_path: Path) -> Callable[..., Pegboard]:
        """Build isolated ``Pegboard`` instances rooted in the test's ``tmp_path``."""

        def factory(*plugins: object, config: Mapping[str, Any] | None = None, **kw: Any) -> Pegboard:
            return isolated_pegboard(*plugins, config=config, cwd=kw.pop("cwd", tmp_path), **kw)

        return factory
