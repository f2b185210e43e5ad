"""The ``llama-cpp`` judge: a local GGUF model, its output constrained by the JSON schema.

Needs the extra: ``pip install 'otel-agent-eval[llama-cpp]'``. llama-cpp-python turns the
response model's JSON schema into a grammar (``response_format={"type": "json_object",
"schema": ...}``), so every reply is JSON of the right shape; it is still validated with the
pydantic model and re-asked (:mod:`agent_eval.judges._reask`) when it fails. Generation runs in
a worker thread, one at a time (a ``Llama`` is not thread-safe).

A small local model is useful for trying the pipeline offline; it is not a judge whose verdicts
mean anything (a 270M-parameter model answers well-typed but close to arbitrary verdicts).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agent_eval.errors import ConfigError, MissingDependencyError
from agent_eval.judges._base import Judge, JudgeReply, JudgeRequest, JudgeSettings
from agent_eval.judges._reask import AttemptUsage, InvalidReply, ask_with_reasks, reask_messages

__all__ = ["LlamaCppJudge"]


class LlamaCppJudge(Judge):
    """A judge on a local GGUF file through llama-cpp-python.

    Args:
        model_path: The ``.gguf`` file.
        model: The name stored in results; the file name when ``None``.
        n_ctx: Context window, tokens.
        max_retries: Re-asks after an invalid reply.
        seed: Sampling seed (used when the request gives none).
        llama_kwargs: Further ``llama_cpp.Llama`` arguments (``n_threads``, ``n_gpu_layers``...).

    Raises:
        MissingDependencyError: llama-cpp-python is not installed.
        FileNotFoundError: ``model_path`` does not exist.

    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        model: str | None = None,
        n_ctx: int = 8192,
        max_retries: int = 2,
        seed: int = 0,
        **llama_kwargs: Any,
    ) -> None:
        try:
            import llama_cpp
        except ImportError:
            raise MissingDependencyError("the llama-cpp judge", "llama-cpp") from None
        path = Path(model_path)
        if not path.is_file():
            raise FileNotFoundError(f"GGUF model not found: {path}")
        self.model = model or path.name
        self.max_retries = max_retries
        self._llama = llama_cpp.Llama(
            model_path=str(path), n_ctx=n_ctx, seed=seed, verbose=False, **llama_kwargs
        )
        self._lock = asyncio.Lock()

    @classmethod
    def from_settings(cls, settings: JudgeSettings) -> LlamaCppJudge:
        """The judge of ``--judge llama-cpp:MODEL.gguf`` (or ``[judge] factory = "PATH"``).

        ``[judge.params]`` are passed on (``n_ctx``, ``seed``, ``llama_cpp.Llama`` keywords).

        Raises:
            ConfigError: no GGUF path given, or the file does not exist.
            MissingDependencyError: the ``llama-cpp`` extra is not installed.

        """
        if not settings.target:
            raise ConfigError("--judge llama-cpp needs a model file: --judge llama-cpp:PATH.gguf")
        if not Path(settings.target).is_file():
            raise ConfigError(f"--judge llama-cpp: GGUF model not found: {settings.target}")
        return cls(
            settings.target,
            model=settings.model,
            max_retries=settings.max_retries,
            **dict(settings.params),
        )

    async def ask(self, request: JudgeRequest) -> JudgeReply[Any]:
        """Generate a schema-constrained reply; see :meth:`Judge.ask` for the errors raised."""
        messages = [dict(m) for m in request.messages]
        return await ask_with_reasks(
            lambda usage: self._try(request, messages, usage),
            model=self.model,
            max_retries=self.max_retries,
            unit="generation",
        )

    async def _try(
        self, request: JudgeRequest, messages: list[dict[str, str]], usage: AttemptUsage
    ) -> tuple[Any, str]:
        usage.attempts += 1
        try:
            async with self._lock:
                completion = await asyncio.to_thread(self._generate, request, messages)
        except asyncio.CancelledError:  # an interrupted run: the generation's reply is lost
            usage.unanswered += 1
            raise
        tokens = completion.get("usage") or {}
        usage.input_tokens += int(tokens.get("prompt_tokens", 0))
        usage.output_tokens += int(tokens.get("completion_tokens", 0))
        raw = str(completion["choices"][0]["message"].get("content") or "")
        try:
            return request.response_model.model_validate_json(raw), raw
        except ValidationError as exc:
            reask_messages(messages, raw, exc)
            raise InvalidReply(exc, raw) from None

    def _generate(self, request: JudgeRequest, messages: list[dict[str, str]]) -> dict[str, Any]:
        schema = request.response_model.model_json_schema()
        options: dict[str, Any] = {
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            "seed": request.seed,
        }
        # typed loosely: llama_cpp's TypedDicts are only there when the extra is installed
        create: Any = self._llama.create_chat_completion
        result = create(
            messages=messages,
            response_format={"type": "json_object", "schema": schema},
            **{k: v for k, v in options.items() if v is not None},
        )
        return dict(result)
