"""Delivery receipts: what each message a session sent became, kept in the session's state."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from pegboard import SessionKey, StashKey

#: The clock receipts are stamped with; a test puts its own in ``pegboard.stash``.
CLOCK: StashKey[Callable[[], datetime]] = StashKey("pegboard_messaging.clock")


def now(stash: Any) -> datetime:
    clock = stash.get(CLOCK) if stash is not None else None
    return clock() if clock is not None else datetime.now(UTC)


@dataclass
class Receipt:
    """One message a session sent (or tried to): the stored text is already redacted."""

    id: str
    channel: str
    target: str | None
    action: str
    status: str  # sent | failed | delivered | read (as the channel reports)
    at: str
    text: str = ""
    channel_message_id: str | None = None
    thread_id: str | None = None
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ReceiptBook:
    receipts: list[Receipt] = field(default_factory=list)

    def add(self, receipt: Receipt, keep: int) -> None:
        self.receipts.append(receipt)
        del self.receipts[:-keep]

    def find(self, id: str) -> Receipt | None:
        return next((r for r in reversed(self.receipts) if id in (r.id, r.channel_message_id)), None)


def _encode(book: ReceiptBook) -> Any:
    return [r.to_json() for r in book.receipts]


def _decode(data: Any) -> ReceiptBook:
    return ReceiptBook([Receipt(**r) for r in data or []])


RECEIPTS: SessionKey[ReceiptBook] = SessionKey(
    "pegboard-messaging-receipts", ReceiptBook, persist=True, default=ReceiptBook, encode=_encode, decode=_decode
)


def new_id() -> str:
    return "msg_" + secrets.token_hex(8)


@dataclass(frozen=True)
class ChatBinding:
    """The chat a session answers in: sends from it go to this channel and target only."""

    channel: str
    target: str


CHAT_BINDING: SessionKey[ChatBinding] = SessionKey(
    "pegboard-messaging-chat", ChatBinding, persist=True,
    encode=lambda b: {"channel": b.channel, "target": b.target},
    decode=lambda d: ChatBinding(str(d["channel"]), str(d["target"])),
)


def bind_chat(session: Any, channel: str, target: str) -> None:
    """Bind ``session`` to a chat: its message sends may then reach only ``channel``/``target``."""
    session.state[CHAT_BINDING] = ChatBinding(channel, target)


__all__ = ["CHAT_BINDING", "CLOCK", "RECEIPTS", "ChatBinding", "Receipt", "ReceiptBook", "bind_chat", "new_id"]
