"""Chunk fracture: gold evidence that chunking hides from the pipeline.

Per answerable golden question (``ProbeContext.answerable()``) one group of two cases, the
question asked twice:

- ``chunked``: the pipeline as configured (the same call as the golden set's, so it is made
  once);
- ``document``: ``Variation(chunking="document")``, retrieval over whole documents (retrieval
  only, when the pipeline offers it: the probe reads ranks, not that answer).

Two failures are judged:

(a) **Retrieval fracture**: a gold document in the whole-document retrieval's results that the
    chunked retrieval does not return at all (``dropped``). Both rank lists are kept: document
    ids by best rank (several chunks of one document count once, ``metrics.retrieval.dedupe``).
    (a) is unscored only when neither call reports retrieved contexts; one empty list is a
    real result (nothing retrieved).
(b) **Boundary fracture**: the gold evidence span straddles a chunk boundary *and* the answer
    is lost. The span is the *answer-bearing sentence* of each gold document
    (``answer_span``: a ``probeguard.nlp.text.sentence_spans`` sentence containing a gold answer
    string by ``contains_answer``; when several do, the one sharing most content words with the
    question, then the earliest). It straddles when no single chunk of the pipeline's own
    chunking (``ProbeContext.chunks``, character offsets) contains all of it. The answer
    *survives* when the chunked answer still contains a gold answer string. When the pipeline
    does not expose its chunks (``ctx.chunks is None``), (b) is unscored for every group and
    the evidence says so; when no gold document holds a sentence with a gold answer, (b) is
    unscored for that group.

A group fails on (a) or on (b) — span straddles and answer lost. It is judged when (a) or (b)
can be; otherwise (an errored call, no retrieved contexts and no span) it is unscored.

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
from probeguard.core.pipeline import Capability
from probeguard.core.records import CaseRecord
from probeguard.corpus.chunkers import make_chunker
from probeguard.corpus.chunking_base import Chunker
from probeguard.metrics.retrieval import dedupe
from probeguard.nlp.text import contains_answer, content_words, sentence_spans
from probeguard.pipeline.reference import chunking_spec
from probeguard.probes.base import Headline, JudgeContext, Probe, ProbeContext, ProbeVerdict, probe
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

ROLES = ("chunked", "document")


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
    answer_survived: bool | None = None
    boundary_straddles: bool | None = None
    boundary_fracture: bool | None = None
    partly_unscored: list[str] = []
    reasons: list[str] = []


class SweepRow(SummaryModel):
    chunker: str
    config: dict[str, Any]
    straddle_rate: Estimate


class FractureSummary(ProbeSummary):
    retrieval_fracture_rate: Estimate
    boundary_straddle_rate: Estimate
    boundary_fracture_rate: Estimate
    pipeline_span_straddle_rate: Estimate
    """Per span, under the pipeline's own chunks."""
    chunking_sweep: list[SweepRow]
    """Per chunker of the sweep, the share of spans that straddle a boundary."""


def answer_span(text: str, answers: Sequence[str], question: str = "") -> tuple[int, int] | None:
    """``(start, end)`` of the answer-bearing sentence of ``text``: a sentence containing one
    of ``answers`` (normalised containment); among several, the one sharing most content
    words with ``question``, then the earliest. None when no sentence contains an answer."""
    found = [
        (s, e)
        for s, e in sentence_spans(text)
        if any(contains_answer(text[s:e], a) for a in answers)
    ]
    if not found:
        return None
    asked = set(content_words(question))
    return max(found, key=lambda se: (len(asked & set(content_words(text[se[0] : se[1]]))), -se[0]))


def straddles(span: tuple[int, int], bounds: Sequence[tuple[int, int]]) -> bool:
    """True when no chunk ``(start, end)`` in ``bounds`` contains the whole ``span``."""
    s, e = span
    return not any(cs <= s and ce >= e for cs, ce in bounds)


def containing_chunks(span: tuple[int, int], chunks: Sequence[Chunk]) -> tuple[bool, list[str]]:
    """``(straddles, chunk ids)``: the first chunk holding the whole span (not straddling), or
    every chunk overlapping it (the chunks the boundary splits it across)."""
    s, e = span
    for chunk in chunks:
        if chunk.start <= s and chunk.end >= e:
            return False, [chunk.id]
    return True, [c.id for c in chunks if c.start < e and c.end > s]


def chunker_label(config: Mapping[str, Any]) -> str:
    """A short name for a chunker config: ``tokens-128-32``, ``sentences-128-0``,
    ``document``."""
    name = str(config.get("name"))
    if name == "tokens":
        return f"tokens-{config.get('size')}-{config.get('overlap')}"
    if name == "sentences":
        return f"sentences-{config.get('max_tokens')}-{config.get('overlap_sentences')}"
    return name


