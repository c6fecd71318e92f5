"""The stdio server's line codec: lines are written by orjson, with the standard encoder for
what orjson refuses, and read by the standard decoder.

Whatever the server read before it still reads (``NaN``, integers past 64 bits, lone
surrogate escapes), a line that is not JSON gets the standard decoder's message, and what it
writes decodes to the same value the standard encoder's line decodes to (``NaN`` and the
infinities, which strict JSON readers refuse, are written as ``null``).
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pegboard_mcp_server.stdio import _ENCODER, _dumps, _loads

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def _standard(value: Any) -> bytes:
    return _ENCODER.encode(value).encode("utf-8", "surrogatepass") + b"\n"


@given(JSON_VALUES)
def test_a_written_line_reads_back_as_the_standard_encoders_line_does(value: Any) -> None:
    try:
        expected = json.loads(_standard(value).decode("utf-8"))
    except UnicodeDecodeError:  # a lone surrogate: the standard path refuses it too
        return
    line = _dumps({"v": value})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line)["v"] == expected


@given(JSON_VALUES)
def test_a_read_line_is_what_the_standard_decoder_reads(value: Any) -> None:
    line = json.dumps(value).encode()
    assert _loads(line) == json.loads(line)


def test_what_orjson_refuses_is_read_and_written_as_before() -> None:
    big = 2**70
    assert _loads(b'{"id": %d}' % big) == {"id": big}
    for edge in (-(2**63) - 1, 2**64, -(2**63), 2**64 - 1):
        assert _loads(b'{"id": %d}' % edge) == {"id": edge}
        assert json.loads(_dumps({"id": edge})) == {"id": edge}
    assert math.isnan(_loads(b'{"x": NaN}')["x"])
    assert _loads(b'"\\ud800"') == "\ud800"
    assert json.loads(_dumps({"id": big})) == {"id": big}
    assert json.loads(_dumps({"k": {1: "a"}})) == {"k": {"1": "a"}}


def test_non_finite_numbers_are_written_as_null_which_every_client_reads() -> None:
    line = _dumps({"a": math.inf, "b": -math.inf, "c": math.nan})
    assert json.loads(line, parse_constant=lambda name: pytest.fail(f"{name} written")) == {
        "a": None, "b": None, "c": None,
    }


def test_values_json_cannot_hold_are_written_as_their_text() -> None:
    class Odd:
        def __str__(self) -> str:
            return "odd"

    assert json.loads(_dumps({"x": Odd(), "s": {1, 2} and "set"})) == {"x": "odd", "s": "set"}


def test_a_line_that_is_not_json_gets_the_standard_decoders_error() -> None:
    for bad in (b"{", b"nope", b'{"a": }'):
        try:
            _loads(bad)
        except json.JSONDecodeError as exc:
            try:
                json.loads(bad)
            except json.JSONDecodeError as standard:
                assert str(exc) == str(standard)
        else:
            raise AssertionError(f"{bad!r} was read")
