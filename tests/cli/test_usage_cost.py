"""Honest usage and cost: unreported usage is estimated and marked, cache hits say ``cached``.

Everything runs ``agent-eval`` end to end against the fake server over HTTP; the judge model
is ``gpt-4o-mini`` (the default judge), priced by genai-prices, so that a confident ``$0.0000``
for a reply without usage would show.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from agent_eval._costs import PriceTable, usd_text
from agent_eval._tokens import count_tokens
from agent_eval.cli import app
from agent_eval.run._cache import JudgeCache
from agent_eval.run._store import load_results
from agent_eval.testing import NO_USAGE, ClaimScript, FakeModelServer, RecordedRequest, Structured

from ..analysis import judge_script
from ..run.goal_script import script_goal_judge, trace

MODEL = "gpt-4o-mini"
ENV = {"COLUMNS": "250", "MY_JUDGE_KEY": "sk-usage-test"}
runner = CliRunner()


pytestmark = pytest.mark.usefixtures("judge_env_cleared")


def _traces(path: Path, n: int = 2) -> Path:
    lines = [trace(f"u{i}", done=i % 2 == 0, extra=f"case {i}").model_dump_json() for i in range(n)]
    path.write_text("".join(line + "\n" for line in lines))
    return path


def _score(server: FakeModelServer, inputs: Path, out: Path, *extra: str) -> tuple[int, str]:
    args = ["score", str(inputs), "--judge", MODEL, "--base-url", server.base_url,
            "--api-key-env", "MY_JUDGE_KEY", "--out", str(out), *extra]  # fmt: skip
    result = runner.invoke(app, args, env=ENV)
    return result.exit_code, result.stdout + result.stderr


def cell(out: str, what: str) -> str:
    """The value next to ``what`` in a two-column rich table (wrapped lines joined)."""
    lines = out.splitlines()
    for index, line in enumerate(lines):
        cells = [c.strip() for c in line.split("│") if c.strip()]
        if cells and cells[0] == what:
            value = [" ".join(cells[1:])]
            for more in lines[index + 1 :]:
                parts = [c.strip() for c in more.split("│")]
                if len(parts) < 3 or parts[1]:
                    break
                value.append(" ".join(p for p in parts[2:] if p))
            return " ".join(value)
    raise AssertionError(f"no {what!r} row in:\n{out}")


def _usage_line(out: str) -> str:
    """The judge row of the usage table (the summary table has a ``judge`` row too)."""
    return next(line for line in out.splitlines() if line.startswith("│ judge │ goal_accuracy"))


def _no_usage_judge(server: FakeModelServer) -> None:
    """Goal accuracy whose replies carry no ``usage`` object (as some local servers send)."""

    def infer(request: RecordedRequest) -> Structured:
        end = "goal reached" if "ZEBRA-DONE" in request.text else "nothing done"
        return Structured({"user_goal": "do it", "end_state": end}, usage=NO_USAGE)

    def compare(request: RecordedRequest) -> Structured:
        verdict = "1" if "Arrived outcome: goal reached" in request.text else "0"
        return Structured({"reason": "compared", "verdict": verdict}, usage=NO_USAGE)

    server.add_rule(infer, schema="GoalAndOutcome")
    server.add_rule(compare, schema="OutcomeComparison")


def _request_tokens(request: RecordedRequest) -> int:
    return sum(count_tokens(str(m.get("content") or "")) for m in request.messages)


def test_reply_without_usage_is_estimated_and_marked_never_zero(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    _no_usage_judge(fake_server)
    code, out = _score(fake_server, _traces(tmp_path / "t.jsonl"), tmp_path / "out")
    assert code == 0, out
    rows = load_results(tmp_path / "out")
    assert len(rows) == 2 and all(r.status == "ok" for r in rows)
    assert all(not r.usage_known for r in rows)
    assert all((r.input_tokens, r.output_tokens) == (0, 0) for r in rows)
    # the estimate is the o200k count of exactly what was sent (the fake server saw it)
    expected_in = sum(_request_tokens(r) for r in fake_server.requests)
    assert sum(r.estimated_input_tokens or 0 for r in rows) == expected_in
    assert all((r.estimated_output_tokens or 0) > 0 for r in rows)
    tokens = cell(out, "judge tokens")
    assert tokens.startswith(f"~{expected_in} in, ~")
    assert "estimated: 2 of 2 rows had no usage report" in tokens
    assert "0 in, 0 out" not in out
    # the usage table prices the estimate and marks it; never a confident $0.0000
    judge_line = _usage_line(out)
    assert f"~{expected_in}" in judge_line and "est." in judge_line
    assert "$0.0000" not in judge_line
    assert "~ = estimated: 2 row(s) had no usage report" in " ".join(out.split())
    assert "agent total none recorded" in " ".join(out.split())
    # both stores carry the flag
    db = sqlite3.connect(tmp_path / "out" / "results.db")
    assert db.execute("SELECT DISTINCT usage_known FROM results").fetchall() == [(0,)]
    lines = (tmp_path / "out" / "results.jsonl").read_bytes().splitlines()
    assert {orjson.loads(line)["usage_known"] for line in lines} == {False}


def test_cached_reply_keeps_its_unknown_usage_and_costs_nothing_this_run(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    _no_usage_judge(fake_server)
    inputs = _traces(tmp_path / "t.jsonl")
    assert _score(fake_server, inputs, tmp_path / "first")[0] == 0
    sent = len(fake_server.requests)
    code, out = _score(fake_server, inputs, tmp_path / "second")
    assert code == 0, out
    assert len(fake_server.requests) == sent, "answered from the judge-call cache"
    rows = load_results(tmp_path / "second")
    assert all(r.is_cached and r.usage_known for r in rows)  # this run's usage: exactly 0
    assert [(r.judge_calls, r.cached_calls, r.attempts) for r in rows] == [(2, 2, 0)] * 2
    assert cell(out, "judge tokens") == "none spent: all 4 judge calls answered from the cache"
    assert cell(out, "judge requests").startswith("0 (all 4 calls cached: 0 tokens, $0")
    judge_line = _usage_line(out)
    assert "cached" in judge_line and "$0 (cached)" in judge_line
    assert "~" not in judge_line
    # the cache file remembers that the original calls had no usage report
    import os

    with JudgeCache(os.environ["AGENT_EVAL_CACHE_PATH"]) as cache:
        db = sqlite3.connect(cache.path)
        keys = [k for (k,) in db.execute("SELECT key FROM judge_calls")]
        entries = [cache.get(k) for k in keys]
    assert len(entries) == 4 and all(e is not None and not e.usage_known for e in entries)


def test_partly_cached_run_counts_cached_of_calls(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)
    assert _score(fake_server, _traces(tmp_path / "a.jsonl", 2), tmp_path / "a")[0] == 0
    code, out = _score(fake_server, _traces(tmp_path / "b.jsonl", 3), tmp_path / "b")
    assert code == 0, out
    # the new conversation's stage 1 is sent; its stage 2 asks what u0's did (same outcome)
    assert cell(out, "judge requests").startswith("1 (5 of 6 calls cached")
    assert cell(out, "judge tokens") == "100 in, 20 out"
    judge_line = _usage_line(out)
    assert "5 of 6 calls cached" in judge_line
    price = PriceTable().price(MODEL)
    assert price is not None
    rows = load_results(tmp_path / "b")
    spent = sum(r.input_tokens for r in rows), sum(r.output_tokens for r in rows)
    assert usd_text(price.cost(*spent)) in judge_line


def test_dry_run_without_a_judge_estimates_the_default_judges_cost(tmp_path: Path) -> None:
    result = runner.invoke(app, ["score", str(_traces(tmp_path / "t.jsonl", 3)), "--dry-run"])
    out = result.stdout
    assert result.exit_code == 0, out + result.stderr
    cost = cell(out, "estimated cost")
    prompt = int(cell(out, "prompt tokens").split()[0].replace(",", ""))
    completion = int(cell(out, "output tokens").split()[0].replace(",", ""))
    expected = PriceTable().cost(MODEL, prompt, completion)
    assert expected is not None and expected > 0
    assert cost.startswith(f"{usd_text(expected)} at gpt-4o-mini prices (the default judge")
    assert "n/a" not in cost


def test_dry_run_of_an_unknown_model_says_na(tmp_path: Path) -> None:
    args = ["score", str(_traces(tmp_path / "t.jsonl")), "--dry-run", "--judge", "my-local-7b"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert cell(result.stdout, "estimated cost") == "n/a (no price for this judge)"


def test_compare_tables_mark_cached_variants(fake_server: FakeModelServer, tmp_path: Path) -> None:
    judge_script.script(fake_server)
    traces = judge_script.write_traces(tmp_path / "traces.jsonl", {"c0": "DONE", "c1": ""})
    args = ["compare", str(traces), "--formatters", "transcript@1,json@1", "--judge", MODEL,
            "--base-url", fake_server.base_url, "--api-key-env", "MY_JUDGE_KEY",
            "--out", str(tmp_path / "out")]  # fmt: skip
    first = runner.invoke(app, args, env=ENV)
    assert first.exit_code == 0, first.output
    json_row = next(line for line in first.stdout.splitlines() if line.startswith("│ json@1"))
    assert "2 of 4 cached" in json_row  # stage 2 asks json@1 the same question as transcript@1
    second = runner.invoke(app, [*args, "--json"], env=ENV)
    by = {v["variant"]: v for v in json.loads(second.stdout)["comparison"]["variants"]}
    assert all(v["cached_calls"] == v["judge_calls"] == 4 for v in by.values())
    assert all(v["cost_usd"] == 0.0 for v in by.values())
    third = runner.invoke(app, args, env=ENV)
    rows = [line for line in third.stdout.splitlines() if "$0 (cached)" in line]
    assert [row.split("│")[1].strip() for row in rows] == ["transcript@1", "json@1"]
    assert all("cached (4 of 4 calls)" in row and "$0 (cached)" in row for row in rows)
    assert all("0/0" not in row for row in rows)


def test_stability_caption_counts_cached_repeats(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)
    inputs = _traces(tmp_path / "t.jsonl", 2)
    args = ["stability", str(inputs), "--repeats", "3", "--formatter", "transcript@1",
            "--judge", MODEL, "--base-url", fake_server.base_url, "--api-key-env",
            "MY_JUDGE_KEY", "--out", str(tmp_path / "st")]  # fmt: skip
    first = runner.invoke(app, args, env=ENV)
    assert first.exit_code == 0, first.output
    assert "judge calls: 12, none cached" in " ".join(first.stdout.split())
    result = runner.invoke(app, args, env=ENV)  # repeat 0 is answered from the cache
    assert result.exit_code == 0, result.output
    flat = " ".join(result.stdout.split())
    # trial10 N2: 12 judge calls (2 conversations x 3 repeats x 2 stages), 6 unit repeats
    assert (
        "judge calls: 12, 4 of them from the judge-call cache (at 0 tokens and $0 in this run); "
        "unit repeats: 2 of 6 answered wholly from the cache"
    ) in flat


def _stability(server: FakeModelServer, inputs: Path, out: Path, *extra: str) -> str:
    args = ["stability", str(inputs), "--repeats", "2", "--formatter", "transcript@1",
            "--judge", MODEL, "--base-url", server.base_url, "--api-key-env",
            "MY_JUDGE_KEY", "--out", str(out), *extra]  # fmt: skip
    result = runner.invoke(app, args, env=ENV)
    assert result.exit_code == 0, result.output
    return " ".join(result.stdout.split())


def test_stability_repeat_0_shares_the_cache_entries_of_score(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """Regression: stability keyed its cache without the mode, so it never hit score's entries."""
    script_goal_judge(fake_server)
    inputs = _traces(tmp_path / "t.jsonl", 2)
    assert _score(fake_server, inputs, tmp_path / "score", "--formatter", "transcript@1")[0] == 0
    sent = len(fake_server.requests)
    flat = _stability(fake_server, inputs, tmp_path / "st")
    assert "judge calls: 8, 4 of them from the judge-call cache" in flat
    assert "unit repeats: 2 of 4 answered wholly from the cache" in flat
    assert len(fake_server.requests) == sent + 4  # only repeat 1 was sent


