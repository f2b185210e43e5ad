"""Versioned prompt templates (jinja2 data files) and their sha256 identity.

Each metric version owns one folder here (``goal_accuracy_v1/``) of ``*.j2`` templates. A
released folder is never edited: a new wording is a new folder and a new metric version. The
:attr:`PromptSet.sha256` over the folder's file names and bytes goes into every result, so a
verdict always names the exact prompts that produced it.

Two filters let a template show trace text as data (the hardened prompt versions, ``*_v2``):
``quoted`` writes each line of the text as a quoted content line (``| line``, ``|! line`` when
it imitates a turn header or a prompt heading; :func:`~agent_eval.formatting.quote_lines`) and
``one_line`` keeps a value on its line (line breaks and invisible characters as ``<U+XXXX>``;
:func:`~agent_eval.formatting.one_line`). Their behaviour is frozen like a released
formatter's: a change is a new filter name, used by a new prompt folder.
"""

from __future__ import annotations

import hashlib
from functools import cached_property, lru_cache
from importlib.resources import files
from typing import Any

import jinja2
from jinja2 import nodes

from agent_eval.formatting._hardening import one_line, quote_lines

__all__ = ["PromptSet"]


class PromptSet:
    """The templates of one prompt folder, rendered with jinja2 (strict undefined, no escaping).

    Args:
        folder: The folder name under ``agent_eval/metrics/prompts``, e.g. ``"goal_accuracy_v1"``.

    Raises:
        FileNotFoundError: the folder does not exist or holds no ``*.j2`` template.

    """

    def __init__(self, folder: str) -> None:
        root = files(__name__) / folder
        self.folder = folder
        self.sources: dict[str, str] = {
            entry.name: entry.read_text(encoding="utf-8")
            for entry in sorted(root.iterdir(), key=lambda e: e.name)
            if entry.name.endswith(".j2")
        }
        if not self.sources:
            raise FileNotFoundError(f"no *.j2 prompt templates in {root}")
        env = jinja2.Environment(
            loader=jinja2.DictLoader(self.sources),
            undefined=jinja2.StrictUndefined,
            autoescape=False,
            keep_trailing_newline=False,
            auto_reload=False,  # the sources are fixed: no up-to-date check per render
        )
        # A template sees only the variables it is given: no jinja globals (range, dict,
        # lipsum...), which no prompt uses and whose lookup table every render copied (half
        # of a render's time). A template that used one fails loudly (StrictUndefined).
        env.globals.clear()
        env.filters["quoted"] = _quoted
        env.filters["one_line"] = _one_line
        self._templates = {name[: -len(".j2")]: env.get_template(name) for name in self.sources}
        self._parts = {  # templates that only substitute variables: their parts and names
            name[: -len(".j2")]: (parts, frozenset(p[0] for p in parts if isinstance(p, tuple)))
            for name, source in self.sources.items()
            if (parts := _substitution_parts(env, source)) is not None
        }

    @cached_property
    def sha256(self) -> str:
        """sha256 hex over ``name NUL bytes NUL`` of every template in name order."""
        digest = hashlib.sha256()
        for name, text in self.sources.items():
            digest.update(name.encode() + b"\0" + text.encode("utf-8") + b"\0")
        return digest.hexdigest()

    def render(self, name: str, **variables: Any) -> str:
        """Render template ``name`` (without ``.j2``) with ``variables``, trailing space trimmed.

        Raises:
            jinja2.UndefinedError: a variable the template uses was not given.

        """
        if not variables:
            return self._static(name)
        found = self._parts.get(name)
        if found is not None and found[1] <= variables.keys():
            return "".join(
                [part if part.__class__ is str else str(variables[part[0]]) for part in found[0]]
            ).rstrip()
        return self._template(name).render(**variables).rstrip()

    @lru_cache(maxsize=64)  # noqa: B019  (one PromptSet per metric version, kept for the process)
    def _static(self, name: str) -> str:
        return self._template(name).render().rstrip()

    def _template(self, name: str) -> jinja2.Template:
        try:
            return self._templates[name]
        except KeyError:
            raise jinja2.TemplateNotFound(f"{name}.j2") from None


def _quoted(value: object) -> str:
    return "\n".join(quote_lines(str(value)))


def _one_line(value: object) -> str:
    return one_line(str(value))


def _substitution_parts(
    env: jinja2.Environment, source: str
) -> tuple[str | tuple[str], ...] | None:
    """A template that only substitutes variables, as its text and ``(name,)`` parts.

    ``None`` for any other template (filters, attributes, tags, expressions): those are
    rendered by jinja2. For the ones that qualify, joining the parts with ``str`` of each
    variable is what jinja2's compiled template yields (no autoescape, no finalize), without
    the per-render context jinja2 builds (~20 k instructions a render). From the template's
    syntax tree (:meth:`jinja2.Environment.parse`), so whitespace control and the trailing
    newline are applied as jinja2 applies them.
    """
    parts: list[str | tuple[str]] = []
    for statement in env.parse(source).body:
        if not isinstance(statement, nodes.Output):
            return None
        for node in statement.nodes:
            if isinstance(node, nodes.TemplateData):
                parts.append(node.data)
            elif isinstance(node, nodes.Name) and node.ctx == "load":
                parts.append((node.name,))
            else:
                return None
    return tuple(parts)
