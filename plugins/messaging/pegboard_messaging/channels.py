"""Channels: the protocol a channel implements, what a request and a reply carry, collecting them.

A channel declares what it can do in ``capabilities`` (the ``message`` tool's action names,
plus ``notify`` for ``notify_user`` and ``receipt`` for delivery receipts); a tool refuses an
action the channel does not declare, naming the channel, instead of failing inside it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pegboard import StashKey
from pegboard_toolkit.registered import Registered, collect_registered

if TYPE_CHECKING:
    from pegboard import Pegboard, ToolContext

#: The ``message`` tool's actions, exactly as OpenClaw lists them.
MESSAGE_ACTIONS: tuple[str, ...] = (
    "send", "poll", "react", "reactions", "read", "edit", "delete", "pin", "unpin", "list-pins",
    "permissions", "thread-create", "thread-list", "thread-reply", "search", "sticker", "member-info",
    "role-info", "emoji-list", "emoji-upload", "sticker-upload", "role-add", "role-remove", "channel-info",
    "channel-list", "voice-status", "event-list", "event-create", "timeout", "kick", "ban",
)
#: Actions that only look: they never ask by default.
READING_ACTIONS = frozenset({
    "reactions", "read", "list-pins", "permissions", "thread-list", "search", "member-info", "role-info",
    "emoji-list", "channel-info", "channel-list", "voice-status", "event-list", "receipt", "status",
})
#: Actions that put a message in front of someone: the ones a chat-bound session keeps to its target.
SENDING_ACTIONS = frozenset({"send", "poll", "sticker", "thread-create", "thread-reply", "notify"})
OTHER_CAPABILITIES = ("notify", "receipt", "status")


@dataclass(frozen=True)
class ChannelRequest:
    """One action for a channel. ``target`` is a recipient or room as the channel spells it."""

    action: str
    target: str | None = None
    text: str | None = None
    title: str | None = None
    message_id: str | None = None
    thread_id: str | None = None
    thread_name: str | None = None
    emoji: str | None = None
    query: str | None = None
    limit: int | None = None
    attachments: tuple[Path, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ChannelReply:
    """What a channel answers: the id it gave a message, items it read, a short summary."""

    message_id: str | None = None
    thread_id: str | None = None
    items: Sequence[Mapping[str, Any]] = ()
    summary: str = ""
    status: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)


class ChannelError(Exception):
    """A channel that failed. ``error_kind``: ``channel_down`` (cannot connect), ``rejected`` (the
    service refused), ``invalid_target``, ``not_found`` or ``channel_error``."""

    def __init__(self, message: str, error_kind: str = "channel_error") -> None:
        super().__init__(message)
        self.error_kind = error_kind


@runtime_checkable
class Channel(Protocol):
    """What ``register_channels`` registers."""

    name: str
    capabilities: frozenset[str]

    def unavailable_reason(self, context: ToolContext) -> str | None:
        """``None`` when the channel is configured here, else why not (no server, no key)."""
        ...

    def secrets(self, context: ToolContext) -> Sequence[str]:
        """Credential values of this channel, kept out of every result, event and stored copy."""
        ...

    async def perform(self, request: ChannelRequest, context: ToolContext) -> ChannelReply:
        """Carry out ``request`` (its action is one of ``capabilities``); raise ``ChannelError``."""
        ...


#: the channels the plugins registered, by name, and what was wrong with the rest
Channels = Registered[Channel]

CHANNELS: StashKey[Channels] = StashKey("pegboard_messaging.channels")


def collect_channels(pegboard: Pegboard) -> Channels:
    """Every channel the plugins of ``pegboard`` register, in registration order (cached);
    what was wrong is also added to ``pegboard.warnings``."""
    cached = pegboard.stash.get(CHANNELS) is not None
    found = collect_registered(pegboard, "register_channels", CHANNELS, Channel, kind_name="a messaging Channel",
                               label="message channel", hook_args={"pegboard": pegboard})
    if not cached:
        for warning in found.warnings:
            if warning not in pegboard.warnings:
                pegboard.warnings.append(warning)
    return found


__all__ = [
    "CHANNELS",
    "MESSAGE_ACTIONS",
    "READING_ACTIONS",
    "SENDING_ACTIONS",
    "Channel",
    "ChannelError",
    "ChannelReply",
    "ChannelRequest",
    "Channels",
    "collect_channels",
]
