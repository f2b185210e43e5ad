"""A ``--base-url`` with a query string (``...?api-key=K``): the right path, the query kept.

Regression (issue 32): ``/chat/completions`` was appended after the query, so requests went to
``/v1`` with ``api-key=K/chat/completions``. Gateways that take their key in the query (Azure
API Management, some proxies) need the query kept, and the key must never be printed.
"""

from __future__ import annotations

import pytest

from agent_eval.errors import JudgeRequestError
from agent_eval.judges._openai_judge import OpenAIJudge

from .test_openai_judge import REQUEST, capture_server

KEY = "gw-key-SECRET-42"


async def test_the_query_follows_the_chat_completions_path() -> None:
    async with capture_server("/v1/chat/completions") as (root, seen):
        judge = OpenAIJudge("m", base_url=f"{root}/v1/?api-key={KEY}&tier=a", api_key="sk-x")
        try:
            assert (await judge.ask(REQUEST)).output.verdict == "1"
        finally:
            await judge.aclose()
    ((path, query, _, _),) = seen
    assert path == "/v1/chat/completions"
    assert query == {"api-key": KEY, "tier": "a"}
    assert KEY not in repr(judge) and KEY not in judge.url


async def test_the_key_in_the_query_is_not_in_a_refused_request_error() -> None:
    # A wrong path answers 404: the endpoint is reachable and refused the request, so the
    # error is ``judge_bad_request`` (JudgeRequestError), and it must not print the query's key.
    async with capture_server("/elsewhere") as (root, _):
        judge = OpenAIJudge("m", base_url=f"{root}/v1?api-key={KEY}", api_key="sk-x", max_retries=0)
        try:
            with pytest.raises(JudgeRequestError) as caught:
                await judge.ask(REQUEST)
        finally:
            await judge.aclose()
    assert caught.value.error_type == "judge_bad_request"
    assert "404" in str(caught.value) and KEY not in str(caught.value)
    assert KEY not in repr(caught.value)
