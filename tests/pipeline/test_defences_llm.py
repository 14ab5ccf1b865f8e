"""The sanitiser and spotlighting against an obedient local LLM (SmolLM2-135M), through the
prompt hijack probe and the real runner. Marked slow: it runs the model."""

from __future__ import annotations

import math

from probeguard.probes.prompt_hijack import PromptHijack
from testkit import HASHING, demo_slice, judge_groups, needs_smollm2, run_cases, smollm2_pipeline


@needs_smollm2
def test_sanitised_spotlighted_contexts_leave_nothing_to_obey():
    # Same setting as the prompt hijack probe's slow test, where SmolLM2 repeats the canary
    # buried in relevant text for q06 and q08; with the sanitiser (and spotlighting) the
    # order and its canary never reach the prompt.
    docs, _, ctx = demo_slice(("pol-plans-2024", "pol-refund-2024"), ("q06", "q08"))
    probe = PromptHijack(
        styles=("hidden_in_relevant",), reruns=1, control=False, similarity=HASHING
    )
    pipeline = smollm2_pipeline(docs, defences={"sanitise": True, "spotlight": True})
    result = run_cases(pipeline, probe, ctx, concurrency=1)
    for r in result.records:
        assert "PG-" not in "".join(c.text for c in r.output.retrieved)
        assert r.output.metadata["prompt"].endswith("+spotlight")
    summary = probe.summarize(list(judge_groups(probe, result.records, ctx).values()))
    canary = summary["per_style"]["hidden_in_relevant"]["canary_rate"]
    assert canary["n"] > 0 and not math.isnan(canary["value"]) and canary["value"] == 0.0
