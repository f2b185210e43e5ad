"""``score`` renders each conversation once per formatter and tokenizes it at most once (issue 15).

A counting formatter (registered here, rendering as ``transcript@1`` does) counts its calls per
conversation, and the o200k encoding is wrapped to count how often each rendering is encoded.
Before issue 15 the plan, ``renderings.jsonl`` and the engine each rendered (3 per conversation)
and the plan and the engine's context check encoded the rendering 3 times.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from typer.testing import CliRunner

import agent_eval._tokens
from agent_eval._trace import AgentTrace
from agent_eval.cli import app
from agent_eval.formatting import Formatter, NoParams, formatters
from agent_eval.formatting._registry import get_formatter, register
from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer
from agent_eval.testing._script import load_script

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "fixtures" / "otel" / "openai-v2-latest-span.otlp.json"
PROBE_PREFIX = "probe-"
"""Conversation ids of the fingerprint's probe set (rendered when the fingerprint is made)."""


class CountingV1(Formatter[NoParams]):
    """``transcript@1``'s text; counts its calls by conversation id."""

    name = "counting"
    version = 1
    calls: ClassVar[Counter[str]] = Counter()
    texts: ClassVar[dict[str, str]] = {}

    def render(self, trace: AgentTrace) -> str:
        CountingV1.calls[trace.conversation_id] += 1
        text = get_formatter("transcript@1").render(trace)
        CountingV1.texts[trace.conversation_id] = text
        return text


class CountingEncoding:
    """The o200k encoding, counting the texts it encodes."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.encoded: Counter[str] = Counter()

    def encode(self, text: str, **kwargs: Any) -> list[int]:
        self.encoded[text] += 1
        result: list[int] = self.inner.encode(text, **kwargs)
        return result


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> Iterator[CountingEncoding]:
    register(CountingV1, replace=True)
    CountingV1.calls.clear()
    CountingV1.texts.clear()
    wrapped = CountingEncoding(agent_eval._tokens.encoding())
    agent_eval._tokens._count.cache_clear()  # counts remembered by earlier tests
    monkeypatch.setattr(agent_eval._tokens, "encoding", lambda: wrapped)
    try:
        yield wrapped
    finally:
        agent_eval._tokens._count.cache_clear()
        formatters.unregister("counting@1")


def _score(server: FakeModelServer, tmp_path: Path, *extra: str) -> Any:
    load_script(ROOT / "fixtures" / "fake-judge.json", server)
    args = [
        "score", str(ROOT / "fixtures" / "otel"), "--metric", "goal_accuracy@1,tool_errors",
        "--formatter", "counting@1", "--judge", "fake", "--base-url", server.base_url,
        "--out", str(tmp_path / "out"), *extra,
    ]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return result


def _scored(calls: Counter[str]) -> Counter[str]:
    return Counter({cid: n for cid, n in calls.items() if not cid.startswith(PROBE_PREFIX)})


def test_score_renders_each_conversation_once(
    counting: CountingEncoding, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    _score(fake_server, tmp_path)
    rows = [r for r in load_results(tmp_path / "out") if r.metric == "goal_accuracy@1"]
    assert len(rows) == 27 and all(r.status == "ok" for r in rows)
    rendered = _scored(CountingV1.calls)
    assert set(rendered) == {r.conversation_id for r in rows}
    assert set(rendered.values()) == {1}  # plan (not made), renderings.jsonl and engine share it
    # every rendering fits the default 128,000-token limit by its bytes alone: never encoded
    assert not any(counting.encoded[CountingV1.texts[cid]] for cid in rendered)


def test_dry_run_tokenizes_each_rendering_once(
    counting: CountingEncoding, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    _score(fake_server, tmp_path, "--dry-run")
    rendered = _scored(CountingV1.calls)
    assert len(rendered) == 27 and set(rendered.values()) == {1}
    assert {counting.encoded[CountingV1.texts[cid]] for cid in rendered} == {1}


def test_context_check_counts_exactly_once_when_the_bound_does_not_decide(
    counting: CountingEncoding, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    # a limit under the renderings' bytes: each one must be counted, once, and some fit
    _score(fake_server, tmp_path, "--max-context-tokens", "700")
    rows = [r for r in load_results(tmp_path / "out") if r.metric == "goal_accuracy@1"]
    assert {r.status for r in rows} == {"ok", "skipped"}  # the limit decides both ways
    rendered = _scored(CountingV1.calls)
    assert set(rendered.values()) == {1}
    encoded = {counting.encoded[CountingV1.texts[cid]] for cid in rendered}
    assert encoded == {1}  # every bound (bytes) is over 700: each rendering counted once
