"""False positives of the steering detector on real conversations (``../shared/data``).

The conversations of tau-bench, tau2-bench (with the 50 of the judge pull request), MTRAG and
MTRAG-UN were written by agents, simulated users, tools and web pages that meant no judge any
harm: at most 1% of them may be flagged (issue 29). Skipped when the folder is absent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_eval.ingest import ingest
from agent_eval.steering import detect

FOLDERS = ("tau-bench", "tau2-bench", "tau2-judge-pr103", "mtrag-conversations", "mtrag-un")


def test_at_most_one_percent_of_real_conversations_are_flagged(shared_data: Path) -> None:
    present = [shared_data / name for name in FOLDERS if (shared_data / name).is_dir()]
    if not present:
        pytest.skip(f"none of {FOLDERS} in {shared_data}")
    traces = list(ingest(present))
    flagged = {trace.conversation_id: detect(trace) for trace in traces if detect(trace)}
    assert len(traces) >= 100  # the folders hold 26 + 32 + 50 + 8 + 60 conversations
    assert len(flagged) <= 0.01 * len(traces), flagged
