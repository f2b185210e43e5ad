"""The docs list every skip/ignore reason the ingest code can produce (found by grepping it)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PATTERNS = (
    r'(?:ignore_span|ignore_log)\(\s*"(\w+)"',
    r'\b(?:reason|ignored_reason)\s*(?::\s*str\s*)?=\s*"(\w+)"',
    r'BadValue\(\s*"(\w+)"',
    r'"(\w+)" if [\w.]+ is None else "(\w+)"',
    r'else "(\w+)"',
    r'or "(\w+)"\)',
    r'"(\w+_span)": \("',
    r'return "((?:not|http)_\w+)"',
)
REASON = re.compile(r"[a-z0-9]+(?:_[a-z0-9]+)+")


def reasons_in_code() -> set[str]:
    found: set[str] = set()
    for path in (ROOT / "agent_eval" / "ingest").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for pattern in PATTERNS:
            for match in re.finditer(pattern, text):
                found.update(g for g in match.groups() if g and REASON.fullmatch(g))
    return found


def test_the_docs_list_every_reason() -> None:
    found = reasons_in_code()
    assert {"no_message_content", "no_genai_content", "http_span", "invalid_span_id"} <= found
    assert len(found) >= 30  # the grep still finds the reasons
    # docs/formats.md holds the list; a reason may be documented on any page (bad input...)
    docs = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs").rglob("*.md"))
    missing = sorted(r for r in found if f"`{r}`" not in docs)
    assert missing == []
