"""Chunk fracture: gold evidence that chunking splits, and answers lost *because* of it.

Per answerable golden question (``ProbeContext.answerable()``) one group of two cases, the
question asked twice through the runner:

- ``chunked``: the pipeline as configured (the same call as the golden set's, so it is made
  once);
- ``unsplit``: ``Variation(chunking="document")``: the same evidence unsplit (retrieval and
  generation over whole documents; the surgeon's ``whole_document`` swap, so attribution
  re-uses the cached call). It is the control: never a failing role.

Two readings say whether the evidence was **split** (``fracture_outcome.evidence_split``):

(a) **Retrieval drop**: a gold document in the unsplit call's results that the chunked call
    does not retrieve at all (``dropped``). Both rank lists are kept: document ids by best
    rank (several chunks of one document count once, ``metrics.retrieval.dedupe``). Unknown
    when neither call reports retrieved contexts (one empty list is a real result) or when the
    unsplit call errored.
(b) **Boundary straddle**: the gold evidence span straddles a chunk boundary. The span is the
    *answer-bearing sentence* of each gold document (``answer_span``: a
    ``probeguard.nlp.text.sentence_spans`` sentence containing a gold answer string by
    ``contains_answer``; when several do, the one sharing most content words with the
    question, then the earliest). It straddles when no single chunk of the pipeline's own
    chunking (``ProbeContext.chunks``, character offsets) contains all of it. Unknown when
    the pipeline does not expose its chunks (``ctx.chunks is None``) or no gold document
    holds a sentence with a gold answer.

The answer is **lost** when the chunked answer contains no gold answer string. A group
**fails** (outcome ``fracture``) only when the evidence was split, the answer lost, *and* the
unsplit answer contains a gold answer string: the fracture is then the failure's mechanism
(``chunk_boundary``). Lost on both is ``lost_unsplit_too``: counted apart, not a failure of
this probe (a conservative generator refuses with whole documents as well; that loss is not
the chunker's). The other outcomes are ``survived``, ``not_split`` and ``unscored``
(``fracture_outcome`` has the rules). The one rule for errored cases
(``Probe.errored_unscored``): both roles can decide the verdict, so a group with an errored
(or missing) call is unscored, whatever the other call shows.

**Chunking sweep.** The spans are located, and their straddling measured, in ``generate``: a
pure computation over the context's documents (no pipeline calls). For every chunker spec in
``sweep`` (default token windows 40/0, 64/0, 128/0, 128/32, 256/64, WordPiece tokens when the
``onnx`` extra is installed) each span records whether it straddles a boundary under that
chunker; the spans travel in the ``chunked`` case's ``meta["spans"]`` and are copied into every
verdict's evidence, so ``summarize`` (which sees only verdicts) reports per spec the share of
answer-bearing spans that straddle (Wilson; the unit is the span, not the question). A rate
that falls as size and overlap grow says which chunk sizes cause fracture on this corpus.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from probeguard.core.cases import Case
from probeguard.core.documents import Chunk
from probeguard.core.estimate import Estimate
from probeguard.core.pipeline import Capability, PipelineOutput, Variation
from probeguard.core.records import CaseRecord
from probeguard.corpus.chunkers import make_chunker
from probeguard.corpus.chunking_base import Chunker
from probeguard.metrics.retrieval import dedupe
from probeguard.nlp.text import contains_answer
from probeguard.probes.base import Headline, JudgeContext, Probe, ProbeContext, ProbeVerdict, probe
from probeguard.probes.fracture_outcome import (
    FAILING_OUTCOME,
    OUTCOMES,
    evidence_split,
    fracture_outcome,
)
from probeguard.probes.fracture_spans import (
    answer_span,
    chunker_label,
    containing_chunks,
    straddles,
    sweep_spec,
)
from probeguard.probes.models import EvidenceModel, ProbeEvidence, ProbeSummary, SummaryModel
from probeguard.stats import proportion, wilson

__all__ = [
    "AnswerSpan",
    "ChunkFracture",
    "DEFAULT_SWEEP",
    "FractureEvidence",
    "FractureSummary",
    "answer_span",
    "chunker_label",
    "containing_chunks",
    "straddles",
]

DEFAULT_SWEEP: tuple[dict[str, Any], ...] = (
    {"name": "tokens", "size": 40, "overlap": 0},
    {"name": "tokens", "size": 64, "overlap": 0},
    {"name": "tokens", "size": 128, "overlap": 0},
    {"name": "tokens", "size": 128, "overlap": 32},
    {"name": "tokens", "size": 256, "overlap": 64},
)
"""Chunkings the sweep measures by default (token windows: size/overlap)."""

ROLES = ("chunked", "unsplit")
"""The split call and its unsplit control (module docstring)."""


class AnswerSpan(EvidenceModel):
    """An answer-bearing sentence of a gold document, located in ``generate``."""

    doc_id: str
    start: int
    end: int
    text: str
    straddles: bool | None = None
    """No chunk of the pipeline's own holds it all (set only when the chunks are known;
    None: the document has no chunks)."""
    chunk_ids: list[str] = []
    """The chunk holding it, or the chunks it is split across."""
    sweep: dict[str, bool] = {}
    """Whether it straddles a boundary, per chunker of the sweep."""


class FractureEvidence(ProbeEvidence):
    question_id: str | None = None
    spans: list[AnswerSpan] = []
    unlocated: list[dict[str, str]] = []
    """Gold documents without an answer-bearing sentence (``doc_id``, ``reason``)."""
    retrieved: dict[str, list[str]] = {}
    """Per role, the retrieved document ids by best rank."""
    ranks: dict[str, dict[str, int | None]] = {}
    """Per role, each gold document's rank (None: not retrieved)."""
    dropped: list[str] = []
    """Gold documents whole-document retrieval finds and chunked retrieval does not."""
    retrieval_fracture: bool | None = None
    """A gold document was dropped (``dropped`` not empty; None: unknown)."""
    answer_survived: bool | None = None
    """The chunked answer holds a gold answer string."""
    unsplit_answered: bool | None = None
    """The unsplit (whole-document) answer holds a gold answer string (None: not read)."""
    boundary_straddles: bool | None = None
    boundary_fracture: bool | None = None
    """An answer sentence straddles a boundary and the outcome is ``fracture``."""
    outcome: str = "unscored"
    """The group's outcome (``fracture_outcome.OUTCOMES``); only ``fracture`` fails."""
    partly_unscored: list[str] = []
    reasons: list[str] = []


