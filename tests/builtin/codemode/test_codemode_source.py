"""The import check and the declarations generator: properties over generated input."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pegboard_codemode_declarations import declarations, ts_type, type_name
from pegboard_codemode_source import find_import

WORDS = st.text(alphabet=st.characters(blacklist_characters="\\'\"`\n\r\u2028\u2029$"), max_size=40)


@given(WORDS)
def test_import_inside_strings_and_comments_is_text(text: str) -> None:
    for program in (f"const s = 'import {text}';", f'const s = "import(\'{text}\')";', f"// import {text}\nreturn 1;",
                    f"/* import {text} */ return 1;", f"const t = `import {text}`;"):
        if "*/" in text:
            continue
        assert find_import(program) is None, program


@given(st.sampled_from(["import 'x';", "import x from 'y';", "await import('/etc/x')", "import.meta",
                        "const t = `${await import('/x')}`;", "f(/\"/); import('/x'); g(/\"/);",
                        "a = b / 2; import('/x'); c = d / 3;"]), WORDS)
def test_import_in_code_is_found(snippet: str, text: str) -> None:
    assert find_import(f"const s = {json.dumps(text)};\n{snippet}") is not None


def test_names_that_contain_import_are_not_the_keyword() -> None:
    assert find_import("const importer = 1; obj.imports = 2; return importer;") is None


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@given(JSON)
def test_any_schema_gives_a_type(schema: Any) -> None:
    assert isinstance(ts_type(schema, {}), str)


@given(st.dictionaries(st.text(min_size=1, max_size=10), JSON, max_size=5))
def test_any_object_schema_gives_declarations(properties: dict[str, Any]) -> None:
    text = declarations([("Some-tool", "desc */ with a close", {"type": "object", "properties": properties})])
    assert f"type {type_name('Some-tool')} = " in text
    assert "desc *\\/ with a close" in text


def test_schema_types() -> None:
    schema = {"type": "object", "required": ["a"], "properties": {
        "a": {"type": "string", "description": "the a"},
        "b": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "c": {"enum": ["x", "y"]},
        "d": {"type": "array", "items": {"$ref": "#/$defs/D"}},
        "e-f": {"type": "object", "additionalProperties": {"type": "boolean"}},
    }, "$defs": {"D": {"type": "object", "properties": {"z": {"const": 3}}}}}
    text = ts_type(schema, schema["$defs"])
    assert "/** the a */" in text and "a: string;" in text
    assert "b?: number | null;" in text
    assert 'c?: "x" | "y";' in text
    assert "d?: Array<{" in text and "z?: 3;" in text
    assert '"e-f"?: Record<string, boolean>;' in text
