"""The built-in test types, one package each (registered in pyproject.toml)."""
