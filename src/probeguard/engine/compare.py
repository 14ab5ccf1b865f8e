"""``probeguard compare``: pair a baseline run with a candidate run unit by unit
(``engine.compare_units``), test each slice for a change (``stats.paired``), apply the gate
(``engine.gate``), and write ``compare.json``, ``compare.md`` and ``junit.xml``.

Pairing: a unit is paired on a slice when both runs scored it there. Units only one run has
(different questions, probes or seed) are counted apart, and the notes say so. Two runs over
different corpora (``corpus_fingerprint``) are refused (``InputError``) unless
``allow_different_corpus``: their units share ids but not their documents.

Per slice: the counts of new failures (b), fixes (c), still failing and still passing; the
failure rates of both runs over the paired units (Wilson); the difference with a paired
bootstrap interval; the exact McNemar p-value, Holm-adjusted within the slices of one kind;
and the minimum detectable difference at the policy's alpha and power.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from probeguard._version import __version__
from probeguard.config.gate import GatePolicy
from probeguard.core.artifacts import write_artifact
from probeguard.core.errors import InputError
from probeguard.core.io import atomic_write_text
from probeguard.engine.compare_units import Unit, run_units, slice_kind, slice_rates
from probeguard.engine.gate import evaluate_gate, run_ref
from probeguard.reports.compare_markdown import compare_markdown, step_summary
from probeguard.reports.html_pages import compare_html
from probeguard.reports.junit import compare_junit
from probeguard.results.compare import (
    CompareArtifact,
    PairCounts,
    SliceComparison,
    UnitChange,
)
from probeguard.results.run import RunLog, load_run_log
from probeguard.stats import (
    holm,
    mcnemar_exact,
    minimum_detectable_difference,
    paired_bootstrap_difference,
    wilson,
)

__all__ = [
    "COMPARE_JSON",
    "COMPARE_HTML",
    "COMPARE_MD",
    "JUNIT_XML",
    "CompareResult",
    "append_step_summary",
    "compare",
    "compare_runs",
    "write_compare",
]

COMPARE_JSON = "compare.json"
COMPARE_MD = "compare.md"
COMPARE_HTML = "compare.html"
JUNIT_XML = "junit.xml"


@dataclass(frozen=True)
class CompareResult:
    artifact: CompareArtifact
    out_dir: Path | None

    @property
    def exit_code(self) -> int:
        return self.artifact.gate.exit_code


def compare(
    baseline: str | Path,
    candidate: str | Path,
    out_dir: str | Path | None,
    *,
    policy: GatePolicy | None = None,
    allow_different_corpus: bool = False,
) -> CompareResult:
    """Load two run directories (or ``run.json`` files), compare them and, with ``out_dir``,
    write ``compare.json``, ``compare.md`` and ``junit.xml`` there."""
    base_run, cand_run = load_run_log(baseline), load_run_log(candidate)
    artifact = compare_runs(
        base_run,
        cand_run,
        policy=policy or GatePolicy(),
        paths=(str(baseline), str(candidate)),
        allow_different_corpus=allow_different_corpus,
    )
    out = None if out_dir is None else Path(out_dir)
    if out is not None:
        write_compare(artifact, out)
    return CompareResult(artifact=artifact, out_dir=out)


def write_compare(artifact: CompareArtifact, out: Path) -> None:
    """``compare.json``, ``compare.md``, ``compare.html`` and ``junit.xml`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    write_artifact(out / COMPARE_JSON, artifact)
    markdown = compare_markdown(artifact)
    atomic_write_text(out / COMPARE_MD, markdown)
    atomic_write_text(out / COMPARE_HTML, compare_html(artifact, markdown))
    atomic_write_text(out / JUNIT_XML, compare_junit(artifact))


def append_step_summary(artifact: CompareArtifact, path: str | Path) -> None:
    """Append the comparison's step summary (``reports.compare_markdown.step_summary``) to
    ``path``, the file ``$GITHUB_STEP_SUMMARY`` names in a GitHub Actions job."""
    with Path(path).open("a", encoding="utf-8") as handle:
        handle.write(step_summary(artifact))


def compare_runs(
    baseline: RunLog,
    candidate: RunLog,
    *,
    policy: GatePolicy,
    paths: tuple[str, str] = ("baseline", "candidate"),
    allow_different_corpus: bool = False,
) -> CompareArtifact:
    """The comparison of two loaded runs under ``policy`` (module doc)."""
    notes = _check_inputs(baseline, candidate, paths, allow_different_corpus)
    base_units, cand_units = run_units(baseline), run_units(candidate)
    slices = _compare_slices(base_units, cand_units, policy, seed=candidate.seed)
    only_b = sorted(set(base_units) - set(cand_units))
    only_c = sorted(set(cand_units) - set(base_units))
    if only_b or only_c:
        notes.append(
            f"the runs' inputs differ: {len(only_b)} units only in the baseline, "
            f"{len(only_c)} only in the candidate; the intersection is paired"
        )
    refs = (run_ref(baseline, paths[0]), run_ref(candidate, paths[1]))
    gate = evaluate_gate(policy, slice_rates(cand_units), refs[1], slices, baseline=refs[0])
    return CompareArtifact(
        probeguard_version=__version__,
        pipeline_name=candidate.pipeline_name,
        pipeline_fingerprint=candidate.pipeline_fingerprint,
        corpus_fingerprint=candidate.corpus_fingerprint,
        seed=candidate.seed,
        baseline=refs[0],
        candidate=refs[1],
        notes=notes,
        slices=slices,
        changes=_changes(base_units, cand_units, slices),
        gate=gate,
    )


def _check_inputs(
    baseline: RunLog, candidate: RunLog, paths: tuple[str, str], allow_different_corpus: bool
) -> list[str]:
    notes: list[str] = []
    b, c = baseline.corpus_fingerprint, candidate.corpus_fingerprint
    if b != c:
        if not allow_different_corpus:
            raise InputError(
                f"the corpus differs from the baseline's ({b} vs {c}); pass "
                "--allow-different-corpus to pair the runs' units all the same",
                file=paths[1],
                field="corpus_fingerprint",
            )
        notes.append("the runs scanned different corpora (--allow-different-corpus)")
    if baseline.seed != candidate.seed:
        notes.append(f"the seeds differ ({baseline.seed} vs {candidate.seed})")
    return notes


def _slice_members(units: Mapping[str, Unit]) -> dict[str, dict[str, bool | None]]:
    members: dict[str, dict[str, bool | None]] = {}
    for unit in units.values():
        for name, failed in unit.outcomes.items():
            members.setdefault(name, {})[unit.id] = failed
    return members


def _compare_slices(
    base_units: Mapping[str, Unit],
    cand_units: Mapping[str, Unit],
    policy: GatePolicy,
    *,
    seed: int,
) -> list[SliceComparison]:
    base, cand = _slice_members(base_units), _slice_members(cand_units)
    drafts = [
        _compare_slice(name, base.get(name, {}), cand.get(name, {}), policy, seed)
        for name in sorted(set(base) | set(cand))
    ]
    adjusted: dict[str, float] = {}
    for kind in ("probe", "golden", "tag", "attack_type"):
        family = [s for s in drafts if s.kind == kind]
        adjusted.update(zip((s.slice for s in family), holm([s.p_value for s in family])))
    return [s.model_copy(update={"p_adjusted": adjusted[s.slice]}) for s in drafts]


def _compare_slice(
    name: str,
    base: Mapping[str, bool | None],
    cand: Mapping[str, bool | None],
    policy: GatePolicy,
    seed: int,
) -> SliceComparison:
    both = [u for u in base if u in cand]
    paired = [u for u in both if base[u] is not None and cand[u] is not None]
    b_flags = [bool(base[u]) for u in paired]
    c_flags = [bool(cand[u]) for u in paired]
    new = [u for u, b, c in zip(paired, b_flags, c_flags) if c and not b]
    fixed = [u for u, b, c in zip(paired, b_flags, c_flags) if b and not c]
    counts = PairCounts(
        paired=len(paired),
        new_failures=len(new),
        fixed=len(fixed),
        still_failing=sum(b and c for b, c in zip(b_flags, c_flags)),
        still_passing=sum(not b and not c for b, c in zip(b_flags, c_flags)),
        unscored=len(both) - len(paired),
        only_baseline=len(base) - len(both),
        only_candidate=len(cand) - len(both),
    )
    p = mcnemar_exact(len(new), len(fixed)) if paired else math.nan
    return SliceComparison(
        slice=name,
        kind=slice_kind(name),
        counts=counts,
        baseline_rate=wilson(sum(b_flags), len(paired)),
        candidate_rate=wilson(sum(c_flags), len(paired)),
        difference=paired_bootstrap_difference(
            b_flags,
            c_flags,
            seed=_slice_seed(seed, name),
            resamples=policy.bootstrap_resamples,
        ),
        p_value=p,
        p_adjusted=p,
        mdd=minimum_detectable_difference(len(paired), policy.alpha, policy.power),
        new_failures=new,
        fixed=fixed,
    )


def _slice_seed(seed: int, name: str) -> int:
    """A seed per slice, derived from the run's seed and the slice's name (stable across
    processes, unlike ``hash``), so adding a slice changes no other slice's interval."""
    return (seed * 1_000_003 + zlib.crc32(name.encode())) % 2**32


def _changes(
    base_units: Mapping[str, Unit],
    cand_units: Mapping[str, Unit],
    slices: list[SliceComparison],
) -> list[UnitChange]:
    """Every unit that changed verdict in some probe or golden slice, new failures first."""
    found: dict[tuple[str, str], list[str]] = {}
    for s in slices:
        if s.kind not in ("probe", "golden"):
            continue
        for change, ids in (("new_failure", s.new_failures), ("fixed", s.fixed)):
            for uid in ids:
                found.setdefault((change, uid), []).append(s.slice)
    ordered = sorted(found, key=lambda k: (k[0] != "new_failure", k[1]))
    return [
        UnitChange(
            unit=uid,
            change=change,
            slices=found[(change, uid)],
            question=cand_units[uid].question,
            baseline=dict(base_units[uid].evidence),
            candidate=dict(cand_units[uid].evidence),
        )
        for change, uid in ordered
    ]
