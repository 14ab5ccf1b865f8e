"""Scan one planted pair (defect and twin, each a full scan with attribution) and score it.

Per pair, on the target probe's *units* (its scored groups; for ``golden``, the golden cases),
restricted to golden questions with the pair's ``tag`` when it has one:

* ``defect_rate`` / ``twin_rate``: failed units / scored units (Wilson 95%);
* ``separated``: ``defect_rate.low > twin_rate.high``;
* ``caused``: units failing in the defect and passing in the twin (paired by group id);
* ``named``: share of ``caused`` whose attribution names the planted mechanism (Wilson);
* ``twin_blame``: share of the twin's scored units whose attribution names it (Wilson);
* ``passed``: separated, ``caused > 0``, ``named >= 0.95`` and ``twin_blame <= 0.05``.

"Names the mechanism": the verdict's ``mechanism`` equals the planted id. Verdicts without a
``mechanism`` field (the surgeon before mechanisms) are read by component instead: ``cause``
equals the planted mechanism's component (``core.mechanisms.component_of``), and the row's
``basis`` says ``cause-only``. A failure the surgeon did not attribute (skipped) names nothing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.planted.pairs import Pair
from probeguard.config.models import ScanConfig
from probeguard.core.estimate import Estimate
from probeguard.core.mechanisms import component_of
from probeguard.corpus.loaders import load_corpus
from probeguard.corpus.questions import load_questions
from probeguard.engine.scan import scan
from probeguard.metrics.gate import top_score
from probeguard.pipeline.config import ReferencePipelineConfig
from probeguard.pipeline.defences.gate import calibrate_gate
from probeguard.pipeline.reference import ReferencePipeline
from probeguard.probes import load_probes
from probeguard.stats import wilson

__all__ = ["DATA", "PairResult", "measure_pair", "scan_config"]

DATA = Path(__file__).resolve().parent / "data"
"""The suite's corpus, golden questions and attack cases."""

NAMED_MIN = 0.95
TWIN_BLAME_MAX = 0.05


@dataclass(frozen=True)
class PairResult:
    """One row of the table."""

    name: str
    probe: str
    mechanism: str
    defect_rate: Estimate
    twin_rate: Estimate
    caused: int
    named: Estimate
    twin_blame: Estimate
    basis: str
    wall_s: float

    @property
    def separated(self) -> bool:
        return (
            self.defect_rate.defined
            and self.twin_rate.defined
            and (self.defect_rate.low > self.twin_rate.high)
        )

    @property
    def passed(self) -> bool:
        return (
            self.separated
            and self.caused > 0
            and self.named.value >= NAMED_MIN
            and self.twin_blame.defined
            and self.twin_blame.value <= TWIN_BLAME_MAX
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "probe": self.probe,
            "mechanism": self.mechanism,
            "defect_rate": self.defect_rate.model_dump(),
            "twin_rate": self.twin_rate.model_dump(),
            "separated": self.separated,
            "caused": self.caused,
            "named": self.named.model_dump(),
            "twin_blame": self.twin_blame.model_dump(),
            "basis": self.basis,
            "passed": self.passed,
        }


def target_probe(pair: Pair) -> str:
    """The first of the pair's probes that is registered (``golden`` always is)."""
    registered = set(load_probes()) | {"golden"}
    for name in pair.probes:
        if name in registered:
            return name
    raise KeyError(f"{pair.name}: none of {', '.join(pair.probes)} is registered")


def scan_config(
    reference: Mapping[str, Any], probe: str, settings: Mapping[str, Any], cache: Path
) -> ScanConfig:
    """The scan of one side: the suite's data, one probe (none for ``golden``), attribution."""
    enabled = [] if probe == "golden" else [probe]
    return ScanConfig.model_validate(
        {
            "seed": 0,
            "corpus": {
                "path": str(DATA / "corpus.jsonl"),
                "questions": str(DATA / "questions.jsonl"),
                "attacks": str(DATA / "attacks.jsonl"),
            },
            "pipeline": {"type": "reference", "reference": _resolved(reference)},
            "probes": {"enabled": enabled, "settings": {probe: dict(settings)} if enabled else {}},
            "runner": {"concurrency": 2, "cache_dir": str(cache)},
        }
    )


def _resolved(reference: Mapping[str, Any]) -> dict[str, Any]:
    """``"@corpus"`` in a generator's settings becomes the suite's corpus file."""
    out = dict(reference)
    generator = dict(out.get("generator", {}))
    if generator.get("corpus") == "@corpus":
        generator["corpus"] = str(DATA / "corpus.jsonl")
    out["generator"] = generator
    return out


