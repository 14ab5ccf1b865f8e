"""An example RAG service behind HTTP, for the CI example (``examples/ci/README.md``): the
reference pipeline over the bundled demo corpus, answering ``POST /ask``.

Request: ``{"query": "...", "variation": {...}}`` (the variation is ProbeGuard's
counterfactual knob: documents to add or hide for this one call; a real service that supports
it lets every probe run). Response: ``{"answer", "contexts": [{text, doc_id, chunk_id, score,
title}], "citations": [chunk ids], "refused"}``.

    python examples/ci/service.py --port 8765                 # the candidate
    python examples/ci/service.py --port 8765 --sanitise      # the approved baseline
    python examples/ci/service.py --port 8765 --fail-every 5  # + transient 503s

``--fail-every N`` answers the first request of every N-th distinct question with a 503
(an infrastructure error the runner retries); the retry is answered.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
from typing import Any

from aiohttp import web

from probeguard.core.pipeline import PipelineOutput, Variation
from probeguard.corpus.loaders import load_corpus
from probeguard.engine.stages import demo_data_dir
from probeguard.pipeline.config import ReferencePipelineConfig
from probeguard.pipeline.reference import ReferencePipeline


def build(sanitise: bool) -> ReferencePipeline:
    """The reference pipeline over the demo corpus (hashing embedder: fast, no model)."""
    config = ReferencePipelineConfig.model_validate(
        {"embedder": {"name": "hashing", "dim": 1024}, "defences": {"sanitise": sanitise}}
    )
    return ReferencePipeline(load_corpus(demo_data_dir() / "corpus.jsonl"), config)


def response(out: PipelineOutput) -> dict[str, Any]:
    """The service's JSON for one answer."""
    return {
        "answer": out.answer,
        "contexts": [
            {
                "text": c.text,
                "doc_id": c.doc_id,
                "chunk_id": c.chunk_id,
                "score": c.score,
                "title": c.title,
            }
            for c in out.retrieved
        ],
        "citations": list(out.cited_chunk_ids),
        "refused": out.refused,
    }


def make_app(pipeline: ReferencePipeline, fail_every: int = 0) -> web.Application:
    """The aiohttp application answering ``POST /ask`` (module doc)."""
    seen: set[str] = set()

    async def ask(request: web.Request) -> web.Response:
        body = await request.json()
        question = str(body["query"])
        raw = body.get("variation")
        key = hashlib.sha256(repr((question, raw)).encode()).hexdigest()
        if fail_every and int(key, 16) % fail_every == 0 and key not in seen:
            seen.add(key)
            return web.json_response({"error": "overloaded"}, status=503)
        variation = Variation.model_validate(raw) if raw else None
        out = await asyncio.to_thread(pipeline.answer, question, variation)
        return web.json_response(response(out))

    app = web.Application()
    app.router.add_post("/ask", ask)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--sanitise", action="store_true", help="Strip injected instructions.")
    parser.add_argument("--fail-every", type=int, default=0, help="A 503 for 1 in N questions.")
    args = parser.parse_args()
    app = make_app(build(args.sanitise), args.fail_every)
    web.run_app(app, host="127.0.0.1", port=args.port, print=None)


if __name__ == "__main__":
    main()
