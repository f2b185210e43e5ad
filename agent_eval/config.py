"""Scoring configuration: :class:`ScoreConfig`, from ``agent-eval.toml`` and command-line flags.

Every ``agent-eval score`` flag can be set in the ``[score]`` table of a TOML file (``--config
FILE``, else ``./agent-eval.toml`` when present); flags given on the command line override it.
Keys are the flag names with ``-`` or ``_``::

    [score]
    metric = "goal_accuracy"
    with-reference = false
    formatter = "transcript@2"                # the hardened default; "ragas-pretty@1": Ragas parity
    formatter-path = ["my_formatters/"]      # directories, .py files or modules to load
    judge = "gpt-4o-mini"
    base-url = "http://localhost:11434/v1"   # any OpenAI-compatible server
    api-key-env = "OPENAI_API_KEY"           # the NAME of the variable; never the key itself
    mode = "tools"                           # tools | json_schema | json
    concurrency = 16
    timeout = 60
    max-retries = 2
    max-context-tokens = 128000
    out = "runs/latest"
    cache = "use"                            # use | refresh | off (--refresh-cache, --no-cache)
    rpm = 500                                # client-side requests per minute (--rpm)
    tpm = 200000                             # client-side tokens per minute (--tpm)
    max-judge-tokens = 2000000               # run budget: judge tokens (--max-judge-tokens)
    max-cost = 5.00                          # run budget: USD (--max-cost; needs a price)

    [judge]                                  # optional: a registered judge other than openai
    kind = "langchain"                       # a name of the agent_eval.judges entry points
    factory = "my_pkg.judges:make_chat_model"  # langchain: returns a chat model
    model = "my-model"                       # passed to the factory as model=
    params = { temperature = 0 }             # more keyword arguments for the factory

    [prices."my-local-model"]                # USD per 1M tokens; see agent_eval._costs
    input = 0.0
    output = 0.0

    [metrics.policy]                         # a metric of one's own, from a criteria file
    criteria = "criteria/policy.toml"        # relative to this file; then metric = "policy"

A ``[metrics.NAME]`` table makes ``NAME`` stand for ``criteria:PATH`` wherever a metric is named
(``[score] metric``, ``--metric``); see ``docs/criteria.md``.

An API key is never read from the file: ``api-key`` there is an error that says to use
``api-key-env``.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    AnyHttpUrl,
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from agent_eval import _redaction as redaction
from agent_eval.errors import ConfigError
from agent_eval.formatting._identity import DEFAULT_FORMATTER

__all__ = [
    "DEFAULT_CONFIG_NAME",
    "DEFAULT_FORMATTER",
    "RAGAS_PARITY",
    "JudgeTable",
    "ScoreConfig",
    "load_config",
    "read_toml",
    "redact_url",
]

DEFAULT_CONFIG_NAME = "agent-eval.toml"

"""The formatter used wherever none is chosen (``score``, ``stability``, ``serve``, the pytest
plugin, :func:`agent_eval.score`): hardened, so no message content can forge a turn or end the
conversation early (``docs/hardened-judging.md``)."""

RAGAS_PARITY = ("goal_accuracy@1", "ragas-pretty@1")
"""The Ragas-parity configuration ``(metric, formatter)``: Ragas' rendering byte for byte and the
prompts that follow Ragas' published instructions, for results comparable with Ragas'. Not
hardened: content can forge turns in it."""


class JudgeTable(BaseModel):
    """The ``[judge]`` table of ``agent-eval.toml``: which registered judge, and its arguments.

    Attributes:
        kind: A name in the ``agent_eval.judges`` entry-point group (``openai``,
            ``openai-client``, ``instructor``, ``langchain``, ``llama-cpp`` or a third-party
            judge).
        factory: The judge's target: ``langchain``: ``package.module:factory`` returning a
            chat model; ``openai-client``: ``package.module:factory`` returning an
            ``openai.AsyncOpenAI``; ``instructor``: ``provider/model``; ``llama-cpp``: the
            GGUF path; ``openai``: the model.
        model: The model name (``[score] judge`` / ``--judge`` override it).
        params: Keyword arguments for the factory or constructor.

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str = "openai"
    factory: str | None = None
    model: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)


