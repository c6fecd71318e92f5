"""Declarations: each plugin module's declaration file equals what its code registers, a
declared plugin is imported only when something needs its real objects, and a plugin without
a declaration loads at start-up as before."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import dev
from pegboard import Pegboard
from pegboard.core.declarations import FORMAT, declaration_path, declare, read_declaration, render

REPO = Path(__file__).resolve().parents[2]
MODULES = dev.declared_modules(REPO)


@pytest.mark.parametrize(("dist", "module"), MODULES, ids=[m for _d, m in MODULES])
def test_declaration_file_matches_what_the_module_registers(dist: Path, module: str) -> None:
    path = declaration_path(module)
    assert path is not None, f"{module} is not a module file or package on sys.path"
    where = os.path.relpath(path, REPO)
    assert Path(path).is_file(), f"{where} is missing; run python3 dev.py declarations"
    assert Path(path).read_text(encoding="utf-8") == render(declare(module)), (
        f"{where} differs from what {module} registers; run python3 dev.py declarations"
    )


def _imported_after(code: str, tmp_path: Path) -> set[str]:
    out = tmp_path / "modules.txt"
    script = textwrap.dedent(f"""
        import sys
        {code}
        open({str(out)!r}, "w").write("\\n".join(sorted(sys.modules)))
    """)
    env = {**os.environ, "PEGBOARD_NO_CACHE": "1", "PEGBOARD_CONFIG_DIR": str(tmp_path / "user"),
           "PEGBOARD_DATA_DIR": str(tmp_path / "data"), "PEGBOARD_CACHE_DIR": str(tmp_path / "cache")}
    subprocess.run([sys.executable, "-c", script], check=True, cwd=tmp_path, env=env, capture_output=True)
    return set(out.read_text().split())


#: declared modules that an eagerly loaded plugin imports anyway: Read's module is imported by
#: ``pegboard_result_images`` (a ``post_tool_use`` hook, so loaded at start-up)
IMPORTED_BY_EAGER = {"pegboard_read"}


def _call_time_hook_modules() -> list[str]:
    """Declared modules that implement a hook a tool call may run."""
    found = []
    for _dist, module in MODULES:
        declaration = read_declaration(module)
        if declaration is not None and declaration.lazy and declaration.call_time_hooks:
            found.append(module)
    return found


def _lazy_modules() -> dict[str, str]:
    """Module -> distribution folder for every plugin module whose declaration lets it load lazily."""
    found = {}
    for dist, module in MODULES:
        declaration = read_declaration(module)
        if declaration is not None and declaration.lazy and module not in IMPORTED_BY_EAGER:
            found[module] = dist.name
    return found


def test_listing_tools_imports_no_declared_plugin(tmp_path: Path) -> None:
    lazy = _lazy_modules()
    assert {"pegboard_edit", "pegboard_grep", "pegboard_write", "pegboard_profile_coding"} <= set(lazy)
    imported = _imported_after("from pegboard import Pegboard; Pegboard().tools()", tmp_path)
    # an availability check that asks who implements a hook (the image tool asks for a
    # ``complete`` implementation, the messaging tools for channels) imports those implementers
    assert imported & (set(lazy) - set(_call_time_hook_modules())) == set()


def test_the_tools_listed_from_declarations_are_those_the_code_registers() -> None:
    lazy_pb = Pegboard()
    listed = lazy_pb.tools()
    lazy_pb.registry.materialize_all()
    assert not lazy_pb.registry.declared
    eager = Pegboard()
    eager.registry.materialize_all()
    assert listed.to_json() == eager.tools().to_json()
    assert sorted(lazy_pb.registry.tools) == sorted(eager.registry.tools)
    assert {n: sorted(g.members) for n, g in lazy_pb.registry.groups.items()} == {
        n: sorted(g.members) for n, g in eager.registry.groups.items()
    }


def test_a_declared_tool_is_imported_when_called_or_rendered(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    called = _imported_after(
        "from pegboard import Pegboard\n"
        f"        Pegboard(cwd={str(tmp_path)!r}).call_sync('Grep', {{'pattern': 'one'}})",
        tmp_path,
    )
    assert "pegboard_grep" in called
    assert "pegboard_write" not in called and "pegboard_notebook_edit" not in called
    rendered = _imported_after("from pegboard import Pegboard; Pegboard().schema()", tmp_path)
    assert "pegboard_write" in rendered


def test_tool_set_version_does_not_change_when_a_declared_plugin_loads() -> None:
    pb = Pegboard()
    before = pb.tool_set_version
    assert "Write" in pb.registry.declared
    assert pb.tool("Write") is not None
    assert "Write" not in pb.registry.declared
    assert pb.tool_set_version == before


def _cli_imports(args: list[str], tmp_path: Path) -> set[str]:
    code = (
        "sys.argv = ['pegboard', *" + json.dumps(args) + "]\n"
        "        from pegboard.core.launch import main\n"
        "        try:\n"
        "            main()\n"
        "        except SystemExit:\n"
        "            pass"
    )
    return _imported_after(code, tmp_path)


@pytest.mark.parametrize("tool", ["Read", "Edit"])
def test_pegboard_call_imports_no_other_declared_tool(tool: str, tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("hi\n")
    tool_input = {"file_path": str(target)} if tool == "Read" else {
        "file_path": str(target), "old_string": "hi", "new_string": "ho"}
    imported = _cli_imports(["call", tool, "--input", json.dumps(tool_input)], tmp_path)
    own = "pegboard_read" if tool == "Read" else "pegboard_edit"
    # the permission engine's write-rule view reads Edit's input fields, so every call imports
    # Edit's module (see test_pegboard_call_read_imports_no_edit)
    # a module implementing a hook the call runs (pre_tool_use, check_permission...) is
    # imported by that hook's first lookup; no other declared plugin is
    others = set(_lazy_modules()) - {own, "pegboard_edit"} - set(_call_time_hook_modules())
    assert own in imported
    assert imported & others == set()


def test_pegboard_call_read_imports_no_edit(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("hi\n")
    imported = _cli_imports(["call", "Read", "--input", json.dumps({"file_path": str(target)})], tmp_path)
    assert "pegboard_edit" not in imported


def test_pegboard_call_edit_imports_no_shell_analysis(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("hi\n")
    tool_input = {"file_path": str(target), "old_string": "hi", "new_string": "ho"}
    imported = _cli_imports(["call", "Edit", "--input", json.dumps(tool_input)], tmp_path)
    assert "pegboard_permissions_shell" not in imported


def test_a_broken_declaration_falls_back_to_importing(tmp_path: Path) -> None:
    (tmp_path / "lazy_demo.py").write_text(textwrap.dedent("""
        from pegboard import hookimpl
        @hookimpl
        def register_profiles(register):
            pass
    """))
    (tmp_path / "lazy_demo.pegboard.json").write_text("{not json")
    assert read_declaration("lazy_demo", [str(tmp_path)]) is None
    (tmp_path / "lazy_demo.pegboard.json").write_text(json.dumps({"format": 99, "module": "lazy_demo", "hooks": []}))
    assert read_declaration("lazy_demo", [str(tmp_path)]) is None
    (tmp_path / "lazy_demo.pegboard.json").write_text(
        json.dumps({"format": FORMAT, "module": "lazy_demo", "hooks": ["register_profiles"]}))
    found = read_declaration("lazy_demo", [str(tmp_path)])
    assert found is not None and found.lazy
    assert read_declaration("lazy_demo:attr", [str(tmp_path)]) is None
