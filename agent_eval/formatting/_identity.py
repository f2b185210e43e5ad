"""Formatter identities: parse and print ``name@version[param=value,...]``.

Grammar (whitespace around the whole string and around each ``param=value`` is ignored)::

    identity := name "@" version [ "[" [ param "=" value { "," param "=" value } ] "]" ]
    name     := [a-z0-9][a-z0-9._-]*
    version  := [0-9]+

Values are written ``true``/``false`` for booleans, ``none`` for ``None``, Python ``repr`` for
floats and decimal for integers; strings verbatim (they cannot contain ``,``, ``=``, ``[`` or
``]``). The canonical identity lists only parameters that differ from their defaults, sorted by
name, so ``transcript@1[system=true,max_tool_chars=2000]`` and
``transcript@1[max_tool_chars=2000]`` are the same formatter and print the same way.
"""

from __future__ import annotations

import re
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from agent_eval.errors import ConfigError

ParamsT = TypeVar("ParamsT", bound=BaseModel)

__all__ = [
    "DEFAULT_FORMATTER",
    "FormatterSpec",
    "build_params",
    "describe_params",
    "format_identity",
    "parse_identity",
]

DEFAULT_FORMATTER = "transcript@2"
"""The formatter chosen when none is named: the hardened transcript (docs/hardened-judging.md);
``agent_eval.config`` and every entry point take it from here."""

_IDENTITY = re.compile(
    r"^(?P<name>[a-z0-9][a-z0-9._-]*)(?:@(?P<version>[0-9]+))?(?:\[(?P<params>[^\[\]]*)\])?$"
)


@dataclass(frozen=True, slots=True)
class FormatterSpec:
    """A parsed identity string, parameters still as written.

    Attributes:
        name: The formatter name.
        version: The release number; ``None`` when the string had no ``@version``.
        params: ``(name, raw value)`` pairs in the order written.

    """

    name: str
    version: int | None
    params: tuple[tuple[str, str], ...] = ()

    @property
    def release(self) -> str:
        """``name@version`` (``name`` alone when no version was given)."""
        return self.name if self.version is None else f"{self.name}@{self.version}"


_EXAMPLES = {
    "formatter": "transcript@1[max_tool_chars=2000]",
    "metric": "faithfulness@1[per_statement=true]",
}
"""An example spec of each kind, for the error message."""


def parse_identity(text: str, kind: str = "formatter") -> FormatterSpec:
    """Parse ``name@version[param=value,...]`` (of a ``kind``: formatter, metric).

    Raises:
        ConfigError: the string does not follow the grammar, or names a parameter twice.

    """
    match = _IDENTITY.match(text.strip())
    if match is None:
        raise ConfigError(
            f"bad {kind} {text!r}: write NAME@VERSION or NAME@VERSION[param=value,...], "
            f"e.g. {_EXAMPLES.get(kind, _EXAMPLES['formatter'])!r}"
        )
    version = match["version"]
    return FormatterSpec(
        match["name"],
        None if version is None else int(version),
        _split_params(text, match["params"]),
    )


def _split_params(text: str, body: str | None) -> tuple[tuple[str, str], ...]:
    pairs: list[tuple[str, str]] = []
    for item in (body or "").split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(
                f"bad formatter parameter {item.strip()!r} in {text!r}: write name=value"
            )
        pairs.append((key.strip(), value.strip()))
    names = [key for key, _ in pairs]
    if len(set(names)) != len(names):
        raise ConfigError(f"formatter {text!r} names a parameter twice")
    return tuple(pairs)


def format_value(value: Any) -> str:
    """Write one parameter value the canonical way (see the module docstring)."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def format_identity(name: str, version: int, params: Mapping[str, Any]) -> str:
    """The canonical identity: ``name@version`` plus ``[k=v,...]`` sorted by parameter name."""
    if not params:
        return f"{name}@{version}"
    body = ",".join(f"{key}={format_value(params[key])}" for key in sorted(params))
    return f"{name}@{version}[{body}]"


def _type_name(annotation: Any) -> str:
    if get_origin(annotation) in (Union, types.UnionType):
        return " | ".join(_type_name(arg) for arg in get_args(annotation))
    if annotation is type(None):
        return "None"
    return str(getattr(annotation, "__name__", annotation))


def describe_params(model: type[BaseModel]) -> list[str]:
    """``["max_tool_chars: int | None = none", ...]``: each parameter, its type and default."""
    return [
        f"{key}: {_type_name(field.annotation)} = {format_value(field.default)}"
        for key, field in sorted(model.model_fields.items())
    ]


def _accepts_none(annotation: Any) -> bool:
    return annotation is type(None) or type(None) in get_args(annotation)


def build_params(
    release: str, model: type[ParamsT], raw: Mapping[str, str], kind: str = "formatter"
) -> ParamsT:
    """Validate raw ``name -> value`` strings against ``model`` (of a ``kind``: formatter, metric).

    Raises:
        ConfigError: an unknown parameter name, or a value of the wrong type; the message lists
            the parameters that exist with their types and defaults.

    """
    fields = model.model_fields
    known = "; its parameters: " + (", ".join(describe_params(model)) or "(none)")
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in fields:
            raise ConfigError(f"{kind} {release} has no parameter {key!r}{known}")
        none_word = value.lower() in ("none", "null")
        values[key] = None if none_word and _accepts_none(fields[key].annotation) else value
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, err['loc']))}={err.get('input')!r}: {err['msg']}"
            for err in exc.errors()
        )
        raise ConfigError(f"bad parameter for {kind} {release}: {problems}{known}") from None
