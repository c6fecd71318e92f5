"""What to install when a piece Pegboard ships separately is missing.

Profiles, commands and tools come from distributions of their own, so a kernel installed
alone (or with one tool) lacks them. Messages about a missing piece name the distribution
that provides it and how to install it from a clone; none of them is fetched from an index.
"""

from __future__ import annotations

#: profile name -> (distribution, its folder in a clone)
PROFILES: dict[str, tuple[str, str]] = {
    "coding": ("pegboard-profile-coding", "plugins/profile-coding"),
    "messaging": ("pegboard-profile-messaging", "plugins/profile-messaging"),
    "minimal": ("pegboard-profile-minimal", "plugins/profile-minimal"),
}

#: command name -> (distribution, its folder in a clone)
COMMANDS: dict[str, tuple[str, str]] = {
    "serve": ("pegboard-mcp-server", "plugins/mcp-server"),
    "mcp": ("pegboard-mcp-client", "plugins/mcp-client"),
    "hooks": ("pegboard-command-hooks", "plugins/command-hooks"),
}

#: what a tool distribution needs besides the kernel, and one tool to start with
FIRST_TOOL = "libs/toolkit plugins/permissions-paths builtin_tools/read"


def install_from_clone(distribution: str, folder: str) -> str:
    """``"pegboard-x, which is not installed; from a clone of Pegboard, in its root: pip install plugins/x"``."""
    return f"{distribution}, which is not installed; from a clone of Pegboard, in its root: pip install {folder}"


def is_installed(distribution: str) -> bool:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import distribution as find

    try:
        find(distribution)
    except PackageNotFoundError:
        return False
    return True


def profile_hint(name: str, *, installed: bool | None = None) -> str:
    """``" Profile 'x' comes with ..."`` for one of Pegboard's own profiles, else ``""``: what
    to install, or, when it is installed but not loaded, where to look (``installed`` says
    which, instead of looking)."""
    found = PROFILES.get(name.strip().casefold())
    if found is None:
        return ""
    distribution, folder = found
    if is_installed(distribution) if installed is None else installed:
        return (
            f" Profile {name.strip()!r} comes with {distribution}, which is installed but not loaded"
            " (plugins.disabled, PEGBOARD_DISABLE_PLUGINS, PEGBOARD_LOAD_PLUGINS or a failed load:"
            " see pegboard plugins)."
        )
    return f" Profile {name.strip()!r} comes with {install_from_clone(distribution, folder)}."


def command_hint(name: str) -> str | None:
    """Why ``pegboard NAME`` is missing and what to install, for a command Pegboard ships separately."""
    found = COMMANDS.get(name)
    if found is None:
        return None
    return f"No such command {name!r}: it comes with {install_from_clone(*found)}."


def no_tools_hint() -> str:
    """The warning for a tool set that is empty because no tool distribution is installed."""
    return (
        "no tool is installed, so none is enabled: every tool is a distribution of its own; "
        f"from a clone of Pegboard, in its root: pip install {FIRST_TOOL} (see pegboard plugins)"
    )
