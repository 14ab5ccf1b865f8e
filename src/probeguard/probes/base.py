"""The probe protocol: a probe generates adversarial cases from the user's own corpus and
questions (pure, seeded, no I/O), and judges the records the runner brings back.

Cases come in *groups*: the cases of one probe unit (e.g. a question asked plainly and under
five paraphrases) share ``meta["group"]`` and are told apart by ``meta["role"]``. The runner
executes every case of every probe in one pass (identical calls are made once: the plain
question under the default variation is shared by all probes and the golden set); then
``judge`` sees one group's records by role and returns a ``ProbeVerdict`` whose evidence is
the probe's typed model (``probeguard.probes.models``). A probe's failure rate is the share of
judged groups that failed, with a Wilson interval; groups that cannot be judged
(``failed=None``: an errored call, nothing to measure) are counted apart, never as passes or
failures. ``summarize`` returns the probe's ``ProbeSummary``.

A probe also says what the rest of a scan needs to know about it, so that nothing outside the
probes names one: its ``overlap_weight`` (FCS), the ``failing_roles`` of a failed group (the
cases attribution re-runs), its ``fix_hints`` (which fix the recommender picks for a cause;
``FIX_HINTS`` lists them), its ``family`` (``FAMILIES``: the HotpotQA bench runs the
structural ones), its ``headlines`` (its rows in a backend comparison), whether it reads the
dataset's attack cases (``uses_attack_cases``) and whether its groups are benign controls
(``benign_controls``: ``probeguard fix`` counts their new failures as new false refusals).

Register a probe with ``@probe("name")`` on a ``Probe`` subclass (a third-party package adds an
entry point in the ``probeguard.probes`` group); ``probeguard list`` shows the registry.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar, cast

import numpy as np

from probeguard.core.cases import Case
from probeguard.core.documents import Chunk, Document
from probeguard.core.hashing import sha256_hex
from probeguard.core.pipeline import Capability, Variation
from probeguard.core.records import CaseRecord
from probeguard.metrics.retrieval import first_relevant_rank
from probeguard.probes.models import ProbeEvidence, ProbeSummary
from probeguard.stats import wilson

FIX_HINTS: dict[str, str] = {
    "paraphrase": "the question as worded misses evidence that the same question reworded "
    "finds: a retriever fix adds query expansion",
    "injection": "planted or untrusted text carries instructions or a payload: the corpus fix "
    "is source trust tiers and the instruction sanitiser",
    "near_duplicate": "a near-duplicate document that differs in one fact wins: the corpus fix "
    "is near-duplicate suppression",
    "outdated": "an outdated version (archived, superseded) wins: the corpus fix is date-aware "
    "ranking",
}
"""The fix hints a probe may give the recommender (``Probe.fix_hints``), and what each means.
The counterfactual swaps decide the cause and the failure's mechanism picks the fix
(``attribution.recommend``); a hint only adds a defence to it, or picks the fix when no
mechanism is named."""

FAMILIES: dict[str, str] = {
    "structural": "how the pipeline's own parts (chunking, retrieval, grounding in the "
    "retrieved text) handle the corpus and questions as they are, or under one planted "
    "document: ``probeguard bench hotpotqa`` runs every structural probe",
    "security": "what happens when anyone who can add a document is hostile, when the corpus "
    "cannot answer, and whether defences refuse what they should not",
}
"""The probe families a probe may declare (``Probe.family``), and what each covers."""

CONTROL_ROLES = re.compile(
    r"^(clean|original|control|document|clean_rerun_\d+|.*_clean|bystander.*)$"
)
"""Roles the default ``Probe.failing_roles`` takes for controls (never re-run by attribution)."""


@dataclass(frozen=True)
class Headline:
    """One row a probe adds to the backend comparison (``probeguard sweep``,
    ``comparison.md``): ``label``, and ``key``, the dotted path of the value in the probe's
    summary (``failure_rate``, ``overall.pass``; the row's path in ``comparison.json`` is
    ``probes.<probe>.<key>``). Rows are listed by ``order`` (lower first; ties in the order
    the probes are enabled, then as declared), after the golden rows and before FCS."""

    label: str
    key: str = "failure_rate"
    order: int = 100


@dataclass(frozen=True)
class ProbeContext:
    """Everything a probe may read to generate cases. Nothing here does I/O."""

    documents: tuple[Document, ...]
    questions: tuple[Case, ...]
    """The golden questions (with expected answers and gold evidence where known)."""
    seed: int = 0
    top_k: int = 5
    """The pipeline's retrieval depth: "gold evidence left the top-k" is judged against it."""
    capabilities: frozenset[Capability] = frozenset()
    chunks: tuple[Chunk, ...] | None = None
    """The pipeline's own chunks, when it exposes them (the reference pipeline does)."""
    chunker: Mapping[str, Any] | None = None
    """The pipeline's chunker config, when known (e.g. ``{"name": "tokens", "size": 128}``)."""
    attack_cases: tuple[Case, ...] = ()
    """Hand-written attack cases (``probeguard.dataset.attack_types``): inputs, like the golden
    questions; the scan loads them only when an enabled probe declares ``uses_attack_cases``,
    and such a probe makes its own cases from them."""
    _by_id: dict[str, Document] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._by_id.update({d.id: d for d in self.documents})

    def document(self, doc_id: str) -> Document | None:
        return self._by_id.get(doc_id)

    def rng(self, *key: str) -> np.random.Generator:
        """A generator seeded by (seed, key): each item gets its own stream, so a case does
        not change when another item is added or the order of generation changes."""
        digest = sha256_hex(str(self.seed), *key)
        return np.random.default_rng(int(digest[:16], 16))

    def retrieval_variation(self, **fields: Any) -> Variation:
        """A variation for a call whose answer the probe will not read (only its retrieved
        contexts): it asks for ``retrieve_only`` when the pipeline supports it, so a slow
        generator is not run for nothing."""
        return Variation(retrieve_only=Capability.RETRIEVE_ONLY in self.capabilities, **fields)

    def answerable(self) -> list[Case]:
        """Golden questions that expect an answer and name gold evidence."""
        return [
            q for q in self.questions if q.expected.mode == "answer" and q.expected.evidence_doc_ids
        ]


