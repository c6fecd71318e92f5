"""Every tool decided against a :class:`~pegboard.core.policy.plan.PolicyPlan`.

:func:`decide_tool` is the reference: one tool, step by step, in the order of the package
docstring. :func:`decide_listwise` gives the same answers for all tools at once with dict
operations; ``benchmarks/bench_policy.py`` measures it at about half the time of calling
:func:`decide_tool` per tool on the ``Pegboard.tools()`` path, which is why both exist. It
leaves subagent steps to the reference and hands it the optional tools. A property test
(``tests/policy/test_policy_properties.py``) checks the two agree on random catalogs and configs.
"""

from __future__ import annotations

from collections.abc import Sequence

from pegboard.core.policy.allowlists import Allowlist
from pegboard.core.policy.plan import PolicyPlan
from pegboard.core.policy.result import ToolDecision, new_decision
from pegboard.core.policy.steps import (
    STEP_AGENT,
    STEP_ALLOW,
    STEP_AVAILABILITY,
    STEP_BY_PROVIDER,
    STEP_DEFAULT,
    STEP_DENY,
    STEP_OPTIONAL,
    STEP_PROFILE,
    STEP_PROVIDER_POLICY,
    STEP_SUBAGENT,
)


def decide_all(plan: PolicyPlan) -> list[ToolDecision]:
    """Every tool's decision, in index order."""
    if plan.subagent_steps:
        return decide_each(plan)
    return decide_listwise(plan)


def decide_each(plan: PolicyPlan) -> list[ToolDecision]:
    """Every tool's decision through :func:`decide_tool`."""
    return [decide_tool(i, plan) for i in range(len(plan.index.tools))]


def decide_tool(i: int, plan: PolicyPlan) -> ToolDecision:
    """The decision for the tool at position ``i``: the first step that removes it, else enabled."""
    tool = plan.index.tools[i]
    name = tool.name
    base = plan.base
    reason = plan.removed.get(i)
    if reason is not None:
        return ToolDecision(name, False, STEP_PROVIDER_POLICY, reason)
    for deny in plan.denies:
        denied = deny.compiled.match(i)
        if denied is not None:
            return ToolDecision(name, False, STEP_DENY, f"denied by {deny.label} entry {denied[1]!r}")

    # base allowlist
    notes: list[str] = []
    if base.restricting:
        allowed = base.match(i, exact_only=tool.optional)
        if allowed is None:
            return ToolDecision(name, False, base.step, f"not in the allowlist ({base.describe})")
        part, kind, entry = allowed
        if kind == "inexact":
            return ToolDecision(
                name, False, STEP_OPTIONAL,
                f"optional tool: {part.label} entry {entry!r} does not enable it; "
                "name it exactly in an allowlist or alsoAllow",
            )
        step = STEP_PROFILE if part.role == "profile" else STEP_ALLOW
        if base.step == STEP_AGENT:
            step = STEP_AGENT
        if part.role == "profile":
            notes.append(f"in {part.label} (entry {entry!r})")
        else:
            notes.append(f"allowed by {part.label} entry {entry!r}")
    else:
        step = STEP_DEFAULT
        if tool.optional:
            if not base.names_exactly(i):
                return ToolDecision(
                    name, False, STEP_OPTIONAL,
                    "optional tool: enabled only when named exactly in tools.allow or tools.alsoAllow",
                )
            named = base.match(i, exact_only=True)
            assert named is not None
            step = STEP_ALLOW if base.step != STEP_AGENT else STEP_AGENT
            notes.append(f"optional, named by {named[0].label} entry {named[2]!r}")
        else:
            notes.append("no allowlist restricts it")

    for narrow in plan.narrows:
        if not narrow.restricting:
            continue
        kept = narrow.match(i)
        if kept is None:
            return ToolDecision(
                name, False, STEP_BY_PROVIDER,
                f"not in {narrow.label} ({narrow.describe}); byProvider can only narrow",
            )
        notes.append(f"kept by {kept[0].label} entry {kept[2]!r}")

    for sub in plan.subagent_steps:
        if sub.drop is not None:
            dropped = sub.drop.match(i)
            if dropped is not None:
                return ToolDecision(
                    name, False, STEP_SUBAGENT,
                    f"disallowed by subagents.{sub.name}.disallowedTools entry {dropped[1]!r}",
                )
        if sub.keep is not None:
            listed = sub.keep.match(i)
            if listed is None:
                return ToolDecision(name, False, STEP_SUBAGENT, f"not listed in subagents.{sub.name}.tools")
            notes.append(f"listed in subagents.{sub.name}.tools ({listed[1]!r})")
            step = STEP_SUBAGENT

    reason = plan.unavailable.get(i)
    if reason is not None:
        return ToolDecision(name, False, STEP_AVAILABILITY, f"unavailable: {reason}")
    return ToolDecision(name, True, step, "; ".join(notes))


