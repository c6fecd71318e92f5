"""The ``messaging`` config section: defaults and limits shared by every channel."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from pegboard import NEUTRAL, Widens

SETTINGS_KEY = "messaging"


class MessagingSettings(BaseModel):
    enabled: Annotated[bool, NEUTRAL] = Field(default=True, description="Offer the messaging tools at all.")
    defaultChannel: Annotated[str | None, Widens.when_set("chooses where a call that names no channel goes")] = Field(
        default=None, description="The channel a call without `channel` uses (default: the only available one).")
    notifyChannel: Annotated[str | None, Widens.when_set("chooses where notify_user delivers")] = Field(
        default=None, description="The channel notify_user uses (default: the first available that can notify).")
    maxMessageChars: Annotated[int, NEUTRAL] = Field(default=4000, ge=1, le=1_000_000,
                                                     description="Longest message text a call may send.")
    maxAttachments: Annotated[int, NEUTRAL] = Field(default=10, ge=0, le=100,
                                                    description="Most attachments in one message.")
    maxAttachmentBytes: Annotated[int, NEUTRAL] = Field(default=25 * 1024 * 1024, ge=1,
                                                        description="Largest attachment, in bytes.")
    receiptsKept: Annotated[int, NEUTRAL] = Field(default=200, ge=1, le=100_000,
                                                  description="Receipts a session keeps (oldest dropped first).")
    timeoutSeconds: Annotated[float, NEUTRAL] = Field(default=30.0, gt=0, le=600,
                                                      description="Deadline for one channel action.")
