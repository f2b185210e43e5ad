"""Reading a ~2 MB VCR cassette: libyaml's C parser against PyYAML's pure-Python one.

The ``openai-cassette`` container parses with ``yaml.CSafeLoader`` when PyYAML was built with
libyaml (``agent_eval/ingest/containers/_yaml.py``), else with the pure-Python
``SafeLoader``. This bench writes a cassette of about ``--megabytes`` MB from the recorded
``fixtures/cassettes/openai-vcr-gzip.yaml`` (its interactions repeated; plain-text bodies so
both loaders do the same work as on an uncompressed recording), loads it with each loader,
best of ``--repeats`` (CPU time), and prints seconds and the ratio to the pure-Python baseline.
It checks that both give the same document, then ingests the file (C loader) and says how many
conversations it found.

    python bench/yaml_cassette.py [--megabytes 2] [--repeats 3]
"""

from __future__ import annotations

import argparse
import copy
import gzip
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from agent_eval.ingest import ingest
from agent_eval.ingest.containers import _yaml

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "fixtures" / "cassettes" / "openai-vcr-gzip.yaml"


def _plain(interaction: dict[str, Any]) -> dict[str, Any]:
    """The interaction with its gzip'd response body decompressed to text."""
    body = interaction["response"]["body"]
    data = body.get("string") if isinstance(body, dict) else None
    if isinstance(data, bytes) and data.startswith(b"\x1f\x8b"):
        body["string"] = gzip.decompress(data).decode()
    return interaction


def cassette(megabytes: float) -> str:
    """A cassette of about ``megabytes`` MB: the fixture's interactions, repeated."""
    document = yaml.safe_load(SOURCE.read_text())
    interactions = [_plain(i) for i in document["interactions"]]
    one = yaml.safe_dump({"interactions": interactions}, sort_keys=False)
    copies = max(1, int(megabytes * 1e6 / len(one)))
    repeated = [copy.deepcopy(i) for _ in range(copies) for i in interactions]  # no aliases
    dumped: str = yaml.safe_dump(
        {"interactions": repeated, "version": 1}, sort_keys=False, width=1 << 16
    )
    return dumped


def best(text: str, libyaml: bool, repeats: int) -> tuple[float, Any]:
    times, loaded = [], None
    for _ in range(repeats):
        started = time.process_time()
        loaded = _yaml.load(text, libyaml=libyaml)
        times.append(time.process_time() - started)
    return min(times), loaded


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=float, default=2.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    text = cassette(args.megabytes)
    print(f"cassette: {len(text.encode()) / 1e6:.2f} MB, libyaml present: {_yaml.HAS_LIBYAML}")
    pure, pure_doc = best(text, False, args.repeats)
    print(f"baseline pure-Python SafeLoader: {pure:.3f} s")
    if not _yaml.HAS_LIBYAML:
        print("libyaml is not available: the container uses the pure-Python loader")
        return 0
    fast, fast_doc = best(text, True, args.repeats)
    print(f"libyaml CSafeLoader:             {fast:.3f} s  ({pure / fast:.0f}x faster)")
    if fast_doc != pure_doc:
        print("the two loaders gave different documents", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.yaml"
        path.write_text(text)
        started = time.perf_counter()
        traces = ingest([str(path)], format="openai-cassette").collect()
        took = time.perf_counter() - started
    print(f"ingest of the cassette (C loader): {len(traces)} conversations in {took:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
