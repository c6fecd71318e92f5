"""Where the data-driven acceptance cases live: ``tests/cases``, this repository's copy of the
project's shared ``cases`` directory, so a clone tests on its own. ``test_case_copy`` checks
the copy against the shared directory whenever one is at hand."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CASES_DIR = REPO / "tests" / "cases"


def shared_cases_dir() -> Path | None:
    """The shared ``cases`` directory: in ``PEGBOARD_SHARED_DIR``, or beside the repository."""
    named = [Path(os.environ["PEGBOARD_SHARED_DIR"])] if os.environ.get("PEGBOARD_SHARED_DIR") else []
    for candidate in (*named, REPO.parent / "shared"):
        if (candidate / "cases").is_dir():
            return candidate / "cases"
    return None
