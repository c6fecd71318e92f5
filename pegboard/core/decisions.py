"""Decisions that hooks and permission checks return, and how several of them combine."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

PermissionBehavior = Literal["allow", "ask", "deny"]
HookBehavior = Literal["allow", "ask", "deny", "defer"]

_PERMISSION_RANK = {"deny": 3, "ask": 2, "allow": 1}
_HOOK_RANK = {"deny": 4, "defer": 3, "ask": 2, "allow": 1}


class _HookAnswer(BaseModel):
    """The fields every hook answer shares (the JSON hook protocol's universal ones)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    reason: str | None = None
    additional_context: str | None = None
    continue_: bool = True
    stop_reason: str | None = None
    system_message: str | None = None
    notices: tuple[str, ...] = ()
    source: str | None = None


class PreToolUseDecision(_HookAnswer):
    """What a hook before the run answers (``pre_tool_use``, ``permission_request``).

    ``decision`` is ``allow``, ``ask``, ``deny`` or ``defer`` (``permissionDecision`` in the
    JSON protocol); ``updated_input`` replaces the input and is validated again. There is no
    output yet, so there is no ``updated_output``: passing one is a ``ValidationError``.
    """

    decision: HookBehavior | None = None
    updated_input: dict[str, Any] | None = None
    #: with ``decision="allow"`` in ``permission_request``: the call runs where the OS itself
    #: enforces every Read/Edit deny rule (a sandbox that masks the denied files), which settles
    #: an ask that is hard only because such a rule might cover a file the engine cannot name
    #: (``PermissionDecision.unseen_files``)
    enforces_file_rules: bool = False


class PostToolUseDecision(_HookAnswer):
    """What a hook after the run answers (``post_tool_use``, ``post_tool_use_failure``).

    ``decision="deny"`` (PostToolUse ``block``) marks the result as blocked; ``updated_output``
    replaces the tool's output. The input was used already, so there is no ``updated_input``.
    """

    decision: Literal["deny"] | None = None
    updated_output: Any = None


class HookDecision(BaseModel):
    """Any hook's answer, with every field; ``session_start`` answers with one.

    For the per-call hooks prefer :class:`PreToolUseDecision` and :class:`PostToolUseDecision`,
    which cannot carry a field their stage ignores. A ``HookDecision`` whose ``updated_output``
    comes from a hook before the run (or ``updated_input`` from one after it) is reported in
    the call's ``hook_errors`` and that field is not applied.
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
    enforces_file_rules: bool = False  # see PreToolUseDecision.enforces_file_rules


#: what a per-call hook may return as its decision
AnyHookDecision = HookDecision | PreToolUseDecision | PostToolUseDecision


class PermissionDecision(BaseModel):
    """May this call run: ``allow``, ``ask`` or ``deny``, with the rule and file that decided."""

    model_config = ConfigDict(frozen=True)

    decision: PermissionBehavior
    rule: str | None = None
    source: str | None = None
    reason: str = ""
    #: an "ask" that only a person may approve: no allow rule, mode or hook allow can
    #: (protected paths, critical ``rm``, commands that cannot be analysed, plan-mode edits,
    #: a part of the call a deny or ask rule might cover that the engine cannot see)
    hard: bool = False
    #: a hard ask whose only cause is that Read/Edit deny rules might cover a file the engine
    #: cannot name (``cat "$f"``): where the OS enforces those rules (a sandbox that masks the
    #: denied files) a hook that says so may settle it (``enforces_file_rules``)
    unseen_files: bool = False

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
    if best is not None and best.decision == "ask":
        others = [d for d in decisions if d is not best and d.hard and d.decision == "ask"]
        if others:
            reasons = [best.reason, *(d.reason for d in others if d.reason and d.reason not in best.reason)]
            best = best.model_copy(update={
                "hard": True, "reason": "; ".join(r for r in reasons if r),
                "unseen_files": (best.unseen_files or (not best.hard and best.rule is None))
                and all(d.unseen_files for d in others),
            })
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
