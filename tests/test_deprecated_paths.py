"""Old import paths that the README or the docs used keep working for one release, with a
DeprecationWarning that names the import to use (docs/architecture.md, deprecation policy).

privatize: skip-file (this file names the old paths on purpose; the script leaves it alone)
"""

from __future__ import annotations

import importlib
import warnings
from pathlib import Path

import pytest

import agent_eval

# old module path, a name the README or docs imported from it, the public face to use instead
OLD_PATHS = [
    ("agent_eval.trace", "AgentTrace", "agent_eval"),
    ("agent_eval.trace", "UserMessage", "agent_eval"),
    ("agent_eval.judges.base", "JudgeRequest", "agent_eval.judges"),
    ("agent_eval.judges.openai_judge", "OpenAIJudge", "agent_eval.judges"),
    ("agent_eval.judges.instructor_judge", "InstructorJudge", "agent_eval.judges"),
    ("agent_eval.metrics.base", "Metric", "agent_eval.metrics"),
    ("agent_eval.metrics.base", "MetricOutcome", "agent_eval.metrics"),
    ("agent_eval.metrics.base", "MetricParams", "agent_eval.metrics"),
    ("agent_eval.metrics.groundedness", "Groundedness", "agent_eval.metrics"),
    ("agent_eval.metrics.spec", "build_metric", "agent_eval.metrics"),
    ("agent_eval.metrics.spec", "metric_versions", "agent_eval.metrics"),
    ("agent_eval.metrics.tool_calls", "JudgeFreeMetric", "agent_eval.metrics"),
    ("agent_eval.run.artifacts", "read_conversations", "agent_eval.run"),
    ("agent_eval.run.artifacts", "read_renderings", "agent_eval.run"),
    ("agent_eval.run.engine", "Engine", "agent_eval.run"),
    ("agent_eval.run.store", "load_results", "agent_eval"),
    ("agent_eval.ingest.sources", "input_stem", "agent_eval.ingest"),
    ("agent_eval.ingest.sources", "open_input", "agent_eval.ingest"),
    ("agent_eval.ingest.sdk", "install", "agent_eval.ingest"),
    ("agent_eval.ingest.langchain", "from_langchain", "agent_eval"),
    ("agent_eval.ingest.langchain", "to_langchain", "agent_eval"),
    (
        "agent_eval.ingest.conventions.attachments",
        "strip_inline_data",
        "agent_eval.ingest.conventions",
    ),
    ("agent_eval.ingest.containers.rag_turns", "RagTurn", "agent_eval.ingest.containers"),
    ("agent_eval.ingest.containers.rag_turns", "rag_trace", "agent_eval.ingest.containers"),
    # the re-exports earlier moves left (issue 27, parts 2 and 3)
    ("agent_eval.report.conversations", "read_conversations", "agent_eval.report"),
    ("agent_eval.report.renderings", "read_renderings", "agent_eval.report"),
    ("agent_eval.analysis.formatter_drift", "formatter_drift", None),
    ("agent_eval.rag.labels", "answerability", None),
    ("agent_eval.rag.labels", "attach_turn_labels", None),
    ("agent_eval.rag.passages", "average_precision", None),
    ("agent_eval.rag.turns", "turn_rows", None),
    ("agent_eval.report.unit_contexts", "read_units", None),
]


@pytest.mark.parametrize(
    ("old", "name", "face"), OLD_PATHS, ids=[f"{o}.{n}" for o, n, _ in OLD_PATHS]
)
def test_an_old_path_warns_and_forwards(old: str, name: str, face: str | None) -> None:
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=rf"^{old} is deprecated") as caught:
        value = getattr(module, name)
    message = str(caught[0].message)
    assert "removed in agent-eval 0.2" in message
    if face is None:  # not public: the warning names its private home
        assert f".{name} (private, may change)" in message
        assert value is not None
    else:
        assert f"from {face} import {name}" in message
        assert value is getattr(importlib.import_module(face), name)


def test_from_import_of_an_old_path_warns_at_the_caller() -> None:
    with pytest.warns(DeprecationWarning) as caught:
        from agent_eval.judges.openai_judge import OpenAIJudge
    from agent_eval.judges import OpenAIJudge as public

    assert OpenAIJudge is public
    assert caught[0].filename == __file__


def test_an_unknown_name_of_an_old_path_is_an_attribute_error() -> None:
    module = importlib.import_module("agent_eval.run.engine")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError, match="no_such_name"):
            module.no_such_name  # noqa: B018
        with pytest.raises(AttributeError):
            module.__wrapped__  # noqa: B018  (dunder probes do not warn)


def test_every_alias_in_the_tree_is_listed_here() -> None:
    root = Path(agent_eval.__file__).parent
    aliases = {
        ".".join(("agent_eval", *p.relative_to(root).with_suffix("").parts))
        for p in root.rglob("*.py")
        if "privatize: deprecated alias" in p.read_text(encoding="utf-8")
    }
    assert aliases == {old for old, _, _ in OLD_PATHS}
