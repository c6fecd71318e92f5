"""Pegboard's messaging tools: OpenClaw's ``message`` and Anyy's ``messaging_status``,
``notify_user``, ``send_message`` (delivery through a channel; a different tool from the
agent-to-agent ``SendMessage``) and ``message_receipt``, all in ``group:messaging``.

Channels are plugins (``register_channels``); the tools refuse, naming the channel, what a
channel does not declare. Calls are judged by ``Message(channel:target)`` rules: sending
to a recipient no rule allows asks, reading does not. Every message sent is a session
event (``message_sent``) and a receipt in the session, stored with secrets redacted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from pegboard import (
    ConfigSection,
    ConfigSectionRegister,
    GroupRegister,
    Pegboard,
    TextBlock,
    ToolContext,
    ToolResult,
    hookimpl,
    redact,
    tool,
)

from .channels import (
    MESSAGE_ACTIONS,
    READING_ACTIONS,
    SENDING_ACTIONS,
    Channel,
    ChannelError,
    ChannelReply,
    ChannelRequest,
    collect_channels,
)
from .receipts import CHAT_BINDING, CLOCK, RECEIPTS, ChatBinding, Receipt, bind_chat, new_id, now
from .settings import SETTINGS_KEY, MessagingSettings

OWNER = "pegboard-messaging"
GROUPS = ["messaging", "pegboard"]
FAMILY = "Message"

MessageAction = Literal[
    "send", "poll", "react", "reactions", "read", "edit", "delete", "pin", "unpin", "list-pins",
    "permissions", "thread-create", "thread-list", "thread-reply", "search", "sticker", "member-info",
    "role-info", "emoji-list", "emoji-upload", "sticker-upload", "role-add", "role-remove", "channel-info",
    "channel-list", "voice-status", "event-list", "event-create", "timeout", "kick", "ban",
]


def _settings(ctx: ToolContext) -> MessagingSettings:
    value: MessagingSettings = ctx.settings(SETTINGS_KEY)
    return value


def _channels(ctx: ToolContext) -> dict[str, Channel]:
    pb = ctx.pegboard
    return collect_channels(pb).by_name if pb is not None else {}


def _refuse(message: str, kind: str, **metadata: Any) -> ToolResult:
    return ToolResult.error(message, error_kind=kind, **metadata)


def _secrets(ctx: ToolContext, channels: Sequence[Channel]) -> list[str]:
    found: list[str] = list(ctx.pegboard.secrets) if ctx.pegboard is not None else []
    for channel in channels:
        try:
            found += [s for s in channel.secrets(ctx) if s and len(s) >= 4]
        except Exception:
            continue
    return sorted(set(found), key=len, reverse=True)


def choose_channel(ctx: ToolContext, name: str | None, *, need: str) -> tuple[Channel | None, str]:
    """The channel a call uses and, when there is none, why (naming what would fix it)."""
    channels = _channels(ctx)
    settings = _settings(ctx)
    wanted = name or (settings.notifyChannel if need == "notify" else None) or settings.defaultChannel
    if wanted:
        channel = channels.get(wanted)
        if channel is None:
            known = ", ".join(channels) or "none installed"
            return None, f"no message channel is called {wanted!r} (channels: {known})"
        reason = channel.unavailable_reason(ctx)
        if reason:
            return None, f"channel {channel.name!r} is not available: {reason}"
        if need not in channel.capabilities:
            return None, _cannot(channel, need)
        return channel, ""
    usable = [c for c in channels.values() if need in c.capabilities and c.unavailable_reason(ctx) is None]
    if len(usable) == 1 or (usable and need == "notify"):
        return usable[0], ""
    if not channels:
        return None, "no message channel is installed (no plugin implements register_channels)"
    if not usable:
        why = "; ".join(f"{c.name}: {c.unavailable_reason(ctx) or _cannot(c, need)}" for c in channels.values())
        return None, f"no available channel can {need}: {why}"
    names = ", ".join(c.name for c in usable)
    return None, f"several channels can {need} ({names}): name one in `channel` or set {SETTINGS_KEY}.defaultChannel"


def _cannot(channel: Channel, action: str) -> str:
    can = ", ".join(sorted(channel.capabilities)) or "nothing"
    return f"channel {channel.name!r} cannot {action} (it supports: {can})"


def _binding_refusal(ctx: ToolContext, channel: Channel, target: str | None, action: str) -> ToolResult | None:
    if action not in SENDING_ACTIONS or action == "notify" or ctx.session is None:  # notify reaches the user
        return None
    bound: ChatBinding | None = ctx.session.state.get(CHAT_BINDING)
    if bound is None or (bound.channel == channel.name and target in (None, bound.target)):
        return None
    return _refuse(
        f"this session answers in the chat {bound.channel}:{bound.target}; it cannot send to "
        f"{channel.name}:{target} (sends stay in the session's chat so that no context leaks)",
        "outside_chat_session", channel=channel.name,
    )


def _attachments(ctx: ToolContext, paths: Sequence[str], settings: MessagingSettings) -> list[Path] | ToolResult:
    if len(paths) > settings.maxAttachments:
        return _refuse(f"{len(paths)} attachments; at most {settings.maxAttachments} "
                       f"({SETTINGS_KEY}.maxAttachments)", "too_many_attachments")
    found: list[Path] = []
    for text in paths:
        path = Path(text).expanduser()
        path = path if path.is_absolute() else ctx.cwd / path
        if not ctx.permissions.may_read(path):
            return _refuse(f"attachment {text}: the Read rules do not allow reading it; "
                           "only files the agent may read can be attached", "attachment_denied")
        if not path.is_file():
            return _refuse(f"attachment {text}: no such file", "attachment_not_found")
        size = path.stat().st_size
        if size > settings.maxAttachmentBytes:
            return _refuse(f"attachment {text} is {size} bytes; at most {settings.maxAttachmentBytes} "
                           f"({SETTINGS_KEY}.maxAttachmentBytes)", "attachment_too_large")
        found.append(path)
    return found


async def perform(ctx: ToolContext, channel_name: str | None, request: ChannelRequest) -> ToolResult:
    """Run one action on a channel: choose it, check what it declares and the session's chat,
    send with secrets removed, keep a receipt, emit ``message_sent``."""
    settings = _settings(ctx)
    if not settings.enabled:
        return ToolResult.refusal("unavailable", f"messaging is turned off by {SETTINGS_KEY}.enabled")
    channel, why = choose_channel(ctx, channel_name, need=request.action)
    if channel is None:
        return _refuse(f"{request.action}: {why}", "unsupported_action" if "cannot" in why else "no_channel",
                       action=request.action)
    if (refusal := _binding_refusal(ctx, channel, request.target, request.action)) is not None:
        return refusal
    if ctx.session is not None and request.action in SENDING_ACTIONS - {"notify"} and request.target is None:
        bound: ChatBinding | None = ctx.session.state.get(CHAT_BINDING)
        if bound is not None:
            request = dataclasses.replace(request, target=bound.target)
    if request.text is not None and len(request.text) > settings.maxMessageChars:
        return _refuse(f"the message is {len(request.text)} characters; at most {settings.maxMessageChars} "
                       f"({SETTINGS_KEY}.maxMessageChars)", "message_too_long")
    secrets = _secrets(ctx, list(_channels(ctx).values()))
    if request.text is not None:
        request = dataclasses.replace(request, text=redact(request.text, secrets))
    import asyncio

    sending = request.action not in READING_ACTIONS
    try:
        reply = await asyncio.wait_for(channel.perform(request, ctx), settings.timeoutSeconds)
    except TimeoutError:
        error: ChannelError | None = ChannelError(
            f"channel {channel.name!r} did not answer within {settings.timeoutSeconds:g} s "
            f"({SETTINGS_KEY}.timeoutSeconds)", "channel_down")
        reply = None
    except ChannelError as exc:
        error, reply = exc, None
    except Exception as exc:  # a channel's own bug: a result, never a crash
        error, reply = ChannelError(f"channel {channel.name!r} failed: {type(exc).__name__}: {exc}"), None
    else:
        error = None
    receipt = None
    if sending:
        receipt = _keep_receipt(ctx, channel, request, reply, error, secrets, settings)
    if error is not None or reply is None:
        message = redact(str(error), secrets)
        return ToolResult.error(f"{request.action} on {channel.name}: {message}",
                                error_kind=getattr(error, "error_kind", "channel_error"), channel=channel.name,
                                receipt=receipt.id if receipt else None)
    structured: dict[str, Any] = {
        "channel": channel.name, "action": request.action, "target": request.target,
        "messageId": reply.message_id, "threadId": reply.thread_id, "status": reply.status,
        "items": [dict(i) for i in reply.items], **({"receipt": receipt.id} if receipt else {}),
        **{k: v for k, v in reply.data.items() if k not in ("channel", "action")},
    }
    summary = reply.summary or _summary(channel.name, request, reply, receipt)
    return ToolResult(content=[TextBlock(text=redact(summary, secrets))], structured=structured,
                      metadata={"channel": channel.name, "action": request.action})


def _summary(channel: str, request: ChannelRequest, reply: ChannelReply, receipt: Receipt | None) -> str:
    if receipt is not None:
        where = f" to {request.target}" if request.target else ""
        return f"{request.action} on {channel}{where}: done (receipt {receipt.id})"
    return f"{request.action} on {channel}: {len(reply.items)} item(s)"


def _keep_receipt(ctx: ToolContext, channel: Channel, request: ChannelRequest, reply: ChannelReply | None,
                  error: Exception | None, secrets: Sequence[str], settings: MessagingSettings) -> Receipt:
    stash = ctx.pegboard.stash if ctx.pegboard is not None else None
    receipt = Receipt(
        id=new_id(), channel=channel.name, target=request.target, action=request.action,
        status="failed" if error is not None else (reply.status if reply and reply.status else "sent"),
        at=now(stash).isoformat(), text=redact(request.text or "", secrets),
        channel_message_id=reply.message_id if reply else None, thread_id=reply.thread_id if reply else None,
        detail=redact(str(error), secrets) if error is not None else "",
    )
    if ctx.session is not None:
        book = ctx.session.state[RECEIPTS]
        book.add(receipt, settings.receiptsKept)
        ctx.session.state[RECEIPTS] = book
    if error is None:
        ctx.emit("message_sent", receipt.to_json())
    else:
        ctx.emit("message_failed", receipt.to_json())
    return receipt


# -- message (OpenClaw) ------------------------------------------------------------------------
class MessageInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: MessageAction = Field(description="What to do; the channel must support it.")
    channel: str | None = Field(default=None, description="Channel name (default: messaging.defaultChannel).")
    target: str | None = Field(default=None, description="Recipient, room or conversation, as the channel spells it.")
    message: str | None = Field(default=None, description="Text to send (send, thread-reply, edit, poll question).")
    media: list[str] = Field(default_factory=list, description="Files to attach (paths the Read rules allow).")
    messageId: str | None = Field(default=None, description="The message to react to, edit, delete or pin.")
    threadId: str | None = Field(default=None, description="Thread to reply in or list.")
    threadName: str | None = Field(default=None, description="Name of a thread to create.")
    emoji: str | None = Field(default=None, description="Reaction emoji.")
    query: str | None = Field(default=None, description="Search text.")
    limit: int | None = Field(default=None, ge=1, le=500, description="Most items to return.")
    options: dict[str, Any] = Field(default_factory=dict,
                                    description="Channel-specific extras (poll options, user or role ids).")


def _needs(input: MessageInput) -> str | None:
    a = input.action
    if a in ("send", "thread-reply", "edit", "poll") and not (input.message or (a == "send" and input.media)):
        return "message"
    if a in ("react", "edit", "delete", "pin", "unpin") and not input.messageId:
        return "messageId"
    if a == "react" and not input.emoji:
        return "emoji"
    if a == "thread-reply" and not input.threadId:
        return "threadId"
    if a == "search" and not input.query:
        return "query"
    return None


@tool(name="message", groups=GROUPS, requires_permission=True, open_world=True, permission_family=FAMILY,
      usage="message(action, channel?, target?, message?, ...): send, read, react, edit, thread and pin messages "
            "on the configured channels; an action the channel cannot do is refused naming the channel.")
async def message(input: MessageInput, ctx: ToolContext) -> ToolResult:
    """Send messages and act on a channel: send, poll, react, reactions, read, edit, delete, pin,
    unpin, list-pins, permissions, thread-create, thread-list, thread-reply, search, sticker,
    member-info, role-info, emoji-list, emoji-upload, sticker-upload, role-add, role-remove,
    channel-info, channel-list, voice-status, event-list, event-create, timeout, kick, ban.
    A call from a session bound to a chat sends only to that chat."""
    if (field := _needs(input)) is not None:
        return ToolResult.refusal("invalid_input", f"action {input.action!r} needs `{field}`")
    attachments = _attachments(ctx, input.media, _settings(ctx))
    if isinstance(attachments, ToolResult):
        return attachments
    request = ChannelRequest(
        action=input.action, target=input.target, text=input.message, message_id=input.messageId,
        thread_id=input.threadId, thread_name=input.threadName, emoji=input.emoji, query=input.query,
        limit=input.limit, attachments=tuple(attachments), options=input.options,
    )
    return await perform(ctx, input.channel, request)


# -- Anyy's tools ------------------------------------------------------------------------------
class SendMessageInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    channel: str | None = Field(default=None, description="Channel name (default: messaging.defaultChannel).")
    to: str | None = Field(default=None, description="Recipient or room, as the channel spells it.")
    text: str = Field(default="", description="The message.")
    subject: str | None = Field(default=None, description="Subject or title, where the channel has one.")
    attachments: list[str] = Field(default_factory=list, description="Files to attach (paths the Read rules allow).")
    threadId: str | None = Field(default=None, description="Reply in this thread.")


@tool(name="send_message", groups=GROUPS, requires_permission=True, open_world=True, permission_family=FAMILY,
      usage="send_message(to, text, channel?, subject?, attachments?): deliver a message or file through a "
            "channel (email, webhook, ...); not for talking to another agent (that is SendMessage).")
async def send_message(input: SendMessageInput, ctx: ToolContext) -> ToolResult:
    """Deliver a message or attachment through a supported channel. Returns a receipt id for
    message_receipt. Sending to a recipient no rule allows asks first."""
    if not input.text.strip() and not input.attachments:
        return ToolResult.refusal("invalid_input", "give `text`, `attachments` or both")
    attachments = _attachments(ctx, input.attachments, _settings(ctx))
    if isinstance(attachments, ToolResult):
        return attachments
    action = "thread-reply" if input.threadId else "send"
    request = ChannelRequest(action=action, target=input.to, text=input.text, title=input.subject,
                             thread_id=input.threadId, attachments=tuple(attachments))
    return await perform(ctx, input.channel, request)


class NotifyUserInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    message: str = Field(min_length=1, description="What to tell the user.")
    title: str | None = Field(default=None, description="A short title.")
    channel: str | None = Field(default=None, description="Channel (default: messaging.notifyChannel).")


@tool(name="notify_user", groups=GROUPS, requires_permission=True, open_world=True, permission_family=FAMILY,
      usage="notify_user(message, title?): send the user a notification through the configured route.")
async def notify_user(input: NotifyUserInput, ctx: ToolContext) -> ToolResult:
    """Notify the user through the configured notification route (messaging.notifyChannel)."""
    request = ChannelRequest(action="notify", target="user", text=input.message, title=input.title)
    return await perform(ctx, input.channel, request)


class StatusInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    channel: str | None = Field(default=None, description="Only this channel.")


@tool(name="messaging_status", groups=GROUPS, read_only=True,
      usage="messaging_status(channel?): which delivery routes exist, whether each works, what each can do.")
async def messaging_status(input: StatusInput, ctx: ToolContext) -> ToolResult:
    """List the delivery routes: each channel, whether it is available (or why not) and its actions."""
    import asyncio

    channels = _channels(ctx)
    if input.channel is not None and input.channel not in channels:
        known = ", ".join(channels) or "none installed"
        return _refuse(f"no message channel is called {input.channel!r} (channels: {known})", "no_channel")
    settings = _settings(ctx)
    rows: list[dict[str, Any]] = []
    for channel in channels.values():
        if input.channel is not None and channel.name != input.channel:
            continue
        reason = channel.unavailable_reason(ctx)
        row: dict[str, Any] = {"channel": channel.name, "available": reason is None, "reason": reason,
                               "capabilities": sorted(channel.capabilities)}
        if reason is None and "status" in channel.capabilities:
            try:
                reply = await asyncio.wait_for(channel.perform(ChannelRequest("status"), ctx), settings.timeoutSeconds)
                row["status"] = reply.status or "ok"
            except (ChannelError, TimeoutError) as exc:
                row.update(available=False, status="down", reason=str(exc) or "no answer in time")
        rows.append(row)
    secrets = _secrets(ctx, list(channels.values()))
    if not rows:
        text = "No message channel is installed (no plugin implements register_channels)."
    else:
        lines = []
        for r in rows:
            state = "available" if r["available"] else f"unavailable: {r['reason']}"
            lines.append(f"{r['channel']}: {state}; can {', '.join(r['capabilities']) or 'nothing'}")
        text = "\n".join(lines)
    return ToolResult(content=[TextBlock(text=redact(text, secrets))],
                      structured={"channels": rows, "defaultChannel": settings.defaultChannel,
                                  "notifyChannel": settings.notifyChannel})


class ReceiptInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str | None = Field(default=None, description="Receipt id (or the channel's message id); default: all.")
    limit: int = Field(default=20, ge=1, le=500, description="Most receipts to list when no id is given.")


@tool(name="message_receipt", groups=GROUPS, read_only=True, permission_family=FAMILY,
      usage="message_receipt(id?): the delivery receipt of a message this session sent, or the latest ones.")
async def message_receipt(input: ReceiptInput, ctx: ToolContext) -> ToolResult:
    """Check delivery receipts of messages this session sent; asks the channel for a fresh
    state where it supports receipts."""
    import asyncio

    if ctx.session is None:
        return _refuse("receipts are kept per session; this call has none", "no_session")
    book = ctx.session.state[RECEIPTS]
    if input.id is None:
        rows = [r.to_json() for r in book.receipts[-input.limit:]]
        text = "\n".join(f"{r['id']}: {r['status']} {r['channel']} -> {r['target']} at {r['at']}" for r in rows)
        return ToolResult(content=[TextBlock(text=text or "No message was sent in this session.")],
                          structured={"receipts": rows})
    receipt = book.find(input.id)
    if receipt is None:
        return _refuse(f"no receipt {input.id!r} in this session; message_receipt() lists them", "not_found")
    channel = _channels(ctx).get(receipt.channel)
    if (channel is not None and "receipt" in channel.capabilities and receipt.channel_message_id
            and channel.unavailable_reason(ctx) is None):
        try:
            reply = await asyncio.wait_for(
                channel.perform(ChannelRequest("receipt", target=receipt.target,
                                               message_id=receipt.channel_message_id), ctx),
                _settings(ctx).timeoutSeconds)
            if reply.status:
                receipt.status = reply.status
                ctx.session.state[RECEIPTS] = book
        except (ChannelError, TimeoutError) as exc:
            receipt.detail = str(exc) or "the channel did not answer in time"
    row = receipt.to_json()
    return ToolResult(content=[TextBlock(text=f"{receipt.id}: {receipt.status} via {receipt.channel} to "
                                              f"{receipt.target} at {receipt.at}")], structured=row)


TOOLS = (message, send_message, notify_user, messaging_status, message_receipt)


@hookimpl
def register_config_sections(register: ConfigSectionRegister) -> None:
    register(ConfigSection(SETTINGS_KEY, MessagingSettings, description="Messaging tools and their channels."))


@hookimpl
def register_groups(register: GroupRegister) -> None:
    register("messaging", [t.name for t in TOOLS], "Messages through channels (email, webhooks, notifications)")


@hookimpl
def pegboard_ready(pegboard: Pegboard) -> None:
    def unavailable() -> str | None:
        if not pegboard.settings(SETTINGS_KEY).enabled:
            return f"turned off by {SETTINGS_KEY}.enabled"
        if not collect_channels(pegboard).by_name:
            return "no message channel is installed (install pegboard-messaging-email, -webhook or -notify)"
        return None

    for t in TOOLS:
        pegboard.add_tool(dataclasses.replace(t, availability=unavailable), owner=OWNER)


__all__ = [
    "CHAT_BINDING",
    "CLOCK",
    "MESSAGE_ACTIONS",
    "RECEIPTS",
    "Channel",
    "ChannelError",
    "ChannelReply",
    "ChannelRequest",
    "MessageInput",
    "Receipt",
    "bind_chat",
    "choose_channel",
    "collect_channels",
]
