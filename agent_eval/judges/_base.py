"""The judge protocol: :class:`JudgeRequest` in, :class:`JudgeReply` out, and the registry.

A judge answers a list of chat messages with an object of a pydantic type. Adapters
(``openai``, ``langchain``, ``llama-cpp``) implement :class:`Judge`; wrappers (a judge-call
cache, a rate limiter) implement the same ABC around another judge, so they compose::

    judge = RateLimitedJudge(CachedJudge(OpenAIJudge(model="gpt-4o-mini"), cache), limits)

A request holds exactly what is sent to the model, minus credentials, so
:meth:`JudgeRequest.cache_key` is a faithful identity of a call.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Generic, TypeVar

import orjson
from pydantic import BaseModel

from agent_eval._plugins import Registry, public_path
from agent_eval.errors import ConfigError

__all__ = ["Judge", "JudgeReply", "JudgeRequest", "JudgeSettings", "judges"]

T = TypeVar("T")


@lru_cache(maxsize=256)
def response_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model.model_json_schema()``, computed once per model (shared: do not mutate)."""
    return model.model_json_schema()


@dataclass(frozen=True)
class JudgeRequest:
    """One judge call: what is sent, minus credentials and the model name.

    Attributes:
        messages: Chat messages, each ``{"role": ..., "content": ...}``, in order.
        response_model: The pydantic type the reply must validate as.
        temperature: Sampling temperature; ``None`` leaves the endpoint default.
        max_tokens: Completion token limit; ``None`` leaves the endpoint default.
        seed: Sampling seed for endpoints that honour one; ``None`` sends none.

    """

    messages: tuple[dict[str, str], ...]
    response_model: type[BaseModel]
    temperature: float | None = 0.0
    max_tokens: int | None = None
    seed: int | None = None

    def canonical(self, model: str) -> dict[str, Any]:
        """A JSON-able description of the call to ``model`` (messages, parameters, schema)."""
        return {
            "model": model,
            "messages": [dict(sorted(m.items())) for m in self.messages],
            "response_schema": response_schema(self.response_model),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
        }

    def cache_key(self, model: str) -> str:
        """sha256 hex of :meth:`canonical` serialized with sorted keys (64 characters)."""
        data = orjson.dumps(self.canonical(model), option=orjson.OPT_SORT_KEYS)
        return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class JudgeReply(Generic[T]):
    """A validated judge answer and what it cost.

    Attributes:
        output: The reply, an instance of the request's ``response_model``.
        model: The model that answered (as reported by the endpoint when it says).
        input_tokens: Prompt tokens summed over every attempt, re-asks included.
        output_tokens: Completion tokens summed over every attempt.
        latency_ms: Wall time of the whole call, retries included, milliseconds.
        attempts: HTTP requests (or local generations) made, retries included; 0 when cached.
        raw_reply: The last raw completion text (the JSON or tool arguments the model wrote).
        cached: True when the reply came from a judge-call cache, not the model.
        usage_known: False when the endpoint reported no usage for some attempt (local
            servers may not): the token counts are then a lower bound, not the cost. On a
            cached reply it is the state of the call that wrote the cache entry (the reply
            itself cost nothing).

    """

    output: T
    model: str
    input_tokens: int
    output_tokens: int
    latency_ms: float
    attempts: int
    raw_reply: str
    cached: bool = False
    usage_known: bool = True


@dataclass(frozen=True, kw_only=True)
class JudgeSettings:
    """What the command line and ``agent-eval.toml`` say about the judge to build.

    ``--judge KIND:TARGET`` (or the ``[judge]`` table: ``kind``, ``factory``, ``model``,
    ``params``) picks a judge registered in the ``agent_eval.judges`` entry-point group; the
    CLI hands these settings to that class's :meth:`Judge.from_settings`.

    Attributes:
        kind: The registered judge name (``openai``, ``langchain``, ``llama-cpp``, ...).
        model: The model name (``openai``: the model asked; others: stored in results, or
            passed to the factory as ``model=``); ``None`` when not given.
        target: What follows ``KIND:`` on ``--judge`` or the table's ``factory``
            (``langchain``: ``package.module:factory``; ``openai-client``:
            ``package.module:factory[@model]``; ``instructor``: ``provider/model``;
            ``llama-cpp``: the GGUF path).
        params: The ``[judge.params]`` table: keyword arguments for the factory/constructor.
        base_url / api_key_env / azure_endpoint / azure_api_version: The endpoint settings.
        mode: The structured-output mode (``tools``, ``json_schema``, ``json``), or ``None``
            when not set explicitly (a judge then uses its own default).
        timeout: Per-request timeout, seconds.
        max_retries: Re-asks after an invalid reply.
        transport_retries: Retries of a failed HTTP request.

    """

    kind: str
    model: str | None = None
    target: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    azure_endpoint: str | None = None
    azure_api_version: str | None = None
    mode: str | None = None
    timeout: float = 60.0
    max_retries: int = 2
    transport_retries: int = 4


class Judge(ABC):
    """A model behind an adapter that answers a :class:`JudgeRequest` with a typed object.

    Attributes:
        model: The model name as sent to the endpoint; stored in every result.

    Implementations must be safe to call concurrently from one event loop.
    """

    model: str

    @abstractmethod
    async def ask(self, request: JudgeRequest) -> JudgeReply[Any]:
        """Send ``request`` and return the validated reply.

        Raises:
            JudgeOutputError: the reply never validated against ``request.response_model``
                after the re-asks; carries ``attempts``, ``raw_reply`` and the usage so far.
            JudgeTransportError: the endpoint failed (HTTP error, timeout, connection) after
                all transport retries; carries ``attempts`` and the usage so far.

        """

    @classmethod
    def from_settings(cls, settings: JudgeSettings) -> Judge:
        """Build this judge from command-line / ``agent-eval.toml`` settings.

        A judge that the CLI can pick (``--judge KIND[:TARGET]`` or a ``[judge]`` table)
        overrides this; the default refuses.

        Raises:
            ConfigError: this judge cannot be built from settings (use it from Python), or
                the settings are invalid for it.

        """
        raise ConfigError(
            f"judge {settings.kind!r} ({public_path(cls)}) cannot be built "
            "from --judge or a [judge] table: it does not implement Judge.from_settings; "
            "use it from Python (agent_eval.score(judge=...))"
        )

    async def aclose(self) -> None:
        """Release connections and other resources (idempotent)."""
        return None

    async def __aenter__(self) -> Judge:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _adapt(name: str, obj: object) -> type[Judge]:
    if not (isinstance(obj, type) and issubclass(obj, Judge)):
        raise TypeError(f"judge entry point {name!r} is not a Judge subclass: {obj!r}")
    return obj


judges: Registry[type[Judge]] = Registry("judge", "agent_eval.judges", _adapt)
"""Judge adapter classes by name (``openai``, ``langchain``, ``llama-cpp``, third-party)."""
