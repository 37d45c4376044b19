"""The package version, in one place for pyproject.toml and `mqlog --version` to read."""

__version__ = "0.1.0"
