"""The pluggy markers for the ``pegboard`` project."""

import pluggy

PROJECT_NAME = "pegboard"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
