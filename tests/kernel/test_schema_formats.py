"""Rendered tool definitions are what the official SDKs accept."""

from __future__ import annotations

import typing
from typing import Any

import pytest
from pydantic import BaseModel, Field, TypeAdapter

from pegboard import ToolContext, tool
from pegboard.core.render import FORMATTERS
from pegboard.testing import isolated_pegboard
from tests.kernel.toolkit import ToolsPlugin, echo, picture


class Address(BaseModel):
    street: str
    zip: str | None = None


class RichInput(BaseModel):
    name: str = Field(description="Who.")
    tags: list[str] = Field(default_factory=list)
    mode: typing.Literal["fast", "slow"] = "fast"
    address: Address | None = None


@tool(name="Rich", read_only=True, open_world=True, title="Rich tool")
async def rich(input: RichInput, ctx: ToolContext) -> str:
    """A tool with nested and optional fields, to exercise schema rendering."""
    return input.name


def rendered(fmt: str) -> list[dict[str, Any]]:
    return isolated_pegboard(ToolsPlugin(echo, picture, rich)).schema(fmt)


def typed_dict_check(kind: Any, value: dict[str, Any]) -> None:
    TypeAdapter(kind).validate_python(value)
    extra = set(value) - set(typing.get_type_hints(kind))
    assert not extra, f"keys the SDK does not know: {extra}"


def test_every_format_renders_every_tool() -> None:
    for fmt in FORMATTERS:
        assert {d.get("name") or d["function"]["name"] for d in rendered(fmt)} == {"Echo", "Picture", "Rich"}


def test_anthropic_shape() -> None:
    from anthropic.types import ToolParam

    for definition in rendered("anthropic"):
        typed_dict_check(ToolParam, definition)
        assert definition["input_schema"]["type"] == "object"


def test_openai_chat_shape() -> None:
    from openai.types.chat import ChatCompletionToolParam
    from openai.types.shared_params import FunctionDefinition

    for definition in rendered("openai"):
        typed_dict_check(ChatCompletionToolParam, definition)
        typed_dict_check(FunctionDefinition, definition["function"])


def test_openai_responses_shape() -> None:
    from openai.types.responses import FunctionToolParam

    for definition in rendered("openai-responses"):
        typed_dict_check(FunctionToolParam, definition)


def test_mcp_shape_and_annotations() -> None:
    import mcp.types

    tools = {d["name"]: mcp.types.Tool.model_validate(d) for d in rendered("mcp")}
    annotations = tools["Rich"].annotations
    assert annotations is not None
    assert annotations.read_only_hint is True and annotations.open_world_hint is True
    assert tools["Rich"].title == "Rich tool"


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown schema format 'cobol'"):
        rendered("cobol")
