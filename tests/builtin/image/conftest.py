"""A real HTTP server on 127.0.0.1 for the image tests (pictures and a chat-completions endpoint)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.builtin.web.server import LocalServer


@pytest.fixture
def server() -> Iterator[LocalServer]:
    with LocalServer() as srv:
        yield srv
