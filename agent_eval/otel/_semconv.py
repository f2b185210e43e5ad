"""Attribute keys of the OTel GenAI evaluation event, as named constants.

Source: OpenTelemetry semantic conventions **v1.38.0**, GenAI events, event
``gen_ai.evaluation.result`` (status *Development*; introduced in v1.38.0 by
open-telemetry/semantic-conventions#2563), and its current definition since the GenAI
conventions moved to the ``semantic-conventions-genai`` repository (``model/gen-ai/events.yaml``
at commit ``fecf9e1``, checked 2026-12-02: the same attributes and requirement levels). The event
is a log record whose ``event_name`` is :data:`EVENT_GEN_AI_EVALUATION_RESULT`; it SHOULD be
parented to the GenAI operation span being evaluated (the log record's trace id and span id), or
carry ``gen_ai.response.id`` when no span id is known.

Attributes the convention defines for the event, with their requirement levels:

==================================  ======  =========================================
key                                 type    requirement level
==================================  ======  =========================================
``gen_ai.evaluation.name``          string  required
``gen_ai.evaluation.score.value``   double  conditionally required (if applicable)
``gen_ai.evaluation.score.label``   string  conditionally required (if applicable)
``gen_ai.evaluation.explanation``   string  recommended
``gen_ai.response.id``              string  recommended (when available)
``error.type``                      string  conditionally required (if it ended in error)
==================================  ======  =========================================

Beside them the event carries ``gen_ai.conversation.id`` (string; the GenAI registry's key for
the conversation, which the convention lets any GenAI signal carry) and agent-eval's own
provenance attributes under the ``agent_eval.`` namespace (the convention allows further
attributes; these never collide with ``gen_ai.*``).
"""

from __future__ import annotations

from typing import Final

SEMCONV_VERSION: Final = "1.38.0"
"""The semantic-conventions version whose evaluation event this module follows."""
SCHEMA_URL: Final = f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}"
"""The schema URL set on the instrumentation scope of emitted events."""

EVENT_GEN_AI_EVALUATION_RESULT: Final = "gen_ai.evaluation.result"

GEN_AI_EVALUATION_NAME: Final = "gen_ai.evaluation.name"
GEN_AI_EVALUATION_SCORE_VALUE: Final = "gen_ai.evaluation.score.value"
GEN_AI_EVALUATION_SCORE_LABEL: Final = "gen_ai.evaluation.score.label"
GEN_AI_EVALUATION_EXPLANATION: Final = "gen_ai.evaluation.explanation"
GEN_AI_RESPONSE_ID: Final = "gen_ai.response.id"
GEN_AI_CONVERSATION_ID: Final = "gen_ai.conversation.id"
"""Not an attribute the event defines, but the GenAI registry's key for the conversation id;
events may carry further attributes, and this is the one GenAI backends group by."""
ERROR_TYPE: Final = "error.type"

# agent-eval's own provenance attributes (not part of the convention)
AGENT_EVAL_RUN_ID: Final = "agent_eval.run_id"
AGENT_EVAL_STATUS: Final = "agent_eval.status"
AGENT_EVAL_SKIP_REASON: Final = "agent_eval.skip_reason"
"""Why a ``skipped`` row was not judged (``no_context``...): a skip is no ``error.type``."""
AGENT_EVAL_UNIT_ID: Final = "agent_eval.unit_id"
AGENT_EVAL_METRIC: Final = "agent_eval.metric"
AGENT_EVAL_FORMATTER: Final = "agent_eval.formatter"
AGENT_EVAL_FORMATTER_FINGERPRINT: Final = "agent_eval.formatter.fingerprint"
AGENT_EVAL_PROMPT_SHA256: Final = "agent_eval.prompt.sha256"
AGENT_EVAL_JUDGE_MODEL: Final = "agent_eval.judge.model"
AGENT_EVAL_VERDICT: Final = "agent_eval.verdict"
AGENT_EVAL_NOTE: Final = "agent_eval.note"
AGENT_EVAL_STEERING_FLAGS: Final = "agent_eval.steering.flags"
"""How many steering flags the unit has (:mod:`agent_eval.steering`); absent when none."""
AGENT_EVAL_STEERING_KINDS: Final = "agent_eval.steering.kinds"
"""The distinct classes of the unit's steering flags (string array), in order of appearance."""
AGENT_EVAL_STEERING_LOCATIONS: Final = "agent_eval.steering.locations"
"""Where each flag was found (string array: ``message 4 (tool)``, ``document 0.2 (retrieval)``)."""

LABEL_PASS: Final = "pass"
"""``gen_ai.evaluation.score.label`` of a binary verdict ``"1"``."""
LABEL_FAIL: Final = "fail"
"""``gen_ai.evaluation.score.label`` of a binary verdict ``"0"``."""

SCOPE_NAME: Final = "agent_eval"
"""The instrumentation scope name of emitted events."""
