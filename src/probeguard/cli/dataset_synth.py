"""``probeguard dataset synth CORPUS --n N --seed S --out cases.jsonl``: golden questions and
attack cases synthesized from a bare corpus, offline and deterministically
(``probeguard.engine.synth``). Two files: the golden questions in the golden-question format
(``--out``, the ``corpus.questions`` of a scan config) and the attack cases in the attack-case
format with its ``type`` (``--attacks``, default ``<out stem>.attacks.jsonl``; a scan config's
``corpus.attacks``).

``--rewrite llm`` then rewords every question through an LLM (``probeguard.engine.
synth_rewrite``): the budget is printed before any call, ``--max-calls`` bounds it, and the
calls start only after a confirmation (``--yes`` gives it up front)."""

from __future__ import annotations

from pathlib import Path

import click

from probeguard.cli.common import fail
from probeguard.config.loading import load_config
from probeguard.config.models import ScanConfig
from probeguard.core.documents import Document
from probeguard.core.errors import InputError, ProbeGuardError
from probeguard.core.redaction import redact_url
from probeguard.corpus.jsonl_writer import write_jsonl_atomic
from probeguard.corpus.loaders import FORMATS, load_corpus
from probeguard.dataset.rewrite_reply import REPLY_STYLES, ReplyStyle
from probeguard.dataset.synth import Synthesis, records
from probeguard.dataset.synth_rewrite import RewriteStats
from probeguard.detectors.factory import build_judges
from probeguard.engine.synth import BASELINE_K, bm25_ranker, synthesize_checked
from probeguard.engine.synth_rewrite import (
    REWRITERS,
    RewriteBudget,
    RewritePipeline,
    RewriteRun,
    default_style,
    judge_support,
    make_rewriter,
    plan_rewrites,
    rewrite_concurrency,
    rewrite_synthesis,
)
from probeguard.runner.cache import ResponseCache

__all__ = ["synth_command"]


def attacks_path(out: Path) -> Path:
    """The default attack file beside ``out``: ``<stem>.attacks.jsonl``."""
    return out.with_name(f"{out.stem}.attacks.jsonl")


def summary_lines(result: Synthesis) -> list[str]:
    """What the command prints: counts, by evolution and type, and what was dropped."""
    stats = result.stats
    share = stats.duplicate_share
    lines = [
        f"synthesized {len(result.golden) + len(result.attacks)} cases "
        f"({len(result.golden)} golden questions, {len(result.attacks)} attack cases) "
        f"from {len(stats.by_document)} documents, seed {result.seed}",
        "by evolution/type: " + ", ".join(f"{k} {v}" for k, v in stats.by_type.items()),
        f"near duplicates dropped: {stats.near_duplicates} of {stats.considered} drafts "
        f"considered ({share:.1%}); not retrieved by the BM25 baseline (top {BASELINE_K}): "
        f"{stats.not_retrieved}; question holding its own answer: {stats.answer_in_question}",
    ]
    return lines


def budget_line(budget: RewriteBudget, where: str) -> str:
    """The rewrite budget, printed before any call."""
    line = (
        f"rewrite budget ({where}): {budget.calls} calls for {budget.cases} cases "
        f"({budget.cached} cached), est. {budget.prompt_tokens:,} prompt tokens + at most "
        f"{budget.completion_tokens:,} completion tokens"
    )
    if budget.over_budget:
        line += f"; {budget.over_budget} over --max-calls keep their template"
    return line


def rewrite_lines(stats: RewriteStats, run: RewriteRun) -> list[str]:
    """What the rewrite did: counts by outcome and how the calls went."""
    total = stats.rewritten + sum(stats.kept.values())
    kept = ", ".join(f"{k} {v}" for k, v in stats.kept.items()) or "none"
    runner = run.runner
    return [
        f"rewritten {stats.rewritten} of {total}; template kept: {kept}",
        f"calls: {runner.calls} made, {runner.cache_hits} from the cache, {runner.retries} "
        f"retries, {runner.errors} failed",
    ]


def _where(kind: str, config: ScanConfig) -> str:
    if kind == "llama_cpp":
        return "llama.cpp, SmolLM2 (offline)"
    llm = config.judge.llm
    key = f", key from ${llm.api_key_env}" if llm.api_key_env else ""
    return f"{llm.model} at {redact_url(llm.base_url)}{key}"


