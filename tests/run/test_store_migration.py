"""Old results stores are migrated, never refused (PRAGMA user_version)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_eval._result import Atom, MetricResult
from agent_eval.errors import StoreError
from agent_eval.run._store import (
    _SUPERSEDED_TRIGGER,
    SCHEMA_VERSION,
    SUPERSEDED_TABLE,
    ResultStore,
    load_results,
    load_superseded,
)

# The results table exactly as agent-eval 0.1.0 (schema 1, user_version 0) created it.
_V1 = """
CREATE TABLE results (run_id TEXT, conversation_id TEXT, trace_ids TEXT, metric TEXT,
 formatter TEXT, formatter_fingerprint TEXT, prompt_sha256 TEXT, judge_model TEXT,
 repeat INTEGER, status TEXT, verdict TEXT, score REAL, reason TEXT, user_goal TEXT,
 end_state TEXT, reference TEXT, input_tokens INTEGER, output_tokens INTEGER,
 latency_ms REAL, attempts INTEGER, error_type TEXT, error_message TEXT, raw_reply TEXT,
 started_at TEXT,
 PRIMARY KEY (run_id, conversation_id, metric, formatter, judge_model, repeat));
CREATE TABLE runs (run_id TEXT PRIMARY KEY, started_at TEXT NOT NULL, config TEXT NOT NULL,
 argv TEXT NOT NULL);
INSERT INTO results VALUES ('r0', 'c1', '["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"]', 'goal_accuracy@1',
 'ragas-pretty@1', 'fp', 'ph', 'gpt-4o-mini', 0, 'ok', '1', 1.0, 'fine', 'g', 'e', NULL,
 10, 2, 5.5, 2, NULL, NULL, NULL, '2026-11-30T00:00:00.000+00:00');
"""


def _old_store(directory: Path) -> Path:
    db_path = directory / "results.db"
    with sqlite3.connect(db_path) as db:
        db.executescript(_V1)
    db.close()
    return db_path


def test_a_version_1_store_is_read_as_it_is_and_migrated_on_open(tmp_path: Path) -> None:
    _old_store(tmp_path)
    (old,) = load_results(tmp_path / "results.db")  # read before any migration
    assert old.unit_id == "conversation" and old.verdict == "1" and old.atoms is None
    assert old.trace_ids == ("a" * 32,) and old.input_tokens == 10
    with ResultStore(tmp_path) as store:
        assert store.results() == [old]
        new = old.model_copy(
            update={
                "conversation_id": "c2",
                "unit_id": "turn:1",
                "verdict": None,
                "score": 0.5,
                "atoms": (
                    Atom(text="x", label="0", passed=False),
                    Atom(text="y", label="1", passed=True, evidence="q", evidence_verified=True),
                ),
                "details": {"k": [1, 2]},
            }
        )
        store.add(new)
    with sqlite3.connect(tmp_path / "results.db") as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    db.close()
    assert load_results(tmp_path) == [old, new]
    assert [MetricResult.model_validate(r.model_dump()) for r in load_results(tmp_path)] == [
        old,
        new,
    ]


def test_a_store_missing_a_newer_field_gets_the_column(tmp_path: Path) -> None:
    with ResultStore(tmp_path):
        pass
    with sqlite3.connect(tmp_path / "results.db") as db:  # as an older agent-eval wrote it
        db.execute(f"DROP TRIGGER {_SUPERSEDED_TRIGGER}")
        db.execute(f"DROP TABLE {SUPERSEDED_TABLE}")
        db.execute("ALTER TABLE results DROP COLUMN details")
    db.close()
    with ResultStore(tmp_path) as store:
        assert store.results() == []
        assert store.superseded() == []  # the table a later version added is there too
    with sqlite3.connect(tmp_path / "results.db") as db:
        columns = [row[1] for row in db.execute("PRAGMA table_info(results)")]
    db.close()
    assert "details" in columns


def test_a_field_added_later_reaches_the_replaced_rows_table_and_its_trigger(
    tmp_path: Path, make_result: Callable[..., MetricResult]
) -> None:
    with ResultStore(tmp_path):
        pass
    with sqlite3.connect(tmp_path / "results.db") as db:  # a version without ``note``
        db.execute(f"DROP TRIGGER {_SUPERSEDED_TRIGGER}")
        db.execute("ALTER TABLE results DROP COLUMN note")
        db.execute(f"ALTER TABLE {SUPERSEDED_TABLE} DROP COLUMN note")
    db.close()
    first, again = make_result("c1", None, note="first try"), make_result("c1", "1")
    with ResultStore(tmp_path) as store:
        store.add(first)
        store.add(again)
    assert load_results(tmp_path) == [again]
    assert load_superseded(tmp_path) == [first]


def test_a_store_from_a_newer_agent_eval_is_refused_clearly(tmp_path: Path) -> None:
    with ResultStore(tmp_path):
        pass
    with sqlite3.connect(tmp_path / "results.db") as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(StoreError, match="newer than this agent-eval"):
        ResultStore(tmp_path)


def test_a_version_2_store_gets_revision_in_its_key_so_rescores_are_new_rows(
    tmp_path: Path,
) -> None:
    """Schema 3: a re-scored conversation (``agent-eval serve``) is a new row, never a
    replacement, also in a store created before ``revision`` existed."""
    _old_store(tmp_path)
    with ResultStore(tmp_path):  # v1 -> current
        pass
    with sqlite3.connect(tmp_path / "results.db") as db:  # back to the v2 shape: no revision
        db.execute("ALTER TABLE results RENAME TO r3")
        columns = [row[1] for row in db.execute("PRAGMA table_info(r3)") if row[1] != "revision"]
        db.execute(
            f"CREATE TABLE results ({', '.join(columns)}, PRIMARY KEY (run_id, conversation_id,"
            " unit_id, metric, formatter, judge_model, repeat))"
        )
        db.execute(f"INSERT INTO results SELECT {', '.join(columns)} FROM r3")
        db.execute("DROP TABLE r3")
        db.execute("PRAGMA user_version = 2")
    db.close()
    with ResultStore(tmp_path) as store:
        (old,) = store.results()
        assert old.revision == 0
        store.add(
            old.model_copy(
                update={"revision": 1, "note": "re-scored", "verdict": "0", "score": 0.0}
            )
        )
        assert [(r.revision, r.verdict) for r in store.results()] == [(0, "1"), (1, "0")]
    with sqlite3.connect(tmp_path / "results.db") as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3
    db.close()
