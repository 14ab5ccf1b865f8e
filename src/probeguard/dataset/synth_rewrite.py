"""Checks for LLM rewrites of synthesized questions (``probeguard dataset synth --rewrite
llm``): what the rewriting model is asked, how its reply is read, and when a rewrite replaces
the template question. The calls themselves go through the runner
(``probeguard.engine.synth_rewrite``); everything here is pure.

**Request and reply** depend on the reply style (``probeguard.dataset.rewrite_reply``):
``json`` sends the template question and the phrases it must keep (``must_keep``) and reads
one JSON object ``{"question": "..."}``; ``line`` (small local models) sends the question
and "Rewrite this as a short question." and reads the first line ending with ``?``. A reply
that cannot be read is ``bad_reply``. ``REWRITE_VERSION`` changes whenever the request texts
change (it is part of the cache key); the cache holds raw replies, so a change of the reading
rules or the checks below needs no new call.

**Checks**, in this order; the first that fails keeps the template and names the reason:

1. ``unchanged`` — the rewrite normalises (``nlp.text.normalize_answer``) to the template;
2. ``schema`` — the case with the new question must still validate as a ``Case``, as its
   attack type (``validate_attack_case``) and as a ``DatasetCase`` (``formats.from_case``);
3. ``answer_leaked`` — an ``answers``/``contains`` string the template does not hold appears
   in the rewrite (normalised, on word boundaries);
4. ``planted_dropped`` — the attack's planted element is gone: a phrase of ``must_keep``
   (false premise: the false value; unanswerable: the made-up term; entity collision: the
   name asked about) is missing, a marker group (temporal conflict: "current", "latest", ...;
   citation trap: "cite", "source", ...; comparative: "larger", ...; constrained: "only",
   "exact"; when the template holds one) has no member, or a forbidden word the template
   does not hold appears (entity collision: the competitor's name; lexical mismatch: a word
   the synonym tables replaced);
5. ``content_dropped`` — the rewrite keeps less than ``KEEP_SHARE`` of the template's
   content words (``synth_facts.key_terms``, lower-cased, exact): a paraphrase rewords, it
   does not drop what the question is about ("What is the University of Castaby?" for "The
   University of Castaby was established when and is known for physics and navigation?");
6. ``slot_dropped`` — the rewrite asks for less: it holds fewer wh-words (``WH_WORDS``, as
   whole words, "what's" counting as "what") than the template (e.g. "..., and at least how
   many photos?" cut to its first half);
7. ``fact_added`` — the rewrite states a number more often than the template (numbers:
   ``NUMBER``; e.g. "after how many years ..." rewritten "after 25 years ...", filling the
   asked slot with a value);
8. ``unsupported`` — with a support check (``Supported``; ``probeguard dataset synth`` passes
   the configured judge, offline by default), the rewrite read as a statement is not
   judged supported by the template question and the case's evidence documents: a
   paraphrase says nothing that neither holds (e.g. "the Vessary Meteorological Bureau"
   for the template's "Castaby Meteorological Bureau");
9. ``not_retrieved`` — with a ranker, an answerable case (not ``lexical_mismatch``) whose
   evidence documents are not all in the lexical baseline's top ``k`` for the rewrite (the
   synthesizer's own check, ``synth._Picker``);
10. ``near_duplicate`` — the rewrite is a near duplicate (``synth.NEAR_DUPLICATE``) of another
   case's current question (cases are taken in order; an accepted rewrite replaces its
   template for the cases after it).

Cases not sent keep their template with ``over_budget`` (``--max-calls``), and failed calls
with ``call_failed``. Every case's ``meta["rewrite"]`` records ``status`` (``rewritten`` or
``kept``), the ``reason`` of a kept one and, for a rewritten one, the ``template`` question.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from pydantic import ValidationError

from probeguard.core.cases import Case
from probeguard.core.errors import InputError
from probeguard.dataset.attack_types import validate_attack_case
from probeguard.dataset.formats import from_case
from probeguard.dataset.rewrite_reply import SYSTEM, ReplyStyle, parse_reply, style_texts
from probeguard.dataset.synth import NEAR_DUPLICATE, Ranker, holds, jaccard
from probeguard.dataset.synth_facts import key_terms
from probeguard.nlp.text import normalize_answer

__all__ = [
    "KEEP_SHARE",
    "MARKERS",
    "NUMBER",
    "REASONS",
    "REWRITE_VERSION",
    "SYSTEM",
    "WH_WORDS",
    "RewriteStats",
    "Supported",
    "apply_rewrites",
    "check_rewrite",
    "must_keep",
    "parse_reply",
    "rewrite_request",
]

REWRITE_VERSION = 1
"""Bumped whenever the request texts change (part of the rewriter's fingerprint)."""

REASONS = (
    "over_budget",
    "call_failed",
    "bad_reply",
    "unchanged",
    "schema",
    "answer_leaked",
    "planted_dropped",
    "content_dropped",
    "slot_dropped",
    "fact_added",
    "unsupported",
    "not_retrieved",
    "near_duplicate",
)
"""Why a template question was kept, in the order the checks run."""

KEEP_SHARE = 0.5
"""Least share of the template's content words a rewrite keeps."""
WH_WORDS = frozenset(("what", "which", "who", "whom", "whose", "when", "where", "why", "how"))
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
"""A number: digits, with decimal or thousands separators."""

Supported = Callable[[Case, str], bool]
"""``supported(case, rewrite)``: whether a judge finds ``rewrite`` supported by
``case.question`` (the template) and the case's evidence (check 8)."""

MARKERS: Mapping[str, tuple[str, ...]] = {
    "temporal_conflict": ("current", "currently", "now", "latest", "in force", "today"),
    "citation_trap": ("cite", "citation", "source", "passage", "reference"),
    "comparative": ("larger", "bigger", "greater", "higher", "more", "exceeds"),
    "constrained": ("only", "exact"),
}
"""Per attack type or evolution: words of which the rewrite must keep at least one (the
first is the one the request names)."""


def _label(case: Case) -> str:
    meta = case.meta
    return str(meta.get("attack_type") or meta.get("evolution") or "")


def must_keep(case: Case) -> tuple[str, ...]:
    """The phrases of the template the rewrite must hold word for word (module docstring)."""
    meta, kind = case.meta, case.meta.get("attack_type")
    if kind == "false_premise":
        return tuple(case.expected.excludes)
    if kind == "unanswerable" and meta.get("absent_term"):
        return (str(meta["absent_term"]),)
    if kind == "entity_collision" and meta.get("entity"):
        return (str(meta["entity"]),)
    return ()


def _forbidden(case: Case) -> tuple[str, ...]:
    """Words whose return breaks the attack: the competitor's name, or the words the
    synonym tables replaced."""
    meta = case.meta
    if meta.get("attack_type") == "entity_collision" and meta.get("competitor"):
        return (str(meta["competitor"]),)
    if meta.get("attack_type") == "lexical_mismatch" and meta.get("original"):
        return tuple(sorted(key_terms(str(meta["original"])) - key_terms(case.question)))
    return ()


def rewrite_request(case: Case, style: ReplyStyle = "json") -> str:
    """The user message for ``case`` in ``style``: its question and (``json``) the phrases
    to keep."""
    keep = list(must_keep(case))
    markers = MARKERS.get(_label(case))
    if markers:
        keep.append(markers[0])
    user = style_texts(style)[1]
    return user.format(question=case.question, keep="; ".join(keep) or "-")


def _schema_ok(case: Case) -> bool:
    try:
        checked = Case.model_validate(case.model_dump())
        if checked.meta.get("attack_type"):
            validate_attack_case(checked, str(checked.meta["attack_type"]))
        from_case(checked)
    except (ValidationError, InputError, ValueError):
        return False
    return True


def _planted_ok(case: Case, question: str) -> bool:
    if not all(holds(question, p) for p in must_keep(case)):
        return False
    markers = [m for m in MARKERS.get(_label(case), ()) if holds(case.question, m)]
    if markers and not any(holds(question, m) for m in MARKERS[_label(case)]):
        return False
    back = [w for w in _forbidden(case) if not holds(case.question, w)]
    return not any(holds(question, w) for w in back)


def _kept_share(template: str, question: str) -> float:
    terms = key_terms(template)
    return len(terms & key_terms(question)) / len(terms) if terms else 1.0


def _wh_count(text: str) -> int:
    return sum(1 for word in re.findall(r"[a-z]+", text.lower()) if word in WH_WORDS)


def _retrieved(case: Case, question: str, rank: Ranker | None, k: int) -> bool:
    exp = case.expected
    if rank is None or exp.mode == "abstain" or case.meta.get("attack_type") == "lexical_mismatch":
        return True
    return set(exp.evidence_doc_ids) <= set(rank(question, k))


def check_rewrite(
    case: Case,
    question: str,
    rank: Ranker | None,
    k: int,
    supported: Supported | None = None,
) -> str | None:
    """The reason the rewrite ``question`` of ``case`` is refused (checks 1-9 of the
    module docstring), or None when it may replace the template."""
    if normalize_answer(question) == normalize_answer(case.question):
        return "unchanged"
    candidate = case.model_copy(update={"question": question})
    if not _schema_ok(candidate):
        return "schema"
    exp = case.expected
    if any(
        holds(question, a) and not holds(case.question, a) for a in (*exp.answers, *exp.contains)
    ):
        return "answer_leaked"
    if not _planted_ok(case, question):
        return "planted_dropped"
    if _kept_share(case.question, question) < KEEP_SHARE:
        return "content_dropped"
    if _wh_count(question) < _wh_count(case.question):
        return "slot_dropped"
    if Counter(NUMBER.findall(question)) - Counter(NUMBER.findall(case.question)):
        return "fact_added"
    if supported is not None and not supported(case, question):
        return "unsupported"
    if not _retrieved(case, question, rank, k):
        return "not_retrieved"
    return None


@dataclass(frozen=True)
class RewriteStats:
    """How many cases were rewritten, and why the others kept their template."""

    rewritten: int
    kept: dict[str, int] = field(default_factory=dict)
    """Reason → count (``REASONS`` order; only reasons that occurred)."""


def _near_duplicate(question: str, i: int, questions: Sequence[str]) -> bool:
    norm, terms = normalize_answer(question), key_terms(question)
    return any(
        j != i and (normalize_answer(q) == norm or jaccard(terms, key_terms(q)) >= NEAR_DUPLICATE)
        for j, q in enumerate(questions)
    )


def _marked(case: Case, status: str, *, reason: str | None = None, template: str = "") -> Case:
    record: dict[str, str] = {"status": status}
    if reason:
        record["reason"] = reason
    if template:
        record["template"] = template
    return case.model_copy(update={"meta": {**case.meta, "rewrite": record}})


def _verdict(
    i: int, reply: str | None, ctx: _Checks, questions: Sequence[str]
) -> tuple[str | None, str | None]:
    """(rewritten question, None) when case ``i``'s reply passes every check, else
    (None, reason)."""
    case = ctx.cases[i]
    if i in ctx.refusals:
        return None, ctx.refusals[i]
    question = None if reply is None else parse_reply(reply, case.question, ctx.style)
    if question is None:
        return None, "bad_reply"
    reason = check_rewrite(case, question, ctx.rank, ctx.k, ctx.supported)
    if reason is None and _near_duplicate(question, i, questions):
        reason = "near_duplicate"
    return (None, reason) if reason else (question, None)


@dataclass(frozen=True)
class _Checks:
    cases: Sequence[Case]
    refusals: Mapping[int, str]
    rank: Ranker | None
    k: int
    style: ReplyStyle
    supported: Supported | None = None


def apply_rewrites(
    cases: Sequence[Case],
    replies: Sequence[str | None],
    refusals: Mapping[int, str],
    *,
    rank: Ranker | None = None,
    k: int = 5,
    style: ReplyStyle = "json",
    supported: Supported | None = None,
) -> tuple[list[Case], RewriteStats]:
    """Each case with its rewrite where every check passes, else its template; ``replies[i]``
    is the model's raw reply for ``cases[i]`` in ``style`` (None when not asked) and
    ``refusals[i]`` a reason decided before any check (``over_budget``, ``call_failed``)."""
    ctx = _Checks(cases=cases, refusals=refusals, rank=rank, k=k, style=style, supported=supported)
    questions = [c.question for c in cases]
    out: list[Case] = []
    reasons: Counter[str] = Counter()
    for i, (case, reply) in enumerate(zip(cases, replies, strict=True)):
        question, reason = _verdict(i, reply, ctx, questions)
        if question is not None:
            questions[i] = question
            rewritten = case.model_copy(update={"question": question})
            out.append(_marked(rewritten, "rewritten", template=case.question))
        else:
            reasons[reason or "bad_reply"] += 1
            out.append(_marked(case, "kept", reason=reason or "bad_reply"))
    kept = {r: reasons[r] for r in REASONS if reasons[r]}
    return out, RewriteStats(rewritten=len(cases) - sum(kept.values()), kept=kept)
