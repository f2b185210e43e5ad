"""The exception tree of agent-eval.

Every error the library raises on purpose derives from :class:`AgentEvalError`. Messages name
the thing that is wrong (file and line, trace id as 32 hex, span id as 16 hex, the bad value),
the valid choices where there are some, and how to fix it.

Hierarchy::

    AgentEvalError
    ├── InputError                 bad user input; the run can often go on without it
    │   ├── DecodeError            a file cannot be decoded as the container it claims to be
    │   ├── UnknownFormatError     no container recognises a file, or a forced one is unknown
    │   ├── NoConversationError    the inputs were read but hold no conversation
    │   └── InvalidSpanError       a span or log record breaks the OTLP data model
    ├── ConfigError                a usage or configuration mistake (CLI exit code 2)
    │   ├── MissingDependencyError an optional extra is not installed; names the pip line
    │   ├── UnknownPluginError     a formatter, metric, judge, convention or container name
    │   │                          that is not registered; lists what is
    │   ├── JudgeNotConfiguredError  scoring was asked for with no judge endpoint
    │   └── CriteriaError          a criteria file (``--metric criteria:PATH``) is unusable;
    │                              names the file, the key and the fix
    ├── FormatterLockError         a released formatter renders differently from its lock entry
    ├── JudgeError                 one judge call failed (recorded as a result, not raised
    │   │                          out of a run)
    │   ├── JudgeOutputError       the reply never validated against the verdict schema
    │   ├── JudgeTransportError    HTTP/timeout/connection failure after all retries
    │   ├── JudgeContextLengthError  the endpoint refused the prompt as longer than the
    │   │                          model's context window (not retried)
    │   └── BudgetExhausted        the call was not sent: it would cross the run's budget
    │                              (the unit is skipped with reason ``budget``)
    └── StoreError                 the results store or cache cannot be used
        └── OutputError            an output cannot be written (disk full, permissions, or
                                   another run holds the output directory's lock)

Judge failures inside a run are turned into result rows with status ``error``; they only
propagate as exceptions from the low-level judge API.
"""

from __future__ import annotations

import difflib

__all__ = [
    "AgentEvalError",
    "BudgetExhausted",
    "ConfigError",
    "CriteriaError",
    "DecodeError",
    "FormatterLockError",
    "InputError",
    "InvalidSpanError",
    "JudgeContextLengthError",
    "JudgeError",
    "JudgeNotConfiguredError",
    "JudgeOutputError",
    "JudgeTransportError",
    "MissingDependencyError",
    "NoConversationError",
    "OutputError",
    "StoreError",
    "UnknownFormatError",
    "UnknownPluginError",
]


class AgentEvalError(Exception):
    """Base class of every error agent-eval raises on purpose."""


