"""The ``notify`` message channel: notifications through Apprise, one URL per route.

``messaging.notify.urls`` maps a route name to an Apprise URL (``ntfys://topic``,
``slack://...``, ``json://host/path``); ``notify_user`` sends to every route (or those in
``notifyRoutes``), ``send`` to the route its target names. Apprise URLs hold tokens and
passwords: they count only from user-scope config or ``PEGBOARD_APPRISE_URLS`` (space
separated, routes named ``env1``, ``env2``, ...) and are redacted everywhere. Apprise
connects where the user's URLs point; the model never writes one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel, Field

from pegboard import NARROWS, NEUTRAL, ConfigSection, ConfigSectionRegister, ToolContext, Widens, hookimpl
from pegboard_messaging import ChannelError, ChannelReply, ChannelRequest
from pegboard_messaging.credentials import credential, ignored_note

SETTINGS_KEY = "messaging.notify"
URLS_ENV = "PEGBOARD_APPRISE_URLS"


class NotifySettings(BaseModel):
    urls: Annotated[dict[str, str], Widens.when_set("sends the agent's notifications to these services")] = Field(
        default_factory=dict, description="Route name -> Apprise URL (read from user config only).")
    notifyRoutes: Annotated[list[str], NARROWS] = Field(
        default_factory=list, description="Routes notify_user uses (default: all).")
    timeoutSeconds: Annotated[float, NEUTRAL] = Field(default=20.0, gt=0, le=300,
                                                      description="Deadline for one notification.")


def _settings(ctx: ToolContext) -> NotifySettings:
    value: NotifySettings = ctx.settings(SETTINGS_KEY)
    return value


def routes(ctx: ToolContext) -> dict[str, str]:
    found = {f"env{n}": url for n, url in enumerate(ctx.env.get(URLS_ENV, "").split(), 1)}
    configured = credential(ctx, f"{SETTINGS_KEY}.urls")
    if isinstance(configured, dict):
        found.update({str(k): str(v) for k, v in configured.items()})
    return found


def url_secrets(url: str) -> list[str]:
    """The URL and the parts of it that are credentials (user, password, path tokens)."""
    out = [url]
    try:
        parts = urlsplit(url)
    except ValueError:
        return out
    out += [unquote(p) for p in (parts.username, parts.password) if p]
    out += [seg for seg in parts.path.split("/") if len(seg) >= 12]
    return out


class NotifyChannel:
    name = "notify"
    capabilities = frozenset({"notify", "send"})

    def unavailable_reason(self, context: ToolContext) -> str | None:
        if not routes(context):
            return (f"no Apprise URL is configured (set {SETTINGS_KEY}.urls in your user config or {URLS_ENV})"
                    f"{ignored_note(context, f'{SETTINGS_KEY}.urls')}")
        return None

    def secrets(self, context: ToolContext) -> Sequence[str]:
        return [s for url in routes(context).values() for s in url_secrets(url)]

    async def perform(self, request: ChannelRequest, context: ToolContext) -> ChannelReply:
        import anyio.to_thread

        known = routes(context)
        settings = _settings(context)
        if request.action == "notify":
            chosen = [r for r in (settings.notifyRoutes or known) if r in known]
            if not chosen:
                raise ChannelError(f"none of {SETTINGS_KEY}.notifyRoutes is configured in {SETTINGS_KEY}.urls",
                                   "invalid_target")
        elif request.target in known:
            chosen = [str(request.target)]
        else:
            raise ChannelError(f"name a notification route as the target: one of {', '.join(sorted(known))}",
                               "invalid_target")
        failed = await anyio.to_thread.run_sync(self._notify, [known[r] for r in chosen], request, settings)
        names = [r for r, bad in zip(chosen, failed, strict=True) if bad]
        if len(names) == len(chosen):
            raise ChannelError(f"Apprise could not deliver to {', '.join(names)}", "channel_down")
        status = "sent" if not names else "partial"
        return ChannelReply(status=status, data={"routes": chosen, "failedRoutes": names})

    @staticmethod
    def _notify(urls: list[str], request: ChannelRequest, settings: NotifySettings) -> list[bool]:
        import apprise

        failed = []
        for url in urls:
            box = apprise.Apprise(asset=apprise.AppriseAsset(async_mode=False))
            if not box.add(url):
                failed.append(True)
                continue
            for server in box:
                server.socket_connect_timeout = server.socket_read_timeout = settings.timeoutSeconds
            ok = box.notify(body=request.text or "", title=request.title or "")
            failed.append(not ok)
        return failed


@hookimpl
def register_config_sections(register: ConfigSectionRegister) -> None:
    register(ConfigSection(SETTINGS_KEY, NotifySettings, description="Notifications through Apprise."))


@hookimpl
def register_channels(register: Any) -> None:
    register(NotifyChannel())


__all__ = ["SETTINGS_KEY", "NotifyChannel", "NotifySettings"]
