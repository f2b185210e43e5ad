"""What ``score`` says when the judge cannot be set up: the missing variable or flag, by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_eval.cli._judge_setup import is_loopback_url, key_env_problem
from agent_eval.config import load_config
from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer

from ..run.goal_script import script_goal_judge, trace
from .test_score_cli import score, traces_file


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "MY_MISSING_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


def inputs(tmp_path: Path) -> str:
    return str(traces_file(tmp_path / "t.jsonl", trace("a", done=True)))


def test_judge_without_key_or_url_names_the_unset_variable(tmp_path: Path) -> None:
    # regression: only "No judge is configured", without saying what was missing
    code, _, err = score(inputs(tmp_path), "--judge", "gpt-4o-mini")
    assert code == 2
    assert (
        "error: --judge gpt-4o-mini has no endpoint: OPENAI_API_KEY is not set and no "
        "--base-url is given" in err
    )
    code, _, err = score(inputs(tmp_path), "--judge", "m", "--api-key-env", "OTHER_KEY")
    assert code == 2 and "OTHER_KEY is not set" in err


def test_unset_named_key_variable_is_an_error_for_a_remote_endpoint(tmp_path: Path) -> None:
    # regression: --api-key-env MY_MISSING_KEY with the variable unset was silently ignored
    args = ("--judge", "m", "--api-key-env", "MY_MISSING_KEY", "--out", str(tmp_path / "o"))
    code, out, err = score(inputs(tmp_path), *args, "--base-url", "https://judge.example/v1")
    assert code == 2, out + err
    assert "the variable MY_MISSING_KEY is not set" in err and "judge.example" in err
    assert not (tmp_path / "o").exists()
    code, _, err = score(inputs(tmp_path), *args, "--dry-run")
    assert code == 0 and "warning:" in err and "MY_MISSING_KEY is not set" in err


def test_unset_named_key_variable_is_fine_for_a_local_server(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)
    out_dir = tmp_path / "local"
    code, out, err = score(
        inputs(tmp_path),
        *("--judge", "m", "--api-key-env", "MY_MISSING_KEY", "--base-url", fake_server.base_url),
        *("--out", str(out_dir)),
    )
    assert code == 0, out + err
    assert [r.verdict for r in load_results(out_dir)] == ["1"]


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://localhost:11434/v1", True),
        ("http://127.0.0.2:8000/v1", True),
        ("http://[::1]:8080/v1", True),
        ("http://ollama.localhost/v1", True),
        ("http://10.0.0.5:8000/v1", False),
        ("https://api.openai.com/v1", False),
    ],
)
def test_loopback_urls(url: str, local: bool) -> None:
    assert is_loopback_url(url) is local


def test_default_key_variable_is_not_named_explicitly(monkeypatch: pytest.MonkeyPatch) -> None:
    remote = {"judge": "m", "base_url": "https://judge.example/v1"}
    assert key_env_problem(load_config(None, **remote)) is None
    named = load_config(None, api_key_env="OPENAI_API_KEY", **remote)
    assert key_env_problem(named) is not None
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    assert key_env_problem(named) is None
