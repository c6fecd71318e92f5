"""The hook the WebSearch plugin asks, declared by this distribution (not by the kernel).

A module of its own, so that declaring the hook imports nothing of the plugin.

Offered through entry-point group ``pegboard.hookspecs``, so Pegboard knows the hook, and
checks a backend plugin's implementation of it, before any plugin loads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pegboard import hookspec


@hookspec
def register_search_backends(register: Callable[[Any], None]) -> None:
    """Add web search backends (Brave, SearXNG, your own) for the WebSearch tool.

    Asked once per ``Pegboard`` by the WebSearch plugin, when the ``Pegboard`` is ready.
    Call ``register(backend)`` with an object implementing
    ``pegboard_web_search.backends.SearchBackend``: a ``name`` (what ``tools.web.search.provider``
    selects), ``unavailable_reason(context)`` (``None`` when configured, else why not, such
    as a missing API key) and ``async search(request, context)`` returning ``SearchHit``
    items; both read their settings with ``context.settings(key)``. Of two backends with one
    name the second is ignored with a warning.

    Example::

        @hookimpl
        def register_search_backends(register):
            register(MySearch())  # name = "mysearch"
    """


__all__ = ["register_search_backends"]
