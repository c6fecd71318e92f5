"""Every field a rendered schema declares nullable accepts ``null``, and ``null`` means the default.

A strict model (OpenAI strict function calling) sends every field, with ``null`` for the ones
it leaves out. Each installed tool is rendered for every format and provider, called with
``null`` in every nullable field, and must validate exactly as if those fields were omitted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from pegboard import Pegboard, Tool, ToolContext
from pegboard.core.pipeline import CallRefused, validate_input
from pegboard.core.render import FORMATTERS, render_tools

_OMITTED = object()


def parameters(definition: dict[str, Any], fmt: str) -> dict[str, Any]:
    if fmt == "anthropic":
        return definition["input_schema"]
    if fmt == "mcp":
        return definition["inputSchema"]
    if fmt == "openai":
        return definition["function"]["parameters"]
    return definition["parameters"]


def resolve(node: Any, root: dict[str, Any]) -> Any:
    seen: set[str] = set()
    while isinstance(node, dict) and isinstance(ref := node.get("$ref"), str) and ref not in seen:
        seen.add(ref)
        table, _, name = ref.removeprefix("#/").partition("/")
        node = root.get(table, {}).get(name, {})
    return node


def nullable(node: Any, root: dict[str, Any]) -> bool:
    node = resolve(node, root)
    if not isinstance(node, dict):
        return False
    types = node.get("type")
    return (
        types == "null"
        or (isinstance(types, list) and "null" in types)
        or node.get("nullable") is True
        or any(nullable(v, root) for v in node.get("anyOf", []) + node.get("oneOf", []))
    )


def sample(node: Any, root: dict[str, Any], depth: int = 0) -> Any:
    """A value for ``node`` with ``null`` in every nullable field below it (``_OMITTED`` when
    the schema says too little to build one)."""
    node = resolve(node, root)
    if not isinstance(node, dict) or depth > 6:
        return _OMITTED
    for key in ("examples", "enum"):
        values = [v for v in node.get(key, []) if v is not None]
        if values:
            return values[0]
    if "const" in node:
        return node["const"]
    variants = [v for v in node.get("anyOf", []) + node.get("oneOf", []) if resolve(v, root).get("type") != "null"]
    if variants:
        return sample(variants[0], root, depth + 1)
    types = node.get("type")
    kind = next((t for t in types if t != "null"), None) if isinstance(types, list) else types
    if kind == "object" or "properties" in node:
        required = set(node.get("required", []))
        out: dict[str, Any] = {}
        for name, sub in node.get("properties", {}).items():
            if nullable(sub, root):
                out[name] = None
            elif name in required and (value := sample(sub, root, depth + 1)) is not _OMITTED:
                out[name] = value
        return out
    if kind == "array":
        item = sample(node.get("items", {}), root, depth + 1)
        return [] if item is _OMITTED else [item]
    return {"string": "x", "integer": 1, "number": 1, "boolean": False}.get(kind or "", _OMITTED)


def without_nulls(value: Any, pattern: Any) -> Any:
    """``value`` with every key ``pattern`` holds ``null`` for removed, at every depth."""
    if isinstance(value, dict) and isinstance(pattern, dict):
        return {k: without_nulls(v, pattern.get(k)) for k, v in value.items() if not (v is None and k in pattern)}
    if isinstance(value, list) and isinstance(pattern, list):
        return [without_nulls(v, p) for v, p in zip(value, pattern, strict=True)]
    return value


def outcome(tool: Tool, data: dict[str, Any]) -> str:
    try:
        return json.dumps(validate_input(tool, data).model_dump(mode="json"), sort_keys=True, default=str)
    except CallRefused as refused:
        return refused.result.text


def targets(pb: Pegboard) -> list[tuple[str, str | None]]:
    providers: list[str | None] = [None, *(policy.providers[0] for policy in pb.registry.provider_policies)]
    return [(fmt, provider) for fmt in FORMATTERS for provider in providers]


@pytest.fixture(scope="module")
def pb(tmp_path_factory: pytest.TempPathFactory) -> Pegboard:
    return Pegboard(cwd=tmp_path_factory.mktemp("cwd"))


def test_every_nullable_field_of_every_installed_tool_takes_null_as_the_default(pb: Pegboard) -> None:
    tools = list(pb.registry.sorted_tools())
    assert len(tools) > 30 and pb.registry.provider_policies
    checked = 0
    failures: list[str] = []
    for fmt, provider in targets(pb):
        # one tool at a time: each is rendered strict when it qualifies, whatever the rest of the set is
        for tool in tools:
            [definition] = render_tools([tool], fmt, pb.registry.provider_policies, provider=provider)
            schema = parameters(definition, fmt)
            data = sample(schema, schema)
            assert isinstance(data, dict)
            if data == without_nulls(data, data):
                continue
            checked += 1
            with_nulls, omitted = outcome(tool, data), outcome(tool, without_nulls(data, data))
            if with_nulls != omitted:
                failures.append(f"{tool.name} ({fmt}, {provider}): {with_nulls}\n  but omitted: {omitted}")
    assert not failures, "\n".join(failures)
    assert checked > 100


def test_the_whole_coding_set_renders_strict_for_openai_and_grep_takes_nulls(pb: Pegboard) -> None:
    for fmt in ("openai", "openai-responses"):
        rendered = pb.schema(fmt, profile="coding", provider="openai")
        grep = next(d for d in rendered if (d.get("function") or d)["name"] == "Grep")
        assert (grep.get("function") or grep)["strict"] is True
        params = parameters(grep, fmt)
        assert set(params["required"]) == set(params["properties"]) and nullable(params["properties"]["-i"], params)
        model = validate_input(pb.registry.tools["Grep"], sample(params, params))
        assert model.model_dump(by_alias=True)["-i"] is False and model.model_dump(by_alias=True)["-n"] is True


class Step(BaseModel):
    old: str
    replace_all: bool = False


class Batch(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    steps: list[Step] = Field(min_length=1)
    dry_run: bool = Field(default=False, alias="--dry-run")
    note: Step | None = None


async def _batch(input: Batch, ctx: ToolContext) -> str:
    return json.dumps(input.model_dump(by_alias=True))


def test_nested_nulls_mean_the_default_and_errors_name_the_wire_names() -> None:
    tool = Tool(name="Batch", description="Apply steps.", input_model=Batch, run=_batch)
    model = validate_input(tool, {"steps": [{"old": "a", "replace_all": None}], "--dry-run": None, "note": None})
    assert model.model_dump(by_alias=True) == {
        "steps": [{"old": "a", "replace_all": False}], "--dry-run": False, "note": None,
    }
    with pytest.raises(CallRefused) as refused:
        validate_input(tool, {"steps": [{"old": None}], "dry_run": "maybe"})
    text = refused.value.result.text
    assert "- steps.0.old: Input should be a valid string" in text
    assert "- --dry-run: Input should be a valid boolean" in text and "dry_run" not in text
    assert "Expected fields: steps, --dry-run?, note?" in text


def pegboard(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pegboard", *args], capture_output=True, text=True, cwd=cwd, env=dict(os.environ),
        timeout=60,
    )


def test_a_strict_model_s_grep_call_with_nulls_runs_from_the_command_line(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("Needle in a haystack\nneedle again\n")
    for fmt in ("openai", "openai-responses"):
        proc = pegboard("schema", "--format", fmt, "--profile", "coding", "--provider", "openai", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        grep = next(d for d in json.loads(proc.stdout) if (d.get("function") or d)["name"] == "Grep")
        params = parameters(grep, fmt)
        call = {name: None for name in params["properties"]} | {"pattern": "needle", "output_mode": "content",
                                                                 "-i": True}
        ran = pegboard("call", "Grep", "--profile", "coding", "--provider", "openai", "--input", json.dumps(call),
                       cwd=tmp_path)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert "1:Needle in a haystack" in ran.stdout and "2:needle again" in ran.stdout
    refused = pegboard("call", "Grep", "--input", json.dumps({"pattern": "x", "-A": "two"}), cwd=tmp_path)
    assert refused.returncode == 1
    assert "- -A: Input should be a valid integer" in refused.stdout + refused.stderr
