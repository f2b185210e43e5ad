"""agent-eval CLI commands: score (filled in by its issue)."""
