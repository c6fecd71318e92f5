"""``EnterPlanMode`` and ``ExitPlanMode``: explore and plan first, change nothing until approved.

``EnterPlanMode`` switches the session's permission mode to ``plan`` (edits are blocked) and
keeps the mode it replaced in a session slot. ``ExitPlanMode`` shows the plan through the
host's ``approve_plan`` hook: on approval the session returns to the kept mode, or to the mode
the approval names; a refusal keeps plan mode and passes the user's feedback to the model.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic import BaseModel, Field

from pegboard import (
    NeedsHost,
    PlanDecision,
    PlanRequest,
    SessionKey,
    ToolContext,
    ToolRegister,
    ToolResult,
    ask_host,
    hookimpl,
    tool,
)

PREVIOUS_MODE: SessionKey[str] = SessionKey("pegboard-plan-previous-mode", str, persist=True)
OWNER = "plan-mode"


class EnterPlanModeInput(BaseModel):
    pass


class ExitPlanModeInput(BaseModel):
    plan: str = Field(min_length=1, description="The plan to present for approval, in markdown; concise but complete.")


@tool(
    name="EnterPlanMode",
    groups=["pegboard"],
    read_only=True,
    usage="Enter plan mode before a non-trivial change: explore and design, then present the plan with ExitPlanMode.",
)
async def enter_plan_mode(input: EnterPlanModeInput, ctx: ToolContext) -> ToolResult:
    """Switch to plan mode for a task that needs exploring and designing before any change: in plan mode
    files cannot be edited and commands that change things are refused. Present the finished plan with
    ExitPlanMode for the user's approval."""
    session = ctx.session
    if session is None:
        return ToolResult.error("EnterPlanMode needs a session", error_kind="not_available")
    if session.mode == "plan":
        return ToolResult.from_text("Already in plan mode. Present the plan with ExitPlanMode when it is ready.")
    session.state[PREVIOUS_MODE] = session.mode
    session.mode = "plan"
    return ToolResult.from_text(
        "Entered plan mode. Explore the code and design an approach; do not edit files. "
        "When the plan is ready, present it with ExitPlanMode.",
        structured={"mode": "plan"},
    )


def _decision(answer: Any) -> PlanDecision:
    if isinstance(answer, PlanDecision):
        return answer
    if isinstance(answer, bool):
        return PlanDecision(approved=answer)
    raise ValueError(f"the host answered the plan with {type(answer).__name__}, not a PlanDecision or bool")


@tool(
    name="ExitPlanMode",
    groups=["pegboard"],
    usage="Present the plan for approval and leave plan mode once it is approved.",
)
async def exit_plan_mode(input: ExitPlanModeInput, ctx: ToolContext) -> ToolResult:
    """Present your plan to the user for approval and leave plan mode. Use it only when the task
    needs writing code and the plan is complete; not for research tasks. If the user refuses, stay
    in plan mode and revise the plan with their feedback."""
    session = ctx.session
    if session is None:
        return ToolResult.error("ExitPlanMode needs a session", error_kind="not_available")
    if session.mode != "plan":
        return ToolResult.error("not in plan mode; nothing to exit", error_kind="not_in_plan_mode")
    previous = session.state.get(PREVIOUS_MODE) or "default"
    try:
        decision = _decision(await ask_host(ctx, "approve_plan", request=PlanRequest(input.plan, previous)))
    except Exception as exc:
        return ToolResult.error(f"presenting the plan failed: {exc}", error_kind="host_error")
    if not decision.approved:
        feedback = f" Their feedback: {decision.feedback}" if decision.feedback else ""
        return ToolResult.refusal(
            "denied",
            f"The user did not approve the plan; still in plan mode.{feedback} Revise the plan and present it again.",
            error_kind="plan_rejected",
        )
    target = decision.mode or previous
    if target == "plan":
        target = "default"
    try:
        session.mode = target
    except ValueError as exc:
        return ToolResult.error(str(exc), error_kind="bad_mode")
    del session.state[PREVIOUS_MODE]
    feedback = f" Note from the user: {decision.feedback}" if decision.feedback else ""
    return ToolResult.from_text(
        f"The user approved the plan. Plan mode is over (mode: {target}); carry out the plan.{feedback}",
        structured={"approved": True, "mode": target, "plan": input.plan},
    )


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(enter_plan_mode)
    register(dataclasses.replace(exit_plan_mode, availability=NeedsHost("approve_plan", "approve plans")))
