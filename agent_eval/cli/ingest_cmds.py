"""agent-eval CLI commands: ingest (filled in by its issue)."""
