"""benchmarks/bench_scale.py's corpus: deterministic, padded to size, gold text kept out of the
synthetic distractors (no timing asserted)."""

from __future__ import annotations

import pytest
from benchmarks import bench_scale as bench

from probeguard.engine.bench.hotpotqa import default_data_file
from probeguard.nlp.text import split_sentences

pytestmark = pytest.mark.skipif(
    not default_data_file().is_file(), reason="needs PROBEGUARD_SHARED_DATA (HaluEval HotpotQA)"
)


def test_corpus_is_deterministic_padded_and_keeps_gold_sentences_out_of_distractors():
    docs, cases = bench.corpus(1200, 20, seed=3)
    again, _ = bench.corpus(1200, 20, seed=3)
    assert docs == again and len(docs) == 1200 and len(cases) == 20
    synthetic = [d for d in docs if d.source == "synthetic"]
    assert synthetic and len({d.id for d in docs}) == len(docs)
    gold = {d for c in cases for d in c.expected.evidence_doc_ids}
    gold_sentences = {s for d in docs if d.id in gold for s in split_sentences(d.text)}
    assert not any(s in d.text for d in synthetic for s in gold_sentences if len(s) > 40)
