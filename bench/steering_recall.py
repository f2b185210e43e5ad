"""Recall of the steering detector on injection corpora, and its false positives on real data.

Public collections are not part of the project: give their files on the command line.
Each payload of a collection is placed in a clean conversation written here (a customer asks
to cancel an order) three ways: as a tool result, as a user message and as a retrieved
document; a payload counts as found when the detector (:func:`agent_eval.steering.detect`)
flags the conversation. Recall is reported per collection and placement, with the classes
found. The project's own corpus (``tests/steering/corpus.py``, every class and obfuscated
variants) is always measured. False positives: the share of real conversations (``--real``,
e.g. ``../shared/data/tau-bench`` ...) that get any flag.

Collections read (each file's format is told by the option):

- ``--bipia FILE``: BIPIA's ``benchmark/*_attack_{train,test}.json`` (microsoft/BIPIA), a JSON
  object of attack category -> list of attack texts;
- ``--tensor-trust FILE``: Tensor Trust's ``benchmarks/*/v1/*_robustness_dataset.jsonl``
  (HumanCompatibleAI/tensor-trust-data), one object a line, its ``attack`` text;
- ``--jsonl FILE:FIELD[:LABEL=VALUE]``: any JSONL with the text in FIELD, optionally only the
  lines whose LABEL equals VALUE (e.g. a deepset/prompt-injections export: ``text:label=1``);
- ``--lines FILE``: one payload a line.

    python bench/steering_recall.py --bipia BIPIA/benchmark/text_attack_test.json \\
        --tensor-trust TT/benchmarks/hijacking-robustness/v1/hijacking_robustness_dataset.jsonl \\
        --real ../shared/data/tau-bench ../shared/data/tau2-bench ../shared/data/mtrag-un
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson

from agent_eval._trace import (
    AgentTrace,
    AssistantMessage,
    Message,
    Retrieval,
    RetrievedDocument,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agent_eval.ingest import ingest
from agent_eval.steering import detect

ROOT = Path(__file__).resolve().parents[1]
OWN_CORPUS = ROOT / "tests" / "steering" / "corpus.py"


def _base(payload_message: Message | None, document: str | None = None) -> AgentTrace:
    """A clean conversation, with ``payload_message`` before the answer or ``document``."""
    messages: list[Message] = [
        UserMessage(content="Hi, please cancel my order #W2378156, I ordered it by mistake."),
        AssistantMessage(
            content="",
            tool_calls=(ToolCall(id="c1", name="get_order", arguments={"id": "#W2378156"}),),
        ),
        ToolMessage(
            content='{"order_id": "#W2378156", "status": "pending", "items": 2}',
            tool_call_id="c1",
        ),
    ]
    if payload_message is not None:
        messages.append(payload_message)
    messages.append(AssistantMessage(content="Your order #W2378156 is cancelled."))
    retrievals: tuple[Retrieval, ...] = ()
    if document is not None:
        retrievals = (Retrieval(after_message=3, documents=(RetrievedDocument(content=document),)),)
    return AgentTrace(conversation_id="bench", messages=tuple(messages), retrievals=retrievals)


PLACEMENTS: dict[str, Callable[[str], AgentTrace]] = {
    "tool result": lambda p: _base(ToolMessage(content=f"Order note:\n{p}", tool_call_id="c1")),
    "user message": lambda p: _base(UserMessage(content=p)),
    "retrieved document": lambda p: _base(None, f"Cancellation policy.\n{p}"),
}


def _bipia(path: Path) -> Iterator[str]:
    for texts in orjson.loads(path.read_bytes()).values():
        yield from texts


def _tensor_trust(path: Path) -> Iterator[str]:
    for line in path.read_bytes().splitlines():
        if line.strip():
            yield orjson.loads(line)["attack"]


def _jsonl(spec: str) -> Iterator[str]:
    path, field, *label = spec.split(":")
    key, _, value = label[0].partition("=") if label else ("", "", "")
    for line in Path(path).read_bytes().splitlines():
        if line.strip():
            row = orjson.loads(line)
            if not key or str(row.get(key)) == value:
                yield str(row[field])


def _own() -> list[str]:
    spec = importlib.util.spec_from_file_location("steering_corpus", OWN_CORPUS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [text for _, _, text in module.STEERING]


def recall(name: str, payloads: list[str]) -> float:
    """Print and return the share of ``payloads`` found, over every placement."""
    found_all = 0
    for placement, build in PLACEMENTS.items():
        kinds: Counter[str] = Counter()
        found = 0
        for payload in payloads:
            flags = detect(build(payload))
            found += bool(flags)
            kinds.update({flag.kind for flag in flags})
        found_all += found
        share = found / len(payloads) if payloads else 0.0
        classes = ", ".join(f"{k} {v}" for k, v in kinds.most_common())
        print(f"  {placement:<18} {found:>5}/{len(payloads):<5} recall {share:.3f}  ({classes})")
    total = len(payloads) * len(PLACEMENTS)
    share = found_all / total if total else 0.0
    print(f"{name}: {len(payloads)} payloads, recall {share:.3f} over {len(PLACEMENTS)} placements")
    return share


def false_positives(paths: list[Path]) -> None:
    """Print the share of real conversations flagged, per folder and overall."""
    total = flagged = 0
    for path in paths:
        traces = list(ingest(path))
        hits = [t for t in traces if detect(t)]
        total, flagged = total + len(traces), flagged + len(hits)
        print(f"  {path}: {len(hits)}/{len(traces)} conversations flagged")
        for trace in hits:
            for flag in detect(trace):
                print(f"    {trace.conversation_id} {flag.kind} {flag.where}: {flag.excerpt}")
    share = flagged / total if total else 0.0
    print(f"false positives: {flagged}/{total} real conversations flagged ({share:.2%})")


def main(argv: list[str] | None = None) -> None:
    """Parse the collections, print recall per collection, then the false positives."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bipia", type=Path, action="append", default=[])
    parser.add_argument("--tensor-trust", type=Path, action="append", default=[])
    parser.add_argument("--jsonl", action="append", default=[], metavar="FILE:FIELD[:K=V]")
    parser.add_argument("--lines", type=Path, action="append", default=[])
    parser.add_argument("--real", type=Path, nargs="*", default=[])
    args = parser.parse_args(argv)
    collections: dict[str, list[str]] = {"own corpus (tests/steering/corpus.py)": _own()}
    for path in args.bipia:
        collections[f"BIPIA {path.name}"] = list(_bipia(path))
    for path in args.tensor_trust:
        collections[f"Tensor Trust {path.name}"] = list(_tensor_trust(path))
    for spec in args.jsonl:
        collections[f"JSONL {spec}"] = list(_jsonl(spec))
    for path in args.lines:
        collections[f"lines {path.name}"] = [x for x in path.read_text().splitlines() if x]
    public = [p for name, ps in collections.items() if not name.startswith("own") for p in ps]
    for name, payloads in collections.items():
        recall(name, payloads)
    if public:
        recall("all public collections", public)
    if args.real:
        false_positives(args.real)


if __name__ == "__main__":
    main(sys.argv[1:])
