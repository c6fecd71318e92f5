"""The hook the Skill plugin asks, declared by this distribution (not by the kernel).

Offered through entry-point group ``pegboard.hookspecs``, so Pegboard knows the hook, and
checks a skill plugin's implementation of it, before any plugin loads.
"""

from __future__ import annotations

from collections.abc import Callable

from pegboard import hookspec


@hookspec
def register_skills(register: Callable[..., None]) -> None:
    """Add skill directories for the Skill tool.

    Asked once per ``Pegboard`` by the Skill plugin, when it first lists skills. Call
    ``register(directory, trusted=True)`` with a directory holding ``SKILL.md`` or one whose
    subdirectories do. Skills from the user and project directories come first; a second
    skill of the same name is ignored. ``trusted=False`` loads the skills, but their
    ``allowed-tools`` grant nothing.

    Example::

        @hookimpl
        def register_skills(register):
            register(Path(__file__).parent / "skills")
    """


__all__ = ["register_skills"]
