"""The worked example of docs/claim-metrics.md runs offline and prints what the page says."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "claim-metrics.md"


def test_the_worked_example_prints_its_stated_output(tmp_path: Path) -> None:
    section = PAGE.read_text(encoding="utf-8").split("# Claim-level judges", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    script = code.group(1)
    expected = script.rstrip().splitlines()[-1].removeprefix("# ")
    path = tmp_path / "example.py"
    path.write_text(script)
    done = subprocess.run(
        [sys.executable, str(path)], check=False, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == expected
