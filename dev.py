#!/usr/bin/env python3
"""Set up a development virtualenv from the local tree, then run Pegboard or its checks.

    python3 dev.py start [ARGS]  set up .venv and run `pegboard ARGS` (default: `pegboard tools`,
                                 the tool set an agent gets from the embedded default config)
    python3 dev.py test      set up .venv and run ruff, mypy and pytest (what CI runs)
    python3 dev.py setup     only set up .venv

Every distribution in this repository (the kernel, builtin_tools/*, plugins/*) is installed
from the local tree with --no-deps; only third-party requirements come from the package
index, so no name we own is ever resolved from an index.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / "python"
OWN_NAME = re.compile(r"^pegboard([-_.].*)?$", re.IGNORECASE)


def local_distributions() -> list[Path]:
    """The kernel first, then every sibling distribution found under builtin_tools/ and plugins/."""
    dists = [ROOT]
    for area in ("builtin_tools", "plugins"):
        dists += sorted(p.parent for p in (ROOT / area).glob("*/pyproject.toml"))
    return dists


def _requirement_name(req: str) -> str:
    return re.split(r"[\s<>=!~;\[@(]", req.strip(), maxsplit=1)[0]


def third_party_requirements(dists: list[Path]) -> list[str]:
    reqs: list[str] = []
    for dist in dists:
        project = tomllib.loads((dist / "pyproject.toml").read_text())["project"]
        for req in project.get("dependencies", []):
            if not OWN_NAME.match(_requirement_name(req)) and req not in reqs:
                reqs.append(req)
    return reqs


def run(*cmd: str | Path) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, cwd=ROOT)


def setup() -> None:
    if not PY.exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    pip: list[str | Path] = [PY, "-m", "pip", "--disable-pip-version-check", "-q"]
    dists = local_distributions()
    run(
        *pip,
        "install",
        "setuptools>=77",
        "wheel",
        *third_party_requirements(dists),
        "-r",
        ROOT / "requirements-dev.txt",
    )
    editable: list[str | Path] = [x for d in dists for x in ("-e", d)]
    run(*pip, "install", "--no-deps", "--no-build-isolation", "--config-settings", "editable_mode=compat",
        *editable)


def main(argv: list[str]) -> int:
    command = argv[1] if len(argv) > 1 else "start"
    if command not in {"setup", "start", "test"}:
        print(__doc__)
        return 2
    setup()
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    if command == "start":
        return subprocess.call([BIN / "pegboard", *(argv[2:] or ["tools"])], cwd=ROOT, env=env)
    if command == "test":
        steps: list[list[str | Path]] = [
            [PY, "-m", "ruff", "check", "."],
            [PY, "-m", "mypy", "pegboard", "builtin_tools", "plugins", "tests", "benchmarks"],
            [PY, "-m", "pytest", "-n", "auto", *argv[2:]],
        ]
        for step in steps:
            print("+", " ".join(str(c) for c in step), flush=True)
            if (code := subprocess.call(step, cwd=ROOT, env=env)) != 0:
                return code
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
