"""YAML documents read safely and fast: libyaml's C parser when present (private).

PyYAML parses with pure Python unless it was built against libyaml, whose parser
(``yaml.CSafeLoader``) reads a 2 MB cassette about two orders of magnitude faster
(``bench/yaml_cassette.py`` measures both); both build values with the same safe constructors,
so they give the same document. An integer longer than Python converts (the SafeConstructor
raises ``ValueError``) is read as ``inf``/``-inf`` (:func:`~agent_eval.ingest._safe_text.
parse_int`), as in JSON, so it costs the item holding it, not the file.
"""

from __future__ import annotations

from typing import IO, Any

import yaml

__all__ = ["HAS_LIBYAML", "load", "loader"]

HAS_LIBYAML = hasattr(yaml, "CSafeLoader")
"""Whether PyYAML was built with libyaml (``yaml.CSafeLoader`` exists)."""
_INT_TAG = "tag:yaml.org,2002:int"


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int | float:
    """The SafeConstructor's integer, or ``inf``/``-inf`` for one too long to convert."""
    try:
        value: int = yaml.constructor.SafeConstructor.construct_yaml_int(loader, node)
    except ValueError:  # more digits than Python's integer string conversion limit
        text = str(loader.construct_scalar(node)).lstrip()
        return float("-inf") if text.startswith("-") else float("inf")
    return value


class _PureLoader(yaml.SafeLoader):  # type: ignore[misc]
    """PyYAML's pure-Python safe loader, with bounded integers."""


_PureLoader.add_constructor(_INT_TAG, _construct_int)
_LOADERS: dict[bool, type[Any]] = {False: _PureLoader}
if HAS_LIBYAML:

    class _CLoader(yaml.CSafeLoader):  # type: ignore[misc,name-defined,unused-ignore]
        """libyaml's parser with PyYAML's safe constructors, with bounded integers."""

    _CLoader.add_constructor(_INT_TAG, _construct_int)
    _LOADERS[True] = _CLoader


def loader(libyaml: bool = True) -> type[Any]:
    """The safe loader class: libyaml's when ``libyaml`` and it is present, else pure Python."""
    return _LOADERS[libyaml and HAS_LIBYAML]


def load(stream: IO[bytes] | bytes | str, *, libyaml: bool = True) -> Any:
    """The first YAML document of ``stream``, with safe constructors only.

    Raises:
        yaml.YAMLError: not valid YAML.
        RecursionError: nested too deep for the constructors.

    """
    return yaml.load(stream, Loader=loader(libyaml))  # a SafeLoader subclass: safe constructors
