"""``pegboard tools --explain``: a resolution as text a person reads."""

from __future__ import annotations

from pegboard.core.policy.result import PolicyResult


def format_explain(result: PolicyResult) -> str:
    """One line per tool with the deciding step, then the warnings."""
    width = max((len(d.name) for d in result.decisions), default=4)
    lines = []
    for d in result.decisions:
        mark = "+" if d.enabled else "-"
        lines.append(f"{mark} {d.name:<{width}}  [{d.step}] {d.reason}")
    lines.extend(f"warning: {w}" for w in result.warnings)
    return "\n".join(lines)
