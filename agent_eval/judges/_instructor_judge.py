"""The ``instructor`` judge: any provider instructor reaches, as a judge (``instructor`` extra).

``--judge instructor:PROVIDER/MODEL`` builds the client with instructor's own
``instructor.from_provider("PROVIDER/MODEL", async_client=True)`` (``anthropic/claude-3-5-haiku-
latest``, ``google/gemini-2.0-flash``, ``mistral/...``, ``cohere/...``, ``bedrock/...``,
``ollama/...``, ``openai/...``: instructor's provider strings, each provider's SDK installed
beside it); from Python, ``InstructorJudge(client=instructor.from_openai(AsyncOpenAI(...)),
model="gpt-4o-mini")`` takes any ``instructor.AsyncInstructor``.

The reply is instructor's, validated strictly (``strict=True``) as the request's response model,
the same pydantic type every judge returns. Re-asks are instructor's own (its provider's re-ask
messages, ``max_retries`` of them); per-call hooks (``instructor.core.Hooks``) count every
completion and every failed request as an attempt, keep the raw text of each completion (the
last is the reply's ``raw_reply``, or the error's) and add up the usage each provider reports
(OpenAI ``prompt_tokens``/``completion_tokens``, Anthropic ``input_tokens``/``output_tokens``,
Gemini ``usage_metadata``, Bedrock ``inputTokens``/``outputTokens``); a completion without
usage marks the call's usage as unknown, as the other judges do. Transport retries are the
provider client's own. The judge's model is ``PROVIDER/MODEL``; costs are priced for that
provider (:func:`agent_eval._costs.database_price`).

instructor pins ``jiter<0.15`` in every release, and openai >= 3.9 needs ``jiter>=0.16``: the
extra resolves only beside openai < 3.9 (:data:`INSTALL_NOTE`).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from agent_eval.errors import ConfigError, JudgeOutputError, JudgeTransportError
from agent_eval.judges._base import Judge, JudgeReply, JudgeRequest, JudgeSettings
from agent_eval.judges._inflight import CancelledUsage, note_cancelled

if TYPE_CHECKING:
    from instructor import AsyncInstructor

__all__ = ["INSTALL_NOTE", "MODES", "InstructorJudge", "raw_text", "reported_usage"]

INSTALL_NOTE = (
    'the instructor judge needs the instructor extra: pip install "otel-agent-eval[instructor]". '
    "When pip cannot resolve it: every instructor release pins jiter<0.15 while openai>=3.9 "
    "needs jiter>=0.16, so instructor installs only beside openai<3.9; put it in its own "
    'virtualenv (python -m venv .venv-judge; .venv-judge/bin/pip install "otel-agent-eval'
    '[instructor]"), or pin "openai<3.9" where nothing else needs a newer one'
)
"""The error when instructor is missing, with the install conflict and its way out."""

MODES = {"tools": "TOOLS", "json_schema": "JSON_SCHEMA", "json": "JSON"}
"""agent-eval's ``--mode`` -> ``instructor.Mode`` member (OpenAI-compatible providers)."""


def _instructor() -> Any:
    """The ``instructor`` module, its ``core`` (hooks, exceptions) loaded.

    Raises:
        ConfigError: instructor is not installed (:data:`INSTALL_NOTE`).

    """
    try:
        import instructor
        import instructor.core
    except ImportError as exc:
        raise ConfigError(INSTALL_NOTE) from exc
    return instructor


@dataclass
class _Calls:
    """What the hooks saw during one judge call."""

    attempts: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    known: bool = True
    raw: str | None = None
    model: str | None = None
    failed: BaseException | None = None

    def response(self, completion: Any) -> None:
        self.attempts += 1
        self.failed = None
        self.raw = raw_text(completion)
        usage = reported_usage(completion)
        if usage is None:
            self.known = False
        else:
            self.input_tokens += usage[0]
            self.output_tokens += usage[1]
        model = getattr(completion, "model", None)
        self.model = model if isinstance(model, str) and model else self.model

    def error(self, error: BaseException, **_: Any) -> None:
        self.attempts += 1
        self.failed = error


