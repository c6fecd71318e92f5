"""Decisions that hooks and permission checks return, and how several of them combine."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

PermissionBehavior = Literal["allow", "ask", "deny"]
HookBehavior = Literal["allow", "ask", "deny", "defer"]

_PERMISSION_RANK = {"deny": 3, "ask": 2, "allow": 1}
_HOOK_RANK = {"deny": 4, "defer": 3, "ask": 2, "allow": 1}


class HookDecision(BaseModel):
    """What a ``pre_tool_use``/``post_tool_use``/``permission_request`` hook answers.

    The fields mirror the JSON hook protocol: ``decision`` (``permissionDecision`` or a
    PostToolUse ``block``), ``reason``, ``updated_input``, ``additional_context``,
    ``updated_output`` (replaces a tool's output), and the universal ``continue_`` /
    ``stop_reason`` / ``system_message``. ``notices`` are non-blocking problems a hook wants
    reported (a command hook that timed out, say); they land in the result's metadata.
    ``None`` everywhere means "no opinion".
    """

    model_config = ConfigDict(frozen=True)

    decision: HookBehavior | None = None
    reason: str | None = None
    updated_input: dict[str, Any] | None = None
    additional_context: str | None = None
    updated_output: Any = None
    continue_: bool = True
    stop_reason: str | None = None
    system_message: str | None = None
    notices: tuple[str, ...] = ()
    source: str | None = None


class PermissionDecision(BaseModel):
    """May this call run: ``allow``, ``ask`` or ``deny``, with the rule and file that decided."""

    model_config = ConfigDict(frozen=True)

    decision: PermissionBehavior
    rule: str | None = None
    source: str | None = None
    reason: str = ""
    #: an "ask" that only a person may approve: no allow rule, mode or hook allow can
    #: (protected paths, critical ``rm``, commands that cannot be analysed, plan-mode edits)
    hard: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"decision": self.decision, "rule": self.rule, "source": self.source, "reason": self.reason}


def strongest_permission(decisions: Iterable[PermissionDecision]) -> PermissionDecision | None:
    """Combine permission decisions: deny > ask > allow.

    Of equal rank, the first naming a rule wins, else the first: a rule's ask must not hide
    behind a tool-default ask (a hook ``allow`` may settle the latter, never the former). An
    ask stays ``hard`` when any of the asks combined is.
    """
    decisions = list(decisions)
    best: PermissionDecision | None = None
    for d in decisions:
        if best is None or _strength(d) > _strength(best):
            best = d
    if best is not None and best.decision == "ask" and not best.hard and any(
        d.hard and d.decision == "ask" for d in decisions if d is not best
    ):
        best = best.model_copy(update={"hard": True})
    return best


def _strength(d: PermissionDecision) -> tuple[int, int]:
    return _PERMISSION_RANK[d.decision], int(d.rule is not None)


def strongest_hook_decision(decisions: Iterable[HookDecision]) -> HookDecision | None:
    """Combine hook decisions: deny > defer > ask > allow; the first of equal rank wins."""
    best: HookDecision | None = None
    for d in decisions:
        if d.decision is None:
            continue
        if best is None or _HOOK_RANK[d.decision] > _HOOK_RANK[best.decision or "allow"]:
            best = d
    return best
