"""A third-party probe, complete: one-letter typos in the golden questions.

A user types "retrun" for "return". Does the pipeline still answer? For every answerable golden
question this probe asks the question twice — as written (role ``original``: the golden run's
own call, so it costs nothing) and with two adjacent letters of its longest word swapped (role
``typo``) — and fails a group when the question as written is answered and the typo loses the
answer. ``docs/writing-a-probe.md`` walks through it.

Run it on the bundled demo (offline; writes run.json and report.md)::

    python examples/custom_probe.py runs/question-typo

Ship it in a package by naming the class in an entry point of the ``probeguard.probes`` group
(``pyproject.toml``)::

    [project.entry-points."probeguard.probes"]
    question_typo = "custom_probe:QuestionTypo"
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence

from probeguard import (
    Case,
    CaseRecord,
    Estimate,
    Headline,
    JudgeContext,
    Probe,
    ProbeContext,
    ProbeEvidence,
    ProbeSummary,
    ProbeVerdict,
    ScanConfig,
    probe,
    scan,
    wilson,
)

_WORD = re.compile(r"[A-Za-z]{5,}")


class TypoEvidence(ProbeEvidence):
    """What a reader needs to see why a group failed (only the fields set reach run.json)."""

    question_id: str | None = None
    word: str | None = None
    """The word misspelt, and how."""
    typo: str | None = None
    answered: bool | None = None
    """The question as written gets a gold answer."""
    answered_with_typo: bool | None = None
    gold_retrieved: bool | None = None
    """A gold document is retrieved for the question as written (None: not known)."""
    gold_retrieved_with_typo: bool | None = None


class TypoSummary(ProbeSummary):
    evidence_lost_rate: Estimate
    """Among groups whose question as written retrieves gold evidence, the share whose typo
    does not: a retrieval loss, not only a generation one."""


def misspell(question: str, rng_draw: int) -> tuple[str, str, str] | None:
    """``(question with a typo, word, misspelt word)``: two adjacent, different letters of
    the longest word (five letters or more; the first such on a tie) swapped, at position
    ``rng_draw`` modulo the places where a swap changes the word. None without such a word."""
    words = list(_WORD.finditer(question))
    if not words:
        return None
    m = max(words, key=lambda w: len(w.group(0)))
    word = m.group(0)
    places = [i for i in range(1, len(word) - 2) if word[i] != word[i + 1]]
    if not places:
        return None
    i = places[rng_draw % len(places)]
    typo = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    return question[: m.start()] + typo + question[m.end() :], word, typo


def _answered(record: CaseRecord) -> bool:
    answer = " ".join(record.output.answer.lower().split()) if record.output else ""
    return any(" ".join(a.lower().split()) in answer for a in record.case.expected.answers)


def _gold_retrieved(record: CaseRecord) -> bool | None:
    if record.output is None or not record.output.retrieved:
        return None  # the pipeline does not say what it retrieved
    gold = set(record.case.expected.evidence_doc_ids)
    return any(r.doc_id in gold for r in record.output.retrieved)


@probe("question_typo")
class QuestionTypo(Probe[TypoEvidence]):
    """Golden questions with a one-letter typo: an answer the typo loses fails."""

    goal = "A one-letter typo in a question the pipeline answers costs the answer."
    # Standard evaluation asks the questions as written, and this probe judges only those the
    # pipeline answers: it sees none of these failures.
    overlap_weight = 0.0
    evidence_model = TypoEvidence
    summary_model = TypoSummary
    # The question as worded misses evidence the same question well spelt finds: the
    # recommender's retriever fix then adds query expansion.
    fix_hints = frozenset({"paraphrase"})
    # It tests the pipeline's own retrieval and answering on the questions as users type them:
    # a structural probe, so `probeguard bench hotpotqa` runs it too.
    family = "structural"
    # Its rows in `probeguard sweep`'s backend comparison (after the built-in probes' rows).
    headlines = (
        Headline("question typo"),
        Headline("question typo: evidence lost", "evidence_lost_rate"),
    )

    def generate(self, ctx: ProbeContext) -> list[Case]:
        cases = []
        for q in ctx.answerable():
            made = misspell(q.question, int(ctx.rng(self.name, q.id).integers(0, 2**16)))
            if made is None:
                continue
            text, word, typo = made
            meta = {"question_id": q.id, "word": word, "typo": typo}
            cases.append(self.case(q.id, "original", q.question, expected=q.expected, meta=meta))
            cases.append(self.case(q.id, "typo", text, expected=q.expected, meta=meta))
        return cases

    def judge(
        self, group: str, records: Mapping[str, CaseRecord], ctx: JudgeContext
    ) -> ProbeVerdict:
        original, typo = records.get("original"), records.get("typo")
        source = original if original is not None else typo
        meta = source.case.meta if source is not None else {}
        evidence = TypoEvidence(
            question_id=meta.get("question_id", group), word=meta.get("word"), typo=meta.get("typo")
        )
        for role, record in (("original", original), ("typo", typo)):
            if record is None or record.output is None:
                evidence.unscored = f"the {role} call errored or is missing"
                return ProbeVerdict(None, evidence)
        assert original is not None and typo is not None
        evidence.answered = _answered(original)
        evidence.answered_with_typo = _answered(typo)
        evidence.gold_retrieved = _gold_retrieved(original)
        evidence.gold_retrieved_with_typo = _gold_retrieved(typo)
        if not evidence.answered:
            evidence.unscored = "the question as written is not answered: nothing to lose"
            return ProbeVerdict(None, evidence)
        return ProbeVerdict(not evidence.answered_with_typo, evidence)

    def failing_roles(self, evidence: TypoEvidence, roles: Sequence[str]) -> tuple[str, ...]:
        """The misspelt question (the one as written is the control)."""
        return ("typo",)

    def summarize(self, verdicts: Sequence[ProbeVerdict]) -> TypoSummary:
        evidence = [self.evidence_of(v) for v in verdicts]
        known = [e for e in evidence if e.gold_retrieved and e.gold_retrieved_with_typo is not None]
        lost = sum(1 for e in known if not e.gold_retrieved_with_typo)
        return TypoSummary(
            **self.summary_fields(verdicts), evidence_lost_rate=wilson(lost, len(known))
        )


def main(out_dir: str) -> None:
    """Scan the bundled demo with this probe alone, and print what it found."""
    result = scan(ScanConfig(demo=True, probes={"enabled": ["question_typo"]}), out_dir)
    summary = result.run.summary["probes"]["question_typo"]
    print(f"question_typo: failure rate {Estimate(**summary['failure_rate']).format()}")
    for entry in (e for e in result.run.attribution if e.probe == "question_typo"):
        fix = entry.recommendation["title"] if entry.recommendation else "none"
        print(f"  {entry.group}: cause {entry.cause}; fix: {fix}")
    print(f"report: {result.report_path}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "runs/question-typo")
