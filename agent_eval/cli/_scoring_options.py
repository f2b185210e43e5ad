"""The option set every scoring command shares (``score``, ``compare``, ``stability``).

One definition per option: the same flag name, the same help and the same ``[score]`` config
key (the parameter name, see :class:`~agent_eval.config.ScoreConfig`) in every command that
scores. A command declares a parameter ``name: NameOpt = default`` for each option it takes and
passes its ``locals()`` to :func:`config_overrides`, which turns them into config overrides
(flags win over ``agent-eval.toml``; an option left unset keeps the file's value).

To add an option to all scoring commands: define its ``Annotated`` type here, add its
parameter name to :data:`SCORING_FLAGS` (or handle it in :func:`config_overrides`), add the
field to ``ScoreConfig``, and add the parameter to each command.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

__all__ = [
    "SCORING_FLAGS",
    "ApiKeyEnvOpt",
    "BaseUrlOpt",
    "CachePathOpt",
    "ConcurrencyOpt",
    "ConfigOpt",
    "DryRunOpt",
    "FormatOpt",
    "FormatterOpt",
    "FormatterPathOpt",
    "GateOpt",
    "JsonOpt",
    "JudgeOpt",
    "MaxContextTokensOpt",
    "MaxCostOpt",
    "MaxJudgeTokensOpt",
    "MaxRetriesOpt",
    "MetricOpt",
    "ModeOpt",
    "NoCacheOpt",
    "OutOpt",
    "PathsArg",
    "ReferencesOpt",
    "RefreshCacheOpt",
    "RpmOpt",
    "TemperatureOpt",
    "TimeoutOpt",
    "TpmOpt",
    "WithReferenceOpt",
    "config_overrides",
]

PathsArg = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="PATH...", help="Inputs: files, directories, globs.", show_default=False
    ),
]
MetricOpt = Annotated[
    str | None,
    typer.Option(
        "--metric",
        metavar="SPEC",
        help=(
            "Metric NAME[@V][params] (default goal_accuracy); a bare NAME is the latest "
            "version, NAME@1 the original prompts."
        ),
    ),
]
JudgeOpt = Annotated[
    str | None,
    typer.Option(
        "--judge",
        metavar="MODEL|KIND[:TARGET]",
        help="The judge: a MODEL for the openai judge (default), or KIND[:TARGET] of any "
        "registered judge, e.g. langchain:PACKAGE.MODULE:FACTORY.",
    ),
]
BaseUrlOpt = Annotated[
    str | None, typer.Option("--base-url", metavar="URL", help="OpenAI-compatible endpoint URL.")
]
ApiKeyEnvOpt = Annotated[
    str | None,
    typer.Option(
        "--api-key-env",
        metavar="VAR",
        help="Env var holding the key (default OPENAI_API_KEY). Naming an unset one is an "
        "error, unless --base-url is on this machine (localhost), where no key is needed.",
    ),
]
ModeOpt = Annotated[
    str | None,
    typer.Option("--mode", metavar="MODE", help="Structured output: tools | json_schema | json."),
]
ConcurrencyOpt = Annotated[
    int | None,
    typer.Option("--concurrency", metavar="N", help="Conversations at once (default 16)."),
]
TimeoutOpt = Annotated[
    float | None,
    typer.Option("--timeout", metavar="SECONDS", help="Per-request timeout, seconds (default 60)."),
]
MaxRetriesOpt = Annotated[
    int | None,
    typer.Option("--max-retries", metavar="N", help="Re-asks after an invalid reply (default 2)."),
]
MaxContextTokensOpt = Annotated[
    int | None,
    typer.Option(
        "--max-context-tokens", metavar="TOKENS", help="Skip longer prompts (default 128000)."
    ),
]
WithReferenceOpt = Annotated[
    bool | None,
    typer.Option("--with-reference/--without-reference", help="Compare against references."),
]
ReferencesOpt = Annotated[
    Path | None,
    typer.Option("--references", metavar="FILE", help="JSONL/CSV of {conversation_id, reference}."),
]
TemperatureOpt = Annotated[
    float | None, typer.Option("--temperature", metavar="T", help="Judge temperature (default 0).")
]
FormatterOpt = Annotated[
    str | None,
    typer.Option(
        "--formatter",
        metavar="NAME@V",
        help=(
            "Formatter NAME@V[params] (default transcript@2, hardened; ragas-pretty@1 for "
            "Ragas parity)."
        ),
        show_default=False,
    ),
]
FormatterPathOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--formatter-path",
        metavar="PATH",
        help="Load formatters from a directory, .py file or module path (repeatable).",
    ),
]
OutOpt = Annotated[
    Path | None,
    typer.Option("--out", metavar="DIR", help="Output directory (default runs/RUN_ID)."),
]
ConfigOpt = Annotated[
    Path | None,
    typer.Option("--config", metavar="FILE", help="TOML config (default ./agent-eval.toml)."),
]
DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="Plan only; call no judge.")]
FormatOpt = Annotated[
    str | None, typer.Option("--format", metavar="NAME", help="Input container, or auto.")
]
NoCacheOpt = Annotated[
    bool, typer.Option("--no-cache", help="Neither read nor write the judge-call cache.")
]
RefreshCacheOpt = Annotated[
    bool, typer.Option("--refresh-cache", help="Call the judge again; overwrite the cache.")
]
CachePathOpt = Annotated[
    Path | None,
    typer.Option(
        "--cache-path",
        metavar="FILE",
        help="Judge-call cache file (default $AGENT_EVAL_CACHE_PATH, else the per-user cache).",
    ),
]
MaxJudgeTokensOpt = Annotated[
    int | None,
    typer.Option(
        "--max-judge-tokens",
        metavar="TOKENS",
        help="Run budget: most judge tokens; then the rest is skipped (budget).",
    ),
]
MaxCostOpt = Annotated[
    float | None,
    typer.Option(
        "--max-cost",
        metavar="USD",
        help="Run budget: most USD (needs the judge's price); then skip (budget).",
    ),
]
RpmOpt = Annotated[
    float | None, typer.Option("--rpm", metavar="N", help="Most judge requests per minute.")
]
TpmOpt = Annotated[
    float | None, typer.Option("--tpm", metavar="N", help="Most judge tokens per minute.")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the summary as JSON on stdout.")]
GateOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--gate",
        metavar="GATE",
        help="[NAME=]STATISTIC>=THRESHOLD/ITEMS (repeatable); also the [gates.<name>] "
        "tables of agent-eval.toml. mean_score counts the units scoring 1 (0.75 is no "
        "success).",
    ),
]

SCORING_FLAGS = (
    "metric", "judge", "base_url", "api_key_env", "mode", "concurrency", "timeout",
    "max_retries", "max_context_tokens", "with_reference", "references", "temperature", "out",
    "cache_path", "rpm", "tpm", "max_judge_tokens", "max_cost",
)  # fmt: skip
"""Parameters passed as they are to the ``[score]`` settings of the same name."""


def config_overrides(params: Mapping[str, Any]) -> dict[str, Any]:
    """``[score]`` overrides from a scoring command's parameters (its ``locals()``).

    Reads :data:`SCORING_FLAGS` and, when present, ``paths``, ``formatter_path``, ``dry_run``,
    ``format``/``input_format``, ``no_cache`` and ``refresh_cache``; a flag left unset is
    ``None`` (the config file's value stands).
    """
    overrides: dict[str, Any] = {name: params[name] for name in SCORING_FLAGS if name in params}
    if "paths" in params:
        overrides["paths"] = tuple(params["paths"]) if params["paths"] else None
    if "formatter_path" in params:
        paths = params["formatter_path"]
        overrides["formatter_path"] = tuple(paths) if paths else None
    if "dry_run" in params:
        overrides["dry_run"] = params["dry_run"] or None
    fmt = params.get("input_format", params.get("format"))
    overrides["format"] = fmt
    no_cache, refresh = params.get("no_cache", False), params.get("refresh_cache", False)
    overrides["cache"] = "off" if no_cache else "refresh" if refresh else None
    return overrides
