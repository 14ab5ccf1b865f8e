"""The package version, recorded in every run log."""

__version__ = "0.1.0"
