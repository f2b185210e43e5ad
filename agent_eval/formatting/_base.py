"""The :class:`Formatter` contract: a pure, versioned ``AgentTrace -> str`` with typed parameters.

A formatter is part of a metric's identity: the same conversation rendered two ways can get two
verdicts. So a formatter is named ``name@version``; its parameters (a frozen pydantic model) are
part of its identity too, written ``name@version[param=value,...]`` in canonical order (see
:mod:`agent_eval.formatting._identity`). A released version never changes behaviour: a change is a
new version in a new module, and :mod:`agent_eval.formatting._lock` detects violations.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Generic, TypeVar, cast

from pydantic import BaseModel, ConfigDict

from agent_eval._trace import AgentTrace

__all__ = ["Formatter", "FormatterParams", "NoParams"]


class FormatterParams(BaseModel):
    """Base of a formatter's parameter model: frozen, unknown names rejected.

    Fields must be of type ``bool``, ``int``, ``float``, ``str`` or one of those ``| None``, and
    every field needs a default (the default instance is the released ``name@version``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")


class NoParams(FormatterParams):
    """The parameter model of a formatter without parameters."""


P = TypeVar("P", bound=FormatterParams)


class Formatter(ABC, Generic[P]):
    """A pure function ``AgentTrace -> str`` identified by ``name@version[params]``.

    Subclasses set the class variables and implement :meth:`render`. ``render`` must depend on
    the trace and ``self.params`` only: no clock, randomness, environment or locale.

    Class variables:
        name: Lowercase name, e.g. ``"transcript"`` (letters, digits, ``-``, ``_``, ``.``).
        version: Positive release number; ``name@version`` is frozen once released.
        description: One line for ``agent-eval formatters list``.
        Params: The :class:`FormatterParams` model; :class:`NoParams` when there are none.
        lock_variants: Parameter strings (``"max_tool_chars=200"``) whose renderings are locked
            in ``formatters.lock`` besides the defaults, so parameterised code paths are frozen
            too.

    Args:
        params: The parameter values; ``None`` means every default.

    Raises:
        TypeError: ``params`` is not an instance of the class's ``Params`` model.

    """

    name: ClassVar[str]
    version: ClassVar[int]
    description: ClassVar[str] = ""
    Params: ClassVar[type[FormatterParams]] = NoParams
    lock_variants: ClassVar[tuple[str, ...]] = ()

    def __init__(self, params: P | None = None) -> None:
        model = type(self).Params
        if params is not None and not isinstance(params, model):
            raise TypeError(f"{self.release()} takes {model.__name__}, not {type(params).__name__}")
        self.params: P = params if params is not None else cast(P, model())

    @abstractmethod
    def render(self, trace: AgentTrace) -> str:
        """Render ``trace`` as the judge will see it."""

    @classmethod
    def release(cls) -> str:
        """``name@version`` of this class, without parameters."""
        return f"{cls.name}@{cls.version}"

    @property
    def identity(self) -> str:
        """The canonical identity, e.g. ``transcript@1[max_tool_chars=2000]``.

        Computed once per parameters object (they are frozen; every rendering of a run asks).
        """
        kept = self.__dict__.get("_identity")
        if kept is not None and kept[0] is self.params:
            return str(kept[1])
        from agent_eval.formatting._identity import format_identity

        identity = format_identity(self.name, self.version, self.changed_params())
        self.__dict__["_identity"] = (self.params, identity)
        return identity

    def changed_params(self) -> dict[str, Any]:
        """Parameters that differ from their defaults, by name (the identity's parameter part)."""
        defaults = type(self).Params()
        return {
            key: value
            for key, value in self.params.model_dump().items()
            if value != getattr(defaults, key)
        }

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.identity}>"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Formatter)
            and type(other) is type(self)
            and other.params == self.params
        )

    def __hash__(self) -> int:
        return hash((type(self), self.params))
