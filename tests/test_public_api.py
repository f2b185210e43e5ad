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
