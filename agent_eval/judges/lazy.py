"""A judge built on its first request: :class:`LazyJudge`.

A fully cached re-run answers every call from the judge-call cache, so the adapter (for
``openai``: the openai client, its HTTP stack and their imports, about 0.3 s per command) is
never needed. ``LazyJudge`` stands in for it under the cache and builds it only when a request
reaches it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent_eval.judges.base import Judge, JudgeReply, JudgeRequest

__all__ = ["LazyJudge"]


class LazyJudge(Judge):
    """A judge that calls ``build`` (once) when the first request reaches it.

    Args:
        model: The model name, known before the judge is built (results record it).
        build: Makes the real judge; whatever it raises is raised from that first :meth:`ask`,
            so check the configuration before (``build_judge`` does).

    """

    def __init__(self, model: str, build: Callable[[], Judge]) -> None:
        self.model = model
        self._build = build
        self._judge: Judge | None = None

    @property
    def built(self) -> bool:
        """Whether the real judge exists (a request reached it)."""
        return self._judge is not None

    def judge(self) -> Judge:
        """The real judge, built on the first call."""
        if self._judge is None:
            self._judge = self._build()
        return self._judge

    async def ask(self, request: JudgeRequest) -> JudgeReply[Any]:
        """Ask the real judge (built now if this is the first request)."""
        return await self.judge().ask(request)

    async def aclose(self) -> None:
        """Close the real judge, if it was built."""
        if self._judge is not None:
            await self._judge.aclose()

    def __repr__(self) -> str:
        inner = repr(self._judge) if self._judge is not None else "not built"
        return f"LazyJudge(model={self.model!r}, {inner})"
