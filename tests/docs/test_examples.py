"""Every python and bash example of the docs runs, in a reader's sandbox, against the fake judge.

See ``tests/docs/examples.py`` for what the sandbox holds and the ``docs-test`` markers. Pages
added under ``docs/`` are picked up by the glob; a page's examples run in order, in one sandbox.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_eval.testing import FakeModelServer
from agent_eval.testing._script import load_script

from . import examples as ex

SHARED = ex.ROOT.parent / "shared"
PAGES = [p for p in ex.pages() if ex.examples(p)]


def test_pages_have_examples_and_every_skip_names_what_it_needs() -> None:
    assert len(PAGES) >= 15
    every = [e for p in ex.pages() for e in ex.examples(p)]
    assert all(e.skip is None or e.skip.startswith("needs ") for e in every)
    ran = [e for e in every if e.skip is None]
    assert len(ran) > 2 * (len(every) - len(ran))  # skips stay the exception


def test_a_marker_away_from_a_fence_is_refused(tmp_path: Path) -> None:
    page = tmp_path / "docs" / "x.md"
    page.parent.mkdir()
    page.write_text("# X\n\n<!-- docs-test: skip (needs a GPU) -->\n\n```bash\ntrue\n```\n")
    with pytest.raises(ex.MarkerError, match="right before a fence"):
        ex.examples(page)


def test_the_markers_are_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = tmp_path / "x.md"
    page.write_text(
        "# X\n<!-- docs-test: skip (needs a GPU) -->\n```python\nimport torch\n```\n"
        "<!-- docs-test: exit 1 -->\n```bash\nfalse\n```\n```toml\n[a]\n```\n```sh\necho hi\n```\n"
    )
    monkeypatch.setattr(ex, "DOCS", tmp_path)
    found = ex.examples(page)
    assert [(e.line, e.language, e.skip, e.exit_code) for e in found] == [
        (3, "python", "needs a GPU", 0),
        (7, "bash", None, 1),
        (13, "bash", None, 0),
    ]


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ex.ROOT).as_posix() for p in PAGES])
def test_the_page_examples_run(page: Path, fake_server: FakeModelServer, tmp_path: Path) -> None:
    load_script(ex.ROOT / "fixtures" / "fake-judge.json", fake_server)
    shared = SHARED / "data" if (SHARED / "data").is_dir() else None
    cwd = ex.make_sandbox(tmp_path, shared.parent if shared else None)
    env = ex.environment(fake_server.base_url)
    ran = 0
    for example in ex.examples(page):
        if example.skip is not None:
            continue
        if shared is None and "../shared/data" in example.code:
            continue  # the public data sets are not beside this checkout
        ex.run(example, cwd, env)
        ran += 1
    if ran == 0:
        pytest.skip("every example of this page needs ../shared/data, absent here")
