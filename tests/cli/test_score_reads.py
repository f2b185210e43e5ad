"""How often ``score`` reads its spooled conversations back (issue 15: CPU of the spool).

Regression (s6-scoremem): with the conversations spooled to disk, every pass over them
unpickles each one again, and a fresh run made five: the render pass, ``conversations.jsonl``,
the OTel span targets (made even with no events configured), the engine and the agent usage
table (+23% CPU at 1 GB). One read now renders, writes ``conversations.jsonl``, counts the
agent usage and finds the targets: a fresh run reads each conversation twice (that read and
the engine's), a resumed one three times (it compares what changed since it was judged).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from agent_eval._costs import PriceTable, agent_usage
from agent_eval.cli import app
from agent_eval.cli._event_options import EVENTS_FILE_NAME
from agent_eval.ingest import ingest
from agent_eval.otel._targets import targets_by_conversation
from agent_eval.run import _spool as spool_module
from agent_eval.run._artifacts import read_conversations, read_renderings
from agent_eval.run._spool import TraceSpool
from agent_eval.testing import FakeModelServer

from ..run.goal_script import script_goal_judge

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "otel"
runner = CliRunner()
pytestmark = pytest.mark.usefixtures("judge_env_cleared")


@pytest.fixture
def passes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Traces read per pass over a spool, the spool on disk from its first trace."""
    monkeypatch.setattr(spool_module, "MEMORY_MESSAGES", 0)
    counted: list[int] = []
    original = TraceSpool.__iter__

    def counting(self: TraceSpool) -> Iterator[object]:
        counted.append(0)
        for trace in original(self):
            counted[-1] += 1
            yield trace

    monkeypatch.setattr(TraceSpool, "__iter__", counting)
    return counted


def _score(server: FakeModelServer, out: Path, *extra: str) -> str:
    result = runner.invoke(
        app,
        ["score", str(FIXTURES), "--judge", "fake-model", "--base-url", server.base_url,
         "--out", str(out), *extra],
        env={"COLUMNS": "250"},
    )  # fmt: skip
    assert result.exit_code == 0, result.stdout + result.stderr
    return result.stdout


def test_a_fresh_run_reads_each_conversation_twice(
    fake_server: FakeModelServer, tmp_path: Path, passes: list[int]
) -> None:
    script_goal_judge(fake_server)
    expected = list(ingest([str(FIXTURES)]))
    out = _score(fake_server, tmp_path / "run", "--events-file")
    assert passes == [27, 27]  # the first read and the engine's
    # what that one read gave: conversations.jsonl, renderings.jsonl, agent usage, targets
    conversations = read_conversations(tmp_path / "run")
    assert list(conversations.values()) == [t for t in expected if t.conversation_id]
    assert len(read_renderings(tmp_path / "run")) == len(conversations)
    shown = [
        [cell.strip() for cell in row.split("│")[2:-1]]
        for row in out.splitlines()
        if row.startswith("│ agent ")
    ]
    assert shown == [
        ["", "", line.model, str(line.rows), str(line.calls), str(line.input_tokens),
         str(line.output_tokens), "n/a"]
        for line in agent_usage(expected, PriceTable())
    ]  # fmt: skip
    assert shown[0][3] == "27"
    targets = targets_by_conversation(expected)
    events = (tmp_path / "run" / EVENTS_FILE_NAME).read_bytes().splitlines()
    span_ids = {
        span["spanId"]
        for line in events
        for resource in orjson.loads(line)["resourceLogs"]
        for scope in resource["scopeLogs"]
        for span in scope["logRecords"]
        if "spanId" in span
    }
    assert targets and span_ids == {target.span_id for target in targets.values()}


def test_a_resumed_run_reads_them_three_times(
    fake_server: FakeModelServer, tmp_path: Path, passes: list[int]
) -> None:
    script_goal_judge(fake_server)
    _score(fake_server, tmp_path / "run")
    passes.clear()
    _score(fake_server, tmp_path / "run", "--resume", str(tmp_path / "run"))
    assert passes == [27, 27, 27]  # first read, the changed-since-judged check, the engine