def test_stability_with_refresh_cache_re_asks_repeat_0(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """Regression: --refresh-cache built a refreshing cache wrapper with no cache and crashed."""
    script_goal_judge(fake_server)
    inputs = _traces(tmp_path / "t.jsonl", 2)
    _stability(fake_server, inputs, tmp_path / "a")
    sent = len(fake_server.requests)
    flat = _stability(fake_server, inputs, tmp_path / "b", "--refresh-cache")
    assert "judge calls: 8, none cached" in flat
    assert len(fake_server.requests) == sent + 8


def test_html_report_marks_estimated_usage(fake_server: FakeModelServer, tmp_path: Path) -> None:
    _no_usage_judge(fake_server)
    assert _score(fake_server, _traces(tmp_path / "t.jsonl"), tmp_path / "out")[0] == 0
    rows = load_results(tmp_path / "out")
    total_in = sum(r.best_tokens[0] for r in rows)
    html = tmp_path / "report.html"
    result = runner.invoke(app, ["report", str(tmp_path / "out"), "--html", str(html)])
    assert result.exit_code == 0, result.output
    text = html.read_text()
    assert f"~{total_in} / ~" in text
    assert "estimated: 2 row(s) had no usage report" in text
    for r in rows:
        assert f"~{r.best_tokens[0]} / ~{r.best_tokens[1]}" in text


LC_FACTORY = """
import os

from langchain_openai import ChatOpenAI


def make(model="gpt-4o-mini"):
    return ChatOpenAI(model=model, base_url=os.environ["LC_FAKE_URL"], api_key="sk-lc-usage",
                      max_retries=0, timeout=15)
"""


def test_langchain_judge_without_usage_is_estimated_not_a_confident_zero(
    fake_server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: a LangChain judge whose endpoint sent no usage recorded 0 tokens as known."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "lc_nousage_factory.py").write_text(LC_FACTORY)
    monkeypatch.syspath_prepend(str(tmp_path / "pkg"))
    _no_usage_judge(fake_server)
    args = ["score", str(_traces(tmp_path / "t.jsonl")), "--judge",
            "langchain:lc_nousage_factory:make", "--no-cache",
            "--out", str(tmp_path / "out")]  # fmt: skip
    result = runner.invoke(app, args, env={**ENV, "LC_FAKE_URL": fake_server.base_url})
    out = result.stdout + result.stderr
    assert result.exit_code == 0, out
    rows = load_results(tmp_path / "out")
    assert len(rows) == 2 and {(r.status, r.judge_model) for r in rows} == {("ok", MODEL)}
    assert all(not r.usage_known and (r.input_tokens, r.output_tokens) == (0, 0) for r in rows)
    expected_in = sum(_request_tokens(r) for r in fake_server.requests)
    assert sum(r.estimated_input_tokens or 0 for r in rows) == expected_in
    assert cell(out, "judge tokens").startswith(f"~{expected_in} in, ~")
    judge_line = _usage_line(out)
    assert f"~{expected_in}" in judge_line and "est." in judge_line
    price = PriceTable().price(MODEL)
    assert price is not None
    estimate = price.cost(expected_in, sum(r.estimated_output_tokens or 0 for r in rows))
    assert estimate > 0 and f"~{usd_text(estimate)}" in judge_line
    assert "$0.0000" not in out and "0 in, 0 out" not in out


def _stage_line(out: str, metric: str, stage: str) -> list[str]:
    """The cells of a stage's row in the stage table."""
    for line in out.splitlines():
        cells = [c.strip() for c in line.split("│")]
        if len(cells) > 3 and cells[1:3] == [metric, stage]:
            return cells[1:-1]
    raise AssertionError(f"no {metric} {stage} row in:\n{out}")


def test_claim_stages_without_usage_are_estimated_and_add_up(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """Regression: the stage lines said "0 in, 0 out" / "~0" / "~$0.0000" beside an estimate."""
    answers = {"You can return it within 14 days. Shipping is free.": ["14 days.", "Free."]}
    ClaimScript(statements=answers, usage=NO_USAGE).install(fake_server)
    records = [
        {"id": f"q{i}", "question": "Can I return it?", "answer": answer,
         "contexts": [{"text": "Returns are accepted within 14 days."}]}
        for i, answer in enumerate([*answers, "It is free."])
    ]  # fmt: skip
    inputs = tmp_path / "rag.jsonl"
    inputs.write_text("".join(json.dumps(r) + "\n" for r in records))
    code, out = _score(fake_server, inputs, tmp_path / "out", "--metric", "faithfulness")
    assert code == 0, out
    rows = load_results(tmp_path / "out")
    assert len(rows) == 2 and all(r.status == "ok" and not r.usage_known for r in rows)
    by_stage: dict[str, list[RecordedRequest]] = {"decompose": [], "verify": []}
    for request in fake_server.requests:
        by_stage["decompose" if request.schema_name == "Statements" else "verify"].append(request)
    price = PriceTable().price(MODEL)
    assert price is not None
    costs = []
    for stage, requests in by_stage.items():
        sent = sum(_request_tokens(r) for r in requests)
        replied = sum(r.details["stages"][stage]["estimated_output_tokens"] for r in rows)
        assert sent > 0 and replied > 0
        line = cell(out, f"stage {stage}")
        assert line.startswith(f"{len(requests)} requests, ~{sent} in, ~{replied} out (estimated")
        cells = _stage_line(out, "faithfulness@2", stage)
        assert cells[5:7] == [f"~{sent}", f"~{replied}"]
        costs.append(price.cost(sent, replied))
        assert cells[7] == f"~{usd_text(costs[-1])} est."
    # the stages add up to the metric's estimate
    total_in = sum(r.best_tokens[0] for r in rows)
    assert total_in == sum(_request_tokens(r) for r in fake_server.requests)
    assert cell(out, "judge tokens").startswith(f"~{total_in} in, ~")
    assert f"total ~{usd_text(sum(costs))}" in " ".join(out.split())
    assert not re.search(r"~0\b|\$0\.0000\b|\b0 in, 0 out", out)


def _judge_cost_cell(html: Path) -> str:
    found = re.search(r"<th>Judge cost</th><td[^>]*>(.*?) <span", html.read_text())
    assert found, "no Judge cost row"
    return found.group(1)


def test_html_judge_cost_agrees_with_the_terminal_on_a_cached_run(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """Trial: an all-cached run of an unpriced judge said "$0.0000" in the terminal and
    "Judge cost n/a" in the HTML report. Cached calls cost $0 whatever the price; a run that
    sent calls to an unpriced model stays n/a in both."""
    script_goal_judge(fake_server)
    inputs = _traces(tmp_path / "t.jsonl")
    args = ["score", str(inputs), "--judge", "unpriced-judge", "--base-url", fake_server.base_url,
            "--api-key-env", "MY_JUDGE_KEY"]  # fmt: skip
    for out in ("cold", "warm"):
        result = runner.invoke(app, [*args, "--out", str(tmp_path / out)], env=ENV)
        assert result.exit_code == 0, result.output
        html = tmp_path / f"{out}.html"
        report = runner.invoke(app, ["report", str(tmp_path / out), "--html", str(html)])
        assert report.exit_code == 0, report.output
        terminal = " ".join(result.stdout.split())
        if out == "cold":
            assert "judge total n/a" in terminal
            assert _judge_cost_cell(html) == "n/a"
        else:
            assert all(r.cached_calls == r.judge_calls == 2 for r in load_results(tmp_path / out))
            assert "judge total $0.0000" in terminal
            assert _judge_cost_cell(html) == "$0.0000"


def test_html_judge_cost_of_a_judge_free_run_says_no_judge(tmp_path: Path) -> None:
    """trial5 #4: a run of judge-free metrics only read "Judge cost $0.0000 (all N rows)" in
    the HTML report while the terminal said "judge total none (no judge called)"."""
    inputs = Path(__file__).parents[2] / "fixtures/otel/openai-agents-openinference.otlp.json"
    out = tmp_path / "free"
    args = ["score", str(inputs), "--metric", "tool_errors,loops", "--out", str(out)]
    result = runner.invoke(app, args, env=ENV)
    assert result.exit_code == 0, result.output
    assert "judge total none (no judge called)" in " ".join(result.stdout.split())
    rows = load_results(out)
    assert len(rows) >= 2 and {r.judge_model for r in rows} == {"none"}
    html = tmp_path / "free.html"
    report = runner.invoke(app, ["report", str(out), "--html", str(html)])
    assert report.exit_code == 0, report.output
    assert _judge_cost_cell(html) == "no judge"
    assert "$0.0000" not in html.read_text()


def test_score_json_carries_the_cost_the_usage_table_and_the_html_show(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """trial5 #5: ``score --json`` had tokens per metric but no cost (only the plan's estimate)."""
    script_goal_judge(fake_server)
    inputs = _traces(tmp_path / "t.jsonl", 2)
    config = tmp_path / "agent-eval.toml"
    config.write_text('[prices."priced-judge"]\ninput = 1000.0\noutput = 2000.0\n')
    args = ["score", str(inputs), "--metric", "goal_accuracy,tool_errors", "--judge",
            "priced-judge", "--base-url", fake_server.base_url, "--api-key-env", "MY_JUDGE_KEY",
            "--config", str(config)]  # fmt: skip
    cold = runner.invoke(app, [*args, "--out", str(tmp_path / "cold"), "--json"], env=ENV)
    assert cold.exit_code == 0, cold.output
    goal, free = json.loads(cold.stdout)["metrics"]
    assert goal["cached_calls"] == 0 and goal["judge_requests"] == 4 and goal["input_tokens"] > 0
    expected = (goal["input_tokens"] * 1000.0 + goal["output_tokens"] * 2000.0) / 1e6
    assert goal["cost_usd"] == pytest.approx(expected)
    assert (goal["cost_estimated"], goal["judge_free"]) == (False, False)
    assert (free["cost_usd"], free["cost_estimated"], free["judge_free"]) == (None, False, True)
    html = tmp_path / "cold.html"
    report = runner.invoke(app, ["report", str(tmp_path / "cold"), "--html", str(html)])
    assert report.exit_code == 0, report.output
    assert _judge_cost_cell(html) == usd_text(expected)
    # the terminal's usage table of the same run (sent again: --no-cache) shows the same cost
    table = runner.invoke(app, [*args, "--out", str(tmp_path / "table"), "--no-cache"], env=ENV)
    assert table.exit_code == 0, table.output
    assert _usage_line(table.stdout).split("│")[-2].strip() == usd_text(expected)
    # answered from the cache: $0 whatever the price; an unpriced judge: null (the table's n/a)
    warm = runner.invoke(app, [*args, "--out", str(tmp_path / "warm"), "--json"], env=ENV)
    assert json.loads(warm.stdout)["metrics"][0]["cost_usd"] == 0.0
    unpriced = [a if a != "priced-judge" else "unpriced-judge" for a in args]
    na = runner.invoke(app, [*unpriced, "--out", str(tmp_path / "na"), "--json"], env=ENV)
    assert na.exit_code == 0, na.output
    (goal_na, _) = json.loads(na.stdout)["metrics"]
    assert goal_na["cached_calls"] == 0 and goal_na["cost_usd"] is None


def test_score_json_marks_a_cost_priced_from_estimated_usage(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    _no_usage_judge(fake_server)
    args = ["score", str(_traces(tmp_path / "t.jsonl")), "--judge", MODEL, "--base-url",
            fake_server.base_url, "--api-key-env", "MY_JUDGE_KEY", "--out", str(tmp_path / "out"),
            "--json"]  # fmt: skip
    result = runner.invoke(app, args, env=ENV)
    assert result.exit_code == 0, result.output
    (metric,) = json.loads(result.stdout)["metrics"]
    price = PriceTable().price(MODEL)
    assert price is not None and metric["usage_unknown"] == 2
    tokens = metric["estimated_input_tokens"], metric["estimated_output_tokens"]
    assert metric["cost_usd"] == pytest.approx(price.cost(*tokens)) and metric["cost_usd"] > 0
    assert metric["cost_estimated"] is True
