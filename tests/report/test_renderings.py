"""Stored renderings: round trip, re-rendering, token totals, bad files."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_eval._tokens import count_tokens
from agent_eval._trace import AgentTrace, AssistantMessage, UserMessage
from agent_eval.errors import StoreError, UnknownPluginError
from agent_eval.formatting._registry import get_formatter
from agent_eval.run._artifacts import (
    RENDERINGS_NAME,
    read_renderings,
    render_all,
    tokens_by_formatter,
    write_renderings,
)


def _trace(cid: str) -> AgentTrace:
    return AgentTrace(
        conversation_id=cid,
        messages=(UserMessage(content=f"hi from {cid} </pre>"), AssistantMessage(content="ok")),
    )


def test_round_trip_and_render_all(tmp_path: Path) -> None:
    traces = [_trace("a"), _trace("b")]
    rendered = render_all(traces, ["transcript@1", "json@1"])
    assert rendered[("a", "json@1")] == get_formatter("json@1").render(traces[0])
    assert len(rendered) == 4
    write_renderings(tmp_path, rendered)
    assert read_renderings(tmp_path) == rendered
    assert read_renderings(tmp_path / "absent") == {}


def test_tokens_by_formatter(tmp_path: Path) -> None:
    rendered = render_all([_trace("a"), _trace("b")], ["transcript@1"])
    totals = tokens_by_formatter(rendered)
    assert totals == {"transcript@1": sum(count_tokens(t) for t in rendered.values())}
    only_a = tokens_by_formatter(rendered, ["a"])
    assert only_a == {"transcript@1": count_tokens(rendered[("a", "transcript@1")])}


def test_unknown_formatter_and_bad_file(tmp_path: Path) -> None:
    with pytest.raises(UnknownPluginError):
        render_all([_trace("a")], ["nope@9"])
    (tmp_path / RENDERINGS_NAME).write_text('{"conversation_id": "a"}\n')
    with pytest.raises(StoreError, match=rf"{RENDERINGS_NAME}:1: not a rendering record"):
        read_renderings(tmp_path)
