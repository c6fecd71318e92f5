#!/usr/bin/env python3
"""Set up a development virtualenv from the local tree, then run Pegboard or its checks.

    python3 dev.py start [ARGS]  set up .venv and run `pegboard ARGS` (default: `pegboard tools`,
                                 the tool set an agent gets from the embedded default config)
    python3 dev.py test      set up .venv and run ruff, mypy, the import contract and pytest (what CI runs)
    python3 dev.py setup     only set up .venv
    python3 dev.py declarations  regenerate every plugin module's declaration file (what it registers,
                             read at start-up instead of importing it; see docs/plugin-authors.md)
    python3 dev.py imports   check the import contract: nothing outside pegboard/ imports pegboard.core,
                             and a distribution imports another of ours only if it declares it

Every distribution in this repository (the kernel, libs/*, builtin_tools/*, plugins/*) is installed
from the local tree with --no-deps; only third-party requirements come from the package
index, so no name we own is ever resolved from an index.

`start` and `test` skip both pip installs when nothing they depend on changed: a stamp in
.venv records a hash of every pyproject.toml, requirements-dev.txt and the Python version,
and the installs run again only when it differs (`setup` always installs).
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / "python"
STAMP = VENV / ".pegboard-dev-stamp"
OWN_NAME = re.compile(r"^pegboard([-_.].*)?$", re.IGNORECASE)


#: Where the distributions besides the kernel live: shared libraries (libs/: code tools import,
#: which registers nothing), the built-in tools, and the other plugins.
DISTRIBUTION_AREAS = ("libs", "builtin_tools", "plugins")


def local_distributions(root: Path = ROOT) -> list[Path]:
    """The kernel first, then every sibling distribution found under libs/, builtin_tools/ and plugins/."""
    dists = [root]
    for area in DISTRIBUTION_AREAS:
        dists += sorted(p.parent for p in (root / area).glob("*/pyproject.toml"))
    return dists


#: Where the import contract applies: code built on the public API only.
CONTRACT_AREAS = ("libs", "builtin_tools", "plugins", "examples")
PRIVATE_KERNEL = "pegboard.core"


def _private_imports(tree: ast.AST) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + ([f"pegboard.{a.name}" for a in node.names] if node.module == "pegboard" else [])
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module":
            names = [a.value for a in node.args[:1] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        private = [n for n in names if n == PRIVATE_KERNEL or n.startswith(PRIVATE_KERNEL + ".")]
        found += [(getattr(node, "lineno", 0), n) for n in private]
    return sorted(found)


def import_contract_violations(root: Path = ROOT) -> list[str]:
    """``file:line: imports pegboard.core.x`` for every import of the kernel's private modules
    in libs/, builtin_tools/, plugins/ and examples/, which must use the public ``pegboard`` API."""
    problems: list[str] = []
    for area in CONTRACT_AREAS:
        for path in sorted((root / area).rglob("*.py")):
            if any(part in {"build", "__pycache__"} or part.startswith(".") for part in path.relative_to(root).parts):
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            where = path.relative_to(root)
            problems += [f"{where}:{line}: imports {name}" for line, name in _private_imports(tree)]
    return problems


def _imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """Every absolute import in ``tree``, wherever it is (a function, ``TYPE_CHECKING``, a
    ``try`` that catches ImportError) and ``importlib.import_module("name")`` with a literal."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module":
            found += [(node.lineno, a.value) for a in node.args[:1] if isinstance(a, ast.Constant)
                      and isinstance(a.value, str) and not a.value.startswith(".")]
    return sorted(found)


def _not_source(part: str) -> bool:
    return part in {"build", "__pycache__", "tests"} or part.startswith(".") or part.endswith(".egg-info")


