"""The instructor judge's tests: they need the ``instructor`` extra, in its own environment.

instructor cannot be installed beside the dev extra's openai (it pins ``jiter<0.15``; openai
>= 3.9 needs ``jiter>=0.16``), so ``.ci/run`` runs this folder in ``.venv-instructor`` with
``AGENT_EVAL_REQUIRE_INSTRUCTOR=1``: there a missing instructor is an error, never a skip. In
any other environment without instructor, each module here skips itself as a whole.
"""

from __future__ import annotations

import os

if os.environ.get("AGENT_EVAL_REQUIRE_INSTRUCTOR") == "1":
    import instructor  # noqa: F401  # an ImportError here fails the run
