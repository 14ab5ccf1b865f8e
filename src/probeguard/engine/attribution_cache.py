"""The attribution pass of a scan, served from a content-addressed cache on a re-run.

``attribution.attribute`` is a pure function of its inputs and of the outputs of its
counterfactual re-runs, which come through the response cache. So its result is stored under
``<cache folder>/attributions`` (``engine.derived_cache``) by

    key = sha256(code_version, the probes' modules, attribution and probes config,
                 pipeline fingerprint and config, capabilities, the probe context
                 (engine.plans.context_parts), every scored record's JSON without the
                 fields the clock and the cache set (duration_s, cached, attempts),
                 every probe group's JSON)

together with the call key and the sha256 of the response-cache entry of every re-run it
made. A stored result is used only when each of those entries is still there with the same
bytes: then a fresh pass would read exactly those outputs, all from the cache, so it would
make no pipeline call (``summary.calls`` is 0, as a fresh pass over a full cache reports).
A result is stored only when every re-run ended with an output read back from a cache entry
(or a capability refusal, decided before any call) and its JSON reads back as it
(``derived_cache.same_repr``). A corrupt, unreadable or stale entry is a miss (logged) and
is recomputed.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from probeguard.attribution import AttributionConfig, AttributionResult, attribute
from probeguard.attribution.summary import AttributionSummary
from probeguard.core.cases import Case
from probeguard.core.hashing import sha256_hex, sha256_stream
from probeguard.core.records import Attribution, CaseRecord, ProbeGroup
from probeguard.engine.derived_cache import (
    DerivedCache,
    code_version,
    dump_model,
    key_json,
    modules_version,
    parse_model,
    records_digest,
    same_repr,
)
from probeguard.engine.plans import context_parts
from probeguard.probes import Probe, ProbeContext
from probeguard.probes.config import ProbesConfig
from probeguard.runner.cache import ResponseCache
from probeguard.runner.executor import Runner, RunResult

__all__ = ["ATTRIBUTIONS", "attribute_cached", "attribution_key"]

log = logging.getLogger(__name__)

ATTRIBUTIONS = "attributions"
"""The cache folder's sub-folder for attribution results."""


_DECIDED_BEFORE_CALLS = frozenset({"UnsupportedCapabilityError"})
"""Re-run errors that depend only on the case and the pipeline's capabilities (in the key)."""


class _Stored(BaseModel):
    """A stored attribution result and the response-cache entries its re-runs read."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=True)

    entries: list[Attribution]
    summary: AttributionSummary
    reads: list[tuple[str, str]]
    """(call key, sha256 of its response-cache entry) per re-run, in run order."""


class _RecordingRunner(Runner):
    """A ``Runner`` that keeps the results of its ``run`` calls."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.results: list[RunResult] = []

    def run(self, cases: Sequence[Case]) -> RunResult:
        result = super().run(cases)
        self.results.append(result)
        return result


def attribute_cached(
    inputs: dict[str, Any],
    rerunner: Runner,
    config: AttributionConfig,
    probes_config: ProbesConfig,
) -> AttributionResult:
    """``attribution.attribute(records, groups, probes, ctx, rerunner, config, ...)`` with
    ``inputs`` = its keyword arguments ``records``, ``groups``, ``probes``, ``ctx``,
    ``capabilities`` and ``pipeline_config``; served from ``<cache>/attributions`` when
    the runner has a response cache and a stored result still holds (module docstring)."""
    cache = rerunner.cache
    if cache is None:
        return attribute(runner=rerunner, config=config, **inputs)
    store = DerivedCache(cache.directory, ATTRIBUTIONS)
    key = attribution_key(inputs, rerunner.pipeline.fingerprint(), config, probes_config)
    stored = store.load(key, lambda payload: parse_model(_Stored, payload))
    if stored is not None and _still_holds(cache, stored.reads):
        summary = stored.summary.model_copy(update={"calls": 0})
        return AttributionResult(entries=stored.entries, summary=summary)
    if stored is not None:
        log.info("attribution cache: a re-run's cached output changed; recomputing")
    recording = _RecordingRunner(rerunner.pipeline, rerunner.config, cache=cache)
    result = attribute(runner=recording, config=config, **inputs)
    _store(store, key, result, cache, recording.results)
    return result


def _still_holds(cache: ResponseCache, reads: Sequence[tuple[str, str]]) -> bool:
    """Whether every (call key, sha256) still names a response-cache entry with those bytes."""
    return all(_entry_digest(cache, call_key) == digest for call_key, digest in reads)


def _entry_digest(cache: ResponseCache, call_key: str) -> str | None:
    """sha256 of the response-cache entry of ``call_key``; None when it cannot be read."""
    try:
        return hashlib.sha256(cache.path_for(call_key).read_bytes()).hexdigest()
    except (OSError, ValueError):
        return None


def _store(
    store: DerivedCache,
    key: str,
    result: AttributionResult,
    cache: ResponseCache,
    runs: Sequence[RunResult],
) -> None:
    """Store ``result`` with the entries its re-runs read, when it qualifies (module
    docstring); otherwise nothing."""
    reads = _reads(cache, [r for run in runs for r in run.records])
    if reads is None:
        return
    stored = _Stored(
        entries=result.entries,
        summary=result.summary.model_copy(update={"calls": None}),
        reads=reads,
    )
    payload = dump_model(stored)
    if not same_repr(parse_model(_Stored, payload), stored):
        log.debug("attribution cache: the result does not round-trip through JSON; not cached")
        return
    store.put(key, payload)


def _reads(cache: ResponseCache, records: Sequence[CaseRecord]) -> list[tuple[str, str]] | None:
    """(call key, sha256 of its entry) per re-run with an output; None when a re-run ended
    in an error other than a capability refusal, or its entry is missing."""
    reads: list[tuple[str, str]] = []
    for record in records:
        if record.output is None:
            if record.error is None or record.error.type not in _DECIDED_BEFORE_CALLS:
                return None
            continue
        digest = _entry_digest(cache, record.call_key)
        if digest is None:
            return None
        reads.append((record.call_key, digest))
    return reads


def attribution_key(
    inputs: dict[str, Any],
    pipeline_fingerprint: str,
    config: AttributionConfig,
    probes_config: ProbesConfig,
) -> str:
    """The content address of an attribution pass (see the module docstring)."""
    probes: Sequence[Probe] = inputs["probes"]
    ctx: ProbeContext = inputs["ctx"]
    records: Sequence[CaseRecord] = inputs["records"]
    groups: Sequence[ProbeGroup] = inputs["groups"]
    capabilities = inputs.get("capabilities")
    return sha256_hex(
        "attribution/1",
        code_version(),
        modules_version(type(p).__module__ for p in probes),
        key_json(config),
        key_json(probes_config),
        key_json([p.name for p in probes]),
        pipeline_fingerprint,
        key_json(inputs.get("pipeline_config") or {}),
        key_json(None if capabilities is None else sorted(str(c) for c in capabilities)),
        *context_parts(ctx),
        "records",
        records_digest(records),
        "groups",
        sha256_stream(key_json(g) for g in groups),
    )
