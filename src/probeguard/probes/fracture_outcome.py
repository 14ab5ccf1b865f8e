"""The outcome of one chunk-fracture group: did chunking lose the answer, or was it lost anyway?

A fracture is a *counterfactual* claim: the answer fails on the split evidence **and** comes
back when the same evidence is given unsplit. The probe asks the question twice through the
runner, as configured (role ``chunked``) and with whole-document chunking (role ``unsplit``,
``Variation(chunking="document")``: the same retriever, prompt and generator; only the chunking
differs, which is the surgeon's ``whole_document`` swap). Three readings decide the outcome:

- ``split``: the gold evidence was split by the chunking: an answer-bearing sentence straddles a
  boundary of the pipeline's own chunks, or a gold document that whole-document retrieval finds
  is not retrieved from chunks at all (``evidence_split``);
- ``lost``: the chunked answer contains no gold answer string (a refusal is a loss);
- ``unsplit_answered``: the unsplit answer contains a gold answer string.

The rules, in order (``fracture_outcome``):

1. ``lost`` is False -> ``survived`` when the evidence was (or may have been) split, else
   ``not_split``; not a failure.
2. ``split`` is None (neither the chunks nor any retrieved contexts say) -> ``unscored``.
3. ``split`` is False -> ``not_split``: the answer was lost for a reason other than chunking.
4. ``unsplit_answered`` -> ``fracture`` (the one failing outcome); else ``lost_unsplit_too``:
   the answer is lost with whole documents as well, so the failure is not the chunker's (a
   conservative generator that refuses anyway, a retriever that misses either way). It is
   counted apart, never as a fracture.

A group with an errored call never gets here: both roles can decide, so the probe unscores it
first (``Probe.errored_unscored``).
"""

from __future__ import annotations

__all__ = ["FAILING_OUTCOME", "OUTCOMES", "evidence_split", "fracture_outcome"]

OUTCOMES: dict[str, str] = {
    "fracture": "the evidence is split, the chunked answer lost it, and the same question with "
    "whole documents answers: chunking caused the loss",
    "lost_unsplit_too": "the evidence is split and the answer lost, but it is lost with whole "
    "documents too: not a fracture (the failure is not the chunker's)",
    "survived": "the chunked answer still holds a gold answer",
    "not_split": "the answer was lost, but the gold evidence was not split by the chunking",
    "unscored": "a deciding call errored, or nothing says whether the evidence was split",
}
"""Every outcome of a group, and what it means (``fracture`` is the only failure)."""

FAILING_OUTCOME = "fracture"


def evidence_split(straddling: bool | None, dropped: bool | None) -> bool | None:
    """The evidence was split: True when an answer sentence straddles a chunk boundary or a
    gold document was dropped by chunked retrieval; False when at least one of the two is
    known and neither holds; None when neither is known."""
    if straddling or dropped:
        return True
    if straddling is None and dropped is None:
        return None
    return False


def fracture_outcome(split: bool | None, lost: bool, unsplit_answered: bool | None) -> str:
    """The group's outcome by the rules of the module docstring (a key of ``OUTCOMES``)."""
    if not lost:
        return "not_split" if split is False else "survived"
    if split is None:
        return "unscored"
    if not split:
        return "not_split"
    if unsplit_answered is None:
        return "unscored"
    return "fracture" if unsplit_answered else "lost_unsplit_too"
