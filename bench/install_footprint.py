"""Install footprint and import time: a baseline git ref against a candidate, in the same run.

For each ref, ``git archive`` of the ref is installed with ``pip install .`` into a fresh
virtual environment (its core dependencies only, no extra), then measured:

- ``site-packages``: the size of the environment's site-packages (``du -sk``), MB;
- ``distributions``: the lines of ``pip list`` (headers included, as ``pip list | wc -l``);
- ``import agent_eval`` / ``import agent_eval._api``: the best wall time and the best CPU time
  (user + system of the child, ``getrusage``; the figure to read on a shared machine) of
  ``--repeats`` fresh interpreters (bytecode already written by one untimed run); the bare
  interpreter's own start-up is printed beside them (``python -c pass``).

The ratio column is candidate / baseline. Environments are kept under ``--workdir`` and reused
when present (``--fresh`` makes them again), so a second look costs no install.

    python bench/install_footprint.py --baseline main --candidate HEAD [--repeats 7]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROBES = {
    "python -c pass": "pass",
    "import agent_eval": "import agent_eval",
    "import agent_eval._api": "import agent_eval._api",
}


def _environment(ref: str, workdir: Path, fresh: bool) -> Path:
    """A virtual environment with ``ref`` installed (made unless it exists and not ``fresh``)."""
    name = ref.replace("/", "_")
    venv, source = workdir / f"venv-{name}", workdir / f"src-{name}"
    python = venv / "bin" / "python"
    if python.exists() and not fresh:
        return venv
    subprocess.run(["rm", "-rf", str(venv), str(source)], check=True)
    source.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", ref], check=True, capture_output=True
    )
    subprocess.run(["tar", "-x", "-C", str(source)], input=archive.stdout, check=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(source)], check=True)
    return venv


def _site_packages_mb(venv: Path) -> float:
    [site] = venv.glob("lib/python*/site-packages")
    done = subprocess.run(["du", "-sk", str(site)], check=True, capture_output=True, text=True)
    return int(done.stdout.split()[0]) / 1024


def _distributions(venv: Path) -> int:
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "list"],
        check=True,
        capture_output=True,
        text=True,
    )
    return len(done.stdout.splitlines())


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _best_seconds(venv: Path, code: str, repeats: int) -> tuple[float, float]:
    """Best ``(wall, cpu)`` seconds of ``python -c code`` over ``repeats`` runs."""
    python = str(venv / "bin" / "python")
    with tempfile.TemporaryDirectory() as empty:  # no project checkout on sys.path
        subprocess.run([python, "-c", code], check=True, cwd=empty)  # writes the bytecode
        wall = cpu = float("inf")
        for _ in range(repeats):
            start, start_cpu = time.perf_counter(), _cpu()
            subprocess.run([python, "-c", code], check=True, cwd=empty)
            wall = min(wall, time.perf_counter() - start)
            cpu = min(cpu, _cpu() - start_cpu)
    return wall, cpu


def measure(venv: Path, repeats: int) -> dict[str, float]:
    """The figures of one environment (sizes in MB, times in seconds)."""
    figures = {"site-packages (MB)": _site_packages_mb(venv), "distributions": _distributions(venv)}
    for label, code in PROBES.items():
        figures[f"{label} wall (s)"], figures[f"{label} cpu (s)"] = _best_seconds(
            venv, code, repeats
        )
    return figures


def main() -> None:
    """Parse the arguments, measure both refs, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main")
    parser.add_argument("--candidate", default="HEAD")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "ae-footprint"
    )
    parser.add_argument("--fresh", action="store_true", help="install the environments again")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    envs = {
        ref: _environment(ref, args.workdir, args.fresh) for ref in (args.baseline, args.candidate)
    }
    base, cand = (measure(envs[ref], args.repeats) for ref in (args.baseline, args.candidate))
    print(f"{'':34}{args.baseline:>14}{args.candidate:>14}{'ratio':>8}")
    for key in base:
        print(f"{key:34}{base[key]:14.3f}{cand[key]:14.3f}{cand[key] / base[key]:8.2f}")


if __name__ == "__main__":
    main()
