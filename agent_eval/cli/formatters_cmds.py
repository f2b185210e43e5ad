"""agent-eval CLI commands: formatters (filled in by its issue)."""
