"""Token counts: the o200k_base encoding from the one tokenizer package, offline."""

from __future__ import annotations

import subprocess
import sys

from agent_eval._tokens import ENCODING_NAME, count_tokens, encoding


def test_ids_are_o200k_base_ids() -> None:
    # o200k_base ids as OpenAI's tiktoken 0.14 gives them for the same text
    assert ENCODING_NAME == "o200k_base"
    assert encoding().encode("hello world") == [24912, 2375]
    assert count_tokens("The quick brown fox jumps over the lazy dog.") == 10


def test_special_token_text_counts_as_plain_text() -> None:
    text = "Héllo, 世界! <|endoftext|>"
    ids = encoding().encode(text, disallowed_special=())
    assert ids == [39, 377, 72807, 11, 185558, 0, 464, 91, 419, 1440, 919, 91, 29]
    assert count_tokens(text) == len(ids)


def test_counting_loads_no_second_tokenizer_and_patches_nothing() -> None:
    code = (
        "import sys\n"
        "from agent_eval._tokens import count_tokens\n"
        "count_tokens('hello')\n"
        "print(sorted(m for m in ('tiktoken', 'tiktoken_ext') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
