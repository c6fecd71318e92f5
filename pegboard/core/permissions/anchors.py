"""Rules anchored with one slash at a directory their settings file's base does not hold.

``Edit(/etc/**)`` in a project or ``--config`` file means ``<base>/etc/**``, not the
system's ``/etc``: a writer who meant the filesystem path gets a rule that guards nothing.
``config validate`` reports such a rule when the directory it names is missing under the
base, and suggests the ``//`` form.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from pegboard.core.permissions import families as fam
from pegboard.core.permissions.rules import Rule

_GLOB_CHARS = frozenset("*?[\\")


def anchored_directory(specifier: str) -> str | None:
    """The literal directory a ``/path`` specifier names below its base (``/etc/**`` -> ``etc``),
    ``""`` for the base itself, ``None`` when the specifier is not anchored with one slash."""
    s = specifier.strip()
    if not s.startswith("/") or s.startswith("//"):
        return None
    parts = s[1:].split("/")
    literal: list[str] = []
    for part in parts[:-1]:
        if not part or part == "." or any(c in _GLOB_CHARS for c in part):
            break
        if part == "..":
            return None  # climbs out of the base on purpose; nothing to suggest
        literal.append(part)
    return "/".join(literal)


def missing_anchor_warnings(rules: Iterable[Rule], families: fam.Families = fam.TABLE_ONLY) -> list[str]:
    """One warning per path rule whose ``/dir`` does not exist under the rule's base."""
    out: list[str] = []
    for rule in rules:
        if rule.specifier is None or rule.is_glob or rule.param() is not None or not rule.root:
            continue
        family = families.family_of(rule.target or rule.tool)
        head = families.family(family)
        if head is None or head.file_rules is None:
            continue
        directory = anchored_directory(rule.specifier)
        if not directory:
            continue
        base = rule.root.rstrip("/") or "/"
        if os.path.isdir(os.path.join(base, directory)):
            continue
        spec = rule.specifier.strip()
        out.append(
            f"{rule.where}: {rule.text!r}: '/' anchors at this file's base, so it means "
            f"{os.path.join(base, spec[1:])} and {os.path.join(base, directory)} does not exist; "
            f"for the filesystem path write {rule.tool}(/{spec})"
        )
    return out
