"""The ingest stages as Ray tasks (``--engine ray``'s reading) give ``ingest()``'s result.

The same split inputs as ``test_stages.py`` (the project's fixtures and generated traffic, split
into files by trace, by span, logs apart, at random with copies), read by
:func:`agent_eval.run.cluster._inputs.read_on_ray` on a local two-CPU cluster: the same
AgentTraces (every field) in ``ingest()``'s order, and the same accounting; local paths and a
``file://`` URL alike.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from agent_eval.ingest import ingest

from . import test_identical_prefix_folding as two_users
from .stage_splits import SPLITS, assert_same_result, decode, write_split
from .test_stages import FIXTURES, SPAN_FIXTURES, _corpus

if not os.environ.get("CI"):  # CI installs the ray extra (.ci/run): there it must run
    pytest.importorskip("ray")


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[ModuleType]:
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


def _same_as_ingest(ray: ModuleType, paths: list[str], **options: int) -> int:
    from agent_eval.run.cluster._inputs import read_on_ray

    read = read_on_ray(ray, paths, **options)
    return len(assert_same_result(paths, list(read.conversations), read.report))


@pytest.mark.parametrize("split", sorted(SPLITS))
def test_split_inputs_read_on_ray_give_ingests_conversations(
    ray_cluster: ModuleType, tmp_path: Path, split: str
) -> None:
    rng = random.Random(f"ray-{split}")
    files = write_split(tmp_path / "split", SPLITS[split](decode(_corpus(tmp_path)), rng))
    assert _same_as_ingest(ray_cluster, [str(f) for f in files]) > 30


def test_inputs_as_given_with_chat_logs_and_three_partitions(
    ray_cluster: ModuleType, tmp_path: Path
) -> None:
    # whole conversations (chat logs) come first, in input order; bare calls fold as in one
    # process; more partitions than CPUs change nothing
    paths = [str(p) for p in [*SPAN_FIXTURES, FIXTURES / "labels.jsonl"]]
    paths.append(str(two_users.write(tmp_path / "two-users.otlp.jsonl")))
    assert _same_as_ingest(ray_cluster, paths, partitions=3) > 30


def test_a_file_url_reads_as_the_local_folder(ray_cluster: ModuleType, tmp_path: Path) -> None:
    from agent_eval.run.cluster._inputs import read_on_ray

    rng = random.Random("url")
    records = decode([FIXTURES / "otel"])
    folder = tmp_path / "bucket"
    write_split(folder, SPLITS["by-span"](records, rng))
    local = [t.model_dump_json() for t in ingest([str(folder)]).collect()]
    read = read_on_ray(ray_cluster, [f"file://{folder}"])
    got = [t.model_dump_json() for t in read.conversations]  # sources name the URL
    assert [g.replace(f"file://{folder}", str(folder)) for g in got] == local and local
    assert f"file://{folder}" in got[0]
    assert {f.path.split("/")[-1] for f in read.report.files} == {p.name for p in folder.iterdir()}
    assert all(f.path.startswith("file://") for f in read.report.files)


def test_more_input_files_make_more_partitions_with_the_same_result(
    ray_cluster: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_eval.run.cluster import _inputs

    monkeypatch.setattr(_inputs, "FILES_PER_PARTITION", 1)  # a partition per file: 6 here
    rng = random.Random("partitions")
    files = write_split(tmp_path / "split", SPLITS["by-span"](decode(_corpus(tmp_path)), rng, 6))
    assert len(files) == 6
    assert _same_as_ingest(ray_cluster, [str(f) for f in files]) > 30
