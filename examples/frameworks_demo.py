"""The demo scanned three times: through the reference pipeline, and through the LangChain and
LlamaIndex adapters wrapping the same parts (each framework's in-memory vector store over the
same token chunks, MiniLM ONNX as the framework's embedding class, the extractive generator,
the same top-k). The reference runs with dense retrieval, the one mode a vector store has.
Prints each probe's failure rate side by side (Markdown). Needs ``probeguard[langchain]`` and
``probeguard[llamaindex]``::

    python examples/frameworks_demo.py runs/frameworks-demo

Your own pipeline is one line: ``LangChainPipeline(your_vector_store, your_llm)`` or
``LlamaIndexPipeline(your_index, your_llm)``, then ``scan(config, out_dir, pipeline=...)``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from probeguard import Document, Pipeline, ReferencePipeline, ScanConfig, scan
from probeguard.corpus.loaders import load_corpus
from probeguard.engine.stages import demo_data_dir
from probeguard.models.generators.factory import make_generator
from probeguard.pipeline.adapters.langchain import (
    GeneratorRunnable,
    LangChainPipeline,
    ProbeGuardEmbeddings,
)
from probeguard.pipeline.adapters.llamaindex import LlamaIndexPipeline, ProbeGuardEmbedding
from probeguard.pipeline.config import ReferencePipelineConfig

CONFIG = ScanConfig(demo=True, pipeline={"reference": {"retriever": {"name": "dense"}}})
"""The demo scan, with the reference pipeline's dense retrieval."""


def mirrors(documents: Sequence[Document], config: ReferencePipelineConfig) -> dict[str, Pipeline]:
    """The reference pipeline's parts (chunker, embedder, top-k, generator, prompt) behind the
    LangChain and the LlamaIndex adapter."""
    embedder = ReferencePipeline(documents, config).embedder()
    generator = make_generator(config.generator)
    common: dict[str, Any] = {"chunker": config.chunker, "k": config.top_k, "prompt": config.prompt}
    return {
        "langchain": LangChainPipeline.from_documents(
            documents, ProbeGuardEmbeddings(embedder), GeneratorRunnable(generator), **common
        ),
        "llamaindex": LlamaIndexPipeline.from_documents(
            documents, ProbeGuardEmbedding(embedder), generator, **common
        ),
    }


def rates(result: Any) -> dict[str, Any]:
    """Each probe's failure-rate estimate (or ``"skipped"``)."""
    probes = result.run.summary["probes"]
    return {n: s.get("failure_rate", "skipped") for n, s in probes.items()}


def compare(out_dir: str | Path) -> dict[str, dict[str, Any]]:
    """Scan the demo through the reference pipeline and each mirror; per-probe rates."""
    out = Path(out_dir)
    documents = load_corpus(demo_data_dir() / "corpus.jsonl")
    results = {"reference": rates(scan(CONFIG, out / "reference"))}
    for name, pipeline in mirrors(documents, CONFIG.pipeline.reference).items():
        results[name] = rates(scan(CONFIG, out / name, pipeline=pipeline))
    return results


def fmt(estimate: Any) -> str:
    if not isinstance(estimate, dict):
        return str(estimate)
    return f"{estimate['value']:.3f} [{estimate['low']:.3f}, {estimate['high']:.3f}] (n={estimate['n']})"


def main(out_dir: str) -> None:
    results = compare(out_dir)
    sides = list(results)
    print("| probe | " + " | ".join(sides) + " | same |")
    print("|---" * (len(sides) + 2) + "|")
    for name, estimate in results["reference"].items():
        same = all(results[s].get(name) == estimate for s in sides)
        cells = " | ".join(fmt(results[s].get(name)) for s in sides)
        print(f"| {name} | {cells} | {'yes' if same else 'no'} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "runs/frameworks-demo")
