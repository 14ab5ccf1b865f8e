"""Datasets: cases and their expectations, and the offline synthesizer."""

from probeguard.core.cases import Case, Expected
from probeguard.dataset.synth import Synthesis, SynthStats, records, synthesize

__all__ = ["Case", "Expected", "SynthStats", "Synthesis", "records", "synthesize"]