class InputError(AgentEvalError):
    """Input that cannot be used as it is.

    Args:
        message: What is wrong and how to fix it.
        path: The file the input came from, when known.
        line: 1-based line number in ``path`` (JSON Lines inputs), when known.
        trace_id: 32 lowercase hex characters, when known.
        span_id: 16 lowercase hex characters, when known.

    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        trace_id: str | None = None,
        span_id: str | None = None,
    ) -> None:
        self.reason = message
        self.path = path
        self.line = line
        self.trace_id = trace_id
        self.span_id = span_id
        super().__init__(self._render())

    def _render(self) -> str:
        where = []
        if self.path is not None:
            where.append(self.path if self.line is None else f"{self.path}:{self.line}")
        if self.trace_id is not None:
            where.append(f"trace {self.trace_id}")
        if self.span_id is not None:
            where.append(f"span {self.span_id}")
        return f"{', '.join(where)}: {self.reason}" if where else self.reason


class DecodeError(InputError):
    """A file is not valid for the container it was read as (truncated JSON, bad protobuf...)."""


class UnknownFormatError(InputError):
    """No container recognises the file, or the container name given is not registered."""


class NoConversationError(InputError):
    """The inputs were read, but every span or record was ignored: there is nothing to score."""


class InvalidSpanError(InputError):
    """A span or log record breaks the OTLP data model (bad id, wrong attribute type...)."""


class ConfigError(AgentEvalError):
    """A usage or configuration mistake; the CLI exits with code 2."""


class MissingDependencyError(ConfigError):
    """An optional integration was used without its extra installed.

    Args:
        feature: What the user tried to use, e.g. ``"the llama-cpp judge"``.
        extra: The extra that provides it, e.g. ``"llama-cpp"``.

    """

    def __init__(self, feature: str, extra: str) -> None:
        self.feature = feature
        self.extra = extra
        super().__init__(
            f"{feature} needs an optional dependency: pip install 'otel-agent-eval[{extra}]'"
        )


class UnknownPluginError(ConfigError):
    """A plugin name (formatter, metric, judge, convention, container) is not registered.

    Args:
        kind: The plugin kind, e.g. ``"formatter"``.
        name: The name that was asked for.
        available: The names that are registered, listed in the message.

    The message adds ``did you mean X?`` when a registered name is close to ``name``
    (:func:`difflib.get_close_matches`, its default cutoff 0.6); ``suggestion`` holds it.

    """

    def __init__(self, kind: str, name: str, available: list[str] | tuple[str, ...]) -> None:
        self.kind = kind
        self.name = name
        self.available = tuple(sorted(available))
        close = difflib.get_close_matches(name, self.available, n=1)
        self.suggestion: str | None = close[0] if close else None
        choices = ", ".join(self.available) or "(none registered)"
        hint = f"; did you mean {self.suggestion!r}?" if self.suggestion else ""
        super().__init__(f"unknown {kind} {name!r}{hint}; available: {choices}")


class JudgeNotConfiguredError(ConfigError):
    """Scoring needs a judge model and endpoint and none was configured."""


class CriteriaError(ConfigError):
    """A criteria file cannot be read or breaks its format.

    Args:
        path: The file.
        key: The key at fault (dotted, e.g. ``examples.0.verdict``), or ``None`` for the whole
            file (unreadable, not TOML/YAML).
        problem: What is wrong, with the value found.
        fix: What to write instead.

    """

    def __init__(self, path: str, key: str | None, problem: str, fix: str) -> None:
        self.path, self.key, self.problem, self.fix = path, key, problem, fix
        where = f"{path}: key {key!r}" if key else path
        super().__init__(f"{where}: {problem}; {fix}")


class FormatterLockError(AgentEvalError):
    """A released formatter version renders the probe set differently from its lock entry."""


class JudgeError(AgentEvalError):
    """One judge call failed.

    Args:
        message: What went wrong.
        attempts: How many requests were made, retries included.
        raw_reply: The last raw completion text, when there was one.
        input_tokens: Prompt tokens spent before the failure, summed over attempts.
        output_tokens: Completion tokens spent before the failure, summed over attempts.
        usage_known: False when some reply came without a usage report (counts are a lower
            bound).

    """

    error_type = "judge_error"

    def __init__(
        self,
        message: str,
        *,
        attempts: int = 1,
        raw_reply: str | None = None,
        input_tokens: int = 0,
        output_tokens: int = 0,
        usage_known: bool = True,
    ) -> None:
        self.attempts = attempts
        self.usage_known = usage_known
        self.raw_reply = raw_reply
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        super().__init__(message)


class JudgeOutputError(JudgeError):
    """The judge's reply never validated against the response schema (``invalid_judge_output``)."""

    error_type = "invalid_judge_output"


class JudgeTransportError(JudgeError):
    """The judge endpoint could not be reached or kept failing after all retries."""

    error_type = "judge_unavailable"


class JudgeRequestError(JudgeError):
    """The endpoint answered and refused the request itself (``judge_bad_request``).

    An HTTP 4xx other than an authentication failure (401, 403) or one the openai client
    retries (408, 409, 429): 400 (a parameter or mode the model does not take), 404 (no such
    model or path), 422. The judge is reachable; the request must change (model name,
    ``--mode``, ``--base-url`` path), so it is not ``judge_unavailable``.
    """

    error_type = "judge_bad_request"


class JudgeContextLengthError(JudgeError):
    """The endpoint refused the request as longer than the model's context window.

    OpenAI reports it as HTTP 400 with error code ``context_length_exceeded``; vLLM, llama.cpp
    server and others say "maximum context length" or "context window" in the message. It is
    not retried: the same prompt fails again. Lower ``--max-context-tokens`` to skip such
    conversations before any call, or use a judge with a longer context.
    """

    error_type = "context_length_exceeded"


class BudgetExhausted(JudgeError):
    """The call was not sent because it would cross the run's token or cost budget."""

    error_type = "budget"

    def __init__(self, message: str) -> None:
        super().__init__(message, attempts=0)


class StoreError(AgentEvalError):
    """The results store or the judge-call cache cannot be opened, read or written."""


class OutputError(StoreError):
    """An output (``ingest --out``, a run directory, a report) cannot be written.

    The message says what was written before the failure (nothing is left half-written).
    """