def _step_and_note_by_position(allowlist: Allowlist, *, base: bool) -> dict[int, tuple[str, str]]:
    """For every tool an allowlist names: ``(step, note)`` from the first part that names it."""
    out: dict[int, tuple[str, str]] = {}
    for part in reversed(allowlist.parts):  # earlier parts win, so they are written last
        if base:
            step = STEP_AGENT if allowlist.step == STEP_AGENT else (
                STEP_PROFILE if part.role == "profile" else STEP_ALLOW)
        else:
            step = allowlist.step
        hits = part.compiled.hits()
        if part.role == "profile" and base:
            texts = {e: (step, f"in {part.label} (entry {e!r})") for e in set(hits.values())}
        elif base:
            texts = {e: (step, f"allowed by {part.label} entry {e!r}") for e in set(hits.values())}
        else:
            texts = {e: (step, f"kept by {part.label} entry {e!r}") for e in set(hits.values())}
        out.update({i: texts[e] for i, e in hits.items()})
    return out


def decide_listwise(plan: PolicyPlan) -> list[ToolDecision]:
    """Every tool's decision, computed list-wise: the answers of :func:`decide_tool` for a plan
    without subagent steps (optional tools go through :func:`decide_tool`)."""
    if plan.subagent_steps:
        raise ValueError("decide_listwise does not apply subagent steps; use decide_each")
    base = plan.base
    deny_reason: dict[int, str] = {}
    for deny in reversed(plan.denies):  # earlier lists win
        deny_hits = deny.compiled.hits()
        texts = {e: f"denied by {deny.label} entry {e!r}" for e in set(deny_hits.values())}
        deny_reason.update({i: texts[e] for i, e in deny_hits.items()})
    restricting = base.restricting
    base_notes = _step_and_note_by_position(base, base=True) if restricting else {}
    base_miss = f"not in the allowlist ({base.describe})"
    base_step = base.step
    narrowings = [
        (_step_and_note_by_position(n, base=False), f"not in {n.label} ({n.describe}); byProvider can only narrow")
        for n in plan.narrows
        if n.restricting
    ]
    # Layered from the weakest verdict to the strongest, with dict comprehensions and
    # updates rather than one Python step per tool: enabled, availability, byProvider,
    # the base allowlist, deny, provider policy; optional tools take the per-tool path.
    names = plan.index.names
    final: dict[int, tuple[str, bool, str, str]]
    still_enabled: dict[int, tuple[str, str]]  # position -> (step, note so far)
    if restricting:
        final = {i: (name, False, base_step, base_miss) for i, name in enumerate(names)}
        still_enabled = base_notes
    else:
        final = {}
        still_enabled = dict.fromkeys(range(len(names)), (STEP_DEFAULT, "no allowlist restricts it"))
    for kept, miss in narrowings:
        final.update({i: (names[i], False, STEP_BY_PROVIDER, miss) for i in still_enabled.keys() - kept.keys()})
        still_enabled = {i: (step_note[0], f"{step_note[1]}; {kept[i][1]}")
                         for i, step_note in still_enabled.items() if i in kept}
    final.update({i: (names[i], True, step_note[0], step_note[1]) for i, step_note in still_enabled.items()})
    final.update(
        {i: (names[i], False, STEP_AVAILABILITY, f"unavailable: {reason}")
         for i, reason in plan.unavailable.items() if i in still_enabled}
    )
    final.update({i: (names[i], False, STEP_DENY, reason) for i, reason in deny_reason.items()})
    final.update({i: (names[i], False, STEP_PROVIDER_POLICY, reason) for i, reason in plan.removed.items()})
    for i in plan.index.optional_positions:
        final[i] = decide_tool(i, plan)
    return list(map(new_decision, map(final.__getitem__, range(len(names)))))


def empty_warning(base: Allowlist, decisions: Sequence[ToolDecision]) -> str:
    """Why nothing is enabled, in one line: the allowlist and the step that removed most."""
    steps = sorted({d.step for d in decisions})
    where = f" by {base.describe}" if base.restricting and base.describe else ""
    profile = next((p for p in base.parts if p.role == "profile"), None) if base.restricting else None
    if profile is not None and profile.compiled.entries and not profile.compiled.known:
        where += f" (it allows {', '.join(profile.compiled.entries)}; no installed tool matches)"
    return (
        f"no tool is enabled{where}: all {len(decisions)} installed tools were removed "
        f"(steps: {', '.join(steps)}); see pegboard tools --explain"
    )
