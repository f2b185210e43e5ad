"""Snapshot tests: every locked formatter identity's rendering of every probe trace, and of the
conversations in ``../shared/data`` (skipped only when ``../shared`` is absent).

A failing snapshot for a *released* version means an unversioned behaviour change: do not update
the snapshot, bump the version (see ``formatters/agent_eval_formatters/formatters.lock``).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from agent_eval._trace import AgentTrace
from agent_eval.formatting import get_formatter, probe_set
from agent_eval.formatting._lock import lock_targets

IDENTITIES = sorted(lock_targets())


def pinned(text: str) -> dict[str, str]:
    """The rendering plus the sha256 of its exact bytes (amber files normalize line endings)."""
    return {
        "sha256": hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
        "text": text,
    }


PROBES = {trace.conversation_id: trace for trace in probe_set()}


@pytest.mark.parametrize("probe", sorted(PROBES))
@pytest.mark.parametrize("identity", IDENTITIES)
def test_probe_rendering(identity: str, probe: str, snapshot: SnapshotAssertion) -> None:
    assert pinned(get_formatter(identity).render(PROBES[probe])) == snapshot


SHARED_INPUTS = [
    ("tau-bench/gpt-4o-airline.sample.json", "tau-bench", 3),
    ("tau2-bench/gpt-4.1_retail_default_gpt-4.1_1trials.subset.json", "tau2-bench", 3),
    ("otel/oi__langfuse__openai-agents.trace.json", "auto", 1),
    ("otel/vercel-ai__langfuse__aisdk-tools.trace.json", "auto", 1),
    ("otel/genai-v137__langfuse__microsoft-agent-framework.trace.json", "auto", 1),
]


def _shared_traces(shared_data: Path, relative: str, fmt: str, limit: int) -> list[AgentTrace]:
    from agent_eval.ingest._pipeline import ingest

    traces = sorted(ingest([shared_data / relative], format=fmt), key=lambda t: t.conversation_id)
    assert traces, f"{relative} ingested to no conversation"
    return traces[:limit]


@pytest.mark.parametrize(("relative", "fmt", "limit"), SHARED_INPUTS)
@pytest.mark.parametrize("identity", ["ragas-pretty@1", "transcript@1", "json@1", "xml@1"])
def test_shared_data_rendering(
    shared_data: Path,
    identity: str,
    relative: str,
    fmt: str,
    limit: int,
    snapshot: SnapshotAssertion,
) -> None:
    formatter = get_formatter(identity)
    rendered = {
        t.conversation_id: formatter.render(t)
        for t in _shared_traces(shared_data, relative, fmt, limit)
    }
    assert rendered == snapshot
