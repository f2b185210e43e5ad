"""500 conversations against a judge endpoint that fails 30% of requests: nothing lost.

The fake server injects, at random, 429 (with Retry-After), 500, 503, hangs past the client
timeout, malformed JSON bodies and every invalid verdict shape. Every conversation must end
with exactly one result, every fault (all of them are transient) must be retried to ``ok``,
and no verdict but the right ``"0"``/``"1"`` may be scored.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from agent_eval.formatting import get_formatter
from agent_eval.judges._openai_judge import OpenAIJudge
from agent_eval.metrics._goal_accuracy import GoalAccuracy
from agent_eval.run._engine import Engine
from agent_eval.run._store import ResultStore, load_results
from agent_eval.testing import DEFAULT_FAULTS, FakeModelServer, Hang

from .goal_script import script_goal_judge, trace

N = 500


@pytest.mark.slow  # about 30 s of client CPU on a small CI machine, plus retry backoff
async def test_thirty_percent_faults_over_500_conversations(tmp_path: Path) -> None:
    faults = (*DEFAULT_FAULTS, Hang(seconds=5))
    traces = [trace(f"f{i:03d}", done=i % 3 != 0, extra=f"#{i}") for i in range(N)]
    with FakeModelServer(fault_rate=0.3, faults=faults, seed=7) as server:
        script_goal_judge(server)
        judge = OpenAIJudge("fake-model", base_url=server.base_url, api_key="sk-fault",
                            timeout=0.5, max_retries=8, transport_retries=10)  # fmt: skip
        with ResultStore(tmp_path) as store:
            engine = Engine(metric=GoalAccuracy(), formatter=get_formatter("transcript@1"),
                            judge=judge, store=store, concurrency=64)  # fmt: skip
            summary = await engine.run(traces, total=N)
        await judge.aclose()
        requests = server.requests
    rows = load_results(tmp_path)
    assert summary.input == N and summary.balanced
    assert len(rows) == N and len({r.conversation_id for r in rows}) == N
    assert Counter(r.status for r in rows) == {"ok": N}, Counter(
        (r.status, r.error_type, (r.error_message or "")[:80]) for r in rows if r.status != "ok"
    )
    expected = {t.conversation_id: "1" if int(t.conversation_id[1:]) % 3 else "0" for t in traces}
    assert all(r.verdict == expected[r.conversation_id] for r in rows)
    assert all(r.score == float(r.verdict or "x") for r in rows)
    injected = Counter((r.fault or "").split("(")[0] for r in requests if r.fault)
    assert set(injected) >= {"HttpError", "MalformedJSON", "InvalidVerdict", "Hang"}, injected
    assert sum(injected.values()) / len(requests) > 0.2
    # Every request sent was counted on a row, and every row's attempts reached the server:
    # attempts that could not open a connection (never sent) are counted apart.
    attempts = sum(r.attempts for r in rows)
    assert attempts == len(requests), (attempts, len(requests), judge.connect_failures)