def _spec(item: Mapping[str, Any] | str, tokenizer: str) -> dict[str, Any]:
    if isinstance(item, str):
        spec = chunking_spec(item)
    elif isinstance(item, Mapping):
        spec = dict(item)
    else:
        raise ValueError(
            f"chunk_fracture: a sweep entry must be a chunker config mapping or a "
            f"name like 'tokens-128-32', got {item!r}"
        )
    if spec.get("name") in ("tokens", "sentences"):
        spec.setdefault("tokenizer", tokenizer)
    return spec


@probe("chunk_fracture")
class ChunkFracture(Probe[FractureEvidence]):
    """Chunked vs whole-document retrieval, and answer sentences split by chunk boundaries
    (module docstring). Settings: ``sweep`` (chunker configs or names such as
    ``"tokens-256-64"``) and ``tokenizer`` for the sweep's token chunkers."""

    goal = (
        "Gold evidence hidden by chunking: a gold document whole-document retrieval finds "
        "but chunked retrieval drops, or an answer sentence split across a chunk boundary "
        "so that the answer is lost."
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
            chunker = make_chunker(_spec(item, tokenizer))
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
                    "document",
                    question.question,
                    variation=ctx.retrieval_variation(chunking="document"),
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
        for role in ROLES:
            record = records.get(role)
            if record is None:
                evidence.unscored = f"no record for role '{role}'"
                return ProbeVerdict(None, evidence)
            if record.output is None:
                err = record.error
                why = f"{err.type}: {err.message}" if err else "no output"
                evidence.unscored = f"the '{role}' call failed ({why})"
                return ProbeVerdict(None, evidence)
        assert chunked is not None
        document = records["document"]
        assert chunked.output is not None and document.output is not None
        expected = chunked.case.expected
        gold = list(expected.evidence_doc_ids)
        reasons: list[str] = []
        unscored: list[str] = []

        # (a) retrieval fracture
        outputs = {"chunked": chunked.output, "document": document.output}
        lists = {
            role: dedupe(r.doc_id for r in sorted(out.retrieved, key=lambda r: r.rank))
            for role, out in outputs.items()
        }
        evidence.retrieved = lists
        evidence.ranks = {
            role: {g: (lists[role].index(g) + 1 if g in lists[role] else None) for g in gold}
            for role in ROLES
        }
        retrieval: bool | None
        if not lists["chunked"] and not lists["document"]:
            retrieval = None
            unscored.append("retrieval: the pipeline reported no retrieved contexts")
        else:
            dropped = [g for g in gold if g in lists["document"] and g not in lists["chunked"]]
            evidence.dropped = dropped
            retrieval = bool(dropped)
            for g in dropped:
                reasons.append(
                    f"gold document {g} is rank {lists['document'].index(g) + 1} "
                    f"with whole-document retrieval but not retrieved from chunks"
                )
        evidence.retrieval_fracture = retrieval

        # (b) boundary fracture
        spans = evidence.spans
        boundary: bool | None = None
        straddling: bool | None = None
        survived = any(contains_answer(chunked.output.answer, a) for a in expected.answers)
        evidence.answer_survived = survived
        judged_spans = [s for s in spans if s.straddles is not None]
        if not meta.get("chunks_known", False):
            unscored.append("boundary: the pipeline does not expose its chunks")
        elif not judged_spans:
            unscored.append(
                "boundary: no answer-bearing sentence found in the gold documents"
                if not spans
                else "boundary: the gold documents have no chunks"
            )
        else:
            straddling = any(s.straddles for s in judged_spans)
            boundary = straddling and not survived
            if boundary:
                for s in judged_spans:
                    if s.straddles:
                        reasons.append(
                            f"the answer sentence {s.doc_id}[{s.start}:{s.end}] is split "
                            f"across chunks {', '.join(s.chunk_ids)} and the answer lost it"
                        )
        evidence.boundary_straddles = straddling
        evidence.boundary_fracture = boundary
        if unscored:
            evidence.partly_unscored = unscored
        if retrieval is None and boundary is None:
            evidence.unscored = "; ".join(unscored)
            return ProbeVerdict(None, evidence)
        failed = bool(retrieval) or bool(boundary)
        evidence.reasons = reasons
        return ProbeVerdict(failed, evidence)

    def failing_roles(self, evidence: FractureEvidence, roles: Sequence[str]) -> tuple[str, ...]:
        """The chunked call: the whole-document one is the control."""
        return ("chunked",)

    # -- summarize ----------------------------------------------------------------------
    def summarize(self, verdicts: Sequence[ProbeVerdict]) -> FractureSummary:
        """Base fields plus ``retrieval_fracture_rate``, ``boundary_straddle_rate`` and
        ``boundary_fracture_rate`` (per question, over the groups where each is judged),
        ``pipeline_span_straddle_rate`` (per span, the pipeline's own chunks) and
        ``chunking_sweep`` (per span and chunker spec, see the module docstring)."""
        evidence = [self.evidence_of(v) for v in verdicts]
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
            pipeline_span_straddle_rate=proportion(
                [bool(s.straddles) for s in spans if s.straddles is not None]
            ),
            chunking_sweep=sweep,
        )
