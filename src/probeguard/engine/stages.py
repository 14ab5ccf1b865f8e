"""The stages every command composes, each a function that returns a typed value and changes
none of its inputs:

    generate ──► execute ──► score ──► attribute ──► render
    Generated    Executed    Scored    Attributed    RunLog → run.json, report.md

``scan`` runs all five. ``eval`` generates its cases from a dataset, executes the ones that
need the pipeline and scores them with the standard metrics; ``fix`` re-executes a run's
recorded cases under a patched pipeline and re-scores them with ``golden_verdicts`` and
``probes.evaluate.judge_groups``; ``sweep`` and ``bench hotpotqa`` run ``scan`` per setting;
``bench poisonedrag`` generates the benchmark's cases and executes them. ``build_runner`` is
the one place a ``Runner`` is made from the config. The score stage never writes into a
record: it returns copies carrying their verdicts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from probeguard._version import __version__
from probeguard.attribution import AttributionSummary
from probeguard.config.models import ScanConfig
from probeguard.core.cases import Case
from probeguard.core.documents import Document, corpus_fingerprint
from probeguard.core.errors import InputError
from probeguard.core.io import atomic_write_pieces
from probeguard.core.pipeline import Pipeline
from probeguard.core.records import Attribution, CaseRecord, RunHeader, RunStats
from probeguard.corpus.loaders import load_corpus
from probeguard.dataset.formats import load_case_file
from probeguard.dataset.manifest import manifest_hashes
from probeguard.dataset.synth import GENERATOR, Synthesis
from probeguard.engine.attribution_cache import attribute_cached
from probeguard.engine.plans import cached_plan
from probeguard.engine.reports import REPORT_MD, write_reports
from probeguard.engine.scoring import Scored, golden_verdicts, score
from probeguard.engine.synth import synthesize_checked
from probeguard.log.writer import RunLogWriter
from probeguard.pipeline.adapters.callable import CallablePipeline
from probeguard.pipeline.adapters.http import HttpPipeline
from probeguard.pipeline.reference import ReferencePipeline
from probeguard.probes import ProbeContext, probe_classes
from probeguard.probes.evaluate import ProbePlan, probe_context
from probeguard.results.run import RunLog, SynthesizedInputs, run_json_pieces
from probeguard.runner.cache import ResponseCache
from probeguard.runner.executor import Runner, RunnerConfig
from probeguard.runner.prepare import prepare_run
from probeguard.runner.retry import RetryPolicy
from probeguard.runner.settings import RunnerSettings

__all__ = [
    "RUN_JSON",
    "RUN_JSONL",
    "REPORT_MD",
    "Attributed",
    "Executed",
    "Generated",
    "Scored",
    "assemble",
    "attribute_failures",
    "build_pipeline",
    "build_runner",
    "demo_data_dir",
    "execute",
    "execute_logged",
    "generate",
    "golden_verdicts",
    "load_attacks",
    "load_inputs",
    "render_run",
    "scan_attack_cases",
    "score",
    "synthesize_missing",
    "synthesized_record",
]

RUN_JSONL = "run.jsonl"
RUN_JSON = "run.json"


# -- inputs and parts ------------------------------------------------------------------------
def demo_data_dir() -> Path:
    """The bundled demo corpus and golden questions."""
    return Path(str(resources.files("probeguard.demo") / "data"))


def load_inputs(config: ScanConfig) -> tuple[list[Document], list[Case]]:
    """The corpus and the golden cases the config points at (or the demo's)."""
    if config.demo:
        data = demo_data_dir()
        documents = load_corpus(data / "corpus.jsonl")
        questions_path: Path | None = data / "questions.jsonl"
    else:
        if config.corpus.path is None:
            raise InputError(
                "no corpus: set corpus.path in the config (or use --demo)", field="corpus.path"
            )
        documents = load_corpus(
            config.corpus.path,
            format=config.corpus.format,
            id_field=config.corpus.id_field,
            text_field=config.corpus.text_field,
        )
        questions_path = config.corpus.questions
    cases = (
        load_case_file(questions_path, corpus_ids={d.id for d in documents})
        if questions_path is not None
        else []
    )
    return documents, cases


def load_attacks(config: ScanConfig, documents: Sequence[Document]) -> list[Case]:
    """The dataset's attack cases: the demo's bundled file, else ``corpus.attacks`` (none
    when unset). Loaded only when an enabled probe reads them (``Probe.uses_attack_cases``)."""
    if not any(cls.uses_attack_cases for cls in probe_classes(config.probes.enabled).values()):
        return []
    path = demo_data_dir() / "attacks.jsonl" if config.demo else config.corpus.attacks
    if path is None:
        return []
    return load_case_file(path, corpus_ids={d.id for d in documents}, attack=True)


def build_pipeline(config: ScanConfig, documents: Sequence[Document]) -> Pipeline:
    """The pipeline under test, as configured. A bad part (an unknown name or parameter, a
    bad URL) is an ``InputError`` whose field is the config path (``pipeline.http.url``)."""
    section = f"pipeline.{config.pipeline.type}"
    try:
        return _build_pipeline(config, documents)
    except InputError as exc:
        if exc.file is not None or (exc.field or "").startswith("pipeline."):
            raise
        field = f"{section}.{exc.field}" if exc.field else section
        raise InputError(exc.reason, field=field) from None
    except (ValueError, TypeError) as exc:
        raise InputError(str(exc), field=section) from None


def _build_pipeline(config: ScanConfig, documents: Sequence[Document]) -> Pipeline:
    pc = config.pipeline
    if pc.type == "reference":
        return ReferencePipeline(documents, pc.reference)
    if pc.type == "callable":
        if pc.callable is None:
            raise InputError(
                "pipeline.type is 'callable' but pipeline.callable is missing",
                field="pipeline.callable",
            )
        return CallablePipeline(pc.callable.target, version=pc.callable.version)

    if pc.http is None:
        raise InputError(
            "pipeline.type is 'http' but pipeline.http is missing", field="pipeline.http"
        )
    return HttpPipeline(**pc.http.model_dump())


def build_runner(
    settings: RunnerSettings,
    pipeline: Pipeline,
    *,
    log: RunLogWriter | None = None,
    resume_from: Mapping[str, CaseRecord] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Runner:
    """A ``Runner`` over ``pipeline`` as ``settings`` say: concurrency, per-call timeout,
    retries, and the response cache (``cache_dir``; None: none)."""
    return Runner(
        pipeline,
        RunnerConfig(
            concurrency=settings.concurrency,
            timeout_s=settings.timeout_s,
            retry=RetryPolicy(retries=settings.retries),
        ),
        cache=ResponseCache(settings.cache_dir) if settings.cache_dir else None,
        log=log,
        resume_from=resume_from,
        progress=progress,
    )


# -- generate --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Generated:
    """The generate stage: the pipeline under test, its inputs, and every case to run."""

    pipeline: Pipeline
    documents: tuple[Document, ...]
    golden: tuple[Case, ...]  # the golden questions, run first
    ctx: ProbeContext
    plan: ProbePlan
    """The probes that run, their cases, and the ones skipped."""
    header: RunHeader
    manifests: Mapping[str, str] | None = None
    """Case file name -> sha256 of the manifest it matched (``dataset.manifest``)."""
    synthesized: Synthesis | None = None
    """The cases synthesized from the corpus when the config gave no golden questions."""

    @property
    def cases(self) -> list[Case]:
        """Every case, in run order: the golden questions, then the probes' cases."""
        return [*self.golden, *self.plan.cases]


def generate(
    config: ScanConfig,
    *,
    pipeline: Pipeline | None = None,
    inputs: tuple[Sequence[Document], Sequence[Case]] | None = None,
) -> Generated:
    """Load the inputs (or take ``inputs``), build the pipeline (or take ``pipeline``) and
    generate the probes' cases. Pure apart from reading the inputs."""
    documents, golden = (list(inputs[0]), list(inputs[1])) if inputs else load_inputs(config)
    manifests = dataset_manifests(config)
    synthesized = None if inputs or golden else synthesize_missing(config, documents)
    if synthesized is not None:
        golden = list(synthesized.golden)
    if pipeline is None:
        pipeline = build_pipeline(config, documents)
    header = RunHeader(
        probeguard_version=__version__,
        pipeline_name=pipeline.name,
        pipeline_fingerprint=pipeline.fingerprint(),
        corpus_fingerprint=corpus_fingerprint(documents),
        seed=config.seed,
    )
    ctx = probe_context(
        pipeline,
        documents,
        golden,
        seed=config.seed,
        top_k=config.probes.top_k,
        attack_cases=scan_attack_cases(config, documents, synthesized),
    )
    return Generated(
        pipeline=pipeline,
        documents=tuple(documents),
        golden=tuple(golden),
        ctx=ctx,
        plan=cached_plan(config.probes, ctx, config.runner.cache_dir),
        header=header,
        manifests=manifests or None,
        synthesized=synthesized,
    )


def dataset_manifests(config: ScanConfig) -> dict[str, str]:
    """The questions and attack files checked against their manifests (none for the demo);
    a file that does not match its manifest is refused (``InputError``)."""
    if config.demo:
        return {}
    paths = [config.corpus.questions, config.corpus.attacks]
    return manifest_hashes(paths, config.corpus.manifest)


def synthesize_missing(config: ScanConfig, documents: Sequence[Document]) -> Synthesis | None:
    """The cases a scan without golden questions synthesizes (``corpus.synthesize`` of them,
    seeded by the scan's seed); None for the demo, with questions given, or with 0."""
    if config.demo or config.corpus.questions is not None or config.corpus.synthesize == 0:
        return None
    return synthesize_checked(documents, config.corpus.synthesize, config.seed)


def scan_attack_cases(
    config: ScanConfig, documents: Sequence[Document], synthesized: Synthesis | None
) -> list[Case]:
    """The configured attack cases; the synthesized ones when none are configured."""
    if synthesized is not None and config.corpus.attacks is None:
        if any(cls.uses_attack_cases for cls in probe_classes(config.probes.enabled).values()):
            return list(synthesized.attacks)
        return []
    return load_attacks(config, documents)


# -- execute ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Executed:
    """The execute stage: the runner's records (input order) and how the run went."""

    records: tuple[CaseRecord, ...]
    stats: RunStats
    runner: Runner
    """The runner that made them (re-runs share its pipeline, cache and settings)."""


def execute(runner: Runner, cases: Sequence[Case]) -> Executed:
    """Run ``cases`` through ``runner`` (the only way any command calls a pipeline)."""
    prepare_run(runner, cases)  # the indexes the cases read, before any call
    result = runner.run(list(cases))
    return Executed(records=tuple(result.records), stats=result.stats, runner=runner)


def execute_logged(
    generated: Generated,
    settings: RunnerSettings,
    out_dir: Path,
    *,
    resume: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Executed:
    """``execute`` with every finished case streamed to ``out_dir/run.jsonl`` (resuming the
    finished cases of an interrupted run there when ``resume``)."""
    writer = RunLogWriter(out_dir / RUN_JSONL, generated.header, resume=resume)
    try:
        runner = build_runner(
            settings,
            generated.pipeline,
            log=writer,
            resume_from=writer.finished() if resume else None,
            progress=progress,
        )
        return execute(runner, generated.cases)
    finally:
        writer.close()


# -- attribute -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Attributed:
    """The attribute stage: each attributed failure, and the totals (None when off)."""

    entries: tuple[Attribution, ...] = ()
    summary: AttributionSummary | None = None


def attribute_failures(
    config: ScanConfig, generated: Generated, executed: Executed, scored: Scored
) -> Attributed:
    """Every failure's swaps through the scan's runner (same pipeline, cache and settings; no
    ``run.jsonl`` entries) in one extra run, or a cached pass (``engine.attribution_cache``)."""
    if not config.attribution.enabled:
        return Attributed()
    pipeline = generated.pipeline
    reference: Any = getattr(pipeline, "config", None)
    pipeline_config = reference.model_dump(mode="json") if hasattr(reference, "model_dump") else {}
    inputs = {
        "records": scored.records,
        "groups": scored.probes.groups,
        "probes": generated.plan.probes,
        "ctx": generated.ctx,
        "capabilities": frozenset(pipeline.capabilities),
        "pipeline_config": pipeline_config,
    }
    rerunner = Runner(pipeline, executed.runner.config, cache=executed.runner.cache)
    result = attribute_cached(inputs, rerunner, config.attribution, config.probes)
    return Attributed(entries=tuple(result.entries), summary=result.summary)


# -- render ----------------------------------------------------------------------------------
def assemble(
    config: ScanConfig,
    generated: Generated,
    executed: Executed,
    scored: Scored,
    attributed: Attributed,
    *,
    wall_s: float,
) -> RunLog:
    """The run log of a scan from its stages' values; the attribution's call count goes to
    ``stats`` (it depends on the cache), the rest of its totals to ``summary``."""
    header = generated.header
    summary = attributed.summary
    return RunLog(
        probeguard_version=header.probeguard_version,
        pipeline_name=header.pipeline_name,
        pipeline_fingerprint=header.pipeline_fingerprint,
        corpus_fingerprint=header.corpus_fingerprint,
        seed=header.seed,
        config=config.recorded(),
        stats=executed.stats.model_copy(
            update={"wall_s": wall_s, "attribution_calls": summary.calls if summary else None}
        ),
        summary=scored.summary.model_copy(
            update={"attribution": summary.model_copy(update={"calls": None}) if summary else None}
        ),
        records=list(scored.records),
        groups=list(scored.probes.groups),
        attribution=list(attributed.entries),
        dataset_manifests=dict(generated.manifests) if generated.manifests else None,
        synthesized=synthesized_record(generated.synthesized),
    )


def synthesized_record(synthesized: Synthesis | None) -> SynthesizedInputs | None:
    """What ``run.json`` records of the synthesized inputs."""
    if synthesized is None:
        return None
    return SynthesizedInputs(
        golden=len(synthesized.golden),
        attacks=len(synthesized.attacks),
        seed=synthesized.seed,
        generator=GENERATOR,
        by_type=dict(synthesized.stats.by_type),
        near_duplicates=synthesized.stats.near_duplicates,
        considered=synthesized.stats.considered,
    )


def render_run(run: RunLog, out_dir: Path) -> None:
    """Write ``run.json`` (streamed: ``run_json_pieces``), ``report.md`` and ``report.html``."""
    atomic_write_pieces(out_dir / RUN_JSON, run_json_pieces(run))
    write_reports(run, out_dir)
