"""Datasets: cases and their expectations; the case schema, its conversions, validation,
splits, manifests and imports; and the offline synthesizer."""

from probeguard.core.cases import Case, Expected
from probeguard.dataset.formats import LocatedCase, load_case_file, load_dataset, write_dataset
from probeguard.dataset.importers import PRESETS, import_records, parse_maps
from probeguard.dataset.manifest import DatasetManifest, build_manifest, check_manifest
from probeguard.dataset.schema import SCHEMA_VERSION, DatasetCase, Evidence, ExpectedSpec
from probeguard.dataset.split import split_cases
from probeguard.dataset.synth import Synthesis, SynthStats, records, synthesize
from probeguard.dataset.validate import Problem, validate_files

__all__ = [
    "PRESETS",
    "SCHEMA_VERSION",
    "Case",
    "DatasetCase",
    "DatasetManifest",
    "Evidence",
    "Expected",
    "ExpectedSpec",
    "LocatedCase",
    "Problem",
    "SynthStats",
    "Synthesis",
    "build_manifest",
    "check_manifest",
    "import_records",
    "load_case_file",
    "load_dataset",
    "parse_maps",
    "records",
    "split_cases",
    "synthesize",
    "validate_files",
    "write_dataset",
]
