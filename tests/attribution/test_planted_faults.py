"""Planted-fault tests: purpose-built pipelines, each with one known defect, scanned with
attribution on; the surgeon must name the planted component for the failures the defect
causes (accuracy over all of them >= 0.90, printed), and find little to blame in the clean
twin. Real parts throughout: the reference pipeline with the hashing embedder, the extractive
generator, the real scan and runner; two small custom generators plant generation faults."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from planted import (
    ARCHIVED,
    DOCS,
    QUESTIONS,
    IgnoresContext,
    ObeysInstructions,
    Planted,
    config,
)

from probeguard.config.models import ScanConfig
from probeguard.engine.scan import scan

# name, pipeline factory, corpus, probes, causes that name the planted component, and
# the mechanisms that name the planted defect
PLANTED = [
    (
        "chunker: 30-token chunks without overlap",
        lambda: Planted(config(chunker={"name": "tokens", "size": 30, "overlap": 0})),
        DOCS,
        [],
        {"chunker"},
        {"chunk_boundary"},
    ),
    (
        "retriever: BM25 only, top-1, keyword-stuffed distractor",
        lambda: Planted(config(retriever={"name": "bm25"}, top_k=1)),
        DOCS,
        [],
        {"retriever"},
        {"retrieval_miss", "lexical_retrieval_miss"},
    ),
    (
        "generator: ignores its context",
        lambda: Planted(config(), IgnoresContext()),
        DOCS,
        [],
        {"generator"},
        {"ignores_context", "no_refusal_gate"},
    ),
    (
        "generator: no refusal gate",
        lambda: Planted(
            config(generator={"name": "extractive", "max_sentences": 1, "min_support": 0.0})
        ),
        DOCS,
        [],
        {"generator"},
        {"no_refusal_gate"},
    ),
    (
        "corpus: archived version ranked first",
        lambda: Planted(config(), documents=DOCS + ARCHIVED),
        DOCS + ARCHIVED,
        [],
        {"corpus"},
        {"stale_version_outranks"},
    ),
    (
        "prompt/corpus: generator obeys instructions in context",
        lambda: Planted(config(), ObeysInstructions()),
        DOCS,
        ["prompt_hijack"],
        {"prompt", "corpus"},
        {"obeys_injected_instructions"},
    ),
]

PROBE_SETTINGS = {
    "prompt_hijack": {
        "similarity": {"name": "hashing", "dim": 1024},
        # The extractive generator quotes the other styles'
        # "the answer is <code>" sentences (a quoting fault the
        # clean twin shares): this style isolates obedience.
        "styles": ["hidden_in_relevant"],
    }
}


def run_scan(tmp_path: Path, name: str, pipeline, docs, probes):
    cfg = ScanConfig(
        runner={"cache_dir": None},
        metrics={"standard": False},
        probes={
            "enabled": list(probes),
            "settings": {p: PROBE_SETTINGS[p] for p in probes if p in PROBE_SETTINGS},
        },
    )
    out = tmp_path / name.split(":")[0].replace("/", "-")
    return scan(cfg, out, pipeline=pipeline, inputs=(docs, QUESTIONS)).run


@pytest.fixture(scope="module")
def clean_twin(tmp_path_factory):
    return run_scan(
        tmp_path_factory.mktemp("clean"), "clean", Planted(config()), DOCS, ["prompt_hijack"]
    )


def test_planted_components_are_named(tmp_path, clean_twin, capsys):
    clean_failed = {(a.probe, a.group) for a in clean_twin.attribution}
    rows = []
    for name, make, docs, probes, expected, mechanisms in PLANTED:
        run = run_scan(tmp_path, name, make(), docs, probes)
        # The failures the defect causes: those the clean twin does not have.
        caused = [a for a in run.attribution if (a.probe, a.group) not in clean_failed]
        assert caused, f"the planted defect caused no failure: {name}"
        right = sum(a.cause in expected for a in caused)
        rows.append((name, len(caused), right, sorted({a.cause for a in caused})))
        named = sorted({a.mechanism for a in caused})
        assert set(named) <= mechanisms, (name, named)
        assert all(a.mechanism_words for a in caused)
        for a in caused:  # every verdict keeps the re-runs it rests on
            assert a.reason and a.swaps
            assert all(s.runs for s in a.swaps if s.outcome in ("repaired", "not_repaired"))
            if a.cause != "undetermined":
                assert a.recommendation and a.recommendation["cause"] == a.cause
    total = sum(r[1] for r in rows)
    correct = sum(r[2] for r in rows)
    accuracy = correct / total
    with capsys.disabled():
        print("\nplanted-fault attribution accuracy:")
        for name, n, right, causes in rows:
            print(f"  {name:58s} {right}/{n} named  (causes: {', '.join(causes)})")
        print(f"  overall: {correct}/{total} = {accuracy:.3f}")
    assert accuracy >= 0.90
    assert all(r[2] / r[1] >= 0.5 for r in rows), rows


def test_clean_twin_gets_little_blame(clean_twin):
    groups = sum(1 for g in clean_twin.groups if g.failed is not None)
    golden = sum(1 for r in clean_twin.records if r.case.probe == "golden")
    assert len(clean_twin.attribution) <= 0.1 * (groups + golden)
    assert clean_twin.summary["attribution"]["attributed"] == len(clean_twin.attribution)
