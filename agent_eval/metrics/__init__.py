"""Metrics: named, versioned procedures that turn one AgentTrace into one result."""
