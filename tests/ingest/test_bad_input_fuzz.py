"""Property: mutated real files through every container end read or rejected, typed (issue 12).

Seeds are the recorded fixtures (OTLP/JSON, JSON Lines), files derived from them (protobuf,
AgentTrace JSON Lines, Phoenix, OTel JS, chat messages) and, when ``../shared`` is present, the
real Jaeger, Tempo, Langfuse, cassette, span-attribute and tau exports. Each example mutates one
seed (:mod:`agent_eval.testing.mutations`: deep nesting, lone surrogates, huge integers,
non-finite numbers, wrong types, control characters, truncation, flipped bytes, invalid UTF-8)
and reads it with its container forced and with ``--format auto``. Every outcome must be
``read`` (balanced accounting, every conversation writable as UTF-8 and readable back) or
``rejected`` with a typed error; no untyped exception, no safety net firing. Fixed seed and a
small budget for CI; ``bench/fuzz_ingest.py`` runs the long version.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from agent_eval.testing.mutations import MUTATIONS, Seed, check_ingest, mutate, seed_files

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
