"""Datasets: cases and their expectations."""

from probeguard.core.cases import Case, Expected

__all__ = ["Case", "Expected"]
