"""Datasets: cases and their expectations."""

from probeguard.dataset.models import Case, Expected

__all__ = ["Case", "Expected"]
