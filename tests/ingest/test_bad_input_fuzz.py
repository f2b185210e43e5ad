"""Property: mutated real files through every container end read or rejected, typed (issue 12).

Seeds are the recorded fixtures (OTLP/JSON, JSON Lines), files derived from them (protobuf,
AgentTrace JSON Lines, Phoenix, OTel JS, chat messages) and, when ``../shared`` is present, the
real Jaeger, Tempo, Langfuse, cassette, span-attribute and tau exports. Each example mutates one
seed (:mod:`agent_eval.testing._mutations`: deep nesting, lone surrogates, huge integers,
non-finite numbers, wrong types, control characters, truncation, flipped bytes, invalid UTF-8)
and reads it with its container forced and with ``--format auto``. Every outcome must be
``read`` (balanced accounting, every conversation writable as UTF-8 and readable back) or
``rejected`` with a typed error; no untyped exception, no safety net firing. Fixed seed and a
small budget for CI; ``bench/fuzz_ingest.py`` runs the long version. The JSON Lines seeds also
get one line damaged (the first a third of the time): every good record around it must still
be read (issue 32).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from agent_eval.testing._mutations import (
    LINE_MUTATIONS,
    MUTATIONS,
    Seed,
    check_ingest,
    is_json_lines,
    lost_records,
    mutate,
    mutate_line,
    seed_files,
)

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data"


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Seed, bytes]]:
    work = tmp_path_factory.mktemp("fuzz-seeds")
    found = seed_files(ROOT / "fixtures" / "otel", SHARED if SHARED.is_dir() else None, work)
    return [(s, s.path.read_bytes()) for s in found]


def test_the_seed_corpus_covers_the_containers(seeds: list[tuple[Seed, bytes]]) -> None:
    formats = {s.format for s, _ in seeds}
    assert {"otlp-json", "otlp-proto", "agent-trace-jsonl", "phoenix", "otel-js"} <= formats
    assert {"openai-messages"} <= formats
    if SHARED.is_dir():
        assert len(formats) == 13
    for each, _ in seeds:  # unmutated, every seed is read (a conversation, or counted skips)
        outcome = check_ingest(each.path, each.format)
        assert outcome.kind == "read" and outcome.conversations + outcome.skipped > 0, each
    assert sum(check_ingest(s.path, s.format).conversations > 0 for s, _ in seeds) >= 6


@seed(12)
@settings(
    max_examples=120,
    deadline=None,
    derandomize=False,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    index=st.integers(min_value=0, max_value=10_000),
    kind=st.sampled_from(MUTATIONS),
    rng_seed=st.integers(min_value=0, max_value=2**32 - 1),
)
def test_mutated_files_end_read_or_rejected_typed(
    seeds: list[tuple[Seed, bytes]], tmp_path: Path, index: int, kind: str, rng_seed: int
) -> None:
    chosen, data = seeds[index % len(seeds)]
    kind, mutated = mutate(data, random.Random(rng_seed), kind)
    path = tmp_path / f"case{chosen.path.suffix}"
    path.write_bytes(mutated)
    for fmt in (chosen.format, "auto"):
        outcome = check_ingest(path, fmt)
        assert outcome.ok, f"{chosen.path.name} {kind} --format {fmt}: {outcome.detail}"


@pytest.fixture(scope="module")
def line_seeds(seeds: list[tuple[Seed, bytes]]) -> list[tuple[Seed, bytes]]:
    return [(s, d) for s, d in seeds if is_json_lines(d)]


def test_the_json_lines_seeds_cover_their_containers(line_seeds: list[tuple[Seed, bytes]]) -> None:
    formats = {s.format for s, _ in line_seeds}
    assert formats == {"otlp-json", "otel-js", "agent-trace-jsonl", "phoenix", "openai-messages"}


@seed(32)
@settings(
    max_examples=200,
    deadline=None,
    derandomize=False,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    index=st.integers(min_value=0, max_value=10_000),
    kind=st.sampled_from(LINE_MUTATIONS),
    rng_seed=st.integers(min_value=0, max_value=2**32 - 1),
)
def test_one_bad_json_lines_line_costs_only_itself(
    line_seeds: list[tuple[Seed, bytes]], tmp_path: Path, index: int, kind: str, rng_seed: int
) -> None:
    """Issue 32: the first line too; every good record around the bad one is still read."""
    chosen, data = line_seeds[index % len(line_seeds)]
    kind, line, mutated, baseline = mutate_line(data, random.Random(rng_seed), kind)
    path, neutral = tmp_path / "case.jsonl", tmp_path / "baseline.jsonl"
    path.write_bytes(mutated)
    neutral.write_bytes(baseline)
    for fmt in (chosen.format, "auto"):
        outcome = check_ingest(path, fmt)
        where = f"{chosen.path.name} {kind} line {line + 1} --format {fmt}"
        assert outcome.ok, f"{where}: {outcome.detail}"
        assert lost_records(path, neutral, fmt) is None, where
