"""Quote verification: the documented normalization, one passage at a time, never empty."""

from __future__ import annotations

import pytest

from agent_eval.metrics._evidence import find_quote, normalize

PASSAGES = ["Returns are accepted within 14 calendar days of receipt.", "Shipping – €5 “flat”."]


@pytest.mark.parametrize(
    ("quote", "found"),
    [
        ("within 14 calendar days of receipt", 0),
        ("WITHIN 14\n calendar  days", 0),
        ('"within 14 calendar days…"', 0),
        ("'Returns are accepted...'", 0),
        ('Shipping - €5 "flat"', 1),
        ("Ｓｈｉｐｐｉｎｇ", 1),  # full-width forms (NFKC)
        ("within 30 calendar days", None),
        ("receipt. Shipping", None),  # a quote never spans two passages
        ("", None),
        ("  ...  ", None),
        (None, None),
    ],
)
def test_find_quote(quote: str | None, found: int | None) -> None:
    assert find_quote(quote, PASSAGES) == found


def test_normalize_is_documented_steps() -> None:
    assert normalize("  It’s\u00a0“Free” — Now\t") == 'it\'s "free" - now'
