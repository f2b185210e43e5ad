"""The "Writing a metric" example of docs/plugins.md, installed as a package installs it, is scored.

The example's module and its ``[project.entry-points."agent_eval.metrics"]`` table are taken
from the page as written, put on ``PYTHONPATH`` with a dist-info naming that entry point (what
``pip install`` leaves), and the installed ``agent-eval`` CLI scores conversations with it,
parameters included (trial9 #9: the README never said how to write a metric).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from agent_eval._trace import AgentTrace, AssistantMessage, UserMessage
from agent_eval.run._store import load_results

PAGE = Path(__file__).resolve().parents[2] / "docs" / "plugins.md"


def _example() -> tuple[str, dict[str, str]]:
    """The example's Python module and its ``agent_eval.metrics`` entry points."""
    section = PAGE.read_text(encoding="utf-8").split("\n## Writing a metric\n", 1)[1]
    section = section.split("\n## ", 1)[0] + "\n## "  # to the next section
    code = re.search(r"```python\n(.*?)```", section, re.S)
    table = re.search(r"```toml\n(.*?)```", section, re.S)
    assert code is not None and table is not None
    assert section.index(code.group(0)) < section.index("\n## ")  # both in the section
    assert section.index(table.group(0)) < section.index("\n## ")
    entry_points = tomllib.loads(table.group(1))["project"]["entry-points"]["agent_eval.metrics"]
    return code.group(1), entry_points


def _traces(path: Path) -> Path:
    replies = {"short": "Booked: 8pm.", "long": "Your table for two is booked at 8pm.", "none": ""}
    lines = []
    for cid, reply in replies.items():
        messages = [UserMessage(content="Book a table for two at 8pm")]
        if reply:
            messages.append(AssistantMessage(content=reply))
        lines.append(AgentTrace(conversation_id=cid, messages=tuple(messages)).model_dump_json())
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_docs_metric_is_discovered_through_its_entry_point_and_scored(
    tmp_path: Path,
) -> None:
    code, entry_points = _example()
    assert entry_points == {"short_answer": "my_metrics:ShortAnswer"}
    site = tmp_path / "site"
    (site / "my_metrics").mkdir(parents=True)
    (site / "my_metrics" / "__init__.py").write_text(code)
    dist = site / "my_metrics-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: my-metrics\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[agent_eval.metrics]\n" + "".join(f"{k} = {v}\n" for k, v in entry_points.items())
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env |= {"PYTHONPATH": str(site), "AGENT_EVAL_CACHE_PATH": str(tmp_path / "cache.db")}
    cli = Path(sys.executable).with_name("agent-eval")
    out = tmp_path / "out"
    done = subprocess.run(
        [str(cli), "score", str(_traces(tmp_path / "t.jsonl")),
         "--metric", "short_answer,short_answer[max_chars=20]", "--out", str(out)],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {(r.metric, r.conversation_id): r for r in load_results(out)}
    assert {k: (r.status, r.score) for k, r in rows.items()} == {
        ("short_answer@1", "short"): ("ok", 1.0),
        ("short_answer@1", "long"): ("ok", 1.0),
        ("short_answer@1", "none"): ("skipped", None),
        ("short_answer@1[max_chars=20]", "short"): ("ok", 1.0),
        ("short_answer@1[max_chars=20]", "long"): ("ok", 0.0),
        ("short_answer@1[max_chars=20]", "none"): ("skipped", None),
    }
    long = rows[("short_answer@1[max_chars=20]", "long")]
    assert (long.verdict, long.reason) == ("0", "36 characters (at most 20)")
    assert (long.formatter, long.judge_model) == ("none", "none")  # judge-free
    skipped = rows[("short_answer@1", "none")]
    assert skipped.error_type == "no_reply"
    assert skipped.error_message is not None
    assert "the conversation has no assistant reply" in skipped.error_message
