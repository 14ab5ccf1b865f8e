"""Embedding throughput: all-MiniLM-L6-v2 (int8 ONNX) vs hashed TF-IDF, on realistic text.

Texts: the demo corpus (``probeguard/demo/data/corpus.jsonl``) split into sentences with
``probeguard.nlp.text.split_sentences``; every window of 1–4 consecutive sentences of one document
is a candidate passage, and a seeded ``numpy.random.Generator`` picks ``--docs`` distinct ones
(default 500), so that no text repeats and the embedder's cache cannot help.

Figures:

* MiniLM docs/s: ``MiniLMOnnxEmbedder().embed(texts)`` (no cache; batches of 8, sorted by
  length; onnxruntime's default threads unless ``--threads``), median of ``--rounds``, vs
  ``HashingTfidfEmbedder()`` (4096-d, words + bigrams, fitted on the same texts) as the named
  baseline "hashing TF-IDF", taking turns with it. A ratio far below 1 is expected: a
  6-layer transformer against a hash.
* MiniLM load (printed as a plain figure, with no baseline): ``import onnxruntime`` +
  ``tokenizers`` and building the session and tokenizer, timed as the first ``embed`` of one
  short text on a fresh embedder minus that text's steady-state cost.

Run: ``PYTHONPATH=src .venv/bin/python -m benchmarks.bench_embedding [--docs 500]``
(~30 s on 2 shared cores).
"""

from __future__ import annotations

import argparse
import importlib.resources
import json
import statistics
import time

import numpy as np

from benchmarks._common import report

SEED = 20240611


def demo_passages(n: int, seed: int = SEED, max_sentences: int = 4) -> list[str]:
    """``n`` distinct passages of 1–``max_sentences`` consecutive demo-corpus sentences."""
    from probeguard.nlp.text import split_sentences

    data = importlib.resources.files("probeguard.demo").joinpath("data", "corpus.jsonl")
    candidates: list[str] = []
    for line in data.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        sentences = split_sentences(json.loads(line)["text"])
        for i in range(len(sentences)):
            for length in range(1, max_sentences + 1):
                if i + length <= len(sentences):
                    candidates.append(" ".join(sentences[i : i + length]))
    candidates = sorted(set(candidates))
    if n > len(candidates):
        raise ValueError(
            f"only {len(candidates)} distinct passages in the demo corpus; asked for {n}"
        )
    rng = np.random.default_rng([seed, 4])
    return [candidates[i] for i in rng.choice(len(candidates), size=n, replace=False)]


def run(n_docs: int = 500, rounds: int = 3, threads: int | None = None) -> None:
    from probeguard.models.embedders.hashing import HashingTfidfEmbedder
    from probeguard.models.embedders.minilm import MiniLMOnnxEmbedder, model_files

    start = time.perf_counter()
    minilm = MiniLMOnnxEmbedder(threads=threads)
    minilm.embed(["warm up"])
    first = time.perf_counter() - start
    one_start = time.perf_counter()
    minilm.embed(["warm up"])
    load = max(first - (time.perf_counter() - one_start), 0.0)

    texts = demo_passages(n_docs)
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(model_files()[1])
    tokenizer.no_padding()
    tokenizer.no_truncation()
    pieces = [len(e.ids) for e in tokenizer.encode_batch(texts)]
    print(
        f"-- {len(texts)} demo-corpus passages: mean {statistics.fmean(pieces):.0f} word "
        f"pieces (min {min(pieces)}, max {max(pieces)}), "
        f"{statistics.fmean(len(t.split()) for t in texts):.0f} words",
        flush=True,
    )

    hashing = HashingTfidfEmbedder()
    hashing.fit(texts)
    hashing.embed(texts)
    minilm_times, hashing_times = [], []
    for _ in range(rounds):
        for embedder, bucket in ((minilm, minilm_times), (hashing, hashing_times)):
            t0 = time.perf_counter()
            embedder.embed(texts)
            bucket.append(time.perf_counter() - t0)
    minilm_s = statistics.median(minilm_times)
    hashing_s = statistics.median(hashing_times)
    label = "default" if threads is None else str(threads)
    minilm_rate, hashing_rate = len(texts) / minilm_s, len(texts) / hashing_s
    report(
        f"MiniLM int8 ONNX embed {len(texts)} passages (threads {label}, median of {rounds}, ours)",
        minilm_rate,
        "docs/s",
        "hashing TF-IDF",
        hashing_rate,
        higher_is_better=True,
    )
    print(
        f"  (ratio = 1/{hashing_rate / minilm_rate:,.0f}: hashing TF-IDF is that many times "
        "faster)",
        flush=True,
    )
    print(
        f"MiniLM load (onnxruntime import + session + tokenizer): {load:.3f} s, the time "
        f"MiniLM takes to embed ~{load * minilm_rate:,.0f} of these passages",
        flush=True,
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="onnxruntime intra-op threads (default: onnxruntime's own)",
    )
    args = parser.parse_args()
    run(args.docs, args.rounds, args.threads)
