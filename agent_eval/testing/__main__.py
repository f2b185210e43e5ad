"""``python -m agent_eval.testing``: the fake model server as a process.

It prints its base URL as the first line of stdout, then serves until SIGINT or SIGTERM;
``--help`` lists the options (``--port``, ``--latency-ms``, ``--script``, ``--fault-rate``...).
"""

import sys

from agent_eval.testing._fake_server import main

sys.exit(main())
