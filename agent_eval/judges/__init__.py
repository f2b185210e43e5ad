"""Judge adapters: a model that answers chat messages with a pydantic-typed object.

:mod:`~agent_eval.judges.base` holds the protocol (:class:`Judge`, :class:`JudgeRequest`,
:class:`JudgeReply`) and the ``agent_eval.judges`` registry. Adapters: ``openai``
(:mod:`~agent_eval.judges.openai_judge`, the openai client on any OpenAI-compatible endpoint),
``langchain`` (:mod:`~agent_eval.judges.langchain_judge`) and ``llama-cpp``
(:mod:`~agent_eval.judges.llama_cpp_judge`, an extra). Adapters are imported on use.
"""

from agent_eval.judges.base import Judge, JudgeReply, JudgeRequest, judges

__all__ = ["Judge", "JudgeReply", "JudgeRequest", "judges"]