@dataclass(frozen=True)
class JudgeContext:
    """What ``judge`` may use besides the records: the probe context and shared detectors
    (built lazily by the scan, so a probe that needs none costs nothing)."""

    probe: ProbeContext
    detectors: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ProbeVerdict:
    """One group's outcome. ``failed`` is None when the group cannot be judged; then
    ``evidence.unscored`` says why. ``evidence`` is the probe's own model
    (``Probe.evidence_model``; a plain mapping is taken as a ``ProbeEvidence`` of its keys);
    ``run.json`` keeps its dump with the group."""

    failed: bool | None
    evidence: ProbeEvidence = field(default_factory=ProbeEvidence)

    def __post_init__(self) -> None:
        if not isinstance(self.evidence, ProbeEvidence):
            object.__setattr__(self, "evidence", ProbeEvidence.model_validate(self.evidence))


E = TypeVar("E", bound=ProbeEvidence)


class Probe(ABC, Generic[E]):
    """A failure family. Subclasses are registered with ``@probe(name)`` and configured by
    keyword settings (their constructor parameters); ``Probe[E]`` judges with evidence
    model ``E``."""

    name: ClassVar[str] = ""
    goal: ClassVar[str] = ""
    """One sentence: the failure this probe looks for."""
    requires: ClassVar[frozenset[Capability]] = frozenset()
    """Capabilities without which the probe cannot run on a pipeline (it is then skipped,
    and the report says why)."""
    overlap_weight: ClassVar[float] = 0.0
    """Share of this probe's failures that standard evaluation also catches, in [0, 1]: its
    weight in the Failure Coverage Score (``probes.overlap_weights`` in a config overrides
    it)."""
    evidence_model: ClassVar[type[ProbeEvidence]] = ProbeEvidence
    """The model of a verdict's evidence (``E``)."""
    summary_model: ClassVar[type[ProbeSummary]] = ProbeSummary
    """The model ``summarize`` returns."""
    fix_hints: ClassVar[frozenset[str]] = frozenset()
    """Hints (keys of ``FIX_HINTS``) for the fix of every failure of this probe; a probe
    whose cases differ overrides ``case_fix_hints``."""
    family: ClassVar[str] = ""
    """The probe's family (a key of ``FAMILIES``; empty: none): ``probeguard bench hotpotqa``
    runs every ``structural`` probe, one column each, in registry order."""
    headlines: ClassVar[tuple[Headline, ...]] = ()
    """The probe's rows in a backend comparison (``probeguard sweep``): label and summary key
    of each headline rate (none: the probe has no row)."""
    uses_attack_cases: ClassVar[bool] = False
    """The probe reads ``ProbeContext.attack_cases``: the scan loads the dataset's attack
    cases (the demo's, or ``corpus.attacks``) only when an enabled probe says so."""
    benign_controls: ClassVar[bool] = False
    """The probe's groups are benign controls: a failed group is a question the pipeline
    should answer and did not (a false refusal). ``probeguard fix`` re-runs them with every
    fix and counts the groups that newly fail as new false refusals (without such a probe in
    the run, the answerable golden questions are the controls)."""

    @abstractmethod
    def generate(self, ctx: ProbeContext) -> list[Case]:
        """Cases for this probe: pure and deterministic in ``ctx`` (incl. its seed)."""

    @abstractmethod
    def judge(
        self, group: str, records: Mapping[str, CaseRecord], ctx: JudgeContext
    ) -> ProbeVerdict:
        """The verdict for one group, from its records keyed by role."""

    def summarize(self, verdicts: Sequence[ProbeVerdict]) -> ProbeSummary:
        """The probe's summary; by default its failure rate over judged groups."""
        return ProbeSummary(**self.summary_fields(verdicts))

    def failing_roles(self, evidence: E, roles: Sequence[str]) -> tuple[str, ...]:
        """The roles, among a failed group's ``roles``, whose cases made it fail (attribution
        re-runs those under each swap); by default every role but the controls
        (``CONTROL_ROLES``)."""
        return tuple(r for r in roles if not CONTROL_ROLES.match(r))

    def failure_mechanism(self, evidence: E, cause: str) -> str | None:
        """How this failed group failed, as a ``core.mechanisms`` id, given the component the
        surgeon blamed (``cause``); ``None`` (the default) leaves the mechanism to the
        surgeon's own reading of its swaps. A probe that knows its mechanism from its own
        evidence (a fracture that the unsplit evidence repairs is ``chunk_boundary``)
        overrides this."""
        return None

    def case_fix_hints(self, case: Case) -> frozenset[str]:
        """The fix hints for a failure of ``case`` (by default ``fix_hints``)."""
        return self.fix_hints

    def read_evidence(self, data: Mapping[str, Any]) -> E:
        """Evidence as ``run.json`` keeps it, back as the probe's model."""
        return cast(E, self.evidence_model.model_validate(dict(data)))

    def evidence_of(self, verdict: ProbeVerdict) -> E:
        """A verdict's evidence as the probe's model."""
        evidence = verdict.evidence
        if isinstance(evidence, self.evidence_model):
            return cast(E, evidence)
        return self.read_evidence(evidence.model_dump())

    def config(self) -> dict[str, Any]:
        """The probe's settings, recorded in the run log."""
        return {"name": self.name}

    # -- helpers for subclasses ---------------------------------------------------------
    def summary_fields(self, verdicts: Sequence[ProbeVerdict]) -> dict[str, Any]:
        """The ``ProbeSummary`` fields over ``verdicts``: a subclass's summary starts here."""
        judged = [v for v in verdicts if v.failed is not None]
        return {
            "failure_rate": wilson(sum(1 for v in judged if v.failed), len(judged)),
            "groups": len(verdicts),
            "unscored": len(verdicts) - len(judged),
        }

    @staticmethod
    def deciding_error(records: Mapping[str, CaseRecord], deciding_roles: Sequence[str]) -> bool:
        """The one rule for errored cases, shared by every probe: a group is unscored
        (``failed=None``, counted in ``unscored``) when a case whose role could decide its
        verdict (``deciding_roles``) has no output; a group whose errored cases could not
        change the verdict is scored from the rest."""
        return any(role in records and records[role].output is None for role in deciding_roles)

    def deciding_roles(self, records: Mapping[str, CaseRecord]) -> tuple[str, ...]:
        """The roles among a group's ``records`` whose case could decide its verdict (the
        one rule for errored cases reads them: ``errored_unscored``); by default every role.
        A probe with roles that only add evidence (bystanders) overrides this."""
        return tuple(records)

    def errored_unscored(self, records: Mapping[str, CaseRecord]) -> str | None:
        """Why a group is unscored under the one rule for errored cases (``deciding_error``
        over ``deciding_roles``): ``the <role> call errored (<type>)`` for each errored
        deciding role; None when no deciding case errored. Applied whatever the other roles
        show, even a failure already certain: whether a group is scored then does not depend
        on its outcome, so errors cannot bias the failure rate."""
        deciding = self.deciding_roles(records)
        if not self.deciding_error(records, deciding):
            return None
        return "; ".join(
            f"the {role} call errored ({err.type if (err := records[role].error) else 'no output'})"
            for role in deciding
            if role in records and records[role].output is None
        )

    def case(self, group: str, role: str, question: str, **kwargs: Any) -> Case:
        """A case of this probe with id ``<probe>:<group>:<role>`` and group/role in meta."""
        meta = {"group": group, "role": role, **kwargs.pop("meta", {})}
        return Case(
            id=f"{self.name}:{group}:{role}",
            question=question,
            probe=self.name,
            meta=meta,
            **kwargs,
        )


