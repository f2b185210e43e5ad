"""Test helpers shipped with the package (the fake OpenAI-compatible model server)."""
