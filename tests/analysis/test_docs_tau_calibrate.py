"""The tau-bench calibration commands of docs/tool-metrics.md, run as written, give the numbers
it states."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_eval.cli._app import app

ROOT = Path(__file__).resolve().parents[2]


def _docs_commands() -> tuple[list[str], list[str]]:
    readme = (ROOT / "docs" / "tool-metrics.md").read_text(encoding="utf-8")
    score = re.search(r"^agent-eval (score \.\./shared/data/tau-bench/ .*)$", readme, re.M)
    calibrate = re.search(r"^agent-eval (calibrate runs/tau .*)$", readme, re.M)
    assert score is not None and calibrate is not None
    return shlex.split(score.group(1)), shlex.split(calibrate.group(1))


def test_docs_tau_commands_give_45_of_58_and_the_strict_default_36(
    shared_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # regression (trial5 #7, #8): the README scored tau2-bench only (32 records, not its 58)
    # and calibrated with one --inputs; `--metric tool_call_accuracy` then hit "the results mix
    # 2 configurations" in a run that also holds tool_call_accuracy[order=superset]
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENT_EVAL_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "checkout").mkdir()
    (tmp_path / "shared").symlink_to(shared_dir)  # ../shared/data, as beside the checkout
    monkeypatch.chdir(tmp_path / "checkout")
    score, calibrate = _docs_commands()
    runner = CliRunner()
    scored = runner.invoke(app, score)
    assert scored.exit_code == 0, scored.output
    superset = runner.invoke(app, [*calibrate, "--json"])
    assert superset.exit_code == 0, superset.output
    got = json.loads(superset.stdout)
    assert (got["n_agree"], got["n"], round(got["kappa"], 2)) == (45, 58, 0.55)
    i = calibrate.index("--metric")
    strict = runner.invoke(app, [*calibrate[:i + 1], "tool_call_accuracy", *calibrate[i + 2:],
                                 "--json"])  # fmt: skip
    assert strict.exit_code == 0, strict.output
    got = json.loads(strict.stdout)
    assert (got["n_agree"], got["n"], round(got["kappa"], 2)) == (36, 58, 0.24)
    assert got["identity"]["metric"] == "tool_call_accuracy@1"
