"""The NLI judge: a cross-encoder NLI model decides each claim×chunk cell (the production
path for users with the Hugging Face hub; extra ``sentence-transformers``). The model is
loaded on first use through ``NLIContradictionJudge.probabilities``
(``probeguard.detectors.contradiction``), which this judge reuses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from probeguard.core.hashing import digest
from probeguard.core.pipeline import Context
from probeguard.detectors.claims import AtomicClaim
from probeguard.detectors.contradiction import NLIContradictionJudge
from probeguard.detectors.judges import Judgment, Verdict, as_contexts, claim_texts
from probeguard.nlp.text import sentence_spans

__all__ = ["NliJudge"]


class NliJudge:
    """An NLI cross-encoder judge (the production path for users with the Hugging Face hub;
    extra ``sentence-transformers``, model loaded on first use through
    ``NLIContradictionJudge.probabilities``).

    For claim ``c`` and chunk ``k`` with sentences ``s_1..s_m`` (and ``k`` itself when
    ``m > 1``, for claims spread over sentences), premise = chunk text, hypothesis = claim::

        e = max_j P(entailment | s_j ⇒ c),   x = max_j P(contradiction | s_j ⇒ c)
        supported if e ≥ t;  else contradicted if x ≥ t;  else unsupported

    with ``t = threshold``; the score is ``e``, ``x`` or ``1 − max(e, x)`` respectively.
    """

    name = "nli"
    version = 1

    def __init__(
        self,
        model_name: str = "cross-encoder/nli-deberta-v3-base",
        threshold: float = 0.5,
        device: str = "cpu",
        batch_size: int = 16,
        max_length: int = 512,
    ) -> None:
        self.model = NLIContradictionJudge(model_name, threshold, device, batch_size, max_length)
        self.threshold = float(threshold)

    def config(self) -> dict[str, Any]:
        return {**self.model.config(), "name": self.name, "version": self.version}

    def fingerprint(self) -> str:
        return digest(self.config())[:16]

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> list[dict[str, float]]:
        return self.model.probabilities(pairs)

    def judge(
        self, claims: Sequence[str | AtomicClaim], contexts: Sequence[Context | str]
    ) -> Judgment:
        texts, ctxs = claim_texts(claims), as_contexts(contexts)
        premises: list[list[tuple[str, tuple[int, int] | None]]] = []
        for c in ctxs:
            spans = sentence_spans(c.text)
            ps: list[tuple[str, tuple[int, int] | None]] = [(c.text[s:e], (s, e)) for s, e in spans]
            if len(spans) > 1:
                ps.append((c.text, None))
            premises.append(ps)
        pairs = [(p, t) for t in texts for ps in premises for p, _ in ps]
        probs = iter(self.probabilities(pairs))
        rows = []
        for _text in texts:
            row = []
            for c, ps in zip(ctxs, premises):
                scored = [(next(probs), p, span) for p, span in ps]
                row.append(self._cell(c, scored))
            rows.append(tuple(row))
        return Judgment(texts, ctxs, tuple(rows), self.name, {"fingerprint": self.fingerprint()})

    def _cell(self, ctx: Context, scored: list[tuple[dict[str, float], str, Any]]) -> Verdict:
        if not scored:
            return Verdict("unsupported", 1.0, ctx.chunk_id, reason="the chunk is empty")
        ent = max(scored, key=lambda x: x[0].get("entailment", 0.0))
        con = max(scored, key=lambda x: x[0].get("contradiction", 0.0))
        e, x = ent[0].get("entailment", 0.0), con[0].get("contradiction", 0.0)
        if e >= self.threshold:
            return Verdict("supported", e, ctx.chunk_id, ent[1], ent[2], f"P(entailment)={e:.2f}")
        if x >= self.threshold:
            return Verdict(
                "contradicted", x, ctx.chunk_id, con[1], con[2], f"P(contradiction)={x:.2f}"
            )
        return Verdict(
            "unsupported",
            1.0 - max(e, x),
            ctx.chunk_id,
            ent[1],
            ent[2],
            f"P(entailment)={e:.2f}, P(contradiction)={x:.2f}",
        )
