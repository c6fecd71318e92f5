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

__all__ = ["SessionStoreContract", "ToolConformanceError", "check_tool", "isolated_pegboard", "pegboard_factory"]


class ToolConformanceError(AssertionError):
    """A tool that does not meet Pegboard's conformance rules; the message lists each problem."""


def isolated_pegboard(
    *plugins: object,
    config: Mapping[str, Any] | None = None,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    store: Any = None,
) -> Pegboard:
    """A ``Pegboard`` with exactly ``plugins``: no entry points, no config files but ``config``.

    Sessions live in memory (``MemorySessionStore``) unless ``store`` names another store.
    """
    from pegboard.core.store import MemorySessionStore

    root = Path(cwd) if cwd is not None else Path.cwd()
    layers = [ConfigLayer("project", dict(config or {}), path=None, root=root)]
    return Pegboard(
        plugins=list(plugins),
        load_entrypoints=False,
        layers=layers,
        cwd=root,
        env=env or {},
        store=store if store is not None else MemorySessionStore(),
    )


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


class SessionStoreContract:
    """The behaviour every ``SessionStore`` must have; subclass it in your tests::

        class TestMyStore(SessionStoreContract):
            def make_store(self, tmp_path):
                return MyStore(tmp_path / "db")

    ``make_store(tmp_path)`` may be called twice with the same path: the second store must
    see what the first committed (skip that test with ``shared_between_instances = False``).
    """

    shared_between_instances = True

    def make_store(self, tmp_path: Path) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError

    def test_create_load_save_delete(self, tmp_path: Path) -> None:
        from pegboard.core.store import SessionRecord

        store = self.make_store(tmp_path)
        made = store.create(SessionRecord(id="s1", owner="me", cwd="/w", mode="plan"))
        assert made.created > 0 and store.load("s1") == made
        assert store.create(SessionRecord(id="s1", owner="other")).owner == "me"
        store.save(SessionRecord(id="s1", owner="me", cwd="/x", created=made.created))
        loaded = store.load("s1")
        assert loaded is not None and loaded.cwd == "/x" and loaded.updated >= made.updated
        assert [r.id for r in store.sessions()] == ["s1"]
        assert store.delete("s1") and store.load("s1") is None and not store.delete("s1")

    def test_slots_and_entries(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        assert store.get("s", "a") is None
        store.put("s", "a", '{"x":1}')
        store.put("s", "m", '"one"', "k1")
        store.put("s", "m", '"two"', "k2")
        assert store.get("s", "a") == '{"x":1}'
        assert store.entries("s", "m") == {"k1": '"one"', "k2": '"two"'}
        assert store.update("s", "m", lambda raw: (raw or "") + "!", "k1") == '"one"!'
        store.put("s", "m", None, "k2")
        assert store.entries("s", "m") == {"k1": '"one"!'}
        assert sorted(store.slot_names("s")) == ["a", "m"]
        store.clear_slot("s", "m")
        assert store.entries("s", "m") == {} and store.get("t", "a") is None

    def test_results_quota_drops_oldest(self, tmp_path: Path) -> None:
        from pegboard.core.store import StoredResult

        store = self.make_store(tmp_path)
        for i in range(5):
            store.put_result("s", StoredResult(ref=f"tr_{i}", tool="T", text="x" * 100), quota=350)
        kept = [r.ref for r in store.results("s")]
        assert kept == ["tr_2", "tr_3", "tr_4"]
        got = store.get_result("s", "tr_4")
        assert got is not None and got.text == "x" * 100 and got.tool == "T"
        assert store.get_result("other", "tr_4") is None
        found = store.find_result("tr_4")
        assert found is not None and found[0] == "s"

    def test_a_second_instance_sees_committed_state(self, tmp_path: Path) -> None:
        if not self.shared_between_instances:
            import pytest

            pytest.skip("this store is not shared between instances")
        from pegboard.core.store import SessionRecord

        first = self.make_store(tmp_path)
        first.create(SessionRecord(id="s2"))
        first.put("s2", "slot", "1")
        second = self.make_store(tmp_path)
        assert second.load("s2") is not None and second.get("s2", "slot") == "1"

    def test_update_is_atomic_across_threads(self, tmp_path: Path) -> None:
        import threading

        store = self.make_store(tmp_path)

        def bump(raw: str | None) -> str:
            return str(int(raw or "0") + 1)

        def work() -> None:
            for _ in range(50):
                store.update("s", "n", bump)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert store.get("s", "n") == "200"
