"""Judge adapters: a model that answers chat messages with a pydantic-typed object."""