class SweepRow(SummaryModel):
    chunker: str
    config: dict[str, Any]
    straddle_rate: Estimate


class FractureSummary(ProbeSummary):
    retrieval_fracture_rate: Estimate
    """Per question, a gold document dropped by chunked retrieval (whatever the answer)."""
    boundary_straddle_rate: Estimate
    boundary_fracture_rate: Estimate
    lost_unsplit_too_rate: Estimate
    """Per judged group, the evidence split and the answer lost with whole documents too:
    losses this probe does not count as fractures."""
    unsplit_repair_rate: Estimate
    """Among groups whose evidence was split and answer lost, the share the unsplit evidence
    repairs (``fracture`` over ``fracture`` + ``lost_unsplit_too``): how much of the loss on
    split evidence is the chunker's."""
    outcomes: dict[str, int]
    """Groups per outcome (every key of ``OUTCOMES``, zeros included)."""
    pipeline_span_straddle_rate: Estimate
    """Per span, under the pipeline's own chunks."""
    chunking_sweep: list[SweepRow]
    """Per chunker of the sweep, the share of spans that straddle a boundary."""


def _unscored(evidence: FractureEvidence, why: str) -> ProbeVerdict:
    evidence.outcome = "unscored"
    evidence.unscored = why
    return ProbeVerdict(None, evidence)


