"""Browser profiles: the ones config names, the ones ``create-profile`` made, and ``chrome``.

A local profile has a port in 18800-18899 (Chromium's remote-debugging port, which also
names the process ``reset-profile`` may end) and a user-data directory under Pegboard's data
directory. A remote profile has a ``cdpUrl`` and is attach-only. Profiles made by
``create-profile`` are kept in ``browser/profiles.json`` there, written atomically;
profiles from config are read-only here (change them in the config file).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pegboard_browser.settings import PORT_MAX, PORT_MIN, PROFILE_NAME, BrowserSettings


class ProfileError(ValueError):
    """A profile request that cannot be done; ``kind`` is the result's ``error_kind``."""

    def __init__(self, message: str, kind: str = "invalid_profile") -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Profile:
    name: str
    port: int | None
    cdp_url: str | None
    source: str  # "default", "config" or "created"
    color: str | None = None

    @property
    def remote(self) -> bool:
        return self.cdp_url is not None


class ProfileStore:
    """The profiles of one data directory, with the config's on top."""

    def __init__(self, root: Path, settings: BrowserSettings) -> None:
        self.root = root
        self.settings = settings

    @property
    def file(self) -> Path:
        return self.root / "profiles.json"

    def user_data_dir(self, name: str) -> Path:
        return self.root / "profiles" / name / "user-data"

    def _created(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise ProfileError(f"cannot read {self.file}: {exc}; fix or remove the file", "profile_store") from exc
        return {k: v for k, v in data.items() if isinstance(v, dict) and PROFILE_NAME.match(k)} \
            if isinstance(data, dict) else {}

    def _write(self, created: dict[str, dict[str, Any]]) -> None:
        from pegboard_toolkit.atomic import write_text

        self.root.mkdir(parents=True, exist_ok=True)
        write_text(self.file, json.dumps(created, indent=2, sort_keys=True) + "\n")

    def all(self) -> dict[str, Profile]:
        out: dict[str, Profile] = {}
        for name, entry in self._created().items():
            port = entry.get("cdpPort")
            out[name] = Profile(name, port if isinstance(port, int) else None,
                                entry.get("cdpUrl") if isinstance(entry.get("cdpUrl"), str) else None, "created",
                                entry.get("color") if isinstance(entry.get("color"), str) else None)
        for name, cfg in self.settings.profiles.items():
            out[name] = Profile(name, cfg.cdpPort, cfg.cdpUrl, "config", cfg.color)
        default = self.settings.defaultProfile
        if default not in out:
            out[default] = Profile(default, None, None, "default")
        used = {p.port for p in out.values() if p.port is not None}
        for name, p in sorted(out.items()):
            if p.port is None and p.cdp_url is None:
                port = next((n for n in range(PORT_MIN, PORT_MAX + 1) if n not in used), None)
                if port is not None:
                    used.add(port)
                    out[name] = Profile(p.name, port, None, p.source, p.color)
        return out

    def get(self, name: str) -> Profile:
        check_name(name)
        profile = self.all().get(name)
        if profile is None:
            raise ProfileError(f"no browser profile named {name!r}; list them with action=profiles or make one "
                               "with action=create-profile", "unknown_profile")
        return profile

    def create(self, name: str, cdp_url: str | None, color: str | None) -> Profile:
        check_name(name)
        profiles = self.all()
        if name in profiles:
            raise ProfileError(f"a browser profile named {name!r} exists already", "profile_exists")
        entry: dict[str, Any] = {}
        if cdp_url:
            entry["cdpUrl"] = cdp_url
        else:
            used = {p.port for p in profiles.values() if p.port is not None}
            port = next((n for n in range(PORT_MIN, PORT_MAX + 1) if n not in used and port_free(n)), None)
            if port is None:
                raise ProfileError(f"every port in {PORT_MIN}-{PORT_MAX} is taken by a profile or in use; delete "
                                   "a profile or end what holds the ports first",
                                   "no_free_port")
            entry["cdpPort"] = port
        if color:
            entry["color"] = color
        created = self._created()
        created[name] = entry
        self._write(created)
        return self.get(name)

    def delete(self, name: str) -> Profile:
        profile = self.get(name)
        if profile.source == "config":
            raise ProfileError(f"profile {name!r} comes from config (browser.profiles.{name}); remove it there",
                               "config_profile")
        if profile.remote:
            created = self._created()
            created.pop(name, None)
            self._write(created)
            return profile
        import shutil

        shutil.rmtree(self.root / "profiles" / name, ignore_errors=True)
        created = self._created()
        if created.pop(name, None) is not None:
            self._write(created)
        return profile


def port_free(port: int) -> bool:
    """Whether nothing listens on ``port`` of 127.0.0.1 now."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def check_name(name: str) -> None:
    if not PROFILE_NAME.match(name):
        raise ProfileError(f"invalid profile name {name!r}: use 1 to 64 characters of a-z, 0-9 and '-'")


__all__ = ["Profile", "ProfileError", "ProfileStore", "check_name", "port_free"]
