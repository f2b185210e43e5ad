"""Containers: the file and in-process formats spans and conversations arrive in."""

from agent_eval.ingest.containers._base import Container, RecordsUsed, Skipped, containers

__all__ = ["Container", "RecordsUsed", "Skipped", "containers"]