class InstructorJudge(Judge):
    """A judge on an ``instructor.AsyncInstructor`` client.

    Args:
        client: An async instructor client (``instructor.from_provider(...,
            async_client=True)``, ``instructor.from_openai(AsyncOpenAI(...))``, ...).
        model: The model sent with each request (``model=``) and stored in results; ``None``
            when the client already names one (``from_provider``): then ``label`` is stored.
        label: The name stored in results when ``model`` is ``None`` (``PROVIDER/MODEL``).
        max_retries: instructor's re-asks after an invalid reply (``1 + max_retries`` tries).

    Raises:
        ConfigError: neither ``model`` nor ``label`` is given.

    """

    def __init__(
        self,
        client: AsyncInstructor,
        *,
        model: str | None = None,
        label: str | None = None,
        max_retries: int = 2,
    ) -> None:
        if not (model or label):
            raise ConfigError("InstructorJudge needs model= (the model to ask) or label=")
        self.client = client
        self.request_model = model
        self.model = model or label or ""
        self.max_retries = max_retries

    def __repr__(self) -> str:
        return f"InstructorJudge(model={self.model!r}, max_retries={self.max_retries})"

    @classmethod
    def from_settings(cls, settings: JudgeSettings) -> InstructorJudge:
        """The judge of ``--judge instructor:PROVIDER/MODEL`` or an ``instructor`` table.

        ``[judge.params]`` go to ``instructor.from_provider`` as keyword arguments (e.g.
        ``base_url``, ``api_key``); an explicit ``--mode`` becomes ``mode=`` (``tools``,
        ``json_schema``, ``json``: OpenAI-compatible providers).

        Raises:
            ConfigError: no ``PROVIDER/MODEL``, instructor missing (:data:`INSTALL_NOTE`), or
                instructor refused the provider string or its settings.

        """
        spec = settings.target or settings.model
        if not spec or "/" not in spec:
            raise ConfigError(
                "--judge instructor needs instructor's PROVIDER/MODEL: e.g. --judge "
                "instructor:anthropic/claude-3-5-haiku-latest or instructor:openai/gpt-4o-mini"
            )
        instructor = _instructor()
        kwargs = dict(settings.params)
        if settings.mode is not None:
            kwargs["mode"] = getattr(instructor.Mode, MODES.get(settings.mode, settings.mode))
        try:
            client = instructor.from_provider(spec, async_client=True, **kwargs)
        except Exception as exc:  # instructor's ConfigurationError, a missing provider SDK
            raise ConfigError(
                f"--judge instructor:{spec}: instructor could not build the client: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        return cls(client, label=spec, max_retries=settings.max_retries)

    async def ask(self, request: JudgeRequest) -> JudgeReply[Any]:
        """Send ``request`` through instructor; see :meth:`Judge.ask` for the errors raised."""
        instructor = _instructor()
        calls = _Calls()
        hooks = instructor.core.Hooks()
        hooks.on("completion:response", calls.response)
        hooks.on("completion:error", calls.error)
        start = time.perf_counter()
        try:
            output, _ = await self.client.create_with_completion(
                response_model=request.response_model,
                messages=[dict(m) for m in request.messages],
                max_retries=self.max_retries,
                strict=True,
                hooks=hooks,
                **self._sampling(request),
            )
        except instructor.core.InstructorRetryException as exc:
            raise self._failure(exc, calls) from None
        except instructor.core.IncompleteOutputException:  # finish_reason=length, not re-asked
            raise self._output_error(
                "the reply was cut off at the completion token limit", calls
            ) from None
        except asyncio.CancelledError:
            in_flight = CancelledUsage(
                calls.attempts + 1, calls.input_tokens, calls.output_tokens, 1
            )
            note_cancelled(in_flight)  # the request in flight counts as sent, unanswered
            raise
        return JudgeReply(  # instructor returns its subclass of the model: the model itself
            output=request.response_model.model_validate(output.model_dump(), strict=True),
            model=calls.model or self.model,
            input_tokens=calls.input_tokens,
            output_tokens=calls.output_tokens,
            latency_ms=(time.perf_counter() - start) * 1000,
            attempts=calls.attempts,
            raw_reply=calls.raw or "",
            usage_known=calls.known,
        )

    def _sampling(self, request: JudgeRequest) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.request_model}
        params |= {"temperature": request.temperature, "max_tokens": request.max_tokens}
        return {name: value for name, value in params.items() if value is not None}

    def _failure(self, exc: BaseException, calls: _Calls) -> JudgeOutputError | JudgeTransportError:
        if calls.failed is not None:  # the last request failed: no reply to validate
            cause = calls.failed
            return JudgeTransportError(
                f"judge endpoint failed after {calls.attempts} request(s): "
                f"{type(cause).__name__}: {_short(cause)}",
                attempts=calls.attempts,
                input_tokens=calls.input_tokens,
                output_tokens=calls.output_tokens,
                usage_known=calls.known,
            )
        return self._output_error(_short(exc), calls)

    @staticmethod
    def _output_error(reason: str, calls: _Calls) -> JudgeOutputError:
        return JudgeOutputError(
            f"judge reply did not validate after {calls.attempts} request(s): {reason}",
            attempts=calls.attempts,
            raw_reply=calls.raw,
            input_tokens=calls.input_tokens,
            output_tokens=calls.output_tokens,
            usage_known=calls.known,
        )


