"""Run budgets through the CLI and the fake server: the stop, skips, resume and a cost limit."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_eval._costs import Price, PriceTable
from agent_eval.cli import app
from agent_eval.errors import BudgetExhausted
from agent_eval.formatting._registry import get_formatter
from agent_eval.metrics._goal_accuracy import GoalAccuracy
from agent_eval.run._budget import Budget, BudgetedJudge, budget_line, planned_tokens
from agent_eval.run._outcomes import build_sample
from agent_eval.run._plan import plan_run
from agent_eval.run._store import ResultStore, load_results
from agent_eval.testing import FakeModelServer

from .goal_script import script_goal_judge, trace

runner = CliRunner()
N = 6


pytestmark = pytest.mark.usefixtures("judge_env_cleared")


def _inputs(tmp_path: Path) -> tuple[Path, list[str]]:
    traces = [trace(f"c{i}", done=i % 2 == 0, extra=f"conv-c{i}") for i in range(N)]
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(t.model_dump_json() + "\n" for t in traces))
    return path, [t.conversation_id for t in traces]


def _planned_per_conversation(tmp_path: Path) -> list[tuple[int, int]]:
    """Planned tokens of stage 1 and 2 of each conversation, computed apart from the engine.

    Stage 2 is planned with the scripted judge's stage-1 answer, as the engine sends it.
    """
    metric, formatter = GoalAccuracy(), get_formatter("ragas-pretty@1")
    out = []
    for i in range(N):
        sample = build_sample(
            trace(f"c{i}", done=i % 2 == 0, extra=f"conv-c{i}"), metric, formatter, {}
        )
        end = "goal reached" if i % 2 == 0 else "nothing done"
        first = sum(planned_tokens(metric.infer_request(sample)))
        second = sum(planned_tokens(metric.compare_request("get the thing done", end)))
        out.append((first, second))
    return out


PARITY = ("--metric", "goal_accuracy@1", "--formatter", "ragas-pretty@1")
"""The identities the budgets here were computed for (GoalAccuracy, ragas-pretty@1)."""


def _score(server: FakeModelServer, path: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    result = runner.invoke(
        app,
        [
            "score",
            str(path),
            "--judge",
            "fake-model",
            "--base-url",
            server.base_url,
            "--out",
            str(out),
            "--concurrency",
            "1",
            *PARITY,
            *extra,
        ],
    )
    return result.exit_code, result.stdout, result.stderr


def _expected_ok(planned: list[tuple[int, int]], limit: int) -> tuple[int, int]:
    """(conversations scored whole, requests sent) under ``limit``, at concurrency 1.

    Each call is sent only if spent + its planned tokens fit; the scripted judge then reports
    120 tokens for stage 1 and 60 for stage 2. The first refusal stops the run.
    """
    spent = whole = sent = 0
    for first, second in planned:
        if spent + first > limit:
            break
        spent, sent = spent + 120, sent + 1
        if spent + second > limit:
            break
        spent, sent, whole = spent + 60, sent + 1, whole + 1
    return whole, sent


def test_a_token_budget_stops_the_run_and_resume_finishes_it(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)
    path, ids = _inputs(tmp_path)
    planned = _planned_per_conversation(tmp_path)
    limit = 2 * 180 + planned[2][0] - 1  # one token short of c2's stage 1
    assert _expected_ok(planned, limit) == (2, 4)
    out = tmp_path / "run"
    code, stdout, stderr = _score(fake_server, path, out, "--max-judge-tokens", str(limit))
    assert code == 0, stderr
    rows = load_results(out)
    assert sorted(r.conversation_id for r in rows if r.status == "ok") == ids[:2]
    skipped = [r for r in rows if r.status == "skipped"]
    assert {r.error_type for r in skipped} == {"budget"} and len(skipped) == N - 2
    assert all(r.attempts == 0 and r.input_tokens == 0 for r in skipped)
    assert sum(r.input_tokens + r.output_tokens for r in rows) == 360 <= limit
    assert f"scored + skipped + errored = units: 2 + {N - 2} + 0 = {N}" in stdout
    assert f"budget reached: {N - 2} unit(s) skipped (budget), 1 call(s) not sent" in stderr
    assert f"--resume {out}" in stderr.replace("\n", "")
    # trial5 #4: the unpriced judge's spend read "$0.0000" (README: no price shows n/a)
    spent = "spent 360 judge tokens, n/a (no price for 'fake-model')"
    assert spent in " ".join(stderr.split()) and "$0" not in stderr
    assert len(fake_server.requests) == 4

    code, stdout, stderr = _score(fake_server, path, out, "--resume", str(out))
    assert code == 0, stderr
    rows = load_results(out)
    assert all(r.status == "ok" for r in rows) and len(rows) == N
    assert len({r.run_id for r in rows}) == 1
    resent = [r for r in fake_server.requests[4:] if "conv-c0" in r.text or "conv-c1" in r.text]
    assert resent == [], "a finished conversation was sent again"
    # stage 1 of c2..c5 is sent; their stage-2 requests equal c0's or c1's (same outcomes), so
    # they come from the judge-call cache and cost no budget
    assert len(fake_server.requests) == 4 + (N - 2)
    assert "budget reached" not in stderr
    with ResultStore(out) as store:
        (run,) = store.runs()
    assert run.record["request"]["max_judge_tokens"] == limit  # the first part's budget
    (resume,) = run.record["resumes"]  # regression: the resumed part was not recorded
    assert resume["request"]["max_judge_tokens"] is None and resume["started_at"] >= run.started_at


def test_a_cost_budget_uses_the_price_table(fake_server: FakeModelServer, tmp_path: Path) -> None:
    script_goal_judge(fake_server)
    path, ids = _inputs(tmp_path)
    # $1 per 1M tokens in and out: a token costs $0.000001, so the token arithmetic holds
    (tmp_path / "agent-eval.toml").write_text('[prices."fake-model"]\ninput = 1.0\noutput = 1.0\n')
    planned = _planned_per_conversation(tmp_path)
    limit = 180 + planned[1][0] - 1  # one token short of c1's stage 1
    assert _expected_ok(planned, limit) == (1, 2)
    out = tmp_path / "run"
    code, _, stderr = _score(fake_server, path, out, "--max-cost", f"{limit / 1e6:.6f}")
    assert code == 0, stderr
    rows = load_results(out)
    assert [r.conversation_id for r in rows if r.status == "ok"] == ids[:1]
    assert sum(r.status == "skipped" and r.error_type == "budget" for r in rows) == N - 1
    assert len(fake_server.requests) == 2


def test_a_cost_budget_without_a_price_is_refused_before_any_call(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    path, _ = _inputs(tmp_path)
    code, _, stderr = _score(fake_server, path, tmp_path / "run", "--max-cost", "1")
    assert code == 2
    assert "--max-cost needs a price for judge model 'fake-model'" in stderr
    assert fake_server.requests == []


def test_the_dry_run_refuses_an_unpriced_cost_budget_as_the_run_does(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """Regression: the dry run said "cannot be checked (no price)" and exited 0."""
    path, _ = _inputs(tmp_path)
    real = _score(fake_server, path, tmp_path / "run", "--max-cost", "0.001")
    dry = _score(fake_server, path, tmp_path / "dry", "--max-cost", "0.001", "--dry-run")
    message = (
        "error: --max-cost needs a price for judge model 'fake-model', and none is known; "
        'add [prices."fake-model"] input/output (USD per 1M tokens) to agent-eval.toml'
    )
    for code, stdout, stderr in (real, dry):
        assert code == 2, stdout + stderr
        assert " ".join(stderr.split()) == message
        assert "cannot be checked" not in stdout
    assert fake_server.requests == []
    priced = (tmp_path / "agent-eval.toml", '[prices."fake-model"]\ninput = 1.0\noutput = 2.0\n')
    priced[0].write_text(priced[1])
    code, stdout, stderr = _score(
        fake_server, path, tmp_path / "dry2", "--max-cost", "1", "--dry-run"
    )
    assert code == 0, stderr
    assert "budget: the plan (" in stdout and ") fits ($1.0000 of $1.0000 left)" in stdout


def test_an_unpriced_cost_budget_is_refused_before_any_input_is_read(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    missing = str(tmp_path / "no-such-traces")
    for dry in ((), ("--dry-run",)):
        code, _, stderr = _score(
            fake_server, Path(missing), tmp_path / "r", "--max-cost", "1", *dry
        )
        assert code == 2 and "--max-cost needs a price" in stderr, stderr
        assert "no-such-traces" not in stderr


def test_the_dry_run_says_whether_the_plan_fits(tmp_path: Path) -> None:
    path, _ = _inputs(tmp_path)
    traces = [trace(f"c{i}", done=i % 2 == 0, extra=f"conv-c{i}") for i in range(N)]
    plan = plan_run(traces, metric=GoalAccuracy(), formatter=get_formatter("ragas-pretty@1"))
    total = plan.prompt_tokens + plan.output_tokens  # the plan's own estimate, checked elsewhere
    args = ["score", str(path), "--dry-run", "--judge", "gpt-4o-mini", *PARITY]
    fits = runner.invoke(app, [*args, "--max-judge-tokens", str(total)])
    assert fits.exit_code == 0
    assert f"budget: the plan ({total:,} judge tokens estimated) fits" in fits.stdout
    short = runner.invoke(app, [*args, "--max-judge-tokens", str(total - 1)])
    assert "does NOT fit" in short.stdout


async def test_reservations_hold_concurrent_calls_within_the_limit(
    fake_server: FakeModelServer,
) -> None:
    from agent_eval.judges._openai_judge import OpenAIJudge

    script_goal_judge(fake_server)
    metric = GoalAccuracy()
    sample = build_sample(trace("x", done=True), metric, get_formatter("ragas-pretty@1"), {})
    request = metric.infer_request(sample)
    per_call = sum(planned_tokens(request))
    budget = Budget(max_tokens=per_call * 3 + per_call // 2, model="fake-model")
    async with OpenAIJudge("fake-model", base_url=fake_server.base_url, api_key="k") as inner:
        judge = BudgetedJudge(inner, budget)
        import asyncio

        results = await asyncio.gather(
            *(judge.ask(request) for _ in range(8)), return_exceptions=True
        )
    sent = [r for r in results if not isinstance(r, BaseException)]
    refused = [r for r in results if isinstance(r, BudgetExhausted)]
    assert len(sent) + len(refused) == 8 and len(refused) >= 1
    assert budget.reserved_tokens == 0 and budget.exhausted
    assert budget.spent_tokens == 120 * len(sent) <= budget.max_tokens  # type: ignore[operator]
    assert len(fake_server.requests) == len(sent)


@pytest.mark.parametrize("reported", [True, False])
async def test_a_reply_is_charged_its_usage_or_the_estimate_when_none_was_reported(
    fake_server: FakeModelServer, reported: bool
) -> None:
    """Regression: a reported usage of 0 tokens was charged the estimate, as if unreported."""
    from agent_eval.judges._openai_judge import OpenAIJudge
    from agent_eval.testing import NO_USAGE, Structured, Usage

    usage = Usage(0, 0) if reported else NO_USAGE
    fake_server.add_rule(Structured({"user_goal": "g", "end_state": "e"}, usage=usage))
    metric = GoalAccuracy()
    sample = build_sample(trace("x", done=True), metric, get_formatter("ragas-pretty@1"), {})
    request = metric.infer_request(sample)
    budget = Budget(max_tokens=10**6, model="gpt-4o-mini")
    async with OpenAIJudge("gpt-4o-mini", base_url=fake_server.base_url, api_key="k") as inner:
        reply = await BudgetedJudge(inner, budget).ask(request)
    assert reply.usage_known is reported
    expected = 0 if reported else sum(planned_tokens(request))
    assert budget.spent_tokens == expected
    assert budget.spent_cost == pytest.approx(
        budget.cost(*planned_tokens(request)) * (not reported)
    )


def test_compare_stopped_by_a_budget_says_how_to_continue_without_resume(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    # regression: compare and stability said "continue with --resume DIR", an option they lack,
    # and pointed at `agent-eval errors` when every unit was skipped and none errored
    script_goal_judge(fake_server)
    path, _ = _inputs(tmp_path)
    args = ["--judge", "fake-model", "--base-url", fake_server.base_url, "--concurrency", "1"]
    result = runner.invoke(
        app,
        [
            "compare",
            str(path),
            "--formatters",
            "transcript@1,json@1",
            *args,
            "--out",
            str(tmp_path / "cmp"),
            "--max-judge-tokens",
            "1",
        ],
    )
    assert result.exit_code == 4, result.stderr
    err = result.stderr.replace("\n", " ")
    assert "budget reached" in err and "--resume" not in err
    assert "run the command again with a new budget" in err
    assert "agent-eval errors" not in err and "the skip reasons are above" in err
    assert f"transcript@1 0 ok, {N} skipped, 0 errored" in err


def test_the_budget_line_gives_the_spend_in_usd_only_for_a_priced_judge() -> None:
    """trial5 #4: a judge with no price read ``$0.0000`` spent; it reads n/a, a priced one USD."""
    unpriced = Budget(max_tokens=3000, model="fake", spent_tokens=2298, exhausted=True)
    line = budget_line(unpriced, 27, "runs/b")
    assert line is not None and "$" not in line
    assert "spent 2,298 judge tokens, n/a (no price for 'fake') (702 of 3,000" in line
    prices = PriceTable({"m": Price(input=1000.0, output=2000.0)})
    cost = prices.cost("m", 2000, 298)
    assert cost == pytest.approx(2.596)
    priced = Budget(max_cost=3.0, model="m", prices=prices, spent_cost=cost, exhausted=True)
    line = budget_line(priced, 1, "runs/b")
    assert line is not None and "spent 0 judge tokens, $2.5960 ($0.4040 of $3.0000 left)" in line
