"""The elicitation forms of ``pegboard serve``'s host: whatever a client sends back maps to a
well-formed answer, never an exception."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pegboard import Question, QuestionOption
from pegboard_mcp_server.host import PLAN_MODES, answers_from, plan_decision, question_form

QUESTIONS = (
    Question("Which database?", "Database", (QuestionOption("SQLite", "A file"), QuestionOption("Postgres"))),
    Question("Which features?", "Features", (QuestionOption("Auth"), QuestionOption("Search")), multi_select=True),
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
FORM_KEYS = st.sampled_from(["q1", "q1_other", "q2", "q2_other", "q3", "other"])


@given(st.dictionaries(FORM_KEYS, JSON, max_size=6) | JSON)
def test_any_form_content_gives_answers_to_the_questions_asked(content: Any) -> None:
    answers = answers_from(content, QUESTIONS)
    assert set(answers) <= {q.question for q in QUESTIONS}
    single = answers.get("Which database?")
    assert single is None or (isinstance(single, str) and single)
    multi = answers.get("Which features?")
    assert multi is None or (isinstance(multi, list) and multi and all(isinstance(v, str) and v for v in multi))


@given(st.dictionaries(st.sampled_from(["action", "content"]), JSON) | st.fixed_dictionaries({
    "action": st.sampled_from(["accept", "decline", "cancel"]),
    "content": st.dictionaries(st.sampled_from(["approve", "mode", "feedback"]), JSON),
}))
def test_any_plan_answer_is_a_decision(answer: dict[str, Any]) -> None:
    decision = plan_decision(answer)
    assert decision.mode is None or decision.mode in PLAN_MODES
    assert isinstance(decision.feedback, str)
    if answer.get("action") != "accept":
        assert not decision.approved


def test_the_form_offers_each_option_and_a_free_answer() -> None:
    form = question_form(QUESTIONS)
    assert set(form["properties"]) == {"q1", "q1_other", "q2", "q2_other"}
    assert form["properties"]["q1"]["enum"] == ["SQLite", "Postgres"]
    assert form["properties"]["q2"]["items"]["enum"] == ["Auth", "Search"]
    assert answers_from({"q1": "SQLite", "q1_other": "  DuckDB "}, QUESTIONS) == {"Which database?": "DuckDB"}
