"""``--judge openai-client:PACKAGE.MODULE:FACTORY@MODEL``: the user's openai client from the CLI.

A factory module in the test's own directory returns an ``openai.AsyncOpenAI`` (or an
``AsyncAzureOpenAI`` with a token provider) at the fake server; ``score`` with the goal, RAG and
claim metrics gives the same rows as the built-in transport.
"""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.cli._judge_setup import build_judge
from agent_eval.config import load_config
from agent_eval.errors import ConfigError
from agent_eval.judges._base import JudgeRequest
from agent_eval.judges._openai_client_judge import OpenAIClientJudge
from agent_eval.metrics._goal_accuracy import OutcomeComparison as Verdict
from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer, Structured

from .test_score_claims import _inputs, _install

runner = CliRunner()
METRICS = "faithfulness,groundedness,goal_accuracy"
VOLATILE = {"run_id", "started_at", "latency_ms"}

FACTORY = textwrap.dedent(
    '''
    """A user's client factory: openai clients at the fake server."""

    import os

    import openai

    MADE = []


    def make_client(organization=None):
        MADE.append(organization)
        return openai.AsyncOpenAI(
            base_url=os.environ["OC_FAKE_URL"], api_key="sk-oc-test", organization=organization
        )


    def make_azure():
        async def token():
            return "ad-token"

        return openai.AsyncAzureOpenAI(
            azure_endpoint=os.environ["OC_FAKE_ROOT"],
            api_version="2024-10-21",
            azure_ad_token_provider=token,
        )


    def make_sync():
        return openai.OpenAI(base_url=os.environ["OC_FAKE_URL"], api_key="sk-oc-test")
    '''
)


@pytest.fixture
def factory_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_server: FakeModelServer
) -> str:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "oc_factory_30.py").write_text(FACTORY)
    monkeypatch.syspath_prepend(str(package))
    monkeypatch.setenv("OC_FAKE_URL", fake_server.base_url)
    monkeypatch.setenv("OC_FAKE_ROOT", fake_server.root)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENT_EVAL_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return "oc_factory_30"


def _score(tmp_path: Path, out: str, *judge: str) -> list[dict[str, Any]]:
    result = runner.invoke(
        app,
        ["score", str(_inputs(tmp_path)), "--metric", METRICS, "--out", str(tmp_path / out),
         "--no-cache", *judge],
    )  # fmt: skip
    assert result.exit_code == 0, result.stdout + result.stderr
    rows = load_results(tmp_path / out)
    key = sorted(rows, key=lambda r: (r.metric, r.conversation_id, r.unit_id))
    return [r.model_dump(exclude=VOLATILE) for r in key]


@pytest.mark.parametrize("factory", ["make_client", "make_azure"])
def test_rows_through_the_factory_equal_the_builtin_transports(
    factory_module: str, fake_server: FakeModelServer, tmp_path: Path, factory: str
) -> None:
    _install(fake_server)
    theirs = _score(
        tmp_path, "own", "--judge", f"openai-client:{factory_module}:{factory}@fake-model"
    )
    own_requests = [r.body for r in fake_server.requests]
    fake_server.clear()
    _install(fake_server)
    ours = _score(tmp_path, "builtin", "--judge", "fake-model", "--base-url", fake_server.base_url)
    assert theirs == ours
    assert {r["metric"].split("@")[0] for r in theirs} == set(METRICS.split(","))
    assert {r["status"] for r in theirs} >= {"ok"} and all(
        r["judge_model"] == "fake-model" for r in theirs
    )
    builtin_requests = [r.body for r in fake_server.requests]
    assert sorted(map(_canonical, own_requests)) == sorted(map(_canonical, builtin_requests))


def _canonical(body: Any) -> str:
    return json.dumps(body, sort_keys=True)


def test_factory_from_the_judge_table_with_params(
    factory_module: str, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    (tmp_path / "agent-eval.toml").write_text(
        textwrap.dedent(
            f"""
            [judge]
            kind = "openai-client"
            factory = "{factory_module}:make_client"
            model = "table-model"
            params = {{ organization = "org-30" }}
            """
        )
    )
    import oc_factory_30  # type: ignore[import-not-found]

    oc_factory_30.MADE.clear()
    judge = build_judge(load_config(), "unused")
    assert isinstance(judge, OpenAIClientJudge) and judge.model == "table-model"
    assert oc_factory_30.MADE == ["org-30"]
    fake_server.add_rule(Structured({"reason": "r", "verdict": "1"}))
    request = JudgeRequest(messages=({"role": "user", "content": "?"},), response_model=Verdict)

    async def once() -> str:
        try:
            return str((await judge.ask(request)).output.verdict)
        finally:
            await judge.aclose()  # closes the factory's client: one per event loop

    assert [asyncio.run(once()), asyncio.run(once())] == ["1", "1"]
    assert oc_factory_30.MADE == ["org-30", "org-30"]  # a new client for the second run
    assert [r.body["model"] for r in fake_server.requests] == ["table-model"] * 2


def test_factory_errors_name_what_to_fix(factory_module: str) -> None:
    with pytest.raises(ConfigError, match="names no model"):
        build_judge(load_config(judge=f"openai-client:{factory_module}:make_client"), "x")
    with pytest.raises(ConfigError, match=r"not an openai\.AsyncOpenAI"):
        build_judge(load_config(judge=f"openai-client:{factory_module}:make_sync@m"), "x")
    with pytest.raises(ConfigError, match="needs a factory"):
        build_judge(load_config(judge="openai-client"), "x")
    with pytest.raises(ConfigError, match="has no nope"):
        build_judge(load_config(judge=f"openai-client:{factory_module}:nope@m"), "x")


def test_without_openai_the_error_names_the_extra(
    factory_module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # import openai raises ImportError
    with pytest.raises(ConfigError, match=r"otel-agent-eval\[openai\]"):
        build_judge(load_config(judge=f"openai-client:{factory_module}:make_client@m"), "x")
