"""The probes' plan of a scan, served from a content-addressed cache on a re-run.

Generating the probes' cases is a pure function of the probe context (corpus, golden
questions, attack cases, seed, top-k, capabilities, the pipeline's chunks and chunker), the
probes' configuration and the code (``Probe.generate`` is pure and seeded: DESIGN.md). So the
generated cases are stored under ``<cache folder>/plans`` (``engine.derived_cache``) by

    key = sha256(code_version, the enabled probes' modules, canonical probes config,
                 seed, top_k, capabilities, chunker, every document's full JSON (source
                 and metadata included), every chunk's (id, document, start, end, index),
                 every golden and attack case's full JSON)

and read back on a re-run with the same key. The probe objects themselves are always made
afresh from the config (cheap; only their cases are costly). A plan is stored only when its
JSON reads back as the generated cases (``derived_cache.same_repr``), so a cached plan is the plan a fresh
run makes; one that would not (a NaN in a case's ``meta``) is simply not cached. A corrupt or
unreadable entry is a miss (logged) and is overwritten.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from pathlib import Path

import pydantic_core
from pydantic import BaseModel, TypeAdapter

from probeguard.core.cases import Case
from probeguard.core.hashing import sha256_hex, sha256_stream
from probeguard.engine.derived_cache import (
    DerivedCache,
    code_version,
    key_json,
    modules_version,
    same_repr,
)
from probeguard.probes import Probe, ProbeContext
from probeguard.probes.config import ProbesConfig
from probeguard.probes.evaluate import ProbePlan, enabled_probes, generate_cases, plan_probes

__all__ = ["PLANS", "cached_plan", "context_parts", "plan_key"]

log = logging.getLogger(__name__)

PLANS = "plans"
"""The cache folder's sub-folder for plans."""

_CASES: TypeAdapter[list[Case]] = TypeAdapter(list[Case])


def cached_plan(config: ProbesConfig, ctx: ProbeContext, cache_dir: str | Path | None) -> ProbePlan:
    """``probes.evaluate.plan_probes(config, ctx)``, its cases read from ``cache_dir/plans``
    when an entry for this key exists and generated (then stored) otherwise; without a
    cache folder, plain ``plan_probes``."""
    if cache_dir is None:
        return plan_probes(config, ctx)
    probes, skipped = enabled_probes(config, ctx)
    store = DerivedCache(cache_dir, PLANS)
    key = plan_key(config, ctx, probes)
    cases = store.load(key, _CASES.validate_json)
    if cases is None:
        cases = generate_cases(probes, ctx)
        _store(store, key, cases)
    return ProbePlan(probes=probes, cases=cases, skipped=skipped)


def _store(store: DerivedCache, key: str, cases: list[Case]) -> None:
    """Store ``cases`` when their JSON reads back equal to them (else log and skip)."""
    payload = pydantic_core.to_json(cases, inf_nan_mode="constants").decode("utf-8")
    if not same_repr(_CASES.validate_json(payload), cases):
        log.debug("plan cache: the cases do not round-trip through JSON; not cached")
        return
    store.put(key, payload)


def plan_key(config: ProbesConfig, ctx: ProbeContext, probes: Sequence[Probe]) -> str:
    """The content address of the plan (see the module docstring)."""
    return sha256_hex(
        "plan/1",
        code_version(),
        modules_version(type(p).__module__ for p in probes),
        key_json(config),
        *context_parts(ctx),
    )


def context_parts(ctx: ProbeContext) -> list[str | bytes]:
    """What a probe context holds, as hash parts: its settings (seed, top-k, capabilities,
    chunker), every chunk's (id, document, start, end, index) — a chunk's text, title and
    metadata are its document's — and the digest of the full JSON of every document, golden
    question and attack case, in order (``sha256_stream``: no corpus-sized buffer)."""
    chunks = (
        None
        if ctx.chunks is None
        else [(c.id, c.doc_id, c.start, c.end, c.index) for c in ctx.chunks]
    )
    settings = {
        "seed": ctx.seed,
        "top_k": ctx.top_k,
        "capabilities": sorted(str(c) for c in ctx.capabilities),
        "chunker": None if ctx.chunker is None else dict(ctx.chunker),
        "chunks": chunks,
    }
    return [
        key_json(settings),
        sha256_stream(_models("document", ctx.documents)),
        sha256_stream(_models("question", ctx.questions)),
        sha256_stream(_models("attack", ctx.attack_cases)),
    ]


def _models(label: str, models: Sequence[BaseModel]) -> Iterator[str | bytes]:
    """``label``, then each model's full JSON (NaN written as a token), in order."""
    yield label
    for model in models:
        yield pydantic_core.to_json(model, inf_nan_mode="constants")
