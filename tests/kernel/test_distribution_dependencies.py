"""A distribution imports another of ours only if its ``pyproject.toml`` declares it.

Every piece installs on its own (README's "Install only the pieces you want"), so an import of
another distribution's module that its ``dependencies`` do not name is a piece that breaks, or
quietly loses a feature, when installed alone. ``dev.py imports`` runs this check in CI; the
tests here run it over this tree and over small trees written for the purpose.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import dev

REPO = Path(__file__).resolve().parents[2]


def write_distribution(folder: Path, name: str, dependencies: list[str], files: dict[str, str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    deps = ", ".join(f'"{d}"' for d in dependencies)
    (folder / "pyproject.toml").write_text(f'[project]\nname = "{name}"\ndependencies = [{deps}]\n', encoding="utf-8")
    for relative, text in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def small_tree(root: Path) -> Path:
    """A kernel, a library, and two tools: ``pegboard-alpha`` declares the library only."""
    write_distribution(root, "pegboard", ["pluggy"], {"pegboard/__init__.py": "import pluggy\n"})
    write_distribution(root / "libs" / "kit", "pegboard-kit", ["pegboard"], {"pegboard_kit/__init__.py": ""})
    write_distribution(root / "builtin_tools" / "beta", "pegboard-beta", ["pegboard"], {"pegboard_beta.py": ""})
    write_distribution(
        root / "builtin_tools" / "alpha",
        "pegboard-alpha",
        ["pegboard", "pegboard_kit>=0.1"],
        {
            "pegboard_alpha/__init__.py": (
                "from typing import TYPE_CHECKING\n"
                "import pegboard\n"
                "from pegboard_kit import thing\n"
                "from pegboard_alpha import helpers\n"
                "if TYPE_CHECKING:\n"
                "    from pegboard_beta import Kind\n"
            ),
            "pegboard_alpha/helpers.py": (
                "import importlib\n"
                "def later():\n"
                "    try:\n"
                "        import pegboard_beta.extra\n"
                "    except ImportError:\n"
                "        return importlib.import_module('pegboard_beta')\n"
            ),
            "build/lib/pegboard_alpha/old.py": "import pegboard_beta\n",
        },
    )
    return root


def test_this_tree_declares_every_import_between_its_distributions() -> None:
    assert dev.dependency_violations() == []


def test_the_check_finds_every_undeclared_import_wherever_it_is(tmp_path: Path) -> None:
    found = dev.dependency_violations(small_tree(tmp_path))
    # the library (declared under another spelling), the kernel and its own modules are fine; the
    # TYPE_CHECKING import, the optional import inside try and import_module all count; build/ is skipped
    assert found == [
        "builtin_tools/alpha/pegboard_alpha/__init__.py:6: imports pegboard_beta of pegboard-beta,"
        " not in pegboard-alpha's dependencies",
        "builtin_tools/alpha/pegboard_alpha/helpers.py:4: imports pegboard_beta.extra of pegboard-beta,"
        " not in pegboard-alpha's dependencies",
        "builtin_tools/alpha/pegboard_alpha/helpers.py:6: imports pegboard_beta of pegboard-beta,"
        " not in pegboard-alpha's dependencies",
    ]


def test_declaring_the_dependency_clears_the_finding(tmp_path: Path) -> None:
    root = small_tree(tmp_path)
    pyproject = root / "builtin_tools" / "alpha" / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"pegboard_kit>=0.1"]', '"pegboard_kit>=0.1", "Pegboard-Beta"]'))
    assert dev.dependency_violations(root) == []


def test_the_kernel_may_not_import_a_distribution_it_does_not_declare(tmp_path: Path) -> None:
    root = small_tree(tmp_path)
    (root / "pegboard" / "core.py").write_text("def f():\n    from pegboard_kit import thing\n", encoding="utf-8")
    assert dev.dependency_violations(root)[0] == (
        "pegboard/core.py:2: imports pegboard_kit of pegboard-kit, not in pegboard's dependencies"
    )


def test_two_distributions_may_not_provide_the_same_module(tmp_path: Path) -> None:
    root = small_tree(tmp_path)
    (root / "builtin_tools" / "beta" / "pegboard_kit.py").write_text("", encoding="utf-8")
    assert "builtin_tools/beta: module pegboard_kit is also in pegboard-kit" in dev.dependency_violations(root)


def test_every_dependency_of_ours_is_a_distribution_of_this_tree_and_none_depends_on_itself_in_a_cycle() -> None:
    graph: dict[str, set[str]] = {}
    for folder in dev.local_distributions():
        project = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))["project"]
        names = [dev._requirement_name(r) for r in project.get("dependencies", [])]
        graph[project["name"]] = {n for n in names if dev.OWN_NAME.match(n)}
    missing = {name: deps - graph.keys() for name, deps in graph.items() if deps - graph.keys()}
    assert missing == {}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(d == goal or (d not in seen and reaches(d, goal, seen | {d})) for d in graph[start])

    assert [name for name in graph if reaches(name, name, set())] == []
    assert graph["pegboard"] == set(), "the kernel depends on none of its plugins"


def test_the_toolkit_is_a_library_beside_the_tools_not_a_plugin() -> None:
    folders = {f.relative_to(REPO).as_posix() for f in dev.local_distributions()}
    assert "libs/toolkit" in folders and "plugins/toolkit" not in folders
    project = tomllib.loads((REPO / "libs" / "toolkit" / "pyproject.toml").read_text(encoding="utf-8"))
    assert "entry-points" not in project["project"], "a library registers nothing"


def test_dev_imports_reports_an_undeclared_import_and_fails(tmp_path: Path) -> None:
    root = small_tree(tmp_path)
    (root / "dev.py").write_bytes((REPO / "dev.py").read_bytes())
    proc = subprocess.run([sys.executable, str(root / "dev.py"), "imports"], capture_output=True, text=True,
                          timeout=60, cwd=root)  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "distribution dependencies: 3 import(s) of an undeclared distribution of ours" in proc.stdout
    assert "helpers.py:4: imports pegboard_beta.extra of pegboard-beta" in proc.stdout