def _short(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return text if len(text) <= 500 else text[:497] + "..."


def raw_text(completion: Any) -> str:
    """The text a provider's completion carries: tool-call arguments, tool input, or text.

    OpenAI-style ``choices[0].message`` (tool call ``arguments``, else ``content``),
    Anthropic-style ``content`` blocks (a ``tool_use`` block's ``input`` as JSON, else the
    text), else the completion's ``text``; ``""`` when none is found.
    """
    choices = getattr(completion, "choices", None)
    if choices:
        message = getattr(choices[0], "message", None)
        calls = getattr(message, "tool_calls", None) or []
        if calls:
            return str(calls[0].function.arguments)
        content = getattr(message, "content", None)
        return content if isinstance(content, str) else ""
    blocks = getattr(completion, "content", None)
    if isinstance(blocks, list):
        for block in blocks:
            if getattr(block, "type", None) == "tool_use":
                return orjson.dumps(getattr(block, "input", {})).decode()
        texts = [getattr(b, "text", None) for b in blocks]
        return "".join(t for t in texts if isinstance(t, str))
    text = getattr(completion, "text", None)
    return text if isinstance(text, str) else ""


def reported_usage(completion: Any) -> tuple[int, int] | None:
    """``(input, output)`` tokens a provider's completion reports; ``None`` when it reports none.

    Reads OpenAI's ``usage.prompt_tokens``/``completion_tokens``, Anthropic's
    ``usage.input_tokens``/``output_tokens``, Gemini's ``usage_metadata.prompt_token_count``/
    ``candidates_token_count`` and Bedrock's ``usage`` mapping ``inputTokens``/``outputTokens``.
    """
    usage = getattr(completion, "usage", None)
    if usage is None and isinstance(completion, dict):
        usage = completion.get("usage")
    pairs = (
        ("prompt_tokens", "completion_tokens"),
        ("input_tokens", "output_tokens"),
        ("inputTokens", "outputTokens"),
    )
    for source in (usage, getattr(completion, "usage_metadata", None)):
        if source is None:
            continue
        for inp, out in (*pairs, ("prompt_token_count", "candidates_token_count")):
            found = source.get(inp) if isinstance(source, dict) else getattr(source, inp, None)
            if isinstance(found, int):
                other = source.get(out) if isinstance(source, dict) else getattr(source, out, 0)
                return found, int(other or 0)
    return None
