"""The ``openai-client`` judge kind: the ``openai`` judge on a client from the user's factory.

From the command line, ``--judge openai-client:PACKAGE.MODULE:FACTORY@MODEL``; in
``agent-eval.toml``::

    [judge]
    kind = "openai-client"
    factory = "my_pkg.judges:make_client"   # returns an openai.AsyncOpenAI / AsyncAzureOpenAI
    model = "gpt-4o-mini"                   # the model (Azure: the deployment) asked
    params = { tenant = "contoso" }         # keyword arguments of the factory

The factory is imported and called (with the ``[judge.params]`` keyword arguments) when the
judge is built, as ``langchain:`` calls its chat-model factory; the judge then sends through the
client exactly as ``OpenAIJudge(model, client=...)`` does
(:mod:`agent_eval.judges._openai_client`). The judge owns that client: it closes it at the end of
each run and calls the factory again for the next (one client per event loop).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from agent_eval.errors import ConfigError
from agent_eval.judges._base import JudgeSettings
from agent_eval.judges._openai_client import ClientTransport, check_client, require_openai
from agent_eval.judges._openai_judge import OpenAIJudge
from agent_eval.judges._structured import StructuredMode

if TYPE_CHECKING:
    from collections.abc import Callable

    from openai import AsyncOpenAI

__all__ = ["OpenAIClientJudge", "split_target"]


class OpenAIClientJudge(OpenAIJudge):
    """The ``openai`` judge on clients a factory makes, one per run; see the module doc.

    Args:
        model: The model (for Azure, the deployment) sent in each request.
        factory: Returns a new ``openai.AsyncOpenAI`` / ``AsyncAzureOpenAI`` (no arguments).
        mode: Structured-output mode: ``tools``, ``json_schema`` or ``json``.
        max_retries: Re-asks after an invalid reply, so ``1 + max_retries`` tries.
        transport_retries: Retries of a failed request, per try.

    Raises:
        ConfigError: the factory fails or returns no async openai client, or the mode is
            unknown.

    """

    def __init__(
        self,
        model: str,
        *,
        factory: Callable[[], AsyncOpenAI],
        mode: StructuredMode = "tools",
        max_retries: int = 2,
        transport_retries: int = 4,
    ) -> None:
        super().__init__(
            model,
            client=factory(),
            mode=mode,
            max_retries=max_retries,
            transport_retries=transport_retries,
        )
        assert isinstance(self._transport, ClientTransport)  # client= gives one
        self._transport.own(factory)

    @classmethod
    def from_settings(cls, settings: JudgeSettings) -> OpenAIClientJudge:
        """The judge of ``--judge openai-client:...`` or an ``openai-client`` ``[judge]`` table.

        Raises:
            ConfigError: no factory or no model named, openai is not installed, the factory
                cannot be imported or fails, or it returns no async openai client.

        """
        from agent_eval.judges._langchain_judge import load_factory

        spec, model = split_target(settings)
        require_openai()  # before the factory's module, whose import would fail on it
        factory = load_factory(spec)
        params = dict(settings.params)

        def make() -> AsyncOpenAI:
            try:
                client = factory(**params)
            except Exception as exc:
                raise ConfigError(
                    f"judge factory {spec} failed: {type(exc).__name__}: {exc}"
                ) from exc
            return check_client(client, f"what judge factory {spec} returned")

        return cls(
            model,
            factory=make,
            mode=cast("StructuredMode", settings.mode or "tools"),  # checked in __init__
            max_retries=settings.max_retries,
            transport_retries=settings.transport_retries,
        )


def split_target(settings: JudgeSettings) -> tuple[str, str]:
    """``(factory, model)`` from ``PACKAGE.MODULE:FACTORY[@MODEL]`` and the settings' model.

    The model after ``@`` wins over ``[judge] model``. A model name may itself hold ``@``
    (``claude-3-5-haiku@20241022``): only the first ``@`` splits, and a factory name has none.

    Raises:
        ConfigError: no factory, or no model (neither ``@MODEL`` nor ``[judge] model``).

    """
    factory, _, model = (settings.target or "").partition("@")
    model = model or settings.model or ""
    if not factory:
        raise ConfigError(
            "--judge openai-client needs a factory: --judge openai-client:PACKAGE.MODULE:"
            'FACTORY@MODEL, or factory = "package.module:make_client" in the [judge] table'
        )
    if not model:
        raise ConfigError(
            f"--judge openai-client:{factory} names no model: append @MODEL (the model, or the "
            "Azure deployment, to ask), or set model in the [judge] table"
        )
    return factory, model
