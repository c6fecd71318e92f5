"""Config validation for the policy keys: wrong shapes are errors naming the key and the valid form."""

from __future__ import annotations

import pytest

from pegboard.core.config import ConfigError, ConfigLayer, validate_layer


def error_for(data: dict) -> str:
    with pytest.raises(ConfigError) as info:
        validate_layer(ConfigLayer("project", data))
    return str(info.value)


def test_by_provider_value_must_be_an_object() -> None:
    text = error_for({"tools": {"byProvider": {"openai": ["exec"]}}})
    assert "tools.byProvider" in text and "byProvider.openai is array" in text
    assert "{profile, allow, alsoAllow, deny}" in text


def test_by_provider_itself_must_be_an_object() -> None:
    text = error_for({"tools": {"byProvider": "openai"}})
    assert "tools.byProvider" in text and "'provider/model'" in text


def test_agent_by_provider_is_checked_too() -> None:
    text = error_for({"agents": {"list": [{"id": "a", "tools": {"byProvider": {"x": 1}}}]}})
    assert "byProvider" in text and "byProvider.x is integer" in text


def test_subagent_lists_take_a_list_or_a_string() -> None:
    text = error_for({"subagents": {"s": {"disallowedTools": ["Read", 3]}}})
    assert "subagents.s.disallowedTools" in text and "comma-separated string" in text
    model, warnings = validate_layer(ConfigLayer("project", {"subagents": {"s": {"tools": "Read, Grep"}}}))
    assert model.subagents["s"].tools == "Read, Grep" and warnings == []


def test_unknown_keys_from_other_products_load_with_a_warning() -> None:
    data = {"tools": {"elevated": {"enabled": True}, "byProvider": {"openai": {"allowed": ["x"]}}},
            "agents": {"list": [{"id": "main", "workspace": "~/w"}]}}
    _, warnings = validate_layer(ConfigLayer("project", data))
    assert any("tools.elevated" in w for w in warnings)
    assert any("tools.byProvider.openai.allowed" in w for w in warnings)
