"""Whether a vision model can answer ``image`` here, and which: apart from the tool so that
listing tools asks it without importing the tool (only the ``complete`` hook's plugins load)."""

from __future__ import annotations

from pegboard import Pegboard, host_service_reason
from pegboard_toolkit.availability import SwitchedOff

SETTINGS_KEY = "tools.image"
_SWITCH = SwitchedOff(SETTINGS_KEY)


def unavailable(pegboard: Pegboard) -> str | None:
    """Why ``image`` cannot run for ``pegboard``: turned off, or no vision model answers."""
    return _SWITCH(pegboard) or vision_reason(pegboard)


def engine(pegboard: Pegboard) -> str | None:
    """The plugins that answer the ``complete`` hook, for ``pegboard tools --explain``."""
    names = [impl.plugin_name for impl in pegboard.hook_implementations("complete")]
    return f"vision model through the complete hook ({', '.join(names)})" if names else None


def vision_reason(pegboard: Pegboard) -> str | None:
    """Why no vision model can answer, or ``None``. A ``complete`` plugin may define
    ``vision_unavailable(pegboard) -> str | None``; one without it is taken to see images."""
    reason = host_service_reason(pegboard, "complete", "run a vision model")
    if reason is not None:
        return f"{reason}; configure models.image (pegboard-model-openai-compatible)"
    reasons = []
    for impl in pegboard.hook_implementations("complete"):
        probe = getattr(impl.plugin, "vision_unavailable", None)
        if not callable(probe):
            return None
        try:
            why = probe(pegboard)
        except Exception as exc:
            why = f"{type(exc).__name__}: {exc}"
        if not why:
            return None
        reasons.append(str(why))
    return "; ".join(dict.fromkeys(reasons)) or None


__all__ = ["SETTINGS_KEY", "engine", "unavailable", "vision_reason"]
