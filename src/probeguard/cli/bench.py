"""``probeguard bench``: the public benchmarks (HotpotQA, PoisonedRAG, the judge check, the
judges against human labels; SQuAD, RGB and ClapNQ from ``cli.bench_qa``)."""

from __future__ import annotations

from pathlib import Path

import click

from probeguard.cli.bench_qa import bench_clapnq, bench_rgb, bench_squad
from probeguard.cli.bench_qasper import bench_qasper
from probeguard.cli.common import fail, progress_bar
from probeguard.config.loading import load_config
from probeguard.core.artifacts import write_artifact
from probeguard.core.errors import ProbeGuardError
from probeguard.engine.bench import (
    hotpotqa,
    judge,
    judge_data,
    judges,
    judges_data,
    judges_models,
    poisonedrag,
    poisonedrag_data,
)
from probeguard.engine.bench.report import write_bench_report

__all__ = ["bench"]


@click.group()
def bench() -> None:
    """Benchmarks on public data."""


for _command in (bench_squad, bench_rgb, bench_clapnq):
    bench.add_command(_command)


@bench.command(name="hotpotqa")
@click.option(
    "--data",
    "data_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="qa_one_turn.jsonl (default: $PROBEGUARD_SHARED_DATA/halueval/ or ../shared/data/halueval/).",
)
@click.option("--n-docs", type=int, default=250, show_default=True)
@click.option("--n-queries", type=int, default=50, show_default=True)
@click.option("--seed", type=int, default=42, show_default=True)
@click.option(
    "--generators",
    default="extractive,smollm2",
    show_default=True,
    help="Comma-separated: extractive, smollm2.",
)
@click.option("--concurrency", type=int, default=4, show_default=True)
@click.option(
    "--chunk-size",
    type=int,
    default=128,
    show_default=True,
    help="Token-window chunk size of the reference pipeline.",
)
@click.option("--chunk-overlap", type=int, default=32, show_default=True)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("runs/bench-hotpotqa"),
    show_default=True,
)
def bench_hotpotqa(
    data_file: Path | None,
    n_docs: int,
    n_queries: int,
    seed: int,
    generators: str,
    concurrency: int,
    chunk_size: int,
    chunk_overlap: int,
    out_dir: Path,
) -> None:
    """The structural probes, FCS and standard evaluation on HotpotQA, per generator."""
    path = data_file or hotpotqa.default_data_file()
    if not path.is_file():
        click.echo(
            f"skipped: HotpotQA data not found at {path} (give --data or set "
            "PROBEGUARD_SHARED_DATA to the folder that holds halueval/)"
        )
        return
    names = [g.strip() for g in generators.split(",") if g.strip()]
    try:
        with progress_bar(disabled=False) as progress:
            chunker = {"name": "tokens", "size": chunk_size, "overlap": chunk_overlap}
            rows = hotpotqa.run_hotpotqa(
                path,
                out_dir,
                n_docs=n_docs,
                n_queries=n_queries,
                seed=seed,
                generators=names,
                concurrency=concurrency,
                reference={"chunker": chunker},
                progress=lambda _name, done, total: progress(done, total),
            )
    except ProbeGuardError as exc:
        fail(str(exc))
        return
    table = hotpotqa.render_table(rows, n_docs=n_docs, n_queries=n_queries, seed=seed)

    write_bench_report(out_dir, table)
    click.echo(table)
    click.echo(f"runs: {', '.join(str(r.run_dir) for r in rows)}; table: {out_dir / 'bench.md'}")