def calibrated_bm25_gate(reference: Mapping[str, Any]) -> float:
    """A BM25 ``min_score`` for the twin's gate: ``calibrate_gate`` (Youden-best) between the
    top scores of the answerable golden questions and of ``gate_calibration.jsonl``'s held-out
    unanswerable ones (not the golden abstain questions, which the probe then measures)."""
    config = ReferencePipelineConfig.model_validate(_resolved(reference))
    pipeline = ReferencePipeline(load_corpus(DATA / "corpus.jsonl"), config).build()
    answerable = [
        c for c in load_questions(DATA / "questions.jsonl") if c.expected.mode == "answer"
    ]
    held_out = load_questions(DATA / "gate_calibration.jsonl")
    scores = {
        ok: [top_score(pipeline.answer(c.question)) for c in cases]
        for ok, cases in ((True, answerable), (False, held_out))
    }
    return calibrate_gate({"bm25": scores[True]}, {"bm25": scores[False]})["bm25"]


def twin_reference(pair: Pair) -> dict[str, Any]:
    """The twin's reference config, with the calibrated BM25 gate where the pair asks."""
    if not pair.calibrate_twin_gate:
        return dict(pair.twin)
    defences = dict(pair.twin.get("defences", {}))
    gate = {**defences.get("gate", {}), "bm25": calibrated_bm25_gate(pair.twin)}
    return {**pair.twin, "defences": {**defences, "gate": gate}}


def _tagged(tag: str | None) -> set[str] | None:
    if tag is None:
        return None
    return {c.id for c in load_questions(DATA / "questions.jsonl") if tag in c.tags}


def units(run: Mapping[str, Any], probe: str, keep: set[str] | None) -> dict[str, bool | None]:
    """Unit id → failed (None: unscored) for the target probe."""
    if probe == "golden":
        found: dict[str, bool | None] = {}
        for record in run["records"]:
            case = record["case"]
            if case.get("probe", "golden") != "golden":
                continue
            passed = record.get("verdict", {}).get("passed")
            found[case["id"]] = None if passed is None else not passed
    else:
        found = {g["group"]: g["failed"] for g in run["groups"] if g["probe"] == probe}
    return {u: f for u, f in found.items() if keep is None or u in keep}


def verdicts(run: Mapping[str, Any], probe: str) -> dict[str, Mapping[str, Any]]:
    """Unit id → the surgeon's verdict for the target probe."""
    return {a["group"]: a for a in run.get("attribution", []) if a["probe"] == probe}


def names(verdict: Mapping[str, Any] | None, mechanism: str) -> bool:
    """The verdict names the planted mechanism (by component when it has no mechanism)."""
    if verdict is None:
        return False
    if "mechanism" in verdict:
        return verdict.get("mechanism") == mechanism
    return verdict.get("cause") == component_of(mechanism)


def score_pair(
    pair: Pair, probe: str, defect_run: Mapping[str, Any], twin_run: Mapping[str, Any]
) -> tuple[Estimate, Estimate, int, Estimate, Estimate, str]:
    """The row's figures from the two run logs (module doc)."""
    keep = _tagged(pair.tag)
    d_units, t_units = units(defect_run, probe, keep), units(twin_run, probe, keep)
    d_verdicts, t_verdicts = verdicts(defect_run, probe), verdicts(twin_run, probe)
    caused = sorted(u for u, f in d_units.items() if f is True and t_units.get(u) is False)
    t_scored = [u for u, f in t_units.items() if f is not None]
    all_verdicts = [*d_verdicts.values(), *t_verdicts.values()]
    basis = "mechanism" if any("mechanism" in v for v in all_verdicts) else "cause-only"
    return (
        _rate(d_units.values()),
        _rate(t_units.values()),
        len(caused),
        wilson(sum(names(d_verdicts.get(u), pair.mechanism) for u in caused), len(caused)),
        wilson(sum(names(t_verdicts.get(u), pair.mechanism) for u in t_scored), len(t_scored)),
        basis,
    )


def _rate(flags: Any) -> Estimate:
    scored: Sequence[bool] = [f for f in flags if f is not None]
    return wilson(sum(scored), len(scored))


def _scan_side(reference: Mapping[str, Any], probe: str, pair: Pair, out: Path) -> dict[str, Any]:
    config = scan_config(reference, probe, pair.settings, out.parent / "cache")
    result = scan(config, out)
    data: dict[str, Any] = json.loads(result.run_path.read_text(encoding="utf-8"))
    return data


def measure_pair(pair: Pair, out_dir: Path) -> PairResult:
    """Scan the pair's defect and twin into ``out_dir/<name>/{defect,twin}`` and score it."""
    started = time.perf_counter()
    probe = target_probe(pair)
    base = out_dir / pair.name
    defect_run = _scan_side(pair.defect, probe, pair, base / "defect")
    twin_run = _scan_side(twin_reference(pair), probe, pair, base / "twin")
    d_rate, t_rate, caused, named, blame, basis = score_pair(pair, probe, defect_run, twin_run)
    return PairResult(
        name=pair.name,
        probe=probe,
        mechanism=pair.mechanism,
        defect_rate=d_rate,
        twin_rate=t_rate,
        caused=caused,
        named=named,
        twin_blame=blame,
        basis=basis,
        wall_s=round(time.perf_counter() - started, 1),
    )
