"""Asking a 2026-07-28 client within one request: the protocol's multi-round-trip input.

A stateless request has no channel back to the client while it runs. Instead the server
answers ``input_required`` with the questions, and the client retries the same request
with the answers and the ``requestState`` it was given. The call is run again from the
start on every round; each question it asks is answered from the earlier rounds (matched
by a digest of the question, so a replay that asks something else is not answered with an
old answer), and the first unanswered one ends the round. The SDK's request-state boundary
seals the state, so a client cannot forge earlier answers.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

#: The first protocol version whose requests carry their own input rounds.
ROUNDS_FROM = "2026-07-28"
#: Questions one request may ask across all its rounds.
MAX_QUESTIONS = 8


def uses_rounds(protocol_version: object) -> bool:
    return isinstance(protocol_version, str) and protocol_version >= ROUNDS_FROM


def _digest(kind: str, question: Any) -> str:
    text = json.dumps([kind, question], sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


@dataclass
class InputRounds:
    """One round of a request: the answers it already has and the question it stopped at."""

    answers: list[dict[str, Any]] = field(default_factory=list)
    asked: int = 0
    pending: tuple[str, str, dict[str, Any]] | None = None  # key, kind, the wire request
    pending_digest: str = ""

    @classmethod
    def of(cls, params: Any) -> InputRounds:
        """The rounds so far, from a request's (already unsealed) ``requestState`` and ``inputResponses``."""
        answers: list[dict[str, Any]] = []
        waiting: dict[str, Any] | None = None
        raw = getattr(params, "request_state", None)
        if isinstance(raw, str) and raw:
            try:
                state = json.loads(raw)
            except ValueError:
                state = {}
            if isinstance(state, dict):
                answers = [a for a in state.get("answers", []) if isinstance(a, dict)]
                waiting = state.get("waiting") if isinstance(state.get("waiting"), dict) else None
        responses = getattr(params, "input_responses", None) or {}
        if waiting is not None and waiting.get("key") in responses:
            answer = responses[waiting["key"]]
            dumped = answer.model_dump(mode="json", by_alias=True, exclude_none=True) if hasattr(
                answer, "model_dump") else answer
            answers.append({"digest": waiting.get("digest"), "answer": dumped})
        return cls(answers=answers)

    def _ask(self, kind: str, request: dict[str, Any]) -> dict[str, Any] | None:
        index = self.asked
        self.asked += 1
        digest = _digest(kind, request)
        if index < len(self.answers):
            known = self.answers[index]
            return known.get("answer") if known.get("digest") == digest else None
        if self.pending is None and index < MAX_QUESTIONS:
            self.pending = (f"q{index}", kind, request)
            self.pending_digest = digest
        return None

    async def elicit(self, message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        return self._ask("elicitation/create", {"mode": "form", "message": message, "requestedSchema": schema})

    async def create_message(self, params: dict[str, Any]) -> dict[str, Any] | None:
        return self._ask("sampling/createMessage", params)

    def input_required(self) -> dict[str, Any] | None:
        """The ``input_required`` result for the question this round stopped at, if any."""
        if self.pending is None:
            return None
        key, kind, request = self.pending
        state = {"answers": self.answers, "waiting": {"key": key, "digest": self.pending_digest}}
        return {
            "resultType": "input_required",
            "inputRequests": {key: {"method": kind, "params": request}},
            "requestState": json.dumps(state, separators=(",", ":")),
        }


__all__ = ["MAX_QUESTIONS", "ROUNDS_FROM", "InputRounds", "uses_rounds"]
