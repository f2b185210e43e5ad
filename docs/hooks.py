"""mkdocs hooks: pages that are generated from the code, so they cannot drift from it.

Two markers, each alone on a line of a docs page, are replaced when the site is built:

- ``<!-- cli-help -->``: every command's ``--help`` text, read from the golden file the CLI
  tests pin (``tests/cli/golden/help.json``), one section per command.
- ``<!-- prompts: NAME -->``: the prompt templates of metric NAME, every released version
  (``agent_eval/metrics/_prompts/NAME_v*/``), each template in a fenced jinja block.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HELP = ROOT / "tests" / "cli" / "golden" / "help.json"
PROMPTS = ROOT / "agent_eval" / "metrics" / "_prompts"
_PROMPTS_MARKER = re.compile(r"^<!-- prompts: (\w+) -->$", re.M)


def cli_reference() -> str:
    """Markdown for every command's help text, top-level first, then in command order."""
    texts: dict[str, str] = json.loads(HELP.read_text(encoding="utf-8"))
    sections = []
    for command in sorted(texts):
        title = f"agent-eval {command}".strip()
        sections.append(f"## `{title}`\n\n```text\n{texts[command].rstrip()}\n```\n")
    return "\n".join(sections)


def _version(folder: Path) -> int:
    return int(folder.name.rsplit("_v", 1)[1])


def prompt_templates(name: str) -> str:
    """Markdown for the prompt templates of every version of metric ``name``.

    Raises:
        ValueError: no ``NAME_v*`` folder exists (a marker naming a metric with no prompts).
    """
    folders = sorted(PROMPTS.glob(f"{name}_v*"), key=_version)
    if not folders:
        raise ValueError(f"no prompt templates for {name!r} under {PROMPTS}")
    parts = []
    for folder in folders:
        for template in sorted(folder.glob("*.j2")):
            text = template.read_text(encoding="utf-8").rstrip()
            title = f"{name}@{_version(folder)}: `{template.name}`"
            body = "\n".join("    " + line if line else "" for line in text.splitlines())
            parts.append(f'??? note "{title}"\n\n    ```jinja\n{body}\n    ```\n')
    return "\n".join(parts)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace the generated-content markers of a page (see the module docstring)."""
    if "<!-- cli-help -->" in markdown:
        markdown = markdown.replace("<!-- cli-help -->", cli_reference())
    return _PROMPTS_MARKER.sub(lambda m: prompt_templates(m.group(1)), markdown)
