"""The ``langchain`` judge: any langchain-core ``BaseChatModel`` as a judge, for Python users.

The chat model answers through ``with_structured_output(json_schema, include_raw=True)``, so
the raw message (and its ``usage_metadata``) is kept with every method, and the reply is
validated here, strictly, as the response model (after one leading reasoning block or fence,
as the ``openai`` judge does). A reply that fails
validation is re-asked (:mod:`agent_eval.judges._reask`, ``max_retries`` times) with the
validation error appended as a user message, as the ``openai`` judge does. Transport retries are the
chat model's own (e.g. ``ChatOpenAI(max_retries=...)``). A reply whose message carries no
``usage_metadata`` marks the call's usage as unknown (``usage_known=False``), as the ``openai``
judge does for a reply without ``usage``: it is estimated, never taken as 0 tokens.
"""

from __future__ import annotations

import asyncio
import importlib
from typing import TYPE_CHECKING, Any, Literal, cast

import orjson
from pydantic import BaseModel, ValidationError

from agent_eval.errors import ConfigError, JudgeTransportError
from agent_eval.judges._base import Judge, JudgeReply, JudgeRequest, JudgeSettings, response_schema
from agent_eval.judges._reask import AttemptUsage, InvalidReply, ask_with_reasks, reask_messages
from agent_eval.judges._structured import parse_reply

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

__all__ = ["LangChainJudge", "load_factory"]

METHODS = {"tools": "function_calling", "json_schema": "json_schema", "json": "json_mode"}
"""agent-eval's ``--mode`` -> langchain's ``with_structured_output(method=...)``."""


class LangChainJudge(Judge):
    """A judge backed by a langchain-core chat model.

    Args:
        chat_model: Any ``BaseChatModel`` that supports ``with_structured_output``.
        model: The model name stored in results; read from the chat model when ``None``.
        method: ``with_structured_output`` method (``function_calling``, ``json_schema``,
            ``json_mode``); the chat model's default when ``None``.
        max_retries: Re-asks after an invalid reply, so ``1 + max_retries`` tries.

    """

    def __init__(
        self,
        chat_model: BaseChatModel,
        *,
        model: str | None = None,
        method: Literal["function_calling", "json_schema", "json_mode"] | None = None,
        max_retries: int = 2,
    ) -> None:
        self.chat_model = chat_model
        self.model = model or _model_name(chat_model)
        self.method = method
        self.max_retries = max_retries

    @classmethod
    def from_settings(cls, settings: JudgeSettings) -> LangChainJudge:
        """The judge of ``--judge langchain:PACKAGE.MODULE:FACTORY`` or a ``[judge]`` table.

        The factory (``settings.target``) is called with the ``[judge.params]`` keyword
        arguments, plus ``model=`` when a model is named, and must return a langchain-core
        chat model. ``--mode`` maps to the structured-output method (``tools`` ->
        ``function_calling``, ``json_schema``, ``json`` -> ``json_mode``); unset, the chat
        model's default method is used.

        Raises:
            ConfigError: no factory named, it cannot be imported or called, or it returned
                something that is not a chat model.

        """
        if not settings.target:
            raise ConfigError(
                "--judge langchain needs a factory: --judge langchain:PACKAGE.MODULE:FACTORY, "
                'or factory = "package.module:make" in the [judge] table'
            )
        factory = load_factory(settings.target)
        kwargs = dict(settings.params)
        if settings.model:
            kwargs["model"] = settings.model
        try:
            chat_model = factory(**kwargs)
        except Exception as exc:
            raise ConfigError(
                f"judge factory {settings.target} failed: {type(exc).__name__}: {exc}"
            ) from exc
        if not callable(getattr(chat_model, "with_structured_output", None)):
            raise ConfigError(
                f"judge factory {settings.target} returned {type(chat_model).__name__}, not a "
                "langchain-core chat model (one with with_structured_output)"
            )
        method = METHODS.get(settings.mode) if settings.mode else None
        return cls(
            cast("BaseChatModel", chat_model),
            model=settings.model,
            method=cast("Any", method),
            max_retries=settings.max_retries,
        )

    async def ask(self, request: JudgeRequest) -> JudgeReply[Any]:
        """Send ``request``; see :meth:`Judge.ask` for the errors raised."""
        runnable = self._structured(request)
        messages: list[dict[str, str]] = [dict(m) for m in request.messages]
        return await ask_with_reasks(
            lambda usage: self._try(runnable, messages, usage, request.response_model),
            model=self.model,
            max_retries=self.max_retries,
        )

    def _structured(self, request: JudgeRequest) -> Any:
        params = {
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            "seed": request.seed,
        }
        fields = type(self.chat_model).model_fields
        update = {k: v for k, v in params.items() if v is not None and k in fields}
        bound = self.chat_model.model_copy(update=update) if update else self.chat_model
        kwargs: dict[str, Any] = {"include_raw": True}
        if self.method is not None:
            kwargs["method"] = self.method
        # the JSON schema, not the class: the chat model then returns the raw message whatever
        # the method (a class makes json_schema raise inside the call, losing the raw reply),
        # and the reply is validated here, strictly, like the other judges'
        return bound.with_structured_output(response_schema(request.response_model), **kwargs)

    async def _try(
        self,
        runnable: Any,
        messages: list[dict[str, str]],
        usage: AttemptUsage,
        response_model: type[BaseModel],
    ) -> tuple[Any, str]:
        usage.attempts += 1
        try:
            answer = await runnable.ainvoke(messages)
        except asyncio.CancelledError:  # an interrupted run: the request was sent, no reply
            usage.unanswered += 1
            raise
        except Exception as exc:  # the chat model's own retries are spent
            raise JudgeTransportError(
                f"judge endpoint failed after {usage.attempts} request(s): {type(exc).__name__}",
                attempts=usage.attempts,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                usage_known=usage.known,
            ) from None
        raw_message = answer["raw"]
        _add_usage(usage, getattr(raw_message, "usage_metadata", None))
        raw = _raw_text(raw_message)
        if not raw:
            error = ValueError("no structured output in the reply; answer with the JSON")
            reask_messages(messages, raw, error)
            raise InvalidReply(error, raw)
        try:
            return parse_reply(raw, response_model), raw
        except ValidationError as error:
            reask_messages(messages, raw, error)
            raise InvalidReply(error, raw) from None