def names_setting(
    setting: str, values: Sequence[str] | str, allowed: Sequence[str], *, allow_empty: bool = False
) -> tuple[str, ...]:
    """A probe setting that names a subset of ``allowed`` (styles, templates, types): distinct
    known names, in the order given; a single string counts as a list of one."""
    chosen = (values,) if isinstance(values, str) else tuple(values)
    unknown = [v for v in chosen if v not in allowed]
    if unknown or (not chosen and not allow_empty) or len(set(chosen)) != len(chosen):
        raise ValueError(
            f"{setting} must be distinct names among {', '.join(allowed)}; got {list(chosen)!r}"
        )
    return chosen


def count_setting(setting: str, value: Any) -> int:
    """A probe setting that is a count: an integer >= 0 (``True`` is not a count)."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or int(value) != value
        or value < 0
    ):
        raise ValueError(f"{setting} must be an integer >= 0, got {value!r}")
    return int(value)


def question_groups(questions: Sequence[Case]) -> list[tuple[str, Case]]:
    """(group id, question) for per-question probes: the question's id, with ``~2``, ``~3``
    … appended to a repeated id so that every group stays distinct."""
    seen: dict[str, int] = {}
    groups = []
    for question in questions:
        n = seen.get(question.id, 0)
        seen[question.id] = n + 1
        groups.append((question.id if n == 0 else f"{question.id}~{n + 1}", question))
    return groups


P = TypeVar("P", bound=type[Probe[Any]])

PROBES: dict[str, type[Probe[Any]]] = {}
"""Registered probes by name, in registration order."""


def probe(name: str) -> Callable[[P], P]:
    """Class decorator: register a ``Probe`` subclass under ``name``."""

    def register(cls: P) -> P:
        if name in PROBES and PROBES[name] is not cls:
            raise ValueError(f"probe '{name}' is already registered by {PROBES[name].__qualname__}")
        cls.name = name
        PROBES[name] = cls
        return cls

    return register


def group_records(
    records: Sequence[CaseRecord], probe_name: str
) -> dict[str, dict[str, CaseRecord]]:
    """A probe's records by group, then role (groups in first-seen order)."""
    groups: dict[str, dict[str, CaseRecord]] = {}
    for record in records:
        if record.case.probe == probe_name:
            meta = record.case.meta
            groups.setdefault(str(meta["group"]), {})[str(meta["role"])] = record
    return groups


def gold_rank(record: CaseRecord, evidence: Sequence[str]) -> int | None:
    """1-based rank of the first gold document among the record's retrieved chunks."""

    if record.output is None:
        return None
    ranked = [r.doc_id for r in sorted(record.output.retrieved, key=lambda r: r.rank)]
    return first_relevant_rank(ranked, evidence)
