"""README's "Install only the pieces you want", as written, in a fresh venv with the kernel alone and
then one tool: the installs work, and each missing piece is named with the folder to install.

Our distributions are installed from a copy of the tree with ``--no-index`` (no name we own is ever
resolved from an index); the third-party packages come from the running environment, linked into
a directory the new venv reads through a ``.pth`` file, so the test needs no network.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from pegboard.core.install_hints import COMMANDS, PROFILES, no_tools_hint

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
IGNORE = shutil.ignore_patterns("__pycache__", "build", "*.egg-info", ".pytest_cache")


def readme_install_block() -> list[str]:
    section = README.read_text(encoding="utf-8").split("## Install only the pieces you want", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None
    return [line.split("#", 1)[0].strip() for line in block.group(1).splitlines() if line.strip()]


def pip_installs() -> list[list[str]]:
    """Each README ``venv/bin/pip install FOLDER...`` line, as its folders."""
    return [shlex.split(line)[2:] for line in readme_install_block() if line.startswith("venv/bin/pip install ")]


def third_party(target: Path) -> Path:
    """A directory of links to this environment's third-party packages: nothing of ours, no .pth."""
    target.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        name = entry.name.casefold()
        if name.startswith(("pegboard", "__editable__", "_pegboard")) or name.endswith(".pth"):
            continue
        if name in ("__pycache__",):
            continue
        (target / entry.name).symlink_to(entry)
    return target


class Venv:
    """A venv with no packages of its own; ``pip`` and third-party packages are linked in."""

    def __init__(self, root: Path, clone: Path, home: Path) -> None:
        self.root, self.clone = root, clone
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=60)
        purelib = subprocess.run(
            [str(self.bin("python")), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True, text=True, check=True, timeout=30,
        ).stdout.strip()  # fmt: skip
        (Path(purelib) / "third_party.pth").write_text(f"{third_party(root.parent / 'third-party')}\n")
        self.env = {
            "PATH": f"{self.bin('python').parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "HOME": str(home),
            "PYTHONNOUSERSITE": "1",
            **{k: v for k, v in os.environ.items() if k.startswith(("PEGBOARD_", "XDG_", "SYSTEMROOT", "TMP"))},
        }

    def bin(self, name: str) -> Path:
        return self.root / ("Scripts" if os.name == "nt" else "bin") / name

    def pip_install(self, folders: list[str]) -> None:
        """The README's install, with our folders only: no index, no dependency resolution."""
        cmd = [str(self.bin("python")), "-m", "pip", "install", "-q", "--disable-pip-version-check",
               "--no-index", "--no-deps", "--no-build-isolation", *folders]  # fmt: skip
        proc = subprocess.run(cmd, cwd=self.clone, env=self.env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr

    def pegboard(self, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.bin("pegboard")), *args], cwd=cwd, env=self.env, capture_output=True, text=True, timeout=60
        )

    def broken_requirements(self) -> list[str]:
        """``pip check``'s complaints about our distributions (the README installed what they need)."""
        proc = subprocess.run(
            [str(self.bin("python")), "-m", "pip", "check", "--disable-pip-version-check"],
            env=self.env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        return [line for line in proc.stdout.splitlines() if line.casefold().startswith("pegboard")]


def clone_of(folders: list[str], target: Path) -> Path:
    """The parts of the tree the README's installs name, as a fresh clone has them."""
    target.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, target / name)
    shutil.copytree(REPO / "pegboard", target / "pegboard", ignore=IGNORE)
    for folder in folders:
        if folder != ".":
            shutil.copytree(REPO / folder, target / folder, ignore=IGNORE)
    return target


