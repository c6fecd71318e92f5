"""Project trust: a cloned repository's config may not run commands until the user says so.

A project's ``.pegboard/settings*`` and ``.mcp.json`` can name commands (hook handlers, MCP
servers) that Pegboard would start on the user's machine. Those commands run only for
projects the user has trusted (``pegboard trust``), or when ``PEGBOARD_TRUST_PROJECT=1`` is
set for one process (automation, CI). Everything else in project config still applies.

This is the implementation (the trusted-projects file and the check); plugins import the
same names from the public ``pegboard.trust``.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

TRUST_ENV = "PEGBOARD_TRUST_PROJECT"
TRUST_FILE = "trusted-projects.json"


def trust_file(env: Mapping[str, str] | None = None) -> Path:
    from pegboard.core.config import user_config_dir

    return user_config_dir(env) / TRUST_FILE


def trusted_projects(env: Mapping[str, str] | None = None) -> list[str]:
    """The trusted project roots; an unreadable or malformed file trusts nothing."""
    try:
        data = json.loads(trust_file(env).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    projects = data.get("projects") if isinstance(data, dict) else None
    return [p for p in projects if isinstance(p, str)] if isinstance(projects, list) else []


def _key(root: Path) -> str:
    return str(root.expanduser().resolve())


def is_trusted(root: Path, env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    if env.get(TRUST_ENV, "").strip().lower() in ("1", "true", "yes"):
        return True
    return _key(root) in trusted_projects(env)


def set_trusted(root: Path, trusted: bool = True, env: Mapping[str, str] | None = None) -> Path:
    """Add or remove ``root``; the file is replaced atomically. Returns the file's path."""
    path = trust_file(env)
    projects = [p for p in trusted_projects(env) if p != _key(root)]
    if trusted:
        projects.append(_key(root))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".trusted-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"projects": sorted(projects)}, fh, indent=2)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def untrusted_message(root: Path | None) -> str:
    where = f" {root}" if root else ""
    return (
        f"the project{where} is not trusted, so its config may not run commands; "
        f"run `pegboard trust{where}` (or set {TRUST_ENV}=1) if you trust it"
    )
