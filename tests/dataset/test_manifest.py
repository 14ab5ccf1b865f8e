"""Dataset manifests: hashes, corpus fingerprint, counts, generators; byte-identical."""

from __future__ import annotations

from pathlib import Path

import pytest

from probeguard.core.documents import Document, corpus_fingerprint
from probeguard.core.errors import InputError
from probeguard.dataset.formats import LocatedCase, load_dataset, write_dataset
from probeguard.dataset.manifest import (
    build_manifest,
    check_manifest,
    file_sha256,
    manifest_hashes,
    write_manifest,
)
from probeguard.dataset.schema import DatasetCase

DOCS = [Document.create("Shipping takes 5 business days.", id="ship")]
CASES = [
    DatasetCase(
        id="a",
        input="q1",
        type="distractor",
        evolution="reasoning",
        tags=("x", "y"),
        source="synthesized",
        meta={"generator": "probeguard.synth", "generator_version": "1", "seed": 3},
    ),
    DatasetCase(
        id="b",
        input="q2",
        evolution="reasoning",
        tags=("x",),
        split="test",
        meta={"generator": {"name": "probeguard.synth", "version": "1", "seed": 3}},
    ),
    DatasetCase(id="c", input="q3"),
]


def _manifest(tmp_path: Path, name: str = "m.json") -> tuple[Path, Path, str]:
    data = write_dataset(CASES, tmp_path / "data" / "cases.jsonl")
    manifest = build_manifest([(data, load_dataset(data))], root=tmp_path, documents=DOCS)
    out = tmp_path / name
    return data, out, write_manifest(manifest, out)


def test_contents(tmp_path: Path) -> None:
    data, out, _ = _manifest(tmp_path)
    m = build_manifest([(data, load_dataset(data))], root=tmp_path, documents=DOCS)
    assert [(f.path, f.sha256, f.cases) for f in m.files] == [
        ("data/cases.jsonl", file_sha256(data), 3)
    ]
    assert (m.corpus_fingerprint, m.corpus_documents, m.cases) == (corpus_fingerprint(DOCS), 1, 3)
    assert m.counts == {
        "type": {"distractor": 1, "golden": 2},
        "evolution": {"reasoning": 2},
        "tag": {"x": 2, "y": 1},
        "split": {"test": 1},
        "source": {"synthesized": 1, "written": 2},
    }
    assert [(g.name, g.version, g.seed, g.cases) for g in m.generators] == [
        ("probeguard.synth", "1", 3, 2)
    ]


def test_same_files_same_bytes_and_a_changed_file_is_refused(tmp_path: Path) -> None:
    data, out, digest = _manifest(tmp_path)
    first = out.read_bytes()
    _, out2, digest2 = _manifest(tmp_path, "m2.json")
    assert out2.read_bytes() == first and digest2 == digest
    assert check_manifest(data, out) == digest
    data.write_text(data.read_text().replace("q3", "q4"))
    with pytest.raises(InputError, match="does not match its manifest") as err:
        check_manifest(data, out)
    assert err.value.file == str(data)


def test_manifest_beside_the_file_is_found(tmp_path: Path) -> None:
    data = write_dataset(CASES, tmp_path / "cases.jsonl")
    assert manifest_hashes([data, None]) == {}
    beside = tmp_path / "cases.jsonl.manifest.json"
    digest = write_manifest(build_manifest([(data, load_dataset(data))], root=tmp_path), beside)
    assert manifest_hashes([data]) == {"cases.jsonl": digest}
    with pytest.raises(InputError, match="no such manifest"):
        manifest_hashes([data], tmp_path / "missing.json")


def test_generator_name_slash_version() -> None:
    case = DatasetCase(
        id="s", input="q", meta={"generator": "probeguard.dataset.synth/1", "seed": 4}
    )
    m = build_manifest([(Path(__file__), [LocatedCase(case, "f", 1)])], root=Path("."))
    assert [(g.name, g.version, g.seed) for g in m.generators] == [
        ("probeguard.dataset.synth", "1", 4)
    ]
