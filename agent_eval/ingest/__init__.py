"""Ingest: spans and chat logs in, AgentTrace out."""
