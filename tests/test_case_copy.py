"""The copy of the acceptance cases under tests/cases is the shared one, file for file."""

from __future__ import annotations

import pytest

from tests.casefiles import CASES_DIR, shared_cases_dir


def test_the_copy_has_the_case_files() -> None:
    assert (CASES_DIR / "permission_cases.json").is_file()
    assert (CASES_DIR / "policy_cases.json").is_file()


def test_the_copy_equals_the_shared_cases() -> None:
    shared = shared_cases_dir()
    if shared is None:
        pytest.skip("no shared cases directory beside this clone; the copy under tests/cases is used as it is")
    ours = {p.name: p.read_bytes() for p in CASES_DIR.iterdir() if p.is_file()}
    theirs = {p.name: p.read_bytes() for p in shared.iterdir() if p.is_file()}
    assert sorted(ours) == sorted(theirs), "tests/cases and the shared cases list different files"
    changed = sorted(name for name in theirs if ours[name] != theirs[name])
    assert not changed, f"tests/cases is out of date; copy these from the shared cases again: {changed}"
