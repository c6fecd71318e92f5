"""The OS sandbox: Bash, Monitor and PowerShell commands in a bubblewrap namespace."""

from pegboard_sandbox.backend import BubblewrapBackend, SandboxUnavailable
from pegboard_sandbox.config import SANDBOX_SECTION, SandboxConfig
from pegboard_sandbox.layout import Layout, SandboxRefused, build_layout

__all__ = [
    "SANDBOX_SECTION",
    "BubblewrapBackend",
    "Layout",
    "SandboxConfig",
    "SandboxRefused",
    "SandboxUnavailable",
    "build_layout",
]
