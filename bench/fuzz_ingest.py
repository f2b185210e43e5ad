"""Long fuzz run of ingest: mutated real files through every container, outcomes counted.

The CI test (``tests/ingest/test_bad_input_fuzz.py``) runs a small budget of the same check;
this runs many more, with a fixed seed, and prints the outcome counts per container and per
mutation kind (see :mod:`agent_eval.testing._mutations`). Every file must end ``read`` or
``rejected`` (typed); anything else is a bug and is listed with its first traceback line.

    python bench/fuzz_ingest.py [--cases 10000] [--line-cases 2000] [--seed 12]
        [--shared ../shared/data] [--show 5]

Each case mutates one seed file and reads it twice: with its container forced, and with
``--format auto``. Each line case damages one line of a JSON Lines seed (the first a third of
the time: cut off, garbage, valid JSON of another shape, a hostile value) and reads it both
ways too: besides ending read or rejected, typed, it must keep every good record (span, log
record, conversation) that the same file with that line neutral (``{}``) gives
(:func:`agent_eval.testing._mutations.lost_records`); a loss is a bug.
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

from agent_eval.testing._mutations import (
    Seed,
    check_ingest,
    is_json_lines,
    lost_records,
    mutate,
    mutate_line,
    seed_files,
)

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--line-cases", type=int, default=2000)
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
        line_bugs = _line_cases(seeds, work, args.line_cases, rng, by_mutation, outcomes)
    bugs += line_bugs
    for bug in line_bugs[: args.show]:
        print(bug, file=sys.stderr)
    elapsed = time.perf_counter() - started
    total = sum(outcomes.values())
    print(
        f"{args.cases} cases + {args.line_cases} JSON Lines line cases, {total} reads in "
        f"{elapsed:.0f} s (seed {args.seed})"
    )
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


def _line_cases(
    seeds: list[Seed],
    work: Path,
    cases: int,
    rng: random.Random,
    by_mutation: dict[str, Counter[str]],
    outcomes: Counter[str],
) -> list[str]:
    """Damage one line of a JSON Lines seed per case; the bugs (untyped, lost records...)."""
    lined = [(s, s.path.read_bytes()) for s in seeds]
    lined = [(s, d) for s, d in lined if is_json_lines(d)]
    print(f"{len(lined)} JSON Lines seeds: {', '.join(sorted({s.format for s, _ in lined}))}")
    bugs: list[str] = []
    lost = 0
    for case in range(cases):
        seed, data = lined[rng.randrange(len(lined))]
        kind, index, mutated, baseline = mutate_line(data, rng)
        target, neutral = work / "line-case.jsonl", work / "line-baseline.jsonl"
        target.write_bytes(mutated)
        neutral.write_bytes(baseline)
        for fmt in (seed.format, "auto"):
            outcome = check_ingest(target, fmt)
            loss = lost_records(target, neutral, fmt)
            kind_of = "lost_records" if outcome.ok and loss else outcome.kind
            outcomes[f"line:{kind_of}"] += 1
            by_mutation.setdefault(f"line {kind}", Counter())[kind_of] += 1
            if loss:
                lost += 1
            if not outcome.ok or loss:
                why = loss or outcome.detail.strip().splitlines()[-1:][0]
                where = f"line {index + 1}"
                bugs.append(
                    f"line case {case} {seed.path.name} {kind} {where} --format {fmt}: {why}"
                )
    print(f"JSON Lines line cases: {cases} ({2 * cases} reads), {lost} lost good records")
    return bugs


if __name__ == "__main__":
    sys.exit(main())
