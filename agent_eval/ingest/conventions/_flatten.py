"""Read flattened list attributes (``prefix.{i}.field``) back into indexed mappings.

OTel attributes cannot hold lists of objects, so conventions such as OpenInference
(``llm.input_messages.0.message.role``) and OpenLLMetry (``gen_ai.prompt.0.role``) flatten them
into indexed keys. :func:`indexed` groups such keys by index; some exporters instead keep the list
as one structured value (an OTLP ``arrayValue`` of ``kvlistValue``), which is flattened to the
same shape so conventions read both alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["flatten_mapping", "indexed"]


def indexed(attrs: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """Group ``{prefix}.{i}.{rest}`` keys into one ``{rest: value}`` mapping per index.

    Returns:
        The mappings in index order (gaps closed). When ``attrs[prefix]`` is a list of mappings,
        those are returned flattened to dotted keys instead.

    """
    whole = attrs.get(prefix)
    if isinstance(whole, list):
        return [flatten_mapping(item) for item in whole if isinstance(item, Mapping)]
    start = prefix + "."
    groups: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        if not key.startswith(start):
            continue
        index, _, rest = key[len(start) :].partition(".")
        if index.isdigit() and rest:
            groups.setdefault(int(index), {})[rest] = value
    return [groups[i] for i in sorted(groups)]


def flatten_mapping(value: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}, "c": [{"d": 2}]}`` -> ``{"a.b": 1, "c.0.d": 2}``; scalar lists kept."""
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = f"{prefix}{key}"
        if isinstance(item, Mapping):
            out.update(flatten_mapping(item, name + "."))
        elif isinstance(item, list) and any(isinstance(x, Mapping) for x in item):
            for i, element in enumerate(item):
                if isinstance(element, Mapping):
                    out.update(flatten_mapping(element, f"{name}.{i}."))
        else:
            out[name] = item
    return out
