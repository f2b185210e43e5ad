"""The ``--otlp-endpoint`` and ``--events-file`` options: results as OTel evaluation events.

Shared by ``score`` and ``serve``. See :mod:`agent_eval.otel._events` for the event shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agent_eval.errors import ConfigError

if TYPE_CHECKING:  # the OTel SDK is imported when a sink is configured (start-up: ~0.1 s)
    from agent_eval.otel._events import CountingExporter, EvaluationEvents
    from agent_eval.otel._targets import SpanTarget

__all__ = ["ENV", "EVENTS_FILE_NAME", "EventOptions", "EventsFile", "OtlpEndpoint"]

EVENTS_FILE_NAME = "evaluation-events.otlp.jsonl"
""":data:`agent_eval.otel._events.EVENTS_FILE_NAME`, named here for the help text so that the
options do not import the OTel SDK (a test checks that the two are equal)."""

ENV = "env"
"""``--otlp-endpoint env``: the exporter is configured by the ``OTEL_EXPORTER_OTLP_*`` variables."""

OtlpEndpoint = Annotated[
    str | None,
    typer.Option(
        "--otlp-endpoint",
        help="Send each result as a gen_ai.evaluation.result event over OTLP/HTTP to this URL "
        "(/v1/logs appended), or 'env' to use OTEL_EXPORTER_OTLP_* variables. Export failures "
        "are counted, never fatal.",
        show_default=False,
    ),
]
EventsFile = Annotated[
    bool,
    typer.Option(
        "--events-file",
        help=f"Also write the events as OTLP JSON to OUT/{EVENTS_FILE_NAME}.",
    ),
]


@dataclass(frozen=True)
class EventOptions:
    """Where evaluation events go.

    Attributes:
        otlp_endpoint: A URL, :data:`ENV`, or ``None`` for no OTLP export.
        events_file: Write ``OUT/evaluation-events.otlp.jsonl``.

    """

    otlp_endpoint: str | None = None
    events_file: bool = False

    @property
    def enabled(self) -> bool:
        """Whether any event sink is configured."""
        return self.otlp_endpoint is not None or self.events_file

    def build(
        self, out_dir: Path, targets: Mapping[str, SpanTarget] | None = None
    ) -> EvaluationEvents | None:
        """The emitter, or ``None`` when no sink is configured.

        Raises:
            ConfigError: ``--otlp-endpoint`` is neither ``env`` nor an http(s) URL.

        """
        if not self.enabled:
            return None
        from agent_eval.otel._events import CountingExporter, OtlpJsonFileExporter, otlp_exporter
        from agent_eval.otel._events import EvaluationEvents as Events

        exporters: list[CountingExporter] = []
        if self.otlp_endpoint is not None:
            endpoint = None if self.otlp_endpoint == ENV else self.otlp_endpoint
            try:
                exporters.append(otlp_exporter(endpoint))
            except ValueError as exc:
                raise ConfigError(str(exc)) from None
        if self.events_file:
            path = out_dir / EVENTS_FILE_NAME
            exporters.append(CountingExporter(OtlpJsonFileExporter(path), str(path)))
        return Events(exporters, targets=targets)
