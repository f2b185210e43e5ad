"""The exported names are exactly the public API (the httpx habit)."""

import agent_eval


def test_all_names_exist_and_are_unique() -> None:
    assert len(agent_eval.__all__) == len(set(agent_eval.__all__))
    for name in agent_eval.__all__:
        assert hasattr(agent_eval, name), name


def test_no_public_name_is_left_out_of_all() -> None:
    public = {
        name
        for name, value in vars(agent_eval).items()
        if not name.startswith("_") and not isinstance(value, type(agent_eval))
    }
    public |= set(agent_eval._LAZY)  # analysis functions imported on first use
    assert public == set(agent_eval.__all__) - {"__version__"}


def test_agent_eval_ingest_is_callable_also_after_its_package_is_imported(tmp_path) -> None:
    """Issue 27: ``agent_eval.ingest`` was the function after ``import agent_eval`` but the
    package (not callable) once anything under ``agent_eval.ingest`` had been imported."""
    import subprocess
    import sys

    from agent_eval import AgentTrace, UserMessage

    path = tmp_path / "one.jsonl"
    trace = AgentTrace(conversation_id="c1", messages=(UserMessage(content="hi"),))
    path.write_text(trace.model_dump_json() + "\n")
    code = (
        "import sys, agent_eval\n"
        "before = [t.conversation_id for t in agent_eval.ingest([sys.argv[1]])]\n"
        "import agent_eval.ingest.containers\n"
        "after = [t.conversation_id for t in agent_eval.ingest([sys.argv[1]])]\n"
        "print(before, after)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['c1'] ['c1']"