def _retrieval(
    evidence: FractureEvidence,
    gold: Sequence[str],
    outputs: Mapping[str, PipelineOutput],
    unscored: list[str],
) -> bool | None:
    """Reading (a): records each role's document ids by best rank and the gold ranks, and
    returns whether a gold document was dropped (None: unknown, the reason in ``unscored``)."""
    lists = {
        role: dedupe(r.doc_id for r in sorted(out.retrieved, key=lambda r: r.rank))
        for role, out in outputs.items()
    }
    evidence.retrieved = lists
    evidence.ranks = {
        role: {g: (ids.index(g) + 1 if g in ids else None) for g in gold}
        for role, ids in lists.items()
    }
    if not lists["chunked"] and not lists["unsplit"]:
        unscored.append("retrieval: the pipeline reported no retrieved contexts")
        return None
    evidence.dropped = [g for g in gold if g in lists["unsplit"] and g not in lists["chunked"]]
    evidence.retrieval_fracture = bool(evidence.dropped)
    return evidence.retrieval_fracture


def _boundary(evidence: FractureEvidence, chunks_known: bool, unscored: list[str]) -> bool | None:
    """Reading (b): whether an answer sentence straddles a boundary of the pipeline's chunks
    (None: unknown, the reason in ``unscored``)."""
    judged = [s for s in evidence.spans if s.straddles is not None]
    if not chunks_known:
        unscored.append("boundary: the pipeline does not expose its chunks")
        return None
    if not judged:
        unscored.append(
            "boundary: no answer-bearing sentence found in the gold documents"
            if not evidence.spans
            else "boundary: the gold documents have no chunks"
        )
        return None
    evidence.boundary_straddles = any(s.straddles for s in judged)
    return evidence.boundary_straddles


def _reasons(evidence: FractureEvidence, outcome: str) -> list[str]:
    """What split the evidence, and what the unsplit control showed, in words."""
    if outcome not in (FAILING_OUTCOME, "lost_unsplit_too"):
        return []
    reasons = [
        f"the answer sentence {s.doc_id}[{s.start}:{s.end}] is split across chunks "
        f"{', '.join(s.chunk_ids)}"
        for s in evidence.spans
        if s.straddles
    ]
    whole = evidence.ranks.get("unsplit", {})
    reasons += [
        f"gold document {g} is rank {whole.get(g)} with whole-document retrieval but not "
        f"retrieved from chunks"
        for g in evidence.dropped
    ]
    if outcome == FAILING_OUTCOME:
        reasons.append("the chunked answer lost the answer; with whole documents it is answered")
    else:
        found = [f"{g} at rank {r}" for g, r in whole.items() if r is not None]
        where = "gold " + ", ".join(found) if found else "no gold document retrieved"
        reasons.append(
            f"the answer is lost with whole documents too ({where}): not a fracture, the "
            f"loss is not the chunker's"
        )
    return reasons


