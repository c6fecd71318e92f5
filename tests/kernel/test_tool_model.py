"""The Tool model, the @tool decorator and the conformance helper."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from pegboard import Profile, Tool, ToolContext, ToolDefinitionError, tool
from pegboard.core.tools import TOOL_NAME_PATTERN, name_key
from pegboard.testing import ToolConformanceError, check_tool
from tests.kernel.toolkit import EchoInput, echo


async def _run(input: EchoInput, ctx: ToolContext) -> str:
    return input.text


def test_decorator_reads_model_and_docstring() -> None:
    assert echo.name == "Echo"
    assert echo.input_model is EchoInput
    assert echo.description.startswith("Repeat the given text")
    assert echo.groups == ("demo",)
    assert echo.aliases == ("say",)
    check_tool(echo, {"text": "hi", "times": 2})


@pytest.mark.parametrize("name", ["", "has space", "x" * 65, "dot.name", "ümlaut", "a/b"])
def test_invalid_names_are_refused(name: str) -> None:
    with pytest.raises(ToolDefinitionError, match="invalid tool name"):
        Tool(name, "does things", EchoInput, _run)


def test_alias_must_be_valid_too() -> None:
    with pytest.raises(ToolDefinitionError, match="alias of T"):
        Tool("T", "does things", EchoInput, _run, aliases=["bad alias"])


def test_missing_description_and_bad_model_are_refused() -> None:
    with pytest.raises(ToolDefinitionError, match="description"):
        Tool("T", "  ", EchoInput, _run)
    with pytest.raises(ToolDefinitionError, match="input_model"):
        Tool("T", "does things", dict, _run)  # type: ignore[arg-type]


def test_decorator_needs_async_function() -> None:
    with pytest.raises(ToolDefinitionError, match="async"):

        @tool(name="Sync")  # type: ignore[arg-type]
        def sync(input: EchoInput, ctx: ToolContext) -> str:
            return ""


@given(st.text(alphabet="ABCdef_-019", min_size=1, max_size=64))
def test_name_key_ignores_case_and_separators(name: str) -> None:
    assert TOOL_NAME_PATTERN.match(name)
    assert name_key(name) == name_key(name.upper().replace("_", "-"))
    assert "_" not in name_key(name) and "-" not in name_key(name)


def test_availability_check_that_raises_counts_as_unavailable() -> None:
    def broken() -> str | None:
        raise OSError("no such binary")

    t = Tool("T", "does things", EchoInput, _run, availability=broken)
    assert "no such binary" in (t.unavailable_reason() or "")


def test_check_tool_reports_each_problem() -> None:
    class Weird(BaseModel):
        n: int

    t = Tool("Short", "tiny", Weird, _run)
    with pytest.raises(ToolConformanceError) as info:
        check_tool(t, {"n": "not a number"})
    message = str(info.value)
    assert "description is shorter" in message
    assert "example input" in message


def test_profile_none_means_unrestricted() -> None:
    assert Profile("full").allow is None
    assert Profile("mini", allow=["Read"]).allow == ("Read",)


def test_docstrings_become_unwrapped_descriptions() -> None:
    from pegboard.core.tools import unwrap_docstring

    doc = "Read a file, returning\nits lines.\n\nNotes:\n- one\n- two\n  indented\n1. first\nend"
    assert (
        unwrap_docstring(doc) == "Read a file, returning its lines.\n\nNotes:\n- one\n- two\n  indented\n1. first end"
    )
