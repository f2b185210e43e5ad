"""Prompt templates render exactly as a default jinja2 environment renders them (same bytes)."""

from __future__ import annotations

from importlib.resources import files

import jinja2
import jinja2.meta
import pytest

from agent_eval.formatting._hardening import one_line, quote_lines
from agent_eval.metrics._prompts import PromptSet

FOLDERS = sorted(
    entry.name
    for entry in files("agent_eval.metrics._prompts").iterdir()
    if entry.is_dir() and any(child.name.endswith(".j2") for child in entry.iterdir())
)


def _quoted(text: object) -> str:
    return "\n".join(quote_lines(str(text)))


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_template_renders_as_a_default_jinja_environment_does(folder: str) -> None:
    prompts = PromptSet(folder)
    reference = jinja2.Environment(
        loader=jinja2.DictLoader(prompts.sources), undefined=jinja2.StrictUndefined
    )
    reference.filters.update(quoted=_quoted, one_line=one_line)  # the @2 prompts' two filters
    for name, source in prompts.sources.items():
        used = jinja2.meta.find_undeclared_variables(reference.parse(source))
        variables = {var: f"<{var} with {{braces}} and\nlines>" for var in sorted(used)}
        expected = reference.get_template(name).render(**variables).rstrip()
        assert prompts.render(name[: -len(".j2")], **variables) == expected, name


def test_a_missing_variable_or_template_fails_loudly() -> None:
    prompts = PromptSet("goal_accuracy_v1")
    with pytest.raises(jinja2.UndefinedError):
        prompts.render("infer_goal_user")
    with pytest.raises(jinja2.TemplateNotFound):
        prompts.render("no_such_template", x=1)


@pytest.mark.parametrize("folder", FOLDERS)
@pytest.mark.parametrize("value", [None, 0, 3.5, "", "  trailing  \n\n", "{{ not a tag }}"])
def test_substituted_values_render_as_jinja_renders_them(folder: str, value: object) -> None:
    """The substitution-only templates (rendered without jinja2's context) give jinja2's text."""
    prompts = PromptSet(folder)
    reference = jinja2.Environment(
        loader=jinja2.DictLoader(prompts.sources), undefined=jinja2.StrictUndefined
    )
    for name, source in prompts.sources.items():
        if name[: -len(".j2")] not in prompts._parts:  # tags (loops): rendered by jinja2
            continue
        used = jinja2.meta.find_undeclared_variables(reference.parse(source))
        variables = dict.fromkeys(sorted(used), value)
        if not variables:
            continue
        expected = reference.get_template(name).render(**variables).rstrip()
        assert prompts.render(name[: -len(".j2")], **variables) == expected, name


def test_goal_accuracy_templates_substitute_without_jinja_and_still_fail_loudly() -> None:
    prompts = PromptSet("goal_accuracy_v1")
    assert {"infer_goal_user", "compare_outcome_user"} <= set(prompts._parts)
    with pytest.raises(jinja2.UndefinedError, match="arrived_outcome"):
        prompts.render("compare_outcome_user", desired_outcome="x")  # one of two given
