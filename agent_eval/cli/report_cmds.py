"""agent-eval CLI commands: report (filled in by its issue)."""