def load_factory(spec: str) -> Any:
    """The callable ``package.module:name`` names (``name`` may be dotted: ``mod:Cls.make``).

    Raises:
        ConfigError: ``spec`` is not ``module:name``, the module cannot be imported, or it has
            no such callable.

    """
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise ConfigError(f"judge factory {spec!r} is not PACKAGE.MODULE:FACTORY")
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(
            f"judge factory {spec}: cannot import {module_name} ({exc}); install the package "
            "or fix the module path"
        ) from exc
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise ConfigError(f"judge factory {spec}: {module_name} has no {attribute}")
        target = getattr(target, part)
    if not callable(target):
        raise ConfigError(f"judge factory {spec}: {attribute} is not callable")
    return target


def _add_usage(usage: AttemptUsage, tokens: Any) -> None:
    """Add a reply's ``usage_metadata`` (input and output tokens) to ``usage``.

    A reply without one (the endpoint reported no usage, or the chat model does not read it)
    marks the usage as unknown, as the ``openai`` judge does, so that it is estimated rather
    than taken as 0.
    """
    if not isinstance(tokens, dict) or "input_tokens" not in tokens:
        usage.known = False
        return
    usage.input_tokens += int(tokens.get("input_tokens") or 0)
    usage.output_tokens += int(tokens.get("output_tokens") or 0)


def _model_name(chat_model: Any) -> str:
    for attribute in ("model_name", "model", "model_id"):
        value = getattr(chat_model, attribute, None)
        if isinstance(value, str) and value:
            return value
    return type(chat_model).__name__


def _raw_text(message: Any) -> str:
    """The exact text the model wrote: its first tool call's arguments, else its content."""
    calls = (getattr(message, "additional_kwargs", None) or {}).get("tool_calls") or []
    if calls:
        return str(calls[0].get("function", {}).get("arguments", ""))
    tool_calls = getattr(message, "tool_calls", None)
    if tool_calls:
        return orjson.dumps(tool_calls[0].get("args", {})).decode()
    content = getattr(message, "content", "")
    return content if isinstance(content, str) else str(content)
