"""Built-in formatters: one module per released version, registered via entry points."""
