"""Project trust, public: may a project's config start commands on this machine?

The public names of ``pegboard.core.projecttrust``, which implements them.

A cloned repository's ``.pegboard/settings*`` (and files such as ``.mcp.json``) may name
commands. A plugin that would start one asks :func:`is_trusted` first and, when the answer
is no, reports :func:`untrusted_message`, which tells the user how to trust the project.
"""

from __future__ import annotations

from pegboard.core.projecttrust import (
    TRUST_ENV,
    is_trusted,
    set_trusted,
    trust_file,
    trusted_projects,
    untrusted_message,
)

__all__ = ["TRUST_ENV", "is_trusted", "set_trusted", "trust_file", "trusted_projects", "untrusted_message"]
