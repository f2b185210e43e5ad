"""agent-eval CLI commands: analysis (filled in by its issue)."""
