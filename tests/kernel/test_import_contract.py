"""The import contract: distributions and examples use the public ``pegboard`` API only.

``tests/`` may import ``pegboard.core``: kernel tests test the kernel's insides.
"""

from __future__ import annotations

from pathlib import Path

import dev


def test_no_distribution_imports_the_private_kernel() -> None:
    assert dev.import_contract_violations() == []


def test_the_check_finds_every_form_of_private_import(tmp_path: Path) -> None:
    tool = tmp_path / "plugins" / "acme" / "acme.py"
    tool.parent.mkdir(parents=True)
    tool.write_text(
        "import importlib\n"
        "import pegboard.core.app\n"
        "from pegboard.core.projecttrust import is_trusted\n"
        "from pegboard import core, tool\n"
        "def later():\n"
        "    from pegboard.core import config\n"
        "    return importlib.import_module('pegboard.core.policy')\n"
        "from pegboard import Tool\n"
        "from pegboard_toolkit import core\n",
        encoding="utf-8",
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("import pegboard.core.app\n", encoding="utf-8")
    found = dev.import_contract_violations(tmp_path)
    assert found == [
        "plugins/acme/acme.py:2: imports pegboard.core.app",
        "plugins/acme/acme.py:3: imports pegboard.core.projecttrust",
        "plugins/acme/acme.py:4: imports pegboard.core",
        "plugins/acme/acme.py:6: imports pegboard.core",
        "plugins/acme/acme.py:7: imports pegboard.core.policy",
    ]
