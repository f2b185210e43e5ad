"""A local Ray cluster for the cluster tests: started once per module, two CPUs.

Ray is the ``ray`` extra: CI installs it (``.ci/run``), and there the tests must run; outside
CI they skip cleanly when it is absent.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from types import ModuleType

import pytest

if not os.environ.get("CI"):  # CI installs the ray extra (.ci/run): there it must run
    pytest.importorskip("ray")


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[ModuleType]:
    """``ray``, joined to a local cluster of 2 CPUs started for the module (stopped after)."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()