@probe("chunk_fracture")
class ChunkFracture(Probe[FractureEvidence]):
    """Answers the chunking loses: split evidence, the answer lost, and an unsplit control
    (whole documents) that answers (module docstring). Settings: ``sweep`` (chunker configs
    or names such as ``"tokens-256-64"``) and ``tokenizer`` for the sweep's token chunkers."""

    goal = (
        "Answers lost because chunking split the gold evidence: an answer sentence split "
        "across a chunk boundary, or a gold document chunked retrieval drops, where the same "
        "question over whole documents is answered (lost there too: counted apart)."
    )
    requires = frozenset({Capability.CHUNKING})
    overlap_weight = 0.15
    evidence_model = FractureEvidence
    summary_model = FractureSummary
    family = "structural"
    headlines = (Headline("chunk fracture", order=70),)

    def __init__(
        self, sweep: Sequence[Mapping[str, Any] | str] = DEFAULT_SWEEP, tokenizer: str = "auto"
    ) -> None:
        if isinstance(sweep, (str, Mapping)):
            raise ValueError("chunk_fracture: sweep must be a list of chunker configs")
        self.tokenizer = tokenizer
        self._sweep: list[tuple[str, Chunker]] = []
        labels: set[str] = set()
        for item in sweep:
            chunker = make_chunker(sweep_spec(item, tokenizer))
            label = chunker_label(chunker.config())
            if label in labels:
                raise ValueError(f"chunk_fracture: sweep lists {label!r} twice")
            labels.add(label)
            self._sweep.append((label, chunker))

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "tokenizer": self.tokenizer,
            "sweep": [chunker.config() for _, chunker in self._sweep],
        }

    # -- generate -----------------------------------------------------------------------
    def generate(self, ctx: ProbeContext) -> list[Case]:
        by_doc: dict[str, list[Chunk]] | None = None
        if ctx.chunks is not None:
            by_doc = {}
            for chunk in ctx.chunks:
                by_doc.setdefault(chunk.doc_id, []).append(chunk)
            for chunks in by_doc.values():
                chunks.sort(key=lambda c: (c.start, c.end))
        sweep_bounds: dict[tuple[str, str], list[tuple[int, int]]] = {}
        cases: list[Case] = []
        for question in ctx.answerable():
            spans: list[dict[str, Any]] = []
            unlocated: list[dict[str, str]] = []
            for doc_id in question.expected.evidence_doc_ids:
                doc = ctx.document(doc_id)
                if doc is None:
                    unlocated.append({"doc_id": doc_id, "reason": "not in the corpus"})
                    continue
                span = answer_span(doc.text, question.expected.answers, question.question)
                if span is None:
                    unlocated.append(
                        {"doc_id": doc_id, "reason": "no sentence holds a gold answer string"}
                    )
                    continue
                entry: dict[str, Any] = {
                    "doc_id": doc_id,
                    "start": span[0],
                    "end": span[1],
                    "text": doc.text[span[0] : span[1]],
                }
                if by_doc is not None:
                    doc_chunks = by_doc.get(doc_id, [])
                    if doc_chunks:
                        straddle, ids = containing_chunks(span, doc_chunks)
                        entry["straddles"], entry["chunk_ids"] = straddle, ids
                    else:
                        entry["straddles"], entry["chunk_ids"] = None, []
                sweep: dict[str, bool] = {}
                for label, chunker in self._sweep:
                    key = (label, doc_id)
                    if key not in sweep_bounds:
                        sweep_bounds[key] = [(c.start, c.end) for c in chunker.chunk(doc)]
                    sweep[label] = straddles(span, sweep_bounds[key])
                entry["sweep"] = sweep
                spans.append(entry)
            meta = {
                "question_id": question.id,
                "chunks_known": by_doc is not None,
                "spans": spans,
                "unlocated": unlocated,
            }
            cases.append(
                self.case(
                    question.id, "chunked", question.question, expected=question.expected, meta=meta
                )
            )
            cases.append(
                self.case(
                    question.id,
                    "unsplit",
                    question.question,
                    variation=Variation(chunking="document"),
                    expected=question.expected,
                    meta={"question_id": question.id},
                )
            )
        return cases

    # -- judge --------------------------------------------------------------------------
    def judge(
        self, group: str, records: Mapping[str, CaseRecord], ctx: JudgeContext
    ) -> ProbeVerdict:
        chunked = records.get("chunked")
        meta = chunked.case.meta if chunked is not None else {}
        evidence = FractureEvidence(
            question_id=meta.get("question_id", group),
            spans=list(meta.get("spans", [])),
            unlocated=list(meta.get("unlocated", [])),
        )
        missing = [f"no record for role '{role}'" for role in ROLES if role not in records]
        errored = self.errored_unscored(records)
        if missing or errored:
            return _unscored(evidence, "; ".join([*missing, *([errored] if errored else [])]))
        chunked, unsplit = records["chunked"], records["unsplit"]
        assert chunked.output is not None and unsplit.output is not None
        answers = chunked.case.expected.answers
        lost = not any(contains_answer(chunked.output.answer, a) for a in answers)
        evidence.answer_survived = not lost
        unscored: list[str] = []
        outputs = {"chunked": chunked.output, "unsplit": unsplit.output}
        dropped = _retrieval(evidence, chunked.case.expected.evidence_doc_ids, outputs, unscored)
        straddling = _boundary(evidence, bool(meta.get("chunks_known", False)), unscored)
        evidence.unsplit_answered = any(contains_answer(unsplit.output.answer, a) for a in answers)
        split = evidence_split(straddling, dropped)
        outcome = fracture_outcome(split, lost, evidence.unsplit_answered)
        evidence.outcome = outcome
        evidence.partly_unscored = unscored
        if outcome == "unscored":
            return _unscored(evidence, "; ".join(unscored))
        failed = outcome == FAILING_OUTCOME
        if straddling is not None:
            evidence.boundary_fracture = bool(straddling) and failed
        evidence.reasons = _reasons(evidence, outcome)
        return ProbeVerdict(failed, evidence)

    def failing_roles(self, evidence: FractureEvidence, roles: Sequence[str]) -> tuple[str, ...]:
        """The chunked call: the unsplit one is the control, never re-run as a failure."""
        return ("chunked",)

    def failure_mechanism(self, evidence: FractureEvidence, cause: str) -> str | None:
        """``chunk_boundary`` for a fracture (the unsplit evidence repaired the answer, so the
        split is how it failed); otherwise the surgeon's own reading."""
        return "chunk_boundary" if evidence.outcome == FAILING_OUTCOME else None

    # -- summarize ----------------------------------------------------------------------
    def summarize(self, verdicts: Sequence[ProbeVerdict]) -> FractureSummary:
        """Base fields plus ``retrieval_fracture_rate``, ``boundary_straddle_rate`` and
        ``boundary_fracture_rate`` (per question, over the groups where each is judged),
        ``outcomes`` (groups per outcome), ``lost_unsplit_too_rate`` (over judged groups),
        ``unsplit_repair_rate`` (fractures over groups whose split evidence lost the answer),
        ``pipeline_span_straddle_rate`` (per span, the pipeline's own chunks) and
        ``chunking_sweep`` (per span and chunker spec, see the module docstring)."""
        evidence = [self.evidence_of(v) for v in verdicts]
        judged = [
            e.outcome for v, e in zip(verdicts, evidence, strict=True) if v.failed is not None
        ]
        lost_split = [
            o == FAILING_OUTCOME for o in judged if o in (FAILING_OUTCOME, "lost_unsplit_too")
        ]
        spans = [s for e in evidence for s in e.spans]
        sweep = []
        for label, chunker in self._sweep:
            flags = [bool(s.sweep[label]) for s in spans if label in s.sweep]
            sweep.append(
                SweepRow(
                    chunker=label,
                    config=chunker.config(),
                    straddle_rate=wilson(sum(flags), len(flags)),
                )
            )
        return FractureSummary(
            **self.summary_fields(verdicts),
            retrieval_fracture_rate=proportion(
                [e.retrieval_fracture for e in evidence if e.retrieval_fracture is not None]
            ),
            boundary_straddle_rate=proportion(
                [e.boundary_straddles for e in evidence if e.boundary_straddles is not None]
            ),
            boundary_fracture_rate=proportion(
                [e.boundary_fracture for e in evidence if e.boundary_fracture is not None]
            ),
            lost_unsplit_too_rate=proportion([o == "lost_unsplit_too" for o in judged]),
            unsplit_repair_rate=proportion(lost_split),
            outcomes={o: sum(e.outcome == o for e in evidence) for o in OUTCOMES},
            pipeline_span_straddle_rate=proportion(
                [bool(s.straddles) for s in spans if s.straddles is not None]
            ),
            chunking_sweep=sweep,
        )
