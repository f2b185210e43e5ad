"""Long fuzz run of ingest: mutated real files through every container, outcomes counted.

The CI test (``tests/ingest/test_bad_input_fuzz.py``) runs a small budget of the same check;
this runs many more, with a fixed seed, and prints the outcome counts per container and per
mutation kind (see :mod:`agent_eval.testing.mutations`). Every file must end ``read`` or
``rejected`` (typed); anything else is a bug and is listed with its first traceback line.

    python bench/fuzz_ingest.py [--cases 10000] [--seed 12] [--shared ../shared/data]
        [--show 5]

Each case mutates one seed file and reads it twice: with its container forced, and with
``--format auto``.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from agent_eval.testing.mutations import check_ingest, mutate, seed_files

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--show", type=int, default=5, help="bugs listed with a traceback")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    outcomes: Counter[str] = Counter()
    by_container: dict[str, Counter[str]] = {}
    by_mutation: dict[str, Counter[str]] = {}
    bugs: list[str] = []
    replaced = 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        shared = args.shared if args.shared.is_dir() else None
        seeds = seed_files(ROOT / "fixtures" / "otel", shared, work / "seeds")
        print(f"{len(seeds)} seed files, {len({s.format for s in seeds})} containers")
        datas = [s.path.read_bytes() for s in seeds]
        for case in range(args.cases):
            index = rng.randrange(len(seeds))
            seed = seeds[index]
            kind, data = mutate(datas[index], rng)
            target = work / f"case{seed.path.suffix}"
            target.write_bytes(data)
            for fmt in (seed.format, "auto"):
                outcome = check_ingest(target, fmt)
                outcomes[outcome.kind] += 1
                replaced += outcome.replaced
                by_container.setdefault(seed.format, Counter())[outcome.kind] += 1
                by_mutation.setdefault(kind, Counter())[outcome.kind] += 1
                if not outcome.ok:
                    last = outcome.detail.strip().splitlines()[-1:] or [""]
                    bugs.append(f"case {case} {seed.path.name} {kind} --format {fmt}: {last[0]}")
                    if len(bugs) <= args.show:
                        print(outcome.detail, file=sys.stderr)
    elapsed = time.perf_counter() - started
    total = sum(outcomes.values())
    print(f"{args.cases} cases, {total} reads in {elapsed:.0f} s (seed {args.seed})")
    print("outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())))
    print(f"code points replaced (lone surrogates): {replaced}")
    for title, table in (("container", by_container), ("mutation", by_mutation)):
        print(f"by {title}:")
        for name, counts in sorted(table.items()):
            print(f"  {name:20} " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    causes = Counter(re.sub(r"\d+", "N", b.split(": ", 1)[-1])[:120] for b in bugs)
    for cause, n in causes.most_common(20):
        print(f"BUG x{n}: {cause}")
    return 1 if bugs else 0


if __name__ == "__main__":
    sys.exit(main())