@bench.command(name="poisonedrag")
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder holding poisonedrag/nq.json and nq_open_oracle/ (default: "
    "$PROBEGUARD_SHARED_DATA or ../shared/data).",
)
@click.option(
    "--backends",
    default="dense,bm25,hybrid",
    show_default=True,
    help="Comma-separated retrievers: dense, bm25, hybrid.",
)
@click.option(
    "--generators",
    default="extractive,smollm2",
    show_default=True,
    help="Comma-separated: extractive, smollm2.",
)
@click.option(
    "--embedder",
    type=click.Choice(["minilm", "hashing"]),
    default="minilm",
    show_default=True,
    help="Embedder of dense and hybrid retrieval.",
)
@click.option(
    "--top-k",
    type=int,
    default=5,
    show_default=True,
    help="Passages retrieved (5, as in the paper).",
)
@click.option("--limit", type=int, help="Only the first N matched targets.")
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap interval."
)
@click.option("--concurrency", type=int, default=4, show_default=True)
@click.option("--no-cache", is_flag=True, help="Do not read or write the response cache.")
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Response cache folder (default: OUT/cache).",
)
@click.option("--no-progress", is_flag=True, help="Hide the progress bar.")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("runs/bench-poisonedrag"),
    show_default=True,
)
def bench_poisonedrag(
    data_dir: Path | None,
    backends: str,
    generators: str,
    embedder: str,
    top_k: int,
    limit: int | None,
    seed: int,
    concurrency: int,
    no_cache: bool,
    cache_dir: Path | None,
    no_progress: bool,
    out_dir: Path,
) -> None:
    """PoisonedRAG's NQ attack (5 adversarial passages per target) on the reference pipeline:
    attack success rate per backend and generator, against the paper's figure."""

    root = data_dir or poisonedrag_data.default_data_dir()
    missing = [p for p in poisonedrag_data.data_files(root) if not p.is_file()]
    if missing:
        fail(
            f"PoisonedRAG data not found: looked for {', '.join(str(p) for p in missing)} "
            "(give --data-dir or set PROBEGUARD_SHARED_DATA to the folder that holds "
            "poisonedrag/ and nq_open_oracle/)"
        )
        return
    split = lambda text: [s.strip() for s in text.split(",") if s.strip()]
    try:
        with progress_bar(disabled=no_progress) as progress:
            result = poisonedrag.run_poisonedrag(
                root,
                out_dir,
                backends=split(backends),
                generators=split(generators),
                embedder=embedder,
                top_k=top_k,
                limit=limit,
                seed=seed,
                concurrency=concurrency,
                cache_dir=None if no_cache else (cache_dir or out_dir / "cache"),
                progress=lambda _label, done, total: progress(done, total),
            )
    except ProbeGuardError as exc:
        fail(str(exc))
        return
    table = poisonedrag.render_table(result)
    write_bench_report(out_dir, table)
    write_artifact(out_dir / "bench.json", result.artifact())
    click.echo(table)
    calls = sum(r.calls for r in result.rows)
    hits = sum(r.cache_hits for r in result.rows)
    click.echo(
        f"{calls} pipeline calls, {hits} cache hits; table: {out_dir / 'bench.md'}; "
        f"result: {out_dir / 'bench.json'}"
    )


