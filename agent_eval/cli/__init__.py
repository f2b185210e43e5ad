"""The ``agent-eval`` command line (typer). One module per command group.

The commands are listed in :data:`agent_eval.cli._commands.COMMANDS`; each module registers its
commands on ``app`` when it is imported, which happens when the command is first used.
"""

from agent_eval.cli._startup import collector_paused

with collector_paused():  # the imports of typer and the CLI (agent_eval.cli._startup)
    from agent_eval.cli._app import app, main

__all__ = ["app", "main"]
