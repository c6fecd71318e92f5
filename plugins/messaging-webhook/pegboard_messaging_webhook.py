"""The ``webhook`` message channel: each message is a JSON POST to an endpoint the user configured.

Targets are endpoint names from ``messaging.webhook.endpoints`` (a model never writes the
URL), so the recipients are exactly what the user set up. Requests go through the network
guard WebFetch uses: private hosts (127.0.0.1, an intranet) only when listed in
``messaging.webhook.allowPrivateHosts``. Endpoint URLs and headers are credentials: they
count only from user-scope config or the environment (never a project file) and are redacted
from every result.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import BaseModel, Field

from pegboard import NEUTRAL, ConfigSection, ConfigSectionRegister, ToolContext, Widens, hookimpl
from pegboard_messaging import ChannelError, ChannelReply, ChannelRequest
from pegboard_messaging.credentials import credential, ignored_note

SETTINGS_KEY = "messaging.webhook"
ENV_PREFIX = "PEGBOARD_WEBHOOK_"


class WebhookSettings(BaseModel):
    endpoints: Annotated[dict[str, str], Widens.when_set("adds places messages are posted to")] = Field(
        default_factory=dict, description="Endpoint name -> URL; also PEGBOARD_WEBHOOK_<NAME>=URL.")
    headers: Annotated[dict[str, str], Widens.when_set("sends these headers (often a token) with every message")] = (
        Field(default_factory=dict, description="Headers sent with every POST (an Authorization token)."))
    allowPrivateHosts: Annotated[list[str], Widens.when_set("lets messages reach private hosts")] = Field(
        default_factory=list, description="Private hosts or networks endpoints may be on (127.0.0.1, 10.0.0.0/8).")
    timeoutSeconds: Annotated[float, NEUTRAL] = Field(default=15.0, gt=0, le=300,
                                                      description="Deadline for one POST.")


def _settings(ctx: ToolContext) -> WebhookSettings:
    value: WebhookSettings = ctx.settings(SETTINGS_KEY)
    return value


def endpoints(ctx: ToolContext) -> dict[str, str]:
    found = {k[len(ENV_PREFIX):].lower(): v for k, v in ctx.env.items()
             if k.startswith(ENV_PREFIX) and v}
    configured = credential(ctx, f"{SETTINGS_KEY}.endpoints")
    if isinstance(configured, dict):
        found.update({str(k): str(v) for k, v in configured.items()})
    return found


def headers(ctx: ToolContext) -> dict[str, str]:
    configured = credential(ctx, f"{SETTINGS_KEY}.headers")
    return {str(k): str(v) for k, v in configured.items()} if isinstance(configured, dict) else {}


class WebhookChannel:
    name = "webhook"
    capabilities = frozenset({"send", "thread-reply", "notify"})

    def unavailable_reason(self, context: ToolContext) -> str | None:
        if not endpoints(context):
            return (f"no endpoint is configured (set {SETTINGS_KEY}.endpoints in your user config or "
                    f"{ENV_PREFIX}<NAME>){ignored_note(context, f'{SETTINGS_KEY}.endpoints')}")
        return None

    def secrets(self, context: ToolContext) -> Sequence[str]:
        values = list(headers(context).values())
        tokens = [v.split()[-1] for v in values if v.split()]  # "Bearer <token>": the token alone too
        return [*endpoints(context).values(), *values, *tokens]

    async def perform(self, request: ChannelRequest, context: ToolContext) -> ChannelReply:
        import httpx

        from pegboard_toolkit.netguard import GuardPolicy, HostLookupError, NetworkGuard, NetworkRefused
        from pegboard_toolkit.pinned import PinnedTransport

        known = endpoints(context)
        target = request.target if request.action != "notify" or request.target in known else None
        if target is None:
            if request.action == "notify" and len(known) == 1:
                target = next(iter(known))
            else:
                raise ChannelError(f"name an endpoint as the target: one of {', '.join(sorted(known))}",
                                   "invalid_target")
        url = known.get(target)
        if url is None:
            raise ChannelError(f"no webhook endpoint {target!r}; configured: {', '.join(sorted(known))}",
                               "invalid_target")
        settings = _settings(context)
        guard = NetworkGuard(GuardPolicy(allow_private_hosts=tuple(settings.allowPrivateHosts),
                                         private_hosts_setting=f"{SETTINGS_KEY}.allowPrivateHosts"))
        body: dict[str, Any] = {"text": request.text or "", "target": target}
        if request.title:
            body["title"] = request.title
        if request.thread_id:
            body["threadId"] = request.thread_id
        if request.attachments:
            body["attachments"] = [p.name for p in request.attachments]
        try:
            async with httpx.AsyncClient(transport=PinnedTransport(guard), timeout=settings.timeoutSeconds,
                                         follow_redirects=False) as client:
                response = await client.post(url, content=json.dumps(body),
                                             headers={"content-type": "application/json", **headers(context)})
        except NetworkRefused as exc:
            raise ChannelError(str(exc), exc.error_kind) from None
        except (httpx.ConnectError, httpx.TimeoutException, HostLookupError) as exc:
            raise ChannelError(f"endpoint {target!r} cannot be reached: {type(exc).__name__}", "channel_down") from None
        except httpx.HTTPError as exc:
            raise ChannelError(f"posting to endpoint {target!r} failed: {type(exc).__name__}", "channel_down") from None
        if response.status_code >= 300:
            raise ChannelError(f"endpoint {target!r} answered HTTP {response.status_code}", "rejected")
        message_id = None
        try:
            answer = response.json()
            if isinstance(answer, dict) and isinstance(answer.get("id"), str | int):
                message_id = str(answer["id"])
        except ValueError:
            pass
        return ChannelReply(message_id=message_id, status="sent", data={"httpStatus": response.status_code})


@hookimpl
def register_config_sections(register: ConfigSectionRegister) -> None:
    register(ConfigSection(SETTINGS_KEY, WebhookSettings, description="The webhook message channel."))


@hookimpl
def register_channels(register: Any) -> None:
    register(WebhookChannel())


__all__ = ["SETTINGS_KEY", "WebhookChannel", "WebhookSettings"]
