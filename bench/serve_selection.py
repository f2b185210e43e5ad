"""What ``serve``'s --sample and --where save: judge calls and tokens on the fixtures' traffic.

Posts every recorded fixture under ``fixtures/otel/`` (OTLP/JSON, as an exporter would: a
JSON file as one request, a JSON Lines file a request per line) to a started receiver built as
``agent-eval serve`` builds it (``RunSession.start_live``), whose judge is the fake model server
(replies scripted per schema, usage left for the server to estimate from each prompt, so tokens
follow the real prompt sizes). Each configuration runs in the same process, one after another;
the first, every conversation judged with goal accuracy, is the baseline of the ratios.

Prints, per configuration: conversations received, judged, skipped by reason, judge requests,
judge input/output tokens and their ratio to the baseline.

    python bench/serve_selection.py [--seeds 4]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path
from typing import Any

import aiohttp

from agent_eval.config import ScoreConfig
from agent_eval.judges._openai_judge import OpenAIJudge
from agent_eval.live._receiver import Receiver, ReceiverLimits
from agent_eval.live._scorer import LiveScorer
from agent_eval.live._selection import Selection, parse_condition
from agent_eval.run._session import RunSession
from agent_eval.run._store import load_results
from agent_eval.run._usage import usage_of
from agent_eval.testing import FakeModelServer, Structured

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures/otel"


def _bodies() -> list[tuple[str, bytes]]:
    """``(signal, body)`` of every fixture request, in file order."""
    out = []
    for path in sorted(FIXTURES.iterdir()):
        lines = path.read_bytes().splitlines() if path.suffix == ".jsonl" else [path.read_bytes()]
        for line in lines:
            if line.strip():
                out.append(("traces" if b'"resourceSpans"' in line[:60] else "logs", line))
    return out


async def _measure(
    server: FakeModelServer, metric: str, selection: Selection | None
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        cfg = ScoreConfig(
            out=out, metric=metric, judge="fake-model", base_url=server.base_url, cache="off"
        )
        session = RunSession(
            cfg,
            judge=OpenAIJudge("fake-model", base_url=server.base_url, api_key="sk-bench"),
            model="fake-model",
            keep_results=True,
            keep_interrupted=False,
        )
        engines, store, emitter = session.start_live()
        scorer = LiveScorer(engines, store, emitter, concurrency=8, directory=out)
        limits = ReceiverLimits(idle_seconds=3600, after_root_seconds=3600)
        receiver = Receiver(scorer, limits, out, selection=selection)
        port = await receiver.start("127.0.0.1", 0)
        async with aiohttp.ClientSession() as http:
            for signal, body in _bodies():
                async with http.post(
                    f"http://127.0.0.1:{port}/v1/{signal}",
                    data=body,
                    headers={"Content-Type": "application/json"},
                ) as reply:
                    reply.raise_for_status()
        await receiver.stop()  # closes everything held and scores it
        tally = scorer.tally()
        await session.stop_live(store, emitter)
        usage = usage_of(load_results(out))
    return {
        "received": tally["received"],
        "judged": tally["scored"] + tally["errored"],
        "skipped": tally["skipped"],
        "requests": usage.judge_requests,
        "in": usage.judge_input_tokens,
        "out": usage.judge_output_tokens,
    }


def _configurations(seeds: int) -> list[tuple[str, str, Selection | None]]:
    where = parse_condition
    configs: list[tuple[str, str, Selection | None]] = [
        ("goal_accuracy (baseline)", "goal_accuracy", None),
        ("goal_accuracy,steering", "goal_accuracy,steering", None),
    ]
    configs += [
        (f"--sample 0.25 --sample-seed {s}", "goal_accuracy", Selection(rate=0.25, seed=s))
        for s in range(seeds)
    ]
    configs += [
        (
            "--where gen_ai.agent.name=concierge-agent",
            "goal_accuracy",
            Selection((where("gen_ai.agent.name=concierge-agent"),)),
        ),
        (
            "--where service.name=fixtures-langchain",
            "goal_accuracy",
            Selection((where("service.name=fixtures-langchain"),)),
        ),
    ]
    return configs


async def _main(seeds: int) -> None:
    with FakeModelServer() as server:
        server.add_rule(
            Structured({"user_goal": "get it done", "end_state": "done"}), schema="GoalAndOutcome"
        )
        server.add_rule(
            Structured({"reason": "compared", "verdict": "1"}), schema="OutcomeComparison"
        )
        base: dict[str, Any] | None = None
        head = f"{'configuration':44} {'recv':>4} {'judged':>6} {'req':>4} {'in tok':>7} "
        print(head + f"{'out tok':>7} {'in/base':>7}  skipped")
        for name, metric, selection in _configurations(seeds):
            got = await _measure(server, metric, selection)
            base = base or got
            ratio = got["in"] / base["in"] if base["in"] else 0.0
            print(
                f"{name:44} {got['received']:>4} {got['judged']:>6} {got['requests']:>4} "
                f"{got['in']:>7} {got['out']:>7} {ratio:>7.2f}  {got['skipped'] or ''}"
            )


def main() -> None:
    """Parse the options and run the configurations."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seeds", type=int, default=4, help="--sample 0.25 runs, seeds 0..N-1")
    asyncio.run(_main(parser.parse_args().seeds))


if __name__ == "__main__":
    main()
