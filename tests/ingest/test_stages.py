"""The engine-neutral ingest stages give ``ingest()``'s conversations on every split of the input.

Issue 28: per-file ingest then grouping by conversation id cut conversations in pieces and lost
tool calls, because a span without a conversation id takes its trace's and a trace can be split
across files. Here the project's real fixtures and the shared OTel exports are split into
several files by trace, by span, logs apart, and at random with copies, and the stages, run per
file in a random task order with every value pickled between stages, must give the same
AgentTraces (every field) and the same accounting as ``ingest()`` of the same files.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_eval.ingest import (
    IngestReport,
    assemble_conversations,
    assemble_trace,
    ingest,
    input_files,
    read_input,
    trace_pieces,
)
from agent_eval.ingest._stages import BARE_KEY_PREFIX
from agent_eval.testing._otlp import export_request, span

from . import test_identical_prefix_folding as two_users
from . import test_orphan_choices as streamed
from .stage_splits import (
    SPLITS,
    assert_same_as_ingest,
    decode,
    run_stages,
    shuffled_with_copies,
    write_split,
)
from .stream_traffic import write_traffic

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
SHARED = ROOT.parent / "shared" / "data"
SPAN_FIXTURES = [
    FIXTURES / d for d in ("otel", "stacks", "overlap", "handoff", "rag", "js", "langfuse")
]


def _corpus(tmp_path: Path) -> list[Path]:
    """Inputs that hold every split kind once split: the fixtures and generated traffic."""
    (tmp_path / "traffic").mkdir()
    generated = [
        *write_traffic(tmp_path / "traffic", conversations=6, turns=3),
        two_users.write(tmp_path / "two-users.otlp.jsonl"),
        *streamed._inputs(tmp_path, orphaned=True),
    ]
    return [*SPAN_FIXTURES, *generated]


@pytest.mark.parametrize("split", sorted(SPLITS))
def test_fixtures_split_over_files_give_ingests_conversations(tmp_path: Path, split: str) -> None:
    records = decode(_corpus(tmp_path))
    rng = random.Random(f"split-{split}")
    files = write_split(tmp_path / "split", SPLITS[split](records, rng))
    got = assert_same_as_ingest(files, rng)
    assert len(got) > 30


def test_fixtures_as_given_give_ingests_conversations_and_accounting() -> None:
    # whole conversations (chat logs), companion files (notes) and every container, unsplit
    paths = [*SPAN_FIXTURES, FIXTURES / "labels.jsonl", FIXTURES / "otel"]
    got = assert_same_as_ingest(paths, random.Random(1))
    assert len(got) == len(ingest(paths).collect())


@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared data sets are not next to the checkout")
@pytest.mark.parametrize("split", ["as-given", *sorted(SPLITS)])
def test_shared_otel_exports_split_over_files_give_ingests_conversations(
    tmp_path: Path, split: str
) -> None:
    exports = SHARED / "otel"
    rng = random.Random(f"shared-{split}")
    if split == "as-given":
        paths = [exports, *sorted((SHARED / "tau-bench").glob("*.json*"))[:1]]
    else:
        paths = write_split(tmp_path, SPLITS[split](decode([exports]), rng))
    assert assert_same_as_ingest(paths, rng)


def test_a_trace_split_over_files_is_one_conversation(tmp_path: Path) -> None:
    # the regression of issue 28: each half of a trace read alone loses the tool spans that
    # take their conversation id from the trace
    records = decode([FIXTURES / "otel" / "strands-latest.otlp.json"])
    halves = [records[::2], records[1::2]]
    files = write_split(tmp_path, halves)
    got = assert_same_as_ingest(files, random.Random(2))
    assert len(got) == 1
    alone = [t for f in files for t in ingest([f])]
    assert sum(len(t.messages) for t in alone) != len(got[0].messages)


def test_bare_calls_fold_across_tasks_as_in_one_process(tmp_path: Path) -> None:
    # two users of one bare client, one trace per call replaying the history, identical first
    # turns; the calls of each are read in separate tasks and still fold into one each
    path = two_users.write(tmp_path / "two-users.otlp.jsonl")
    got = assert_same_as_ingest([path], random.Random(3))
    assert len(got) == 2
    assert all(len(t.trace_ids) == 4 for t in got)


def test_bare_calls_of_one_file_meet_in_one_group_and_nothing_else_does(tmp_path: Path) -> None:
    path = two_users.write(tmp_path / "two-users.otlp.jsonl")
    part = read_input(path)
    keys = {k for p in _pieces_by_trace(part) for k in assemble_trace(p).keys}
    assert keys == {BARE_KEY_PREFIX + str(path)}


def test_a_bare_call_with_a_transport_span_in_another_file_still_folds(tmp_path: Path) -> None:
    # one process folds calls whose used spans came from the same files: an HTTP span of a
    # later call, in another file, is not used, so the call still folds with the others
    path = two_users.write(tmp_path / "two-users.otlp.jsonl")
    http = span(
        two_users.trace_id("a", 3), "ab" * 8, "POST", parent_span_id="aa" + f"{3:014x}",
        kind=3, start=1_796_160_835_000_000_000 + 300_000_000 + 1000,
        attributes={"http.request.method": "POST", "url.full": "https://api.openai.com/v1"},
    )  # fmt: skip
    other = tmp_path / "http.otlp.jsonl"
    other.write_text(json.dumps(export_request([http])) + "\n")
    got = assert_same_as_ingest([path, other], random.Random(8))
    assert sorted(len(t.trace_ids) for t in got) == [4, 4]


def test_copies_of_bare_calls_in_another_file_stay_apart(tmp_path: Path) -> None:
    # the same export given twice: one process folds within each file only
    first = two_users.write(tmp_path / "a.otlp.jsonl")
    second = tmp_path / "b.otlp.jsonl"
    second.write_text(first.read_text())
    got = assert_same_as_ingest([first, second], random.Random(4))
    assert len(got) == 2


def test_an_unanswered_bare_call_folds_into_the_call_that_continues_it(tmp_path: Path) -> None:
    # Traceloop's streamed events: the first call's reply has no span context (logs apart)
    paths = streamed._inputs(tmp_path, orphaned=True)
    [trace] = assert_same_as_ingest(paths, random.Random(5))
    assert len(trace.trace_ids) == 2


def test_the_orphan_choices_of_other_files_need_the_global_counts(tmp_path: Path) -> None:
    # a final reply missing: its note counts the gen_ai.choice records without span context of
    # the whole input; here they sit alone in a file that holds no record of the trace
    (tmp_path / "in").mkdir()
    records = decode(streamed._inputs(tmp_path / "in", orphaned=True))
    orphans = [r for r in records if r.trace_id is None]
    rest = [r for r in records if r.trace_id is not None]
    files = write_split(tmp_path / "split", [rest, orphans])
    [trace] = assert_same_as_ingest(files, random.Random(6))
    assert any("2 gen_ai.choice log record(s) of this input" in n for n in trace.notes)
    [alone], _ = run_stages(files, random.Random(6), global_choices=False)
    assert alone.notes != trace.notes  # the documented limit without the global counts


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(seed=st.integers(0, 2**32 - 1), files=st.integers(1, 5), copies=st.floats(0, 0.5))
def test_any_split_and_task_order_gives_ingests_conversations(
    tmp_path_factory: pytest.TempPathFactory, seed: int, files: int, copies: float
) -> None:
    folder = tmp_path_factory.mktemp("property")
    (folder / "traffic").mkdir()
    records = decode(
        [
            *write_traffic(folder / "traffic", conversations=3, turns=2),
            two_users.write(folder / "two-users.otlp.jsonl"),
            FIXTURES / "otel" / "openai-v2-latest-both.otlp.jsonl",
            FIXTURES / "stacks" / "litellm-otel.otlp.json",
        ]
    )
    rng = random.Random(seed)
    split = shuffled_with_copies(records, rng, files, copies)
    assert_same_as_ingest(write_split(folder / "split", split), rng)


def test_read_input_reads_one_file_and_reports_what_cannot_be_read(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="input_files"):
        read_input(FIXTURES / "otel")
    missing = read_input(tmp_path / "nothing.json", index=3)
    assert missing.index == 3
    assert missing.error is not None and "no such file" in missing.error
    assert missing.report.files[0].path == str(tmp_path / "nothing.json")


def test_input_files_are_the_files_ingest_reads_in_its_order() -> None:
    files = input_files([FIXTURES / "otel", FIXTURES / "labels.jsonl"])
    report = ingest([FIXTURES / "otel", FIXTURES / "labels.jsonl"])
    report.collect()
    assert files == [f.path for f in report.report.files]


def test_assemble_trace_takes_the_pieces_of_one_trace() -> None:
    part = read_input(FIXTURES / "otel" / "langchain-openinference.otlp.json")
    pieces = list(trace_pieces(part))
    assert len({p.trace_id for p in pieces}) == len(pieces) > 1
    with pytest.raises(ValueError, match="one trace"):
        assemble_trace(pieces[:2])
    with pytest.raises(ValueError, match="one trace"):
        assemble_trace([])


def test_assemble_conversations_needs_the_key_when_parts_share_several() -> None:
    part = read_input(FIXTURES / "otel" / "langchain-openinference.otlp.json")
    traces = [assemble_trace([p]) for p in trace_pieces(part)]
    by_key: dict[str, list[object]] = {}
    for t in traces:
        for key in t.keys:
            by_key.setdefault(key, []).append(t)
    key, group = next(iter(by_key.items()))
    report = IngestReport()
    assert [c.conversation_id for c in assemble_conversations(group, report=report)] == [key]
    assert report.conversations == 1
    other = next(t for t in traces if key not in t.keys)
    with pytest.raises(ValueError, match="group keys"):
        assemble_conversations([*group, other])
    with pytest.raises(ValueError, match="must belong"):
        assemble_conversations([*group, other], key=key)


def test_stage_values_survive_pickling(tmp_path: Path) -> None:
    paths = write_traffic(tmp_path, conversations=3, turns=2)
    got, report = run_stages(paths, random.Random(7))
    assert report.balanced
    assert len(got) == len(ingest(paths).collect())


def _pieces_by_trace(part: object) -> list[list[object]]:
    from agent_eval.ingest import InputPart

    assert isinstance(part, InputPart)
    return [[p] for p in trace_pieces(part)]


def test_text_replaced_does_not_depend_on_what_the_history_cache_held(tmp_path: Path) -> None:
    # regression: a history read from the cache did not count the lone surrogates of its
    # prefix again, so a second ingest() of a file in one process (or a stage task on another
    # worker) counted fewer replacements (6, then 4, instead of 8)
    path = two_users.write(tmp_path / "two.otlp.jsonl")
    text = path.read_text().replace('Paris?\\"', 'Paris? \\\\ud83d\\"')
    path.write_text(text)
    counts = []
    for _ in range(2):
        run = ingest([path])
        run.collect()
        counts.append(run.report.text_replaced)
    assert counts == [8, 8]
    assert_same_as_ingest([path], random.Random(9))
