"""``Message(channel:target)`` rules: which channels and recipients the messaging tools may reach.

``Message(email)`` is every call on channel ``email``; ``Message(email:*@example.com)`` the
recipients matching that pattern (``*`` any characters, the only wildcard). Sending to a
recipient or room no allow rule covers asks by default; reading (``read``, ``search``,
``thread-list``, receipts, ...) does not. Deny and ask rules compare case-insensitively, allow
rules exactly, so a misspelt allow rule never reaches more than written. A call that names
no channel (the configured default is used) is one a deny or ask rule may cover: it asks.
Offered through entry-point group ``pegboard.permission_families``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pegboard.permissions import Allows, FamilyCall, FamilyTool, Outcome, Reading, Rule, RuleSuggestion, first_allowing

#: Actions that only look (kept in step with ``pegboard_messaging.channels.READING_ACTIONS``).
READING = frozenset({
    "reactions", "read", "list-pins", "permissions", "thread-list", "search", "member-info", "role-info",
    "emoji-list", "channel-info", "channel-list", "voice-status", "event-list", "receipt", "status",
})
#: The action a tool's call is, for tools without an ``action`` field.
TOOL_ACTIONS = {"send_message": "send", "notify_user": "notify", "message_receipt": "receipt"}


def _glob(pattern: str, flags: int) -> re.Pattern[str]:
    return re.compile("".join(".*" if c == "*" else re.escape(c) for c in pattern) + r"\Z", flags)


def call_parts(name: str, data: Mapping[str, Any]) -> tuple[str, str | None, str | None]:
    """``(action, channel, target)`` of a messaging call as its input gives them."""
    action = data.get("action") if isinstance(data.get("action"), str) else TOOL_ACTIONS.get(name, "send")
    channel = data.get("channel") if isinstance(data.get("channel"), str) and data.get("channel") else None
    target = next((data[k] for k in ("target", "to") if isinstance(data.get(k), str) and data.get(k)), None)
    if target is None and action == "notify":
        target = "user"
    return str(action), channel, target


class MessageFamily:
    """``Message(channel)`` and ``Message(channel:target)``."""

    name = "Message"
    asks = True
    fields: tuple[str, ...] = ("action", "channel", "target", "to")
    tools: Mapping[str, FamilyTool] = {}
    file_rules: Literal["read", "write"] | None = None
    borrows: Mapping[str, tuple[str, ...]] = {}

    def parse(self, rule: Rule, fields: frozenset[str] | None, note: Callable[[str], None]) -> Sequence[Reading]:
        spec = (rule.specifier or "").strip()
        if not spec:
            note("Message() needs a channel, as Message(email) or Message(email:bob@example.com) (ignored)")
            return []
        return [("own", spec)]

    def compile(self, rule_list: str, own: Sequence[tuple[Rule, Any]]) -> Any:
        flags = 0 if rule_list == "allow" else re.IGNORECASE
        out = []
        for rule, spec in own:
            channel, _, target = str(spec).partition(":")
            out.append((rule, _glob(channel, flags), _glob(target, flags) if target else None))
        return out

    def judge(self, call: FamilyCall) -> Outcome:
        out = Outcome()
        action, channel, target = call_parts(call.name, call.data)
        shown = f"{channel or '(default channel)'}:{target or '(no target)'}"
        for lst in ("deny", "ask", "allow"):
            for rule, channel_rx, target_rx in call.rules[lst]:
                if channel is None:
                    if lst != "allow":
                        out.might_apply(rule, f"{call.name} names no channel (the configured default is used)")
                    continue
                if not channel_rx.match(channel):
                    continue
                if target_rx is not None and (target is None or not target_rx.match(target)):
                    continue
                out.note(lst, rule, f"{call.name} {action} on {shown} matches {rule.text}")
        if action in READING:
            out.default_ok = f"{call.name} {action} only reads"
        out.unapproved = f"{call.name} {action} to {shown}: a recipient no Message(...) rule allows needs approval"
        return out

    def suggest(self, family: str, data: Mapping[str, Any], cwd: Path, allows: Allows) -> RuleSuggestion | None:
        """``Message(channel:target)`` for the recipient the call names."""
        _, channel, target = call_parts("", data)
        if channel is None:
            return None
        return first_allowing([f"{family}({channel}:{target})" if target else f"{family}({channel})"], data, allows)


__all__ = ["MessageFamily", "call_parts"]
