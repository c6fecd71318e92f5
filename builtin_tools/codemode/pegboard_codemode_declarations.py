"""TypeScript declarations for the tools a program can call, from their JSON schemas.

The program sees ``tools.<Name>(input): Promise<unknown>`` for every tool of the caller's set
and ``store`` for the session's branch-local storage. Deno does not type-check at run time;
the declarations tell the model the shapes, and the pipeline validates every call anyway.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

MAX_DEPTH = 8
_IDENTIFIER = re.compile(r"^[A-Za-z_$][\w$]*$")

STORE_DECLARATION = """\
/** Branch-local storage: JSON values kept in this session between programs (saved when a program ends). */
declare const store: {
  get(key: string): unknown;
  set(key: string, value: unknown): void;
  delete(key: string): boolean;
  keys(): string[];
};"""


def type_name(tool_name: str) -> str:
    """``mcp__db__query`` -> ``McpDbQueryInput``."""
    parts = [p for p in re.split(r"[^A-Za-z0-9]+", tool_name) if p]
    return "".join(p[:1].upper() + p[1:] for p in parts) + "Input"


def _key(name: str) -> str:
    return name if _IDENTIFIER.match(name) else json.dumps(name)


def _comment(text: str, indent: str) -> str:
    first = " ".join(text.split())
    if not first:
        return ""
    first = first.replace("*/", "*\\/")
    return f"{indent}/** {first} */\n"


def ts_type(schema: Any, defs: Mapping[str, Any], depth: int = 0, indent: str = "") -> str:
    """The TypeScript type of a JSON schema (``unknown`` where it says nothing or nests too deep)."""
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return "unknown"
    if "$ref" in schema:
        ref = str(schema["$ref"])
        target = defs.get(ref.rsplit("/", 1)[-1]) if ref.startswith("#/$defs/") else None
        return ts_type(target, defs, depth + 1, indent)
    if "const" in schema:
        return json.dumps(schema["const"])
    if "enum" in schema and isinstance(schema["enum"], list):
        return " | ".join(json.dumps(v) for v in schema["enum"]) or "never"
    for union in ("anyOf", "oneOf"):
        if isinstance(schema.get(union), list):
            members = [ts_type(s, defs, depth + 1, indent) for s in schema[union]]
            return " | ".join(dict.fromkeys(members)) or "unknown"
    if isinstance(schema.get("allOf"), list) and schema["allOf"]:
        return " & ".join(ts_type(s, defs, depth + 1, indent) for s in schema["allOf"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(ts_type({**schema, "type": k}, defs, depth, indent) for k in kind)
    if kind == "string":
        return "string"
    if kind in ("integer", "number"):
        return "number"
    if kind == "boolean":
        return "boolean"
    if kind == "null":
        return "null"
    if kind == "array":
        item = ts_type(schema.get("items"), defs, depth + 1, indent)
        return f"Array<{item}>"
    if kind == "object" or "properties" in schema:
        return _object(schema, defs, depth, indent)
    return "unknown"


def _object(schema: dict[str, Any], defs: Mapping[str, Any], depth: int, indent: str) -> str:
    properties = schema.get("properties")
    extra = schema.get("additionalProperties")
    if not isinstance(properties, dict) or not properties:
        value = ts_type(extra, defs, depth + 1, indent) if isinstance(extra, dict) else "unknown"
        return f"Record<string, {value}>"
    required = set(schema.get("required") or ())
    inner = indent + "  "
    lines = ["{"]
    for name, prop in properties.items():
        description = prop.get("description", "") if isinstance(prop, dict) else ""
        mark = "" if name in required else "?"
        lines.append(_comment(str(description), inner) + f"{inner}{_key(str(name))}{mark}: "
                     f"{ts_type(prop, defs, depth + 1, inner)};")
    lines.append(f"{indent}}}")
    return "\n".join(lines)


def declarations(tools: Sequence[tuple[str, str, dict[str, Any]]]) -> str:
    """Declarations for ``(name, description, input_schema)`` triples, then ``store``."""
    types: list[str] = []
    members: list[str] = []
    for name, description, schema in tools:
        defs = schema.get("$defs") or {}
        types.append(f"type {type_name(name)} = {ts_type(schema, defs)};")
        members.append(_comment(description.split("\n\n")[0], "  ")
                       + f"  {_key(name)}(input: {type_name(name)}): Promise<unknown>;")
    body = "\n".join(members)
    tools_block = f"declare const tools: {{\n{body}\n}};" if members else "declare const tools: {};"
    return "\n".join([*types, tools_block, STORE_DECLARATION]) + "\n"
