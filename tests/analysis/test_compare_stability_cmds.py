"""``agent-eval compare`` and ``stability`` end to end, through real HTTP to the fake server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_eval._tokens import count_tokens
from agent_eval.cli._app import app
from agent_eval.ingest._pipeline import ingest
from agent_eval.run._artifacts import render_all
from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer

from . import judge_script

ENV = {"OPENAI_API_KEY": "sk-test-not-a-real-key", "COLUMNS": "200"}
SPECS = {
    "c0": "DONE",
    "c1": "DONE",
    "c2": "DONE FLIP",
    "c3": "DONE FLIP",
    "c4": "",
    "c5": "",
}
LABELS = {"c0": 1, "c1": 1, "c2": 1, "c3": 0, "c4": 0, "c5": 1}


def _judge_args(server: FakeModelServer) -> list[str]:
    return ["--judge", "fake-model", "--base-url", server.base_url]


def _compare(server: FakeModelServer, traces: Path, out: Path, *extra: str) -> dict:
    args = [
        "compare", str(traces), "--formatters", "transcript@1,json@1",
        *_judge_args(server), "--out", str(out), "--json", *extra,
    ]  # fmt: skip
    result = CliRunner().invoke(app, args, env=ENV)
    assert result.exit_code in (0, 1), result.output
    return {"exit": result.exit_code, "stderr": result.stderr, **json.loads(result.stdout)}


def test_compare_pairs_flips_labels_and_shared_cache(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    judge_script.script(fake_server)
    traces = judge_script.write_traces(tmp_path / "traces.jsonl", SPECS, LABELS)
    first = _compare(fake_server, traces, tmp_path / "out")
    cmp = first["comparison"]
    by = {v["variant"]: v for v in cmp["variants"]}
    assert (by["transcript@1"]["n_pass"], by["json@1"]["n_pass"]) == (4, 2)
    assert by["transcript@1"]["n_ok"] == by["json@1"]["n_ok"] == 6
    (pair,) = cmp["pairs"]
    assert (pair["flips_a_pass_b_fail"], pair["flips_a_fail_b_pass"]) == (2, 0)
    assert pair["n_agree"] == 4
    assert pair["mcnemar_p"] == pytest.approx(0.5)
    assert {f["conversation_id"] for f in pair["flipped"]} == {"c2", "c3"}
    assert pair["flipped"][0]["reason_a"].startswith("decided CONV-c")
    # labels carried by the traces: transcript agrees on c0 c1 c2 c4 (4/6), json on c0 c1 c3 c4
    assert (by["transcript@1"]["label_agree"], by["json@1"]["label_agree"]) == (4, 4)
    assert by["transcript@1"]["cost_usd"] is None  # fake-model has no price
    assert by["transcript@1"]["input_tokens"] == 6 * 150
    rendered = render_all(list(ingest(traces)), ["transcript@1", "json@1"])
    for name in ("transcript@1", "json@1"):
        expected = sum(count_tokens(t) for (_, f), t in rendered.items() if f == name)
        assert by[name]["rendered_tokens"] == expected
    assert by["json@1"]["rendered_tokens"] > by["transcript@1"]["rendered_tokens"]
    calls = len(fake_server.requests)
    # the variants share the cache: stage 2 of c0 c1 c4 c5 asks the same question under json@1
    assert calls == 2 * 2 * 6 - 4
    assert by["json@1"]["input_tokens"] == 6 * 100 + 2 * 50  # cache hits cost nothing
    # the same job again, sharing the cache in the same output directory: zero judge calls
    second = _compare(fake_server, traces, tmp_path / "out")
    assert len(fake_server.requests) == calls
    assert second["comparison"]["pairs"][0]["n_agree"] == 4
    assert (tmp_path / "out" / "comparison.json").is_file()
    stored = (tmp_path / "out" / "labels.jsonl").read_text().splitlines()
    assert stored[0] == '{"conversation_id":"c0","label":1}' and len(stored) == 6
    rows = load_results(tmp_path / "out")
    assert {r.run_id for r in rows} == {first["run_id"], second["run_id"]}


def test_compare_gates_exit_1_naming_the_gate(fake_server: FakeModelServer, tmp_path: Path) -> None:
    judge_script.script(fake_server)
    traces = judge_script.write_traces(tmp_path / "traces.jsonl", SPECS)
    done = _compare(
        fake_server, traces, tmp_path / "out", "--gate", "same=agreement>=0.8/6",
        "--gate", "mean_score>=0.5/6",
    )  # fmt: skip
    assert done["exit"] == 1
    assert (
        "gate 'same' (transcript@1 vs json@1) FAILED: agreement 4 of 6, needs 5 of 6"
        in (done["stderr"])
    )
    assert "gate 'mean_score' (json@1) FAILED: mean_score 2 of 6, needs 3 of 6" in done["stderr"]
    assert "gate 'mean_score' (transcript@1) passed" in done["stderr"]


def test_compare_then_report_shows_both_variants(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    judge_script.script(fake_server)
    traces = judge_script.write_traces(tmp_path / "traces.jsonl", SPECS, LABELS)
    _compare(fake_server, traces, tmp_path / "out")
    html = tmp_path / "report.html"
    result = CliRunner().invoke(app, ["report", str(tmp_path / "out"), "--html", str(html)])
    assert result.exit_code == 0, result.output
    text = html.read_text()
    assert text.count('<tr class="result"') == 12  # 6 conversations x 2 formatters
    assert text.count('<section class="conversation"') == 6
    assert "Flipped verdicts per pair (A → B)" in text
    assert "[1] USER" in text and '"role": "user"' in text  # stored renderings
    assert text.count('<div class="msg role-user">') >= 6  # conversations stored by compare
    # the labels the compare run used (from the traces)
    assert text.count('<table class="calibration">') == 2
    assert "<th>Command</th>" in text  # the run's record from the store
    # trial7 #13: pairs as compare printed them (A = the first of --formatters, not the first
    # by name), and no mean pooled over the variants: one per variant (4 of 6, 2 of 6)
    pairs = text[text.index('<table class="pairs">') :]
    assert pairs.index("<td>transcript@1</td><td>json@1</td>") < pairs.index("</table>")
    assert '<td class="num">2</td><td class="num">0</td>' in pairs  # flips 1→0, 0→1
    assert "Mean score [95% Wilson CI]" not in text
    assert '<tr><th>Mean score: transcript@1</th><td colspan="2">0.667' in text
    assert '<tr><th>Mean score: json@1</th><td colspan="2">0.333' in text


def test_stability_counts_stages_and_bypasses_cache(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    judge_script.script(fake_server)
    specs = {"s0": "DONE", "s1": "", "WOBBLE1": "DONE", "DRIFT1": "DONE"}
    traces = judge_script.write_traces(tmp_path / "traces.jsonl", specs)
    args = [
        "stability", str(traces), "--repeats", "3", "--formatter", "transcript@1",
        *_judge_args(fake_server), "--out", str(tmp_path / "st"), "--json",
        "--gate", "unanimity>=0.5/4",
    ]  # fmt: skip
    result = CliRunner().invoke(app, args, env=ENV)
    assert result.exit_code == 0, result.output
    st = json.loads(result.stdout)["stability"]
    by = {c["conversation_id"]: c for c in st["conversations"]}
    assert (by["s0"]["n_pass"], by["s0"]["unanimous"]) == (3, True)
    assert (by["s1"]["n_fail"], by["s1"]["unanimous"]) == (3, True)
    assert (by["WOBBLE1"]["n_pass"], by["WOBBLE1"]["n_fail"]) == (2, 1)
    assert by["WOBBLE1"]["varies_at"] == "comparison"
    assert by["WOBBLE1"]["majority"] == "1"
    assert by["DRIFT1"]["varies_at"] == "goal_inference"
    assert st["flip_rate"] == pytest.approx(0.5)
    assert st["stage_counts"] == {"goal_inference": 1, "comparison": 1}
    assert st["fleiss_kappa"] is not None and st["n_fleiss"] == 4
    assert len(fake_server.requests) == 3 * 2 * 4  # repeats never answered from the cache
    assert "gate 'unanimity' (repeats) passed: unanimity 2 of 4" in result.stderr
    rows = load_results(tmp_path / "st")
    assert sorted({r.repeat for r in rows}) == [0, 1, 2]
    html = tmp_path / "st.html"
    shown = CliRunner().invoke(app, ["report", str(tmp_path / "st"), "--html", str(html)])
    assert shown.exit_code == 0, shown.output
    text = html.read_text()
    assert '<div id="stability-view">\n<h2 id="stability">Stability</h2>\n' in text
    assert "<h3>transcript@1</h3>" in text
    assert 'are not unanimous (flip rate)</th><td class="num">2 (0.500)</td>' in text
    assert text.count('<tr class="result"') == 4  # repeat 0 rows only
    assert text.count('<td class="rep') == 4 * 3  # every repeat side by side


def test_no_judge_configured_exits_2_with_how_to(tmp_path: Path) -> None:
    traces = judge_script.write_traces(tmp_path / "traces.jsonl", {"c0": "DONE"})
    args = ["compare", str(traces), "--formatters", "transcript@1,json@1"]
    env = {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""}
    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code == 2
    assert "No judge is configured" in result.stderr
    bad = CliRunner().invoke(app, [*args[:3], "--formatters", "transcript@1"], env=env)
    assert bad.exit_code == 2
    assert "two or more distinct formatters" in bad.stderr


def test_unknown_formatter_exits_2_before_any_judge_call(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    judge_script.script(fake_server)
    traces = judge_script.write_traces(tmp_path / "traces.jsonl", {"c0": "DONE"})
    args = [
        "compare", str(traces), "--formatters", "transcript@1,nope@7",
        *_judge_args(fake_server), "--out", str(tmp_path / "out"),
    ]  # fmt: skip
    result = CliRunner().invoke(app, args, env=ENV)
    assert result.exit_code == 2
    assert "unknown formatter 'nope@7'" in result.stderr and "transcript@1" in result.stderr
    assert fake_server.requests == []


def test_no_cache_calls_the_judge_for_everything(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    judge_script.script(fake_server)
    traces = judge_script.write_traces(tmp_path / "traces.jsonl", SPECS)
    _compare(fake_server, traces, tmp_path / "out", "--no-cache", "--rpm", "6000")
    assert len(fake_server.requests) == 2 * 2 * 6  # no stage-2 answer shared between variants
    assert not (tmp_path / "out" / "judge-cache.db").exists()


def test_stability_repeat_0_may_come_from_the_cache_and_refresh_makes_all_fresh(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    # regression (trial5 #12): the help and README said repeats never come from the cache; repeat
    # 0 may (it shares score's entries), repeats 1..K-1 never; --refresh-cache makes all K fresh
    judge_script.script(fake_server)
    traces = judge_script.write_traces(tmp_path / "traces.jsonl", {"s0": "DONE", "s1": ""})
    base = ["stability", str(traces), "--repeats", "3", "--formatter", "transcript@1",
            *_judge_args(fake_server), "--json"]  # fmt: skip
    sent = []
    cached = []
    for n, extra in enumerate(([], [], ["--refresh-cache"])):
        before = len(fake_server.requests)
        args = [*base, "--out", str(tmp_path / f"st{n}"), *extra]
        result = CliRunner().invoke(app, args, env=ENV)
        assert result.exit_code == 0, result.output
        sent.append(len(fake_server.requests) - before)
        cached.append(json.loads(result.stdout)["stability"]["cached_rows"])
    # 2 conversations x 2 stages: cold 3 repeats; warm repeat 0 cached; refreshed 3 again
    assert sent == [3 * 2 * 2, 2 * 2 * 2, 3 * 2 * 2]
    assert cached == [0, 2, 0]
    help_text = " ".join(CliRunner().invoke(app, ["stability", "--help"]).stdout.split())
    assert "repeat 0 may come from the cache" in help_text
    assert "Repeats 1..K-1 always call the judge" in help_text
