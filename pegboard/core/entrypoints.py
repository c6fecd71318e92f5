"""Entry points read straight from installed distributions' ``entry_points.txt`` files.

``importlib.metadata`` would find the same entry points, but importing it and parsing every
distribution's metadata costs more than the rest of Pegboard's start-up. Name and version
come from the ``NAME-VERSION.dist-info`` folder, as installers write it.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class EntryPoint:
    """One ``name = module:attr`` line of a group, with the distribution that declares it."""

    name: str
    value: str
    group: str
    dist_name: str | None = None
    version: str | None = None

    def load(self) -> Any:
        """Import the module and follow the attribute path, like ``importlib.metadata``."""
        module, _, attr = self.value.partition(":")
        obj: Any = importlib.import_module(module.strip())
        for part in attr.strip().split(".") if attr.strip() else ():
            obj = getattr(obj, part)
        return obj


def _dist_of(folder: str) -> tuple[str, str | None]:
    stem = folder.rsplit(".", 1)[0]
    name, _, version = stem.partition("-")
    return name.replace("_", "-"), (version or None)


def _section(text: str, group: str) -> Iterable[tuple[str, str]]:
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1].strip()
        elif current == group and "=" in line and not line.startswith(("#", ";")):
            name, _, value = line.partition("=")
            yield name.strip(), value.strip()


def entry_points(group: str, path: Iterable[str] | None = None) -> list[EntryPoint]:
    """Every entry point of ``group`` on ``path`` (default ``sys.path``); the first copy of a
    distribution on the path wins, as it would for imports."""
    found: list[EntryPoint] = []
    seen: set[str] = set()
    marker = f"[{group}]"
    for entry in sys.path if path is None else path:
        try:
            folders = sorted(os.listdir(entry or "."))
        except OSError:
            continue
        for folder in folders:
            if not folder.endswith((".dist-info", ".egg-info")):
                continue
            dist, version = _dist_of(folder)
            if dist.lower() in seen:
                continue
            try:
                with open(os.path.join(entry or ".", folder, "entry_points.txt"), encoding="utf-8") as fh:
                    text = fh.read()
            except OSError:
                continue
            seen.add(dist.lower())
            if marker in text:
                found.extend(EntryPoint(n, v, group, dist, version) for n, v in _section(text, group))
    return found
