"""The ``register`` callbacks that registration hooks receive."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from pegboard.core.permissions.family import PermissionFamily
from pegboard.core.providers import ProviderPolicy
from pegboard.core.sections import ConfigSection
from pegboard.core.tools import Profile, Tool


class ToolRegister(Protocol):
    def __call__(self, tool: Tool, /) -> None: ...


class GroupRegister(Protocol):
    def __call__(self, name: str, members: Iterable[str], description: str = "", /) -> None: ...


class ProfileRegister(Protocol):
    def __call__(self, profile: Profile, /) -> None: ...


class PermissionFamilyRegister(Protocol):
    def __call__(self, family: PermissionFamily, /) -> None: ...


class ProviderPolicyRegister(Protocol):
    def __call__(self, policy: ProviderPolicy, /) -> None: ...


class ConfigSectionRegister(Protocol):
    def __call__(self, section: ConfigSection, /) -> None: ...