class ScoreConfig(BaseModel):
    """Everything ``agent-eval score`` needs (defaults shown are the CLI's).

    Attributes:
        paths: Inputs: files, directories or globs anything ``ingest`` reads.
        format: Input container, ``auto`` to detect per file.
        metric: Metric specs, comma-separated: registered names (``goal_accuracy``),
            ``criteria:PATH`` (a criteria file), or a ``[metrics.NAME]`` table's name (replaced
            by that table's ``criteria:PATH`` when the file is read).
        with_reference: Compare against references (the trace's, or ``references``').
        references: JSONL or CSV of ``{conversation_id, reference}``.
        tool_references: JSONL or CSV of ``{conversation_id, tool_calls}``: the expected tool
            calls (:mod:`agent_eval.ingest._reference_calls`), for ``tool_call_accuracy`` and
            ``trajectory_match``.
        turn_labels: JSON Lines of per-turn labels (relevance, gold passages, references),
            :mod:`agent_eval.ingest._rag_labels`.
        formatter: ``name@version[params]`` of the formatter.
        formatter_path: Directories, ``.py`` files or dotted modules to load formatters from
            (:func:`agent_eval.formatting.load_formatters`); one string is one location.
        judge: The judge: a model name for the ``openai`` judge, or ``KIND[:TARGET]`` naming
            a registered judge (``langchain:package.module:factory``; see
            :func:`agent_eval.cli._judge_setup.judge_settings`); ``None`` means no judge
            configured (unless a key is set, then :data:`DEFAULT_JUDGE`).
        judge_table: The ``[judge]`` table (kind, factory, model, params).
        base_url: OpenAI-compatible endpoint; ``OPENAI_BASE_URL`` when unset.
        api_key_env: Name of the environment variable that holds the key.
        azure_endpoint / azure_api_version: Use Azure OpenAI.
        mode: Structured-output mode: ``tools``, ``json_schema`` or ``json``.
        concurrency: Conversations scored at once.
        timeout: Per-request timeout, seconds.
        max_retries: Re-asks after an invalid judge reply.
        transport_retries: Retries of a failed HTTP request (429/5xx/timeouts/connection).
        max_context_tokens: Skip conversations whose prompt exceeds this (o200k estimate).
        temperature / seed: Judge sampling parameters.
        out: Output directory for ``results.jsonl`` and ``results.db``.
        dry_run: Plan only; call no judge.
        fail_under: Exit 1 when the mean score is below this (0-1).
        cache: Judge-call cache mode: ``use``, ``refresh`` or ``off``.
        cache_path: The cache file; the per-user cache
            (:func:`~agent_eval.run._judge_stack.default_cache_path`) when unset.
        rpm / tpm: Client-side requests / tokens per minute; ``None`` for no limit.
        max_judge_tokens / max_cost: The run's budget in judge tokens (prompt + completion) and
            USD, checked before every judge call (:mod:`agent_eval.run._budget`); ``None``: none.
        resume: Continue this run (a run directory or run id): finished conversations are not
            scored again.
        retry_errors: Continue this run, scoring again only its ``error`` conversations.
        redecompose: Claim-level metrics decompose answers again instead of reusing the
            statements pinned in ``OUT/decompositions.db`` (and overwrite them).
        prices: The ``[prices]`` table: ``{model: {"input": usd, "output": usd}}`` per 1M
            tokens.
        config_file: The TOML file these settings were read from (set by :func:`load_config`;
            recorded in the run's reproducibility record).
        engine: Where the conversations are scored: ``local`` (this process), ``ray`` (the
            cluster ``$RAY_ADDRESS`` names, else a local one) or ``ray:ADDRESS``
            (:mod:`agent_eval.run.cluster`; needs the ``ray`` extra).
        workers: Scoring actors of a Ray run (one CPU each); ``None``: one per CPU of the
            cluster. Only with a ``ray`` engine.

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    paths: tuple[str, ...] = ()
    format: str = "auto"
    metric: str = "goal_accuracy"
    with_reference: bool = False
    references: Path | None = None
    tool_references: Path | None = None
    turn_labels: Path | None = None
    formatter: str = DEFAULT_FORMATTER
    formatter_path: tuple[str, ...] = ()
    judge: str | None = None
    judge_table: JudgeTable = Field(default_factory=JudgeTable)
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    azure_endpoint: str | None = None
    azure_api_version: str | None = None
    mode: Literal["tools", "json_schema", "json"] = "tools"
    concurrency: int = Field(default=16, ge=1)
    timeout: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=2, ge=0)
    transport_retries: int = Field(default=4, ge=0)
    max_context_tokens: int | None = Field(default=128_000, ge=1)
    temperature: float | None = 0.0
    seed: int | None = None
    out: Path | None = None
    dry_run: bool = False
    fail_under: float | None = Field(default=None, ge=0, le=1)
    cache: Literal["use", "refresh", "off"] = "use"
    cache_path: Path | None = None
    rpm: float | None = Field(default=None, gt=0)
    tpm: float | None = Field(default=None, gt=0)
    max_judge_tokens: int | None = Field(default=None, ge=1)
    max_cost: float | None = Field(default=None, gt=0)
    resume: str | None = None
    retry_errors: str | None = None
    redecompose: bool = False
    prices: dict[str, dict[str, float]] = Field(default_factory=dict)
    config_file: Path | None = None
    engine: str = "local"
    workers: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _workers_on_ray(self) -> ScoreConfig:
        if self.workers is not None and self.engine == "local":
            raise ValueError(
                "workers sizes the actor pool of a Ray run: give it with --engine ray "
                "(one process scores with --concurrency)"
            )
        return self

    @field_validator("engine")
    @classmethod
    def _engine(cls, value: str) -> str:
        if value in {"local", "ray"} or (value.startswith("ray:") and value[4:]):
            return value
        raise ValueError(
            f"unknown engine {value!r}; give local (one process, the default), ray, or "
            "ray:ADDRESS (a Ray cluster, e.g. ray:ray://head:10001)"
        )

    @field_validator("formatter_path", mode="before")
    @classmethod
    def _one_or_more(cls, value: object) -> object:
        return (str(value),) if isinstance(value, str | Path) else value

    @field_validator("base_url", "azure_endpoint")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                _HTTP_URL.validate_python(value)
            except ValidationError:
                raise ValueError(
                    f"{value!r} is not an http(s) URL; give the endpoint's base URL, "
                    "e.g. http://localhost:11434/v1"
                ) from None
        return value


_HTTP_URL: TypeAdapter[AnyHttpUrl] = TypeAdapter(AnyHttpUrl)


def redact_url(url: str | None) -> str | None:
    """``url`` without the credentials it may carry (``https://***@host/v1?api-key=***``).

    See :func:`agent_eval._redaction.redact_url`.
    """
    return None if url is None else redaction.redact_url(url)


DEFAULT_JUDGE = "gpt-4o-mini"
"""The judge model used when an OpenAI key is set and no ``--judge`` is given."""


def read_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML file.

    Raises:
        ConfigError: the file cannot be read or is not valid TOML (names the file and line).

    """
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc


def _score_table(path: Path) -> dict[str, Any]:
    document = read_toml(path)
    table = document.get("score", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [score] must be a table of settings")
    settings = {key.replace("-", "_"): value for key, value in table.items()}
    if "judge_table" in settings:
        raise ConfigError(f"{path}: [score] judge-table is not a setting; write a [judge] table")
    if "prices" in document:
        settings["prices"] = document["prices"]
    if "metrics" in document:
        settings["metric_tables"] = _metric_tables(path, document["metrics"])
    if "judge" in document:
        if not isinstance(document["judge"], dict):
            raise ConfigError(f"{path}: [judge] must be a table (kind, factory, model, params)")
        settings["judge_table"] = document["judge"]
    if "api_key" in settings:
        raise ConfigError(
            f"{path}: [score] api-key: keys are never read from a file; put the key in an "
            'environment variable and name it with api-key-env = "MY_KEY_VAR"'
        )
    return settings


def _metric_tables(path: Path, tables: object) -> dict[str, str]:
    """``{NAME: "criteria:PATH"}`` of the ``[metrics.NAME]`` tables, PATH resolved from ``path``.

    Raises:
        ConfigError: a table that is not ``criteria = "PATH"`` (names the table and the fix).

    """
    if not isinstance(tables, dict):
        raise ConfigError(f'{path}: [metrics] must hold tables: [metrics.NAME] criteria = "PATH"')
    found: dict[str, str] = {}
    for name, table in tables.items():
        criteria = table.get("criteria") if isinstance(table, dict) else None
        if not isinstance(criteria, str) or set(table) != {"criteria"}:
            raise ConfigError(
                f"{path}: [metrics.{name}] must be one key, the criteria file: "
                f'criteria = "criteria/{name}.toml" (a path relative to {path.name})'
            )
        found[name] = f"criteria:{(path.parent / criteria).as_posix()}"
    return found


def _resolve_metric_names(settings: dict[str, Any]) -> None:
    """Replace each metric name that has a ``[metrics.NAME]`` table by its ``criteria:PATH``."""
    tables = settings.pop("metric_tables", None)
    if not tables or not isinstance(settings.get("metric"), str):
        return
    from agent_eval.metrics._spec import split_metrics

    specs = split_metrics(settings["metric"])
    settings["metric"] = ",".join(tables.get(spec, spec) for spec in specs)


def load_config(path: Path | None = None, **overrides: Any) -> ScoreConfig:
    """The configuration from ``path`` (or ``./agent-eval.toml``), overridden by ``overrides``.

    Args:
        path: The TOML file; when ``None``, ``./agent-eval.toml`` is read if it exists.
        **overrides: Settings given on the command line; ``None`` values are ignored.

    Raises:
        ConfigError: the file is unreadable or a setting is unknown or invalid (names it).

    """
    if path is None and Path(DEFAULT_CONFIG_NAME).is_file():
        path = Path(DEFAULT_CONFIG_NAME)
    settings = _score_table(path) if path is not None else {}
    if "config_file" in settings:
        raise ConfigError(f"{path}: [score] config-file is not a setting")
    settings.update({k: v for k, v in overrides.items() if v is not None})
    _resolve_metric_names(settings)
    settings["config_file"] = path
    try:
        return ScoreConfig.model_validate(settings)
    except ValidationError as exc:
        where = f"{path} [score] or the command line" if path else "the command line"
        problems = "; ".join(_problem(e) for e in exc.errors())
        raise ConfigError(f"invalid setting in {where}: {problems}") from None


def _problem(error: Mapping[str, Any]) -> str:
    """One validation error as ``KEY: message (got VALUE)``, for people.

    Pydantic's ``Value error, `` prefix is dropped; a check across settings (no key) gives its
    message alone, not the whole table it saw; the value is not repeated when the message
    already quotes it.
    """
    message = str(error["msg"]).removeprefix("Value error, ")
    key = ".".join(str(part) for part in error["loc"])
    if not key:
        return message
    got = repr(error.get("input"))
    return f"{key}: {message}" if got in message else f"{key}: {message} (got {got})"