@bench.command(name="judge")
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder holding halueval/qa_one_turn.jsonl and xquad_en/xquad.en.json (default: "
    "$PROBEGUARD_SHARED_DATA or ../shared/data).",
)
@click.option(
    "--halueval",
    "halueval_limit",
    type=int,
    help="A seeded draw of N HaluEval questions (default: all 500).",
)
@click.option(
    "--xquad",
    "xquad_limit",
    type=int,
    help="A seeded draw of N XQuAD questions (default: all 1,190).",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--resamples", type=int, default=judge.RESAMPLES, show_default=True, help="Bootstrap resamples."
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("runs/bench-judge"),
    show_default=True,
)
def bench_judge(
    data_dir: Path | None,
    halueval_limit: int | None,
    xquad_limit: int | None,
    seed: int,
    resamples: int,
    out_dir: Path,
) -> None:
    """The offline judge beside string baselines (verbatim containment, token overlap) on
    records with labels known by construction: HaluEval right vs hallucinated answers, XQuAD
    gold answers over gold or swapped paragraphs. Calls no pipeline."""
    root = data_dir or judge_data.default_data_dir()
    files = [root / judge_data.HALUEVAL_FILE, root / judge_data.XQUAD_FILE]
    if not any(p.is_file() for p in files):
        click.echo(
            f"skipped: judge benchmark data not found ({', '.join(str(p) for p in files)}); "
            "give --data-dir or set PROBEGUARD_SHARED_DATA to the folder that holds "
            "halueval/ and xquad_en/"
        )
        return
    for p in files:
        if not p.is_file():
            click.echo(f"note: {p} not found; that part is skipped")
    try:
        result = judge.run_judge(
            root,
            halueval_limit=halueval_limit,
            xquad_limit=xquad_limit,
            seed=seed,
            resamples=resamples,
        )
    except ProbeGuardError as exc:
        fail(str(exc))
        return
    table = judge.render_table(result)
    write_bench_report(out_dir, table)
    write_artifact(out_dir / "bench.json", result)
    click.echo(table)
    click.echo(f"table: {out_dir / 'bench.md'}; result: {out_dir / 'bench.json'}")


bench.add_command(bench_qasper)


@bench.command(name="judges")
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder holding wice/, begin/ and halueval/ (default: $PROBEGUARD_SHARED_DATA or "
    "../shared/data).",
)
@click.option(
    "--judges",
    "judge_names",
    default=",".join(judges_models.JUDGE_NAMES),
    show_default=True,
    help="Comma-separated: " + ", ".join(judges_models.JUDGE_NAMES) + " (the token-overlap "
    "baseline always runs; a judge that cannot run here is listed as skipped with the reason).",
)
@click.option("--limit", type=int, help="At most N records per split and dataset (default: all).")
@click.option(
    "--smollm2-limit",
    type=int,
    default=judges.SMOLLM2_LIMIT,
    show_default=True,
    help="SmolLM2's own cap per split and dataset (it is slow).",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--resamples", type=int, default=judge.RESAMPLES, show_default=True, help="Bootstrap resamples."
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("runs/bench-judges"),
    show_default=True,
)
def bench_judges(
    data_dir: Path | None,
    judge_names: str,
    limit: int | None,
    smollm2_limit: int,
    seed: int,
    resamples: int,
    out_dir: Path,
) -> None:
    """Each judge against human labels: WiCE (supported vs not), BEGIN (fully attributable vs
    not), HaluEval QA (right vs hallucinated answer): balanced accuracy with a 95% interval,
    per-class precision/recall and AUROC on test, the threshold chosen on dev; beside a
    token-overlap baseline and published anchors. The LLM judge reads judge.llm from
    PROBEGUARD_JUDGE__LLM__* (any OpenAI-compatible endpoint). Calls no pipeline."""
    root = data_dir or judge_data.default_data_dir()
    found = [n for n in judges_data.DATASETS if not judges_data.missing_files(root, n)]
    if not found:
        click.echo(
            f"skipped: judge benchmark data not found under {root}; give --data-dir or set "
            "PROBEGUARD_SHARED_DATA to the folder that holds wice/, begin/ and halueval/"
        )
        return
    try:
        config = load_config().judge
        with progress_bar(disabled=False) as progress:
            result = judges.run_judges(
                root,
                judges=[j.strip() for j in judge_names.split(",") if j.strip()],
                limit=limit,
                smollm2_limit=smollm2_limit,
                seed=seed,
                resamples=resamples,
                config=config,
                progress=lambda _name, done, total: progress(done, total),
            )
    except ProbeGuardError as exc:
        fail(str(exc))
        return
    table = judges.render_table(result)
    write_bench_report(out_dir, table)
    write_artifact(out_dir / "bench.json", result)
    click.echo(table)
    click.echo(f"table: {out_dir / 'bench.md'}; result: {out_dir / 'bench.json'}")