def _rewrite(
    result: Synthesis,
    documents: list[Document],
    kind: str,
    config: ScanConfig,
    style: ReplyStyle,
    limits: tuple[int | None, bool],
) -> Synthesis:
    """Plan, print the budget, confirm, run the rewrites and print what they did;
    ``limits``: (``--max-calls``, ``--yes``)."""
    max_calls, yes = limits
    cache_dir = config.runner.cache_dir
    cache = ResponseCache(cache_dir) if cache_dir is not None else None
    pipeline = RewritePipeline(make_rewriter(kind, config, style), style)
    plan = plan_rewrites(result, pipeline, cache, max_calls)
    click.echo(budget_line(plan.budget, _where(kind, config)))
    if plan.budget.calls and not yes:
        click.confirm(f"send {plan.budget.calls} calls?", abort=True, err=True)
    run = rewrite_synthesis(
        plan,
        pipeline,
        result,
        cache=cache,
        concurrency=rewrite_concurrency(kind, config),
        retries=config.judge.llm.max_retries,
        rank=bm25_ranker(documents),
        k=BASELINE_K,
        supported=judge_support(build_judges(config.judge).claims, documents),
    )
    for line in rewrite_lines(run.stats, run):
        click.echo(line)
    return run.synthesis


@click.command(name="synth")
@click.argument("corpus", type=click.Path(exists=True, dir_okay=True, path_type=Path))
@click.option("--n", "n", type=click.IntRange(min=1), default=200, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option(
    "--attacks",
    "attacks_out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where the attack cases go (default: <out stem>.attacks.jsonl).",
)
@click.option("--format", "corpus_format", type=click.Choice(FORMATS), help="Corpus format.")
@click.option(
    "--rewrite",
    type=click.Choice(["none", "llm"]),
    default="none",
    show_default=True,
    help="Reword each question through an LLM, keeping the template when a check fails.",
)
@click.option(
    "--llm",
    "rewriter",
    type=click.Choice(REWRITERS),
    default="openai",
    show_default=True,
    help="The rewriting model: the OpenAI-compatible endpoint of judge.llm (--config, "
    "PROBEGUARD_JUDGE__LLM__*), or llama_cpp (the bundled SmolLM2, offline).",
)
@click.option(
    "--reply-style",
    type=click.Choice(REPLY_STYLES),
    help='How the rewriter replies: json ({"question": ...}) or line (the question alone, '
    "for small local models). Default: line for llama_cpp, json for openai.",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Config file: judge.llm (endpoint) and runner.cache_dir.",
)
@click.option(
    "--cache-dir", type=click.Path(file_okay=False, path_type=Path), help="Response cache."
)
@click.option("--max-calls", type=click.IntRange(min=0), help="Send at most N uncached calls.")
@click.option("--yes", "-y", is_flag=True, help="Send the calls without asking.")
def synth_command(
    corpus: Path,
    n: int,
    seed: int,
    out: Path,
    attacks_out: Path | None,
    corpus_format: str | None,
    rewrite: str,
    rewriter: str,
    reply_style: ReplyStyle | None,
    config_path: Path | None,
    cache_dir: Path | None,
    max_calls: int | None,
    yes: bool,
) -> None:
    """Synthesize N cases from CORPUS: golden questions whose answers are exact spans (seven
    evolutions) and attack cases (seven types); same corpus, N and seed → same bytes."""
    try:
        documents = load_corpus(corpus, format=corpus_format)
        overrides = {"runner": {"cache_dir": str(cache_dir)}} if cache_dir else {}
        config = load_config(config_path, overrides=overrides)
    except InputError as exc:
        fail(str(exc))
    result = synthesize_checked(documents, n, seed)
    for line in summary_lines(result):
        click.echo(line)
    if rewrite == "llm":
        try:
            style = reply_style or default_style(rewriter)
            result = _rewrite(result, documents, rewriter, config, style, (max_calls, yes))
        except ProbeGuardError as exc:
            fail(str(exc))
    target = attacks_out or attacks_path(out)
    write_jsonl_atomic(records(result.golden, attack=False), out)
    write_jsonl_atomic(records(result.attacks, attack=True), target)
    click.echo(f"wrote {out} and {target}")
