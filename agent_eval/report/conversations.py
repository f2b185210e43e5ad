"""Stored conversations (``conversations.jsonl``): now in :mod:`agent_eval.run.artifacts`.

Kept so that imports of this module keep working; new code imports from there.
"""

from agent_eval.run.artifacts import (
    CONVERSATIONS_NAME,
    append_conversation,
    read_conversations,
    write_conversations,
)

__all__ = [
    "CONVERSATIONS_NAME",
    "append_conversation",
    "read_conversations",
    "write_conversations",
]
