"""The docs pages' code examples: found in the Markdown, and run in a sandbox like a reader's.

Every fenced ```python and ```bash block of every page under ``docs/`` (pages added later
included) is an example. The line right before its fence may be a marker:

- ``<!-- docs-test: skip (needs X) -->``: not run, because it needs something outside the tests
  (a cluster, a real model, a cloud login, another package); the reason is required.
- ``<!-- docs-test: exit N -->``: run, and expected to end with exit code N (a gate that fails).

A page's examples run in order in one sandbox (a later block may read what an earlier one wrote),
whose working directory holds what the examples name: ``fixtures/`` (the repository's),
``traces/`` (three files of ``fixtures/otel``: 15 conversations), ``references.jsonl``,
``labels.jsonl`` and ``labels.csv``, ``expected-calls.jsonl`` (the fixtures' tool references),
``returns.jsonl`` (the worked example of the claim-level page), and ``../shared/data`` when the
public data sets are beside the checkout. The judge endpoint is the fake model server answering with
``fixtures/fake-judge.json`` (``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` point at it).
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
LANGUAGES = {"python": "python", "bash": "bash", "sh": "bash", "shell": "bash"}
_SKIP = re.compile(r"^<!-- docs-test: skip \((needs [^)]+)\) -->$")
_EXIT = re.compile(r"^<!-- docs-test: exit (\d+) -->$")
_MARKER = re.compile(r"^<!-- docs-test:.*-->$")
RETURNS = (
    '{"id": "returns-1", "question": "Can I return the kettle?", "contexts": [{"id": "policy", '
    '"text": "Returns are accepted within 14 calendar days of receipt. The product must be '
    'unused."}], "answer": "You can return it within 14 days, and return shipping is free."}\n'
)


TRACES = (  # 15 conversations: OpenInference, OTel GenAI events, LangChain under OpenInference
    "openinference-openai.otlp.json",
    "openai-v2-events.otlp.jsonl",
    "langchain-openinference.otlp.json",
)


class MarkerError(ValueError):
    """A ``docs-test`` marker that is malformed or not right before a fence."""


@dataclass(frozen=True)
class Example:
    """One fenced example of a docs page.

    Attributes:
        page: The page's path relative to ``docs/``.
        line: The 1-based line of its opening fence.
        language: ``python`` or ``bash``.
        code: The block's text.
        skip: The reason it is not run (``needs ...``), or ``None``.
        exit_code: The exit code it must end with.
    """

    page: str
    line: int
    language: str
    code: str
    skip: str | None = None
    exit_code: int = 0

    @property
    def where(self) -> str:
        """``page:line`` of the opening fence."""
        return (
            f"{self.page}:{self.line}"
            if self.page == "README.md"
            else f"docs/{self.page}:{self.line}"
        )


def pages() -> list[Path]:
    """Every Markdown page under ``docs/``, sorted, then the README."""
    return [*sorted(DOCS.rglob("*.md")), ROOT / "README.md"]


def examples(path: Path) -> list[Example]:
    """The python and bash examples of one page, in order.

    Raises:
        MarkerError: a marker not directly before a fence, or one that is not a known form.
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    page = path.relative_to(DOCS).as_posix() if path.is_relative_to(DOCS) else path.name
    found: list[Example] = []
    fence: tuple[int, str] | None = None
    body: list[str] = []
    for number, line in enumerate(lines, 1):
        if fence is None and line.startswith("```"):
            fence, body = (number, line[3:].strip().split(" ")[0]), []
        elif fence is not None and line.strip() == "```":
            language = LANGUAGES.get(fence[1])
            if language is not None:
                found.append(_example(page, fence[0], language, body, lines))
            fence = None
        elif fence is not None:
            body.append(line)
        elif _MARKER.match(line.strip()) and not lines[number].startswith("```"):
            raise MarkerError(
                f"docs/{page}:{number}: a docs-test marker must be right before a fence"
            )
    return found


def _example(page: str, line: int, language: str, body: list[str], lines: list[str]) -> Example:
    code = "\n".join(body) + "\n"
    marker = lines[line - 2].strip() if line >= 2 else ""
    if not _MARKER.match(marker):
        return Example(page, line, language, code)
    if skip := _SKIP.match(marker):
        return Example(page, line, language, code, skip=skip.group(1))
    if exit_code := _EXIT.match(marker):
        return Example(page, line, language, code, exit_code=int(exit_code.group(1)))
    raise MarkerError(
        f"docs/{page}:{line - 1}: unknown marker {marker!r}; use "
        "<!-- docs-test: skip (needs X) --> or <!-- docs-test: exit N -->"
    )


def make_sandbox(work: Path, shared: Path | None) -> Path:
    """A reader's working directory (see the module docstring); returns its path."""
    checkout = work / "checkout"
    checkout.mkdir(parents=True)
    fixtures = ROOT / "fixtures"
    (checkout / "fixtures").symlink_to(fixtures, target_is_directory=True)
    (checkout / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    (checkout / "traces").mkdir()
    for name in TRACES:
        shutil.copy(fixtures / "otel" / name, checkout / "traces" / name)
    for name in ("references.jsonl", "labels.jsonl"):
        shutil.copy(fixtures / name, checkout / name)
    shutil.copy(fixtures / "tool-references.jsonl", checkout / "expected-calls.jsonl")
    rows = [json.loads(line) for line in (fixtures / "labels.jsonl").read_text().splitlines()]
    with (checkout / "labels.csv").open("w", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=["conversation_id", "label"])
        writer.writeheader()
        writer.writerows(
            {"conversation_id": r["conversation_id"], "label": r["label"]} for r in rows
        )
    (checkout / "returns.jsonl").write_text(RETURNS)
    if shared is not None:
        (work / "shared").symlink_to(shared, target_is_directory=True)
    return checkout


def environment(base_url: str) -> dict[str, str]:
    """The examples' environment: this interpreter's tools first, the fake judge configured."""
    env = {k: v for k, v in os.environ.items() if k not in ("AGENT_EVAL_CONFIG", "COLUMNS")}
    bin_dir = str(Path(sys.executable).parent)
    return env | {
        "PATH": bin_dir + os.pathsep + env.get("PATH", ""),
        "OPENAI_BASE_URL": base_url,
        "OPENAI_API_KEY": "sk-docs-example",
        "VIRTUAL_ENV": str(Path(sys.executable).parents[1]),
        "PYTHONUNBUFFERED": "1",
    }


def run(example: Example, cwd: Path, env: dict[str, str], timeout: float = 300) -> str:
    """Run one example in ``cwd``; returns its output.

    Raises:
        AssertionError: it ended with another exit code than the one expected, naming the
            example and showing the end of its output.
    """
    if example.language == "python":
        script = cwd / f"docs_example_{example.line}.py"
        script.write_text(example.code, encoding="utf-8")
        command = [sys.executable, script.name]
    else:  # background jobs an example starts (a server) end with it
        command = [
            "bash",
            "-e",
            "-c",
            "trap 'kill $(jobs -p) 2>/dev/null || :' EXIT\n" + example.code,
        ]
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    output = done.stdout + done.stderr
    assert done.returncode == example.exit_code, (
        f"{example.where} ({example.language}) exited {done.returncode}, "
        f"expected {example.exit_code}:\n{example.code}\n--- output ---\n{output[-4000:]}"
    )
    return output
