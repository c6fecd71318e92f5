"""Permission families, public: what a plugin needs to provide a rule family.

A family (``Bash(...)``, ``WebFetch(domain:...)``, a browser's ``Browser(origin:...)``) is an
object with the :class:`PermissionFamily` attributes and its three methods (``parse``,
``compile``, ``judge``). A distribution offers it in entry-point group
``pegboard.permission_families`` (name = the family's head, value = ``module:Class``; the
module is imported only when a rule or a call needs the family) or from the
``register_permission_families(register)`` hook. While judging, a family sees the call
(:class:`FamilyCall`) and the engine's shared checks (:class:`FamilyContext`: the mode,
working directories and :class:`PathDecisions`, the path and inode check every family uses
for the files a call touches).
"""

from __future__ import annotations

from pegboard.core.permissions.family import (
    FamilyCall,
    FamilyContext,
    FamilyTool,
    ListsPaths,
    Outcome,
    PermissionFamily,
    Reading,
    SuggestsRules,
    parameter_reading,
)
from pegboard.core.permissions.pathdecisions import FileVerdict, PathDecisions
from pegboard.core.permissions.paths import absolute, collapse, inside, is_protected, shell_tilde, to_posix
from pegboard.core.permissions.rules import Rule, word_pattern_regex
from pegboard.core.permissions.suggest import Allows, RuleSuggestion, first_allowing

#: Input fields that hold a call's primary content: a ``Tool(param:value)`` rule on one is
#: easy to bypass and gets a warning (``parameter_reading(..., primary=PRIMARY_FIELDS)``).
PRIMARY_FIELDS = frozenset({"command", "file_path", "path", "notebook_path", "url"})

__all__ = [
    "PRIMARY_FIELDS",
    "Allows",
    "FamilyCall",
    "FamilyContext",
    "FamilyTool",
    "FileVerdict",
    "ListsPaths",
    "Outcome",
    "PathDecisions",
    "PermissionFamily",
    "Reading",
    "Rule",
    "RuleSuggestion",
    "SuggestsRules",
    "absolute",
    "collapse",
    "first_allowing",
    "inside",
    "is_protected",
    "parameter_reading",
    "shell_tilde",
    "to_posix",
    "word_pattern_regex",
]