def _own_sources(dist: Path, root: Path) -> list[Path]:
    """The distribution's own Python files: the kernel's ``pegboard/``, or everything in a
    sibling's folder (not build output, not an ``*.egg-info``)."""
    base = dist / "pegboard" if dist == root else dist
    found = []
    for path in base.rglob("*.py"):
        parts = path.relative_to(dist).parts
        if not any(_not_source(part) for part in parts):
            found.append(path)
    return sorted(found)


def _top_level_modules(dist: Path, root: Path) -> list[str]:
    if dist == root:
        return ["pegboard"]
    return sorted(entry.stem for entry in dist.iterdir()
                  if (entry.suffix == ".py" and entry.stem.isidentifier()) or (entry / "__init__.py").is_file())


def dependency_violations(root: Path = ROOT) -> list[str]:
    """``file:line: imports module of pegboard-x, not in pegboard-y's dependencies`` for every
    import of another distribution's top-level module that the importing distribution does not
    declare in its ``pyproject.toml`` dependencies (an optional import inside ``try`` counts too:
    installing the piece must pull in what its code may import), and every top-level module two
    distributions both provide."""
    problems: list[str] = []
    owner: dict[str, str] = {}
    names: dict[Path, str] = {}
    for dist in local_distributions(root):
        name = tomllib.loads((dist / "pyproject.toml").read_text(encoding="utf-8"))["project"]["name"]
        names[dist] = name
        for module in _top_level_modules(dist, root):
            if module in owner:
                problems.append(f"{dist.relative_to(root).as_posix()}: module {module} is also in {owner[module]}")
            owner.setdefault(module, name)
    for dist, name in names.items():
        project = tomllib.loads((dist / "pyproject.toml").read_text(encoding="utf-8"))["project"]
        declared = {_requirement_name(r).lower().replace("_", "-") for r in project.get("dependencies", [])}
        for path in _own_sources(dist, root):
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            for line, module in _imported_modules(tree):
                other = owner.get(module.split(".")[0])
                if other is not None and other != name and other not in declared:
                    where = path.relative_to(root).as_posix()
                    problems.append(f"{where}:{line}: imports {module} of {other}, not in {name}'s dependencies")
    return problems


def declared_modules(root: Path = ROOT) -> list[tuple[Path, str]]:
    """``(distribution folder, module)`` for every entry point in group ``pegboard`` of the
    distributions besides the kernel that names a module (not ``module:attr``)."""
    found: list[tuple[Path, str]] = []
    for dist in local_distributions(root)[1:]:
        project = tomllib.loads((dist / "pyproject.toml").read_text(encoding="utf-8"))["project"]
        for value in project.get("entry-points", {}).get("pegboard", {}).values():
            if ":" not in value:
                found.append((dist, value.strip()))
    return found


def write_declarations() -> int:
    modules = [module for _dist, module in declared_modules()]
    say(f"writing the declarations of {len(modules)} plugin modules")
    return subprocess.call([PY, "-m", "pegboard.core.declarations", "write", *modules], cwd=ROOT)


def check_import_contract() -> int:
    problems = import_contract_violations()
    for problem in problems:
        print(f"{problem} (use the public pegboard API; pegboard.core is private)")
    print(f"import contract: {len(problems)} private import(s) of {PRIVATE_KERNEL} outside pegboard/")
    undeclared = dependency_violations()
    for problem in undeclared:
        print(f"{problem} (declare it in pyproject.toml, or go through the public pegboard API)")
    print(f"distribution dependencies: {len(undeclared)} import(s) of an undeclared distribution of ours")
    return 1 if problems or undeclared else 0


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
    """Run a set-up step; its output, like dev.py's own lines, goes to stderr, so that
    ``dev.py start ARGS > file`` holds only what pegboard printed."""
    print("+", " ".join(str(c) for c in cmd), file=sys.stderr, flush=True)
    subprocess.run([str(c) for c in cmd], check=True, cwd=ROOT, stdout=sys.stderr)


def say(text: str) -> None:
    print(f"dev.py: {text}", file=sys.stderr, flush=True)


