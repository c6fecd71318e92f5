"""Permission rules: may this call run — allow, ask or deny with ``Tool(specifier)`` rules.

The package is split by concept: ``rules`` parses rule text, ``families`` holds which
rule family each tool answers to, ``paths`` anchors and matches path patterns, ``bashparse``/``bash`` and
``commands`` judge shell commands, ``powershell`` and ``webfetch`` their own specifier
formats, and ``engine`` puts them in the documented order.
"""

from __future__ import annotations

from pegboard.core.permissions.engine import MODES, PermissionEngine

__all__ = ["MODES", "PermissionEngine"]
