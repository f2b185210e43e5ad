"""Classes are named by the public face users import them from (`public_path`)."""

from __future__ import annotations

import collections

from agent_eval._plugins import public_path
from agent_eval.judges import OpenAIJudge
from agent_eval.metrics import JudgeFreeMetric


class _Local:
    pass


def test_a_class_a_face_exports_is_named_by_the_face() -> None:
    assert OpenAIJudge.__module__.startswith("agent_eval.judges._")
    assert public_path(OpenAIJudge) == "agent_eval.judges:OpenAIJudge"
    assert public_path(JudgeFreeMetric) == "agent_eval.metrics:JudgeFreeMetric"


def test_a_class_no_face_exports_keeps_its_module() -> None:
    assert public_path(_Local) == f"{__name__}:_Local"
    assert public_path(collections.OrderedDict) == "collections:OrderedDict"
