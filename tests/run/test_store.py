"""The results store: SQLite and JSONL in step, keys for resuming, repair, runs table."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_eval._result import MetricResult
from agent_eval.errors import StoreError
from agent_eval.run._store import JSONL_NAME, ResultStore, RunRecord, load_results, result_key


def row(conversation_id: str, status: str = "ok", **fields: object) -> MetricResult:
    data: dict[str, object] = {
        "run_id": "r1",
        "conversation_id": conversation_id,
        "trace_ids": ("a" * 32,),
        "metric": "goal_accuracy@1",
        "formatter": "ragas-pretty@1",
        "formatter_fingerprint": "f" * 64,
        "prompt_sha256": "p" * 64,
        "judge_model": "m",
        "status": status,
        "started_at": "2026-11-30T05:00:00.000+00:00",
    }
    if status == "ok":
        data |= {"verdict": "1", "score": 1.0, "reason": "fine", "user_goal": "g", "end_state": "e"}
    else:
        data |= {
            "error_type": "invalid_judge_output",
            "error_message": "bad",
            "raw_reply": '{"verdict": 1}',
        }
    data |= fields
    return MetricResult.model_validate(data)


def test_sqlite_and_jsonl_hold_the_same_rows(tmp_path: Path) -> None:
    rows = [row("b"), row("a", "error", attempts=3, input_tokens=10), row("c", latency_ms=12.5)]
    with ResultStore(tmp_path) as store:
        for r in rows:
            store.add(r)
        assert store.results("r1") == sorted(rows, key=result_key)
    assert (
        load_results(tmp_path / "results.db")
        == load_results(tmp_path / JSONL_NAME)
        == sorted(rows, key=result_key)
    )
    assert load_results(tmp_path) == sorted(rows, key=result_key)
    with sqlite3.connect(tmp_path / "results.db") as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        columns = [c[1] for c in db.execute("PRAGMA table_info(results)")]
    assert columns == list(MetricResult.model_fields)


def test_rewriting_a_key_replaces_it_in_both(tmp_path: Path) -> None:
    with ResultStore(tmp_path) as store:
        store.add(row("a", "error"))
        store.add(row("a"))
    assert [r.status for r in load_results(tmp_path / "results.db")] == ["ok"]
    assert [r.status for r in load_results(tmp_path / JSONL_NAME)] == ["ok"]
    assert len((tmp_path / JSONL_NAME).read_bytes().splitlines()) == 2


def test_finished_keys_for_resuming(tmp_path: Path) -> None:
    with ResultStore(tmp_path) as store:
        store.add(row("a"))
        store.add(row("b", "error"))
        store.add(row("c", run_id="other"))
        assert store.finished_keys("r1") == {result_key(row("a")), result_key(row("b", "error"))}
        assert store.finished_keys("r1", statuses=("ok",)) == {result_key(row("a"))}


def test_reopening_repairs_a_jsonl_that_missed_rows(tmp_path: Path) -> None:
    with ResultStore(tmp_path) as store:
        store.add(row("a"))
        store.add(row("b"))
    lines = (tmp_path / JSONL_NAME).read_bytes().splitlines(keepends=True)
    (tmp_path / JSONL_NAME).write_bytes(lines[0] + lines[1][:20])  # killed mid-line
    assert [r.conversation_id for r in load_results(tmp_path / JSONL_NAME)] == ["a"]
    ResultStore(tmp_path).close()
    assert load_results(tmp_path / JSONL_NAME) == load_results(tmp_path / "results.db")


def test_runs_table_keeps_the_first_record(tmp_path: Path) -> None:
    first = RunRecord(
        run_id="r1", started_at="t1", config={"judge_model": "m"}, argv=("agent-eval", "score")
    )
    with ResultStore(tmp_path) as store:
        store.start_run(first)
        store.start_run(RunRecord(run_id="r1", started_at="t2", config={}))
        assert store.runs() == [first]


def test_unreadable_inputs_are_store_errors(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no results at"):
        load_results(tmp_path / "nothing")
    (tmp_path / JSONL_NAME).write_text('{"not": "a result"}\n')
    with pytest.raises(StoreError, match=f"{JSONL_NAME}:1"):
        load_results(tmp_path / JSONL_NAME)
    (tmp_path / "x.db").write_text("not sqlite at all" * 100)
    with pytest.raises(StoreError):
        load_results(tmp_path / "x.db")
    (tmp_path / "file").write_text("")
    with pytest.raises(StoreError):
        ResultStore(tmp_path / "file")


def test_a_cut_last_line_is_said_and_restored_from_sqlite(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # regression: the cut line was dropped silently
    with ResultStore(tmp_path) as store:
        for cid in "abc":
            store.add(row(cid))
    path = tmp_path / JSONL_NAME
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(lines[0] + lines[1] + lines[2][:30])  # killed while writing line 3
    with caplog.at_level("WARNING", logger="agent_eval.run._store"):
        assert [r.conversation_id for r in load_results(path)] == ["a", "b"]
    assert f"{path}:3: the last line was cut short" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="agent_eval.run._store"), ResultStore(tmp_path) as store:
        assert store.repaired == 1
    assert f"{path}:3: the last line was cut short" in caplog.text
    assert "restored 1 result(s) from results.db" in caplog.text
    assert path.read_bytes().splitlines(keepends=True) == lines  # the same bytes as before
    assert load_results(path) == load_results(tmp_path / "results.db")


def test_reopening_appends_only_the_rows_written_after_the_last_line(tmp_path: Path) -> None:
    with ResultStore(tmp_path) as store:
        store.add(row("a", "error"))
        store.add(row("b"))
        store.add(row("a"))  # a retried error: replaced in SQLite, appended to the JSONL
        store.add(row("c"))
    path = tmp_path / JSONL_NAME
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:2]))  # killed after two lines: "a" (ok) and "c" missing
    with ResultStore(tmp_path) as store:
        assert store.repaired == 2
    again = path.read_bytes().splitlines(keepends=True)
    assert again == lines  # appended in the order they were committed
    assert load_results(path) == load_results(tmp_path / "results.db")
    with ResultStore(tmp_path) as store:  # nothing missing: nothing appended
        assert store.repaired == 0
    assert path.read_bytes().splitlines(keepends=True) == lines


def test_a_last_line_matching_no_row_falls_back_to_comparing_the_file(tmp_path: Path) -> None:
    with ResultStore(tmp_path) as store:
        store.add(row("a"))
        store.add(row("b"))
    path = tmp_path / JSONL_NAME
    edited = row("b", reason="edited by hand")
    path.write_bytes(
        path.read_bytes().splitlines(keepends=True)[0] + edited.model_dump_json().encode() + b"\n"
    )
    with ResultStore(tmp_path) as store:
        assert store.repaired == 1  # SQLite's "b" differs from the file's: appended, and wins
    assert load_results(path) == load_results(tmp_path / "results.db")


def test_rows_read_back_from_sqlite_equal_the_jsonl_ones(tmp_path: Path) -> None:
    atoms = [
        {"text": "Returns take 14 days.", "label": "SUPPORTED", "passed": True,
         "evidence": "14 calendar days", "evidence_verified": True},
        {"text": "Shipping is free.", "label": "UNSUPPORTED", "passed": False},
    ]  # fmt: skip
    rows = [
        row("a", unit_id="turn:1", score=0.5, verdict=None, atoms=atoms, details={"k": [1, 2]}),
        row("b", "error", latency_ms=3),
    ]
    with ResultStore(tmp_path) as store:
        for r in rows:
            store.add(r)
        from_db = store.results()
    validated = load_results(tmp_path / JSONL_NAME)
    assert from_db == load_results(tmp_path) == validated == sorted(rows, key=result_key)
    assert from_db[0].atoms is not None and from_db[0].atoms[0].passed is True
    assert from_db[0].model_dump(mode="json") == validated[0].model_dump(mode="json")
    assert from_db[1].latency_ms == 3.0 and isinstance(from_db[1].latency_ms, float)


def test_load_results_of_one_run(tmp_path: Path) -> None:
    with ResultStore(tmp_path) as store:
        store.add(row("a"))
        store.add(row("b", run_id="r2"))
    for source in (tmp_path, tmp_path / JSONL_NAME):
        assert [r.conversation_id for r in load_results(source, run_id="r2")] == ["b"]
        assert len(load_results(source)) == 2


def _on_disk(directory: Path) -> tuple[int, int]:
    """Rows another reader sees now: in ``results.db`` and in ``results.jsonl``."""
    with sqlite3.connect(directory / "results.db") as db:
        in_db = int(db.execute("SELECT count(*) FROM results").fetchone()[0])
    return in_db, len(load_results(directory / JSONL_NAME))


def test_rows_are_committed_in_batches_of_flush_rows(tmp_path: Path) -> None:
    with ResultStore(tmp_path, flush_rows=3, flush_seconds=60) as store:
        counts = []
        for name in "abcdefg":
            store.add(row(name))
            counts.append(_on_disk(tmp_path))
        assert store.pending == 1
    assert [c[0] for c in counts] == [0, 0, 3, 3, 3, 6, 6]
    assert all(in_db == in_jsonl for in_db, in_jsonl in counts)
    assert _on_disk(tmp_path) == (7, 7)  # closing commits the rest


def test_a_row_waiting_flush_seconds_is_committed(tmp_path: Path) -> None:
    with ResultStore(tmp_path, flush_rows=100, flush_seconds=0.05) as store:
        store.add(row("a"))
        store.flush_due()
        assert _on_disk(tmp_path) == (0, 0)
        time.sleep(0.06)
        store.flush_due()
        assert _on_disk(tmp_path) == (1, 1)
        store.add(row("b"))
        time.sleep(0.06)
        store.add(row("c"))  # the oldest queued row is due: both go
        assert _on_disk(tmp_path) == (3, 3)


def test_readers_of_the_store_see_the_queued_rows(tmp_path: Path) -> None:
    with ResultStore(tmp_path, flush_seconds=60) as store:
        store.add(row("a"))
        store.add(row("b", "error"))
        assert store.finished_keys("r1", ("error",)) == {result_key(row("b", "error"))}
        assert [r.conversation_id for r in store.results("r1")] == ["a", "b"]


def test_flush_settings_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="flush_rows"):
        ResultStore(tmp_path, flush_rows=0)
    with pytest.raises(ValueError, match="flush_seconds"):
        ResultStore(tmp_path, flush_seconds=0)


KILLED_WRITER = """
import os, sys
sys.path.insert(0, sys.argv[2])
from test_store import row
from agent_eval.run._store import ResultStore
store = ResultStore(sys.argv[1], flush_rows=4, flush_seconds=60)
for name in "abcdef":
    store.add(row(name))
os._exit(9)  # killed outright: no close, no flush
"""


def test_a_kill_loses_only_the_unflushed_rows_and_resume_sees_exactly_them(
    tmp_path: Path,
) -> None:
    here = Path(__file__).parent
    done = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(tmp_path), str(here)],
                          check=False, capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 9, done.stderr
    with ResultStore(tmp_path) as store:
        assert store.repaired == 0
        kept = store.finished_keys("r1")
    assert kept == {result_key(row(name)) for name in "abcd"}  # e and f are scored again
    assert load_results(tmp_path / JSONL_NAME) == load_results(tmp_path / "results.db")
