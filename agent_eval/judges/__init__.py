"""Judge adapters: a model that answers chat messages with a pydantic-typed object.

:mod:`~agent_eval.judges._base` holds the protocol (:class:`Judge`, :class:`JudgeRequest`,
:class:`JudgeReply`) and the ``agent_eval.judges`` registry. Adapters: ``openai``
(:mod:`~agent_eval.judges._openai_judge`, any OpenAI-compatible endpoint, through its own aiohttp
transport or the user's openai client, :mod:`~agent_eval.judges._openai_client`),
``openai-client`` (:mod:`~agent_eval.judges._openai_client_judge`, that client from a factory),
``instructor`` (:mod:`~agent_eval.judges._instructor_judge`, an extra), ``langchain``
(:mod:`~agent_eval.judges._langchain_judge`) and ``llama-cpp``
(:mod:`~agent_eval.judges._llama_cpp_judge`, an extra). Adapters are imported on use.
"""

from agent_eval.judges._base import Judge, JudgeReply, JudgeRequest, judges

__all__ = ["Judge", "JudgeReply", "JudgeRequest", "judges"]
