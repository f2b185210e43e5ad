"""A local Ray cluster for the cluster tests: started once per module, two CPUs.

Ray is the ``ray`` extra: CI installs it (``.ci/run``), and there the tests must run; outside
CI they skip cleanly when it is absent. The workers' ``PYTHONPATH`` holds a folder of the
module's own (``worker_path``): what a user installs on a cluster's workers (a client
factory's module) is written there.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

if not os.environ.get("CI"):  # CI installs the ray extra (.ci/run): there it must run
    pytest.importorskip("ray")


@pytest.fixture(scope="module")
def worker_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder on the Python path of the module's Ray workers (and of this process)."""
    return tmp_path_factory.mktemp("worker-path")


@pytest.fixture(scope="module")
def ray_cluster(worker_path: Path) -> Iterator[ModuleType]:
    """``ray``, joined to a local cluster of 2 CPUs started for the module (stopped after)."""
    import ray

    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(worker_path), before]))
    try:  # the workers the cluster starts inherit this process's environment
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    finally:
        if before is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = before
    try:
        yield ray
    finally:
        ray.shutdown()