def test_the_readme_installs_the_kernel_then_one_tool(tmp_path: Path) -> None:
    installs = pip_installs()
    assert installs[0] == [".", "libs/toolkit", "plugins/permissions-paths", "builtin_tools/grep"], installs
    clone = clone_of([f for folders in installs for f in folders], (tmp_path / "clone"))
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (project / "notes.txt").write_text("alpha\nneedle here\n")
    venv = Venv(tmp_path / "venv", clone, home)

    venv.pip_install(["."])
    bare = venv.pegboard("tools", cwd=project)
    assert bare.returncode == 0 and no_tools_hint() in bare.stderr
    assert "pip install libs/toolkit plugins/permissions-paths builtin_tools/read" in bare.stderr
    serve = venv.pegboard("serve", cwd=project)
    assert serve.returncode == 2
    assert "pegboard-mcp-server" in serve.stderr and "pip install plugins/mcp-server" in serve.stderr

    venv.pip_install(installs[0][1:])
    assert venv.broken_requirements() == []
    tools = venv.pegboard("tools", cwd=project)
    assert tools.returncode == 0 and tools.stderr == "" and re.search(r"^Grep\s+enabled", tools.stdout, re.M)
    found = venv.pegboard("call", "Grep", "--input", '{"pattern": "needle", "output_mode": "content"}', cwd=project)
    assert found.returncode == 0 and "needle here" in found.stdout, found.stdout + found.stderr
    coding = venv.pegboard("tools", "--profile", "coding", cwd=project)
    assert coding.returncode == 1
    assert "pegboard-profile-coding" in coding.stderr and "pip install plugins/profile-coding" in coding.stderr

    for folders in installs[1:]:
        venv.pip_install(folders)
    assert venv.broken_requirements() == []
    coding = venv.pegboard("tools", "--profile", "coding", cwd=project)
    assert coding.returncode == 0 and coding.stderr == "" and re.search(r"^Grep\s+enabled", coding.stdout, re.M)


async def test_pegboard_serve_from_a_lone_install_answers_an_mcp_client(tmp_path: Path) -> None:
    folders = [".", "libs/toolkit", "plugins/permissions-paths", "builtin_tools/grep", "plugins/mcp-server",
               "builtin_tools/skill"]
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (project / "notes.txt").write_text("needle\n")
    venv = Venv(tmp_path / "venv", clone_of(folders, tmp_path / "clone"), home)
    venv.pip_install(folders)
    assert venv.broken_requirements() == []
    params = StdioServerParameters(
        command=str(venv.bin("pegboard")), args=["serve", "--cwd", str(project)], env=venv.env, cwd=str(project)
    )
    async with Client(params, mode="legacy") as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["Grep"]
        result = await client.call_tool("Grep", {"pattern": "needle"})
        assert not result.is_error and "notes.txt" in str(result.content)


# ------------------------------------------------------------------ static: what the README table promises


def distributions() -> dict[str, Path]:
    """Every distribution in the tree, by name, with its folder relative to the root."""
    found = {"pegboard": Path(".")}
    areas = ("libs", "builtin_tools", "plugins")
    for pyproject in sorted(p for area in areas for p in REPO.glob(f"{area}/*/pyproject.toml")):
        name = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["name"]
        found[name] = pyproject.parent.relative_to(REPO)
    return found


def requirement_name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[(@]", requirement, maxsplit=1)[0].casefold()


def folder_by_readme_table(name: str) -> str:
    """Where the README's table says requirement ``name`` lives."""
    if name == "pegboard":
        return "."
    tail = name.removeprefix("pegboard-")
    if name == "pegboard-toolkit":
        return "libs/toolkit"
    if tail.startswith(("profile-", "mcp-", "provider-", "permissions-", "messaging")):
        return f"plugins/{tail}"
    return f"builtin_tools/{tail}"


def test_every_requirement_of_ours_lives_in_the_folder_the_readme_table_names() -> None:
    dists = distributions()
    for name, folder in dists.items():
        if name == "pegboard":
            continue
        project = tomllib.loads((REPO / folder / "pyproject.toml").read_text(encoding="utf-8"))["project"]
        for requirement in project.get("dependencies", []):
            wanted = requirement_name(requirement)
            if wanted.startswith("pegboard"):
                assert wanted in dists, f"{name} requires {wanted}, which is not in this tree"
                assert folder_by_readme_table(wanted) == dists[wanted].as_posix(), (name, wanted)


def test_the_hints_name_folders_that_hold_those_distributions() -> None:
    dists = distributions()
    for distribution, folder in [*PROFILES.values(), *COMMANDS.values()]:
        assert dists[distribution].as_posix() == folder


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_every_profile_hint_names_a_profile_its_distribution_registers(name: str) -> None:
    distribution, folder = PROFILES[name]
    module = next((REPO / folder).glob("pegboard_*.py"))
    assert f'"{name}"' in module.read_text(encoding="utf-8"), (distribution, module)


def test_docs_quote_the_hints_as_pegboard_prints_them() -> None:
    from pegboard.core.install_hints import command_hint, profile_hint

    cli_doc = " ".join((REPO / "docs" / "cli.md").read_text(encoding="utf-8").split())
    assert f"`{no_tools_hint()}`" in cli_doc
    assert f"unknown profile 'coding'.{profile_hint('coding', installed=False)} Valid profiles: full." in cli_doc
    assert f"`{profile_hint('coding', installed=True).strip()}`" in cli_doc
    assert f"`{command_hint('serve')}`" in cli_doc