def install_stamp(root: Path = ROOT) -> str:
    """A hash of everything the installs depend on: each pyproject.toml (and where it is),
    requirements-dev.txt and the Python that runs them."""
    digest = hashlib.sha256(sys.version.encode())
    files = [d / "pyproject.toml" for d in local_distributions(root)] + [root / "requirements-dev.txt"]
    for path in files:
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        digest.update(path.read_bytes() if path.is_file() else b"(missing)")
        digest.update(b"\0")
    return digest.hexdigest()


def up_to_date(root: Path = ROOT) -> bool:
    stamp = root / STAMP.relative_to(ROOT)
    python = root / PY.relative_to(ROOT)
    return python.exists() and stamp.is_file() and stamp.read_text().strip() == install_stamp(root)


def write_stamp(value: str) -> None:
    tmp = STAMP.with_name(STAMP.name + ".tmp")
    tmp.write_text(value + "\n")
    os.replace(tmp, STAMP)


def setup(force: bool = True) -> None:
    if not force and up_to_date():
        say(".venv is up to date (no pyproject.toml or requirements file changed); skipping pip installs")
        return
    if not PY.exists():
        say("creating .venv")
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    stamp = install_stamp()
    pip: list[str | Path] = [PY, "-m", "pip", "--disable-pip-version-check"]
    dists = local_distributions()
    requirements = third_party_requirements(dists)
    say(f"installing {len(requirements)} third-party requirements and requirements-dev.txt"
        " (about a minute the first time; pip names each package as it goes)")
    run(*pip, "install", "--progress-bar", "off", "setuptools>=77", "wheel", *requirements,
        "-r", ROOT / "requirements-dev.txt")
    say(f"installing {len(dists)} local distributions in editable mode")
    editable: list[str | Path] = [x for d in dists for x in ("-e", d)]
    run(*pip, "install", "-q", "--no-deps", "--no-build-isolation", "--config-settings", "editable_mode=compat",
        *editable)
    write_stamp(stamp)
    say("done; the next start skips the installs until a pyproject.toml or requirements file changes")


#: Debian packages a feature's tests need, by the command that shows the package is there.
#: Each line: (command on PATH, Debian package, what needs it).
SYSTEM_PACKAGES: list[tuple[str, str, str]] = [
    ("bwrap", "bubblewrap", "the sandbox tests"),
    ("chromium", "chromium", "the browser tool's tests"),
    ("pg_ctlcluster", "postgresql", "the PostgreSQL session store and serve-replica tests"),
]


def system_install_commands(packages: list[tuple[str, str, str]] = SYSTEM_PACKAGES) -> tuple[list[list[str]], str]:
    """The apt-get commands that install the missing system packages, and a line saying what happens.

    No commands when everything is there, the machine is not Linux, there is no apt-get, or
    neither root nor sudo is available; the line then says why (those tests will skip)."""
    missing = [(pkg, why) for cmd, pkg, why in packages if not shutil.which(cmd)]
    if not missing:
        return [], ""
    names = ", ".join(pkg for pkg, _ in missing)
    needs = "; ".join(f"{pkg} for {why}" for pkg, why in missing)
    if not sys.platform.startswith("linux"):
        return [], f"{names} missing and this is not Linux; {needs} will skip"
    if not shutil.which("apt-get"):
        return [], f"{names} missing and there is no apt-get; install by hand ({needs})"
    if os.geteuid() == 0:
        prefix: list[str] = []
    elif shutil.which("sudo"):
        prefix = ["sudo", "-n"]
    else:
        return [], f"{names} missing and installing needs root or sudo; {needs} will skip"
    env = ["env", "DEBIAN_FRONTEND=noninteractive"]
    return ([[*prefix, *env, "apt-get", "update", "-q"],
             [*prefix, *env, "apt-get", "install", "-y", "-q", "--no-install-recommends",
              *(pkg for pkg, _ in missing)]],
            f"installing {names} with apt-get ({needs})")


