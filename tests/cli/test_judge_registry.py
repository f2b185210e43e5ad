"""``--judge`` and the ``[judge]`` table pick any judge of the ``agent_eval.judges`` registry.

The langchain path runs end to end: a factory module returns langchain-openai's ``ChatOpenAI``
pointed at the fake server, and ``score`` judges through it. A third-party judge declared in a
test dist-info is discovered by the installed CLI and used.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.cli._judge_setup import build_judge, judge_settings
from agent_eval.config import load_config
from agent_eval.errors import ConfigError, UnknownPluginError
from agent_eval.judges._langchain_judge import LangChainJudge
from agent_eval.judges._openai_judge import OpenAIJudge
from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer

from ..run.goal_script import script_goal_judge, trace
from .test_score_cli import score, traces_file

FACTORY = textwrap.dedent(
    '''
    """A user's judge factory: a LangChain chat model at the fake server."""

    import os

    from langchain_openai import ChatOpenAI

    CALLS = []


    def make(model="lc-model", temperature=None):
        CALLS.append({"model": model, "temperature": temperature})
        return ChatOpenAI(
            model=model,
            base_url=os.environ["LC_FAKE_URL"],
            api_key="sk-lc-test",
            max_retries=0,
            timeout=15,
        )


    def not_a_chat_model():
        return 42
    '''
)


@pytest.fixture
def factory_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_server: FakeModelServer
) -> str:
    """An importable module ``lc_factory_13b`` with ``make`` (returns ChatOpenAI)."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "lc_factory_13b.py").write_text(FACTORY)
    monkeypatch.syspath_prepend(str(package))
    monkeypatch.setenv("LC_FAKE_URL", fake_server.base_url)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return "lc_factory_13b"


def _inputs(tmp_path: Path) -> str:
    return str(traces_file(tmp_path / "t.jsonl", trace("a", done=True), trace("b", done=False)))


def test_judge_flag_kinds_and_models() -> None:
    plain = judge_settings(load_config(judge="gpt-4o"))
    assert (plain.kind, plain.model, plain.target) == ("openai", "gpt-4o", None)
    ollama = judge_settings(load_config(judge="qwen2.5:7b-instruct"))  # not a kind: a model
    assert (ollama.kind, ollama.model) == ("openai", "qwen2.5:7b-instruct")
    forced = judge_settings(load_config(judge="openai:langchain"))
    assert (forced.kind, forced.model) == ("openai", "langchain")
    lc = judge_settings(load_config(judge="langchain:pkg.mod:make", mode="json"))
    assert (lc.kind, lc.target, lc.model, lc.mode) == ("langchain", "pkg.mod:make", None, "json")
    assert judge_settings(load_config(judge="langchain:pkg.mod:make")).mode is None
    assert judge_settings(load_config(judge="openai")).model is None  # the default model


def test_langchain_judge_end_to_end_through_the_flag(
    factory_module: str, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)
    out_dir = tmp_path / "out"
    code, out, err = score(
        _inputs(tmp_path),
        *("--judge", f"langchain:{factory_module}:make", "--out", str(out_dir), "--no-cache"),
    )
    assert code == 0, out + err
    rows = sorted(load_results(out_dir), key=lambda r: r.conversation_id)
    assert [(r.conversation_id, r.status, r.verdict) for r in rows] == [
        ("a", "ok", "1"),
        ("b", "ok", "0"),
    ]
    assert {r.judge_model for r in rows} == {"lc-model"}  # read from the chat model
    assert len(fake_server.requests) == 4  # two stages per conversation, through ChatOpenAI
    assert all(r.body["model"] == "lc-model" for r in fake_server.requests)
    assert "response_format" in fake_server.requests[0].body  # ChatOpenAI default: json_schema


def test_langchain_judge_from_the_judge_table(
    factory_module: str, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)
    config = tmp_path / "agent-eval.toml"
    config.write_text(
        textwrap.dedent(
            f"""
            [score]
            mode = "json_schema"

            [judge]
            kind = "langchain"
            factory = "{factory_module}:make"
            model = "table-model"
            params = {{ temperature = 0.5 }}
            """
        )
    )
    out_dir = tmp_path / "out"
    code, out, err = score(_inputs(tmp_path), "--out", str(out_dir), "--no-cache")
    assert code == 0, out + err
    rows = load_results(out_dir)
    assert {(r.status, r.judge_model) for r in rows} == {("ok", "table-model")}
    body = fake_server.requests[0].body
    assert body["model"] == "table-model"
    assert body["response_format"]["type"] == "json_schema"  # --mode json_schema -> method
    calls = sys.modules[factory_module].CALLS  # type: ignore[attr-defined]
    assert calls[-1] == {"model": "table-model", "temperature": 0.5}


def test_judge_flag_overrides_the_table_model(factory_module: str, tmp_path: Path) -> None:
    (tmp_path / "agent-eval.toml").write_text(
        f'[judge]\nkind = "langchain"\nfactory = "{factory_module}:make"\n'
    )
    cfg = load_config(judge="flag-model")
    judge = build_judge(cfg, "flag-model")
    assert isinstance(judge, LangChainJudge) and judge.model == "flag-model"


def test_judge_build_errors_name_the_fix(factory_module: str) -> None:
    with pytest.raises(ConfigError, match="not a langchain-core chat model"):
        build_judge(load_config(judge=f"langchain:{factory_module}:not_a_chat_model"), "x")
    with pytest.raises(ConfigError, match="has no nope"):
        build_judge(load_config(judge=f"langchain:{factory_module}:nope"), "x")
    with pytest.raises(ConfigError, match="cannot import no_such_module_13b"):
        build_judge(load_config(judge="langchain:no_such_module_13b:make"), "x")
    with pytest.raises(ConfigError, match="needs a factory"):
        build_judge(load_config(judge="langchain"), "x")
    with pytest.raises(UnknownPluginError, match="langchain"):  # lists the registered judges
        build_judge(load_config(judge_table={"kind": "nope"}), "x")
    openai = build_judge(load_config(judge="openai:m", base_url="http://127.0.0.1:9/v1"), "m")
    assert isinstance(openai, OpenAIJudge) and openai.model == "m"


def test_bad_factory_exits_2_before_any_call(
    factory_module: str, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    code, _, err = score(_inputs(tmp_path), "--judge", f"langchain:{factory_module}:nope")
    assert code == 2 and f"judge factory {factory_module}:nope" in err
    assert fake_server.requests == []


@pytest.mark.parametrize("command", ["score", "compare", "stability"])
def test_bad_judge_is_reported_before_any_input_is_read(
    factory_module: str, tmp_path: Path, command: str
) -> None:
    """Regression: a bad factory or GGUF path was reported only after the inputs were ingested."""
    traces = tmp_path / "traces.jsonl"
    traces.write_text(trace("a", done=True).model_dump_json() + "\n")
    extra = {"score": [], "compare": ["--formatters", "transcript@1,json@1"],
             "stability": ["--repeats", "2"]}[command]  # fmt: skip
    gguf = tmp_path / "none.gguf"
    for judge, error in (
        (f"langchain:{factory_module}:nope", f"judge factory {factory_module}:nope"),
        (f"llama-cpp:{gguf}", f"GGUF model not found: {gguf}"),
    ):
        for inputs in (str(traces), str(tmp_path / "no-such-input")):
            args = [command, inputs, "--judge", judge, "--out", str(tmp_path / "o"), *extra]
            result = CliRunner().invoke(app, args)
            err = " ".join(result.stderr.split())
            assert result.exit_code == 2, result.output
            assert error in err  # the judge's error, even where the input would fail too
            assert "ingested" not in err and "no-such-input" not in err
            assert not (tmp_path / "o").exists()


THIRD_PARTY = textwrap.dedent(
    '''
    """A third-party judge: answers through the openai judge at a URL from its params."""

    from agent_eval.judges._base import Judge, JudgeSettings
    from agent_eval.judges._openai_judge import OpenAIJudge


    class RelayJudge(Judge):
        def __init__(self, inner):
            self.inner = inner
            self.model = "relay/" + inner.model

        @classmethod
        def from_settings(cls, settings: JudgeSettings) -> "RelayJudge":
            inner = OpenAIJudge(settings.model or "relayed", base_url=settings.params["url"])
            return cls(inner)

        async def ask(self, request):
            return await self.inner.ask(request)

        async def aclose(self):
            await self.inner.aclose()


    class PythonOnlyJudge(Judge):
        """A judge for Python use only: no from_settings."""

        model = "py"

        async def ask(self, request):
            raise NotImplementedError
    '''
)


def test_third_party_judge_is_discovered_and_used(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    (site / "relay_judge").mkdir(parents=True)
    (site / "relay_judge" / "__init__.py").write_text(THIRD_PARTY)
    dist = site / "relay_judge-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: relay-judge\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[agent_eval.judges]\nrelay = relay_judge:RelayJudge\n"
        "pyonly = relay_judge:PythonOnlyJudge\n"
    )
    (tmp_path / "agent-eval.toml").write_text(
        f'[judge]\nkind = "relay"\nmodel = "m1"\nparams = {{ url = "{fake_server.base_url}" }}\n'
    )
    script_goal_judge(fake_server)
    inputs = _inputs(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env |= {"PYTHONPATH": str(site), "AGENT_EVAL_CACHE_PATH": str(tmp_path / "cache.db")}
    cli = Path(sys.executable).with_name("agent-eval")
    done = subprocess.run(
        [str(cli), "score", inputs, "--out", str(tmp_path / "out")],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = load_results(tmp_path / "out")
    assert {(r.status, r.judge_model) for r in rows} == {("ok", "relay/m1")}
    assert len(fake_server.requests) == 4

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(cli), *args], env=env, cwd=tmp_path, capture_output=True, text=True, check=False
        )

    listed = json.loads(run("judges", "list", "--json").stdout)
    by_kind = {j["kind"]: j for j in listed["judges"]}
    assert by_kind["relay"] == {
        "kind": "relay",
        "cls": "relay_judge:RelayJudge",
        "cli": True,
        "summary": "",
    }
    assert by_kind["pyonly"]["cli"] is False and by_kind["openai"]["cli"] is True
    # built-ins by the public face users import them from, not their private module
    assert by_kind["openai"]["cls"] == "agent_eval.judges:OpenAIJudge"
    refused = run("score", inputs, "--judge", "pyonly", "--out", str(tmp_path / "o2"))
    assert refused.returncode == 2
    assert "does not implement Judge.from_settings" in refused.stderr
