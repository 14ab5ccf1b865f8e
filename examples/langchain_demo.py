"""The demo scanned twice: through the reference pipeline, and through the LangChain adapter
wrapping the same parts (langchain-core's InMemoryVectorStore over the same token chunks,
MiniLM ONNX as LangChain ``Embeddings``, the extractive generator as a LangChain ``Runnable``,
the same top-k). The reference runs with dense retrieval, the one mode a vector store has.
Prints each probe's failure rate side by side (Markdown). Needs ``probeguard[langchain]``::

    python examples/langchain_demo.py runs/langchain-demo

Your own LangChain pipeline is one line: ``LangChainPipeline(your_vector_store, your_llm)``,
then ``scan(config, out_dir, pipeline=...)``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from probeguard import Document, ReferencePipeline, ScanConfig, scan
from probeguard.corpus.loaders import load_corpus
from probeguard.engine.stages import demo_data_dir
from probeguard.models.generators.factory import make_generator
from probeguard.pipeline.adapters.langchain import (
    GeneratorRunnable,
    LangChainPipeline,
    ProbeGuardEmbeddings,
)
from probeguard.pipeline.config import ReferencePipelineConfig

CONFIG = ScanConfig(demo=True, pipeline={"reference": {"retriever": {"name": "dense"}}})
"""The demo scan, with the reference pipeline's dense retrieval."""


def langchain_mirror(
    documents: Sequence[Document], config: ReferencePipelineConfig
) -> LangChainPipeline:
    """The reference pipeline's parts (chunker, embedder, top-k, generator, prompt), wrapped
    as LangChain components behind the LangChain adapter."""
    embedder = ReferencePipeline(documents, config).embedder()
    return LangChainPipeline.from_documents(
        documents,
        ProbeGuardEmbeddings(embedder),
        GeneratorRunnable(make_generator(config.generator)),
        chunker=config.chunker,
        k=config.top_k,
        prompt=config.prompt,
    )


def rates(result: Any) -> dict[str, Any]:
    """Each probe's failure-rate estimate (or ``"skipped"``)."""
    probes = result.run.summary["probes"]
    return {n: s.get("failure_rate", "skipped") for n, s in probes.items()}


def compare(out_dir: str | Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """Scan the demo through both pipelines; the per-probe rates of each."""
    out = Path(out_dir)
    reference = scan(CONFIG, out / "reference")
    documents = load_corpus(demo_data_dir() / "corpus.jsonl")
    pipeline = langchain_mirror(documents, CONFIG.pipeline.reference)
    return rates(reference), rates(scan(CONFIG, out / "langchain", pipeline=pipeline))


def fmt(estimate: Any) -> str:
    if not isinstance(estimate, dict):
        return str(estimate)
    return f"{estimate['value']:.3f} [{estimate['low']:.3f}, {estimate['high']:.3f}] (n={estimate['n']})"


def main(out_dir: str) -> None:
    reference, mirror = compare(out_dir)
    print("| probe | reference (dense) | LangChain adapter | same |")
    print("|---|---|---|---|")
    for name in reference:
        same = "yes" if reference[name] == mirror.get(name) else "no"
        print(f"| {name} | {fmt(reference[name])} | {fmt(mirror.get(name))} | {same} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "runs/langchain-demo")
