"""The README and the docs import only from the public face: no python block imports a private
module (a dotted path with a ``_``-prefixed part), whether it runs in the tests or is skipped."""

from __future__ import annotations

import ast

import pytest

from . import examples as ex

PYTHON = [e for p in ex.pages() for e in ex.examples(p) if e.language == "python"]


def private_imports(code: str) -> list[str]:
    """The private module paths ``code`` imports from (``agent_eval.run._engine``...)."""
    found = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module]
            modules += [f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
        elif isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        else:
            continue
        found += [m for m in modules if _private(m)]
    return found


def _private(module: str) -> bool:
    top, *parts = module.split(".")
    return top == "agent_eval" and any(p.startswith("_") for p in parts)


def test_the_check_finds_a_private_import() -> None:
    code = "import agent_eval\nfrom agent_eval.run._engine import Engine\nimport agent_eval._api\n"
    assert private_imports(code) == ["agent_eval.run._engine", "agent_eval._api"]
    assert private_imports("from agent_eval.run import _engine") == ["agent_eval.run._engine"]
    assert private_imports("from agent_eval.run import Engine\nimport os._x") == []


def test_the_readme_and_the_docs_have_python_examples() -> None:
    assert len(PYTHON) >= 20
    assert any(e.page == "README.md" for e in PYTHON)


@pytest.mark.parametrize("example", PYTHON, ids=[e.where for e in PYTHON])
def test_examples_import_only_from_the_public_face(example: ex.Example) -> None:
    assert private_imports(example.code) == [], example.where
