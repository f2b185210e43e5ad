"""The instructor judge without the instructor extra: registered, a clear error, provider prices.

Its calls are tested in ``tests/judges/instructor/`` (in ``.venv-instructor``: instructor cannot
be installed beside the dev extra's openai).
"""

from __future__ import annotations

import sys

import pytest

from agent_eval._costs import database_price
from agent_eval.errors import ConfigError
from agent_eval.judges._base import JudgeSettings, judges
from agent_eval.judges._instructor_judge import InstructorJudge


def test_registered_under_instructor_without_importing_it() -> None:
    assert judges.get("instructor") is InstructorJudge


def test_a_missing_instructor_names_the_extra_and_the_jiter_conflict(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "instructor", None)  # import instructor raises ImportError
    settings = JudgeSettings(kind="instructor", target="anthropic/claude-3-5-haiku-latest")
    with pytest.raises(ConfigError) as caught:
        InstructorJudge.from_settings(settings)
    message = str(caught.value)
    assert 'pip install "otel-agent-eval[instructor]"' in message
    assert "jiter<0.15" in message and "openai<3.9" in message


def test_provider_string_is_required() -> None:
    with pytest.raises(ConfigError, match="PROVIDER/MODEL"):
        InstructorJudge.from_settings(JudgeSettings(kind="instructor", target="gpt-4o-mini"))


@pytest.mark.parametrize(
    ("judge_model", "priced_as"),
    [
        ("anthropic/claude-3-5-haiku-latest", "claude-3-5-haiku-latest"),
        ("openai/gpt-4o-mini", "gpt-4o-mini"),
        ("gemini/gemini-2.0-flash", "gemini-2.0-flash"),
    ],
)
def test_provider_model_judges_are_priced_for_their_provider(
    judge_model: str, priced_as: str
) -> None:
    price, plain = database_price(judge_model), database_price(priced_as)
    assert price is not None and plain is not None
    assert (price.input, price.output) == (plain.input, plain.output)


def test_an_unknown_provider_model_has_no_price() -> None:
    assert database_price("openai/fake-model") is None
    assert database_price("nope/gpt-4o-mini") is None
