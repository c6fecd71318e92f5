"""The deployment files of docs/deploy.md, checked as far as this machine can run them."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from pegboard.core.config import PegboardConfig
from pegboard_store_postgres import PostgresSettings

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"


def configmap_settings() -> str:
    text = (DEPLOY / "kubernetes.yaml").read_text(encoding="utf-8")
    block = text.split("settings.toml: |\n", 1)[1].split("\n---", 1)[0]
    return "\n".join(line[4:] for line in block.splitlines())


def test_the_configmap_settings_load_as_pegboard_config() -> None:
    data = tomllib.loads(configmap_settings())
    config = PegboardConfig.model_validate(data)
    assert config.sessions.store == "postgres"
    settings = PostgresSettings.model_validate(data["sessions"]["postgres"])
    assert settings.dsn is None and settings.max_connections == 8  # the DSN comes from the Secret


def test_the_serve_arguments_of_the_image_and_deployment_are_accepted() -> None:
    containerfile = (DEPLOY / "Containerfile").read_text(encoding="utf-8")
    entry = json.loads(re.search(r"^ENTRYPOINT (\[.*\])$", containerfile, re.M).group(1))  # type: ignore[union-attr]
    cmd = json.loads(re.search(r"^CMD (\[.*\])$", containerfile, re.M).group(1))  # type: ignore[union-attr]
    manifest = (DEPLOY / "kubernetes.yaml").read_text(encoding="utf-8")
    args = re.search(r"args: (\[\"--workers\".*?\])", manifest, re.S).group(1)  # type: ignore[union-attr]
    assert entry[0] == "pegboard" and entry[1] == "serve"
    helped = subprocess.run([str(REPO / ".venv" / "bin" / "pegboard"), "serve", "--help"], capture_output=True,
                            text=True, timeout=60)
    for option in [a for a in [*entry, *cmd, *json.loads(args)] if a.startswith("--")]:
        assert option in helped.stdout, option


def test_the_image_builds_where_a_container_engine_exists(tmp_path: Path) -> None:
    engine = shutil.which("podman") or shutil.which("docker")
    if engine is None:
        pytest.skip("no container engine (podman or docker) on this machine")
    if subprocess.run([engine, "info"], capture_output=True, timeout=60).returncode != 0:
        pytest.skip(f"{engine} is installed but cannot reach its engine ({engine} info fails)")
    done = subprocess.run([engine, "build", "-f", str(DEPLOY / "Containerfile"), "-t", "pegboard-test", str(REPO)],
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-4000:]
