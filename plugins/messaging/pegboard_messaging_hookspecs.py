"""The hook the messaging plugin asks, declared by this distribution (not by the kernel).

A module of its own, so that declaring the hook imports nothing of the plugin. Offered
through entry-point group ``pegboard.hookspecs``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pegboard import hookspec


@hookspec
def register_channels(register: Callable[[Any], None], pegboard: Any) -> None:
    """Add message channels (email, a webhook, Matrix, your own) for the messaging tools.

    Asked once per ``Pegboard`` when a messaging tool first needs the channels. Call
    ``register(channel)`` with an object implementing ``pegboard_messaging.Channel``: a
    ``name`` (what a call's ``channel`` names), ``capabilities`` (the actions it supports,
    spelled as the ``message`` tool's actions, plus ``notify`` and ``receipt``),
    ``unavailable_reason(context)``, ``secrets(context)`` and ``async perform(request,
    context)``. Read settings with ``pegboard.settings(key)``. Of two channels with one name
    the second is ignored with a warning.

    Example::

        @hookimpl
        def register_channels(register):
            register(MyChatChannel())  # name = "mychat"
    """


__all__ = ["register_channels"]