def ensure_system_packages() -> None:
    """Install the missing system packages when we may; never fail the setup over it."""
    plan, line = system_install_commands()
    if line:
        say(line)
    for cmd in plan:
        print("+", " ".join(cmd), file=sys.stderr, flush=True)
        try:
            done = subprocess.run(cmd, check=False, stdin=subprocess.DEVNULL, timeout=900, stdout=sys.stderr)
        except (OSError, subprocess.TimeoutExpired) as exc:
            say(f"could not install system packages ({exc}); the tests that need them will skip")
            return
        if done.returncode != 0:
            say(f"could not install system packages (apt-get exited {done.returncode});"
                " the tests that need them will skip")
            return


#: npm packages installed into .venv/npm when node and npm exist: (package, version spec, what needs it).
#: TypeScript stays on 5.x: typescript-language-server drives its tsserver.js, which 7.x no longer ships.
NPM_PACKAGES: list[tuple[str, str, str]] = [
    ("typescript-language-server", "typescript-language-server@^5", "the LSP tool's TypeScript/JavaScript server"),
    ("typescript", "typescript@^5", "typescript-language-server"),
]


def ensure_npm_packages() -> None:
    """Install the missing npm packages under .venv/npm; without node/npm say what will skip."""
    prefix = VENV / "npm"
    missing = [spec for pkg, spec, _ in NPM_PACKAGES
               if not (prefix / "node_modules" / pkg / "package.json").is_file()]
    if not missing:
        return
    if not (shutil.which("node") and shutil.which("npm")):
        say(f"node/npm not found; {', '.join(missing)} not installed (the tests that need them will skip)")
        return
    say(f"installing {', '.join(missing)} from npm into {prefix.relative_to(ROOT)}")
    cmd = ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(prefix), *missing]
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    try:
        done = subprocess.run(cmd, check=False, stdin=subprocess.DEVNULL, timeout=600, stdout=sys.stderr)
    except (OSError, subprocess.TimeoutExpired) as exc:
        say(f"could not install npm packages ({exc}); the tests that need them will skip")
        return
    if done.returncode != 0:
        say(f"could not install npm packages (npm exited {done.returncode}); the tests that need them will skip")


def main(argv: list[str]) -> int:
    command = argv[1] if len(argv) > 1 else "start"
    if command == "imports":
        return check_import_contract()
    if command not in {"setup", "start", "test", "declarations"}:
        print(__doc__)
        return 2
    setup(force=command == "setup")
    if command in {"setup", "test"}:
        ensure_system_packages()
        ensure_npm_packages()
    if command == "declarations":
        return write_declarations()
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    if command == "start":
        say("running pegboard " + " ".join(argv[2:] or ["tools"]))
        return subprocess.call([BIN / "pegboard", *(argv[2:] or ["tools"])], cwd=ROOT, env=env)
    if command == "test":
        steps: list[list[str | Path]] = [
            [PY, "-m", "ruff", "check", "."],
            [PY, "-m", "mypy", "pegboard", "libs", "builtin_tools", "plugins", "tests", "benchmarks"],
            [PY, str(Path(__file__).resolve()), "imports"],
            [PY, "-m", "pytest", "-n", "auto", *argv[2:]],
        ]
        labels = ["ruff (lint)", "mypy (types; about 15 s without its cache)", "the import contract",
                  "pytest (the whole suite, on every core)"]
        for number, (label, step) in enumerate(zip(labels, steps, strict=True), 1):
            say(f"step {number}/{len(steps)}: {label}")
            print("+", " ".join(str(c) for c in step), flush=True)
            if (code := subprocess.call(step, cwd=ROOT, env=env)) != 0:
                say(f"step {number}/{len(steps)} ({label.split(' (')[0]}) failed with exit code {code}")
                return code
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
