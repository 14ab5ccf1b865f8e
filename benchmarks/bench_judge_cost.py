"""Per-record cost of the offline eval path vs RAGAS's non-LLM metrics (or, without RAGAS,
vs the string baselines), on the records of ``probeguard bench judge``.

Records: those ``probeguard.engine.bench.judge_data`` builds from the shared data (HaluEval
right + hallucinated answers, XQuAD gold answers over their gold paragraph, and the swapped
half of the gold-may-be-missing variant: 2,785 with the full data), each given a reference
answer (HaluEval's right answer, XQuAD's gold answer) so that both sides compute the
reference-based metrics too.

Two pairs, each side in its own processes (imports and one warm-up record outside the clock):

* **end to end** (issue 19's "per-record cost of ``probeguard eval``"): ``ours_eval`` is
  ``engine.evaluate.evaluate`` (read the JSONL, score, summarise with bootstrap intervals,
  thresholds, write eval.json + eval.md); ``ragas_eval`` is ``ragas.evaluate`` with the
  metrics below (samples built from the rows, scored through its executor; writes nothing).
  One call per pass over the shared records.
* **metric core**: ``ours`` is ``engine.evaluate.score_record`` per record (claims, one
  claim×chunk judgment, the standard metrics; no pipeline, no summary, no file); ``ragas``
  awaits each metric's ``single_turn_ascore`` per record.

RAGAS's side runs every non-LLM text metric of ``ragas.metrics`` (``RAGAS_METRICS``:
context recall/precision against reference contexts by string similarity, string
similarity, string presence, exact match, BLEU, ROUGE, chrF), when ``ragas`` imports in
``--ragas-python``. It has no non-LLM faithfulness or answer relevancy: it computes less than
ours. ``ragas.evaluate`` costs several times its metrics (a task, callbacks and a result
row per sample × metric): issue 19's ~1.9 ms/record is of that kind (here 1.3 with the five
metrics this bench first ran, whose direct calls cost ~0.25; 2.5 with all eight). Also
the **string baselines** (always): ``verbatim`` + ``overlap`` of ``judge_data``.

**How many records** (``--records``, default 8,000, the size issue 19 asks about): the shared
records in order, cycled when there are fewer (the ``k``-th repeat's id suffixed ``#k``);
``--records 0``: each once. With ``--repeats cold`` (default) our workers empty every
``functools`` memo of ``probeguard`` before each pass (inside the clock), so a repeat costs
what a new record would; ``--repeats warm`` keeps them. RAGAS remembers nothing.

Each side runs in a fresh process ``--rounds`` times, taking turns (medians). The figure is
CPU time (``time.process_time``; the machine is shared) over all records divided by their
number; wall time is printed beside it. Never asserted anywhere.

RAGAS is not a dependency of the project: install it into a throwaway virtual environment::

    python3 -m venv /tmp/ragas-venv && /tmp/ragas-venv/bin/pip install ragas==0.4.3 rapidfuzz \\
        "langchain-community<0.4" rouge-score sacrebleu
    PYTHONPATH=src .venv/bin/python -m benchmarks.bench_judge_cost --ragas-python /tmp/ragas-venv/bin/python

(``langchain-community`` 0.4 dropped a module ragas 0.4.3 imports.) This file's top level
imports only the standard library: the RAGAS workers run it as a script in that environment.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


# -- workers (each in its own process) ---------------------------------------------------------
def _load(path: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(Path(path).read_text(encoding="utf-8"))
    return rows


def _clock() -> tuple[float, float]:
    return time.process_time(), time.perf_counter()


def _result(rows: list[dict[str, Any]], start: tuple[float, float]) -> dict[str, Any]:
    cpu, wall = time.process_time() - start[0], time.perf_counter() - start[1]
    return {
        "n": len(rows),
        "ms_per_record": 1000 * cpu / len(rows),
        "wall_ms_per_record": 1000 * wall / len(rows),
    }


def _timed(fn: Any, rows: list[dict[str, Any]], on_pass: Any = None) -> dict[str, Any]:
    """CPU and wall ms/record of ``fn`` over ``rows``; ``on_pass()`` (inside the clock) before
    each repeat pass (a row whose ``pass`` is above the previous row's)."""
    start = _clock()
    last = 0
    for row in rows:
        if on_pass is not None and row.get("pass", 0) > last:
            on_pass()
        last = row.get("pass", 0)
        fn(row)
    return _result(rows, start)


def clear_memos(package: str = "probeguard") -> int:
    """Empty every ``functools.lru_cache`` / ``cache`` memo defined in ``package``'s modules
    (what a fresh process starts with); returns how many."""
    import functools
    import gc

    n = 0
    for obj in gc.get_objects():
        if isinstance(obj, functools._lru_cache_wrapper) and (
            getattr(obj, "__module__", None) or ""
        ).startswith(package + "."):
            obj.cache_clear()
            n += 1
    return n


WARM_UP = {
    "id": "warm-up",
    "input": "Which metal is liquid at room temperature?",
    "answer": "Mercury is liquid at room temperature.",
    "reference": "Mercury",
    "contexts": ["Mercury is the only metal that is liquid at room temperature."],
    "reference_contexts": ["Mercury is the only metal that is liquid at room temperature."],
}


def worker_ours(rows: list[dict[str, Any]]) -> dict[str, Any]:
    from probeguard.config.models import ScanConfig
    from probeguard.dataset.eval_records import EvalRecord
    from probeguard.detectors.factory import build_judges
    from probeguard.engine.evaluate import score_record

    judges = build_judges(ScanConfig().judge)

    def one(row: dict[str, Any]) -> None:
        record = EvalRecord(
            id=row["id"],
            input=row["input"],
            answer=row["answer"],
            ground_truth=row["reference"],
            retrieval_context=tuple(row["contexts"]),
        )
        score_record(record, None, judges)

    one(WARM_UP)
    return _timed(one, rows, clear_memos if os.environ.get("BENCH_REPEATS") == "cold" else None)


def eval_line(row: dict[str, Any]) -> str:
    """One ``probeguard eval`` JSONL record for a bench row."""
    return json.dumps(
        {
            "id": row["id"],
            "input": row["input"],
            "answer": row["answer"],
            "groundTruth": row["reference"],
            "retrievalContext": row["contexts"],
        }
    )


def split_passes(rows: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """``rows`` cut where a repeat pass starts (``pass`` above the previous row's)."""
    passes: list[list[dict[str, Any]]] = []
    for row in rows:
        if not passes or row.get("pass", 0) > passes[-1][-1].get("pass", 0):
            passes.append([])
        passes[-1].append(row)
    return passes


def worker_ours_eval(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """``probeguard eval`` end to end (``engine.evaluate.evaluate``: read the JSONL, score,
    summarise with bootstrap intervals, check thresholds, write eval.json and eval.md), one
    call per pass over the shared records (our memos emptied before each with ``--repeats
    cold``); the input files are written before the clock starts."""
    from probeguard.config.models import ScanConfig
    from probeguard.engine.evaluate import evaluate

    config = ScanConfig()
    cold = os.environ.get("BENCH_REPEATS") == "cold"
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for k, part in enumerate([[WARM_UP], *split_passes(rows)]):
            files.append(Path(tmp) / f"pass-{k}.jsonl")
            files[-1].write_text("\n".join(map(eval_line, part)) + "\n", encoding="utf-8")
        evaluate(config, files[0], Path(tmp) / "out-warm-up")
        start = _clock()
        for k, path in enumerate(files[1:]):
            if cold:
                clear_memos()
            evaluate(config, path, Path(tmp) / f"out-{k}")
        return _result(rows, start)


def worker_strings(rows: list[dict[str, Any]]) -> dict[str, Any]:
    from probeguard.engine.bench.judge_data import overlap, verbatim

    def one(row: dict[str, Any]) -> None:
        verbatim(row["answer"], row["contexts"])
        overlap(row["answer"], row["contexts"])

    one(WARM_UP)
    return _timed(one, rows)


RAGAS_METRICS = (
    "NonLLMContextRecall",
    "NonLLMContextPrecisionWithReference",
    "NonLLMStringSimilarity",
    "StringPresence",
    "ExactMatch",
    "BleuScore",
    "RougeScore",
    "ChrfScore",
)
"""RAGAS 0.4.3's non-LLM metrics over text (its ``IDBased*`` ones need chunk ids and
``DataCompyScore`` tables): every one ``ragas.metrics`` exports that needs neither an LLM nor
embeddings. ``BleuScore``/``ChrfScore`` need ``sacrebleu``, ``RougeScore`` ``rouge_score``; a
metric whose package is missing is left out and the output says which ran."""


def _ragas_setup() -> tuple[Any, list[Any], Any]:
    """``ragas``, the metrics of ``RAGAS_METRICS`` that construct, and a row -> sample
    function."""
    import warnings

    warnings.filterwarnings("ignore")
    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
    import ragas
    import ragas.metrics
    from ragas.dataset_schema import SingleTurnSample

    metrics = []
    for name in RAGAS_METRICS:
        try:
            metrics.append(getattr(ragas.metrics, name)())
        except (ImportError, AttributeError):
            continue

    def sample(row: dict[str, Any]) -> Any:
        return SingleTurnSample(
            user_input=row["input"],
            response=row["answer"],
            reference=row["reference"],
            retrieved_contexts=row["contexts"],
            reference_contexts=row["reference_contexts"],
        )

    return ragas, metrics, sample


def worker_ragas(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """RAGAS's metrics one by one (``single_turn_ascore``), the counterpart of
    ``score_record``."""
    import asyncio

    ragas, metrics, sample = _ragas_setup()

    async def score(items: list[dict[str, Any]]) -> dict[str, Any]:
        start = _clock()
        for row in items:
            s = sample(row)
            for m in metrics:
                await m.single_turn_ascore(s)
        return _result(items, start)

    asyncio.run(score([WARM_UP]))
    return {
        **asyncio.run(score(rows)),
        "version": ragas.__version__,
        "metrics": [type(m).__name__ for m in metrics],
    }


def worker_ragas_eval(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """``ragas.evaluate`` (samples built, every metric scored through its executor, the
    result returned; no file written), one call per pass, the counterpart of
    ``probeguard eval``."""
    ragas, metrics, sample = _ragas_setup()
    from ragas.dataset_schema import EvaluationDataset

    def run(items: list[dict[str, Any]]) -> None:
        dataset = EvaluationDataset(samples=[sample(r) for r in items])
        ragas.evaluate(dataset, metrics=metrics, show_progress=False)

    run([WARM_UP])
    start = _clock()
    for part in split_passes(rows):
        run(part)
    return {
        **_result(rows, start),
        "version": ragas.__version__,
        "metrics": [type(m).__name__ for m in metrics],
    }


WORKERS = {
    "ours": worker_ours,
    "ours_eval": worker_ours_eval,
    "strings": worker_strings,
    "ragas": worker_ragas,
    "ragas_eval": worker_ragas_eval,
}


# -- driver ------------------------------------------------------------------------------------
def build_rows(data_dir: Path, seed: int) -> list[dict[str, Any]]:
    """The bench's records (``judge_data``), each with a reference answer and contexts."""
    import numpy as np

    from probeguard.dataset.halueval import load_halueval_qa
    from probeguard.dataset.squad import load_squad
    from probeguard.engine.bench.judge_data import (
        HALUEVAL_FILE,
        XQUAD_FILE,
        halueval_records,
        xquad_records,
        xquad_swapped,
    )

    rows: list[dict[str, Any]] = []
    if (data_dir / HALUEVAL_FILE).is_file():
        items = load_halueval_qa(data_dir / HALUEVAL_FILE)
        right = {f"halueval-{it.row}": it.answer for it in items}
        for jr in halueval_records(items):
            r = jr.record
            ctx = list(r.retrieval_context or ())
            rows.append(
                {
                    "id": r.id,
                    "input": r.input,
                    "answer": r.answer,
                    "reference": right[jr.cluster],
                    "contexts": ctx,
                    "reference_contexts": ctx,
                }
            )
    if (data_dir / XQUAD_FILE).is_file():
        items_x = load_squad(data_dir / XQUAD_FILE)
        paragraphs = list({it.paragraph: it for it in items_x}.values())
        gold = xquad_records(items_x)
        swapped = xquad_swapped(items_x, paragraphs, np.random.default_rng(seed))
        for item, jr in [(i, g) for i, g in zip(items_x, gold)] + [
            (i, s) for i, s in zip(items_x, swapped) if s is not None
        ]:
            r = jr.record
            rows.append(
                {
                    "id": r.id,
                    "input": r.input,
                    "answer": r.answer,
                    "reference": r.ground_truth,
                    "contexts": list(r.retrieval_context or ()),
                    "reference_contexts": [item.context],
                }
            )
    return rows


def cycle_rows(rows: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """``n`` records: ``rows`` in order, cycled when there are fewer (the ``k``-th repeat of a
    record has ``#k`` after its id and ``pass`` ``k``); ``n`` <= 0: ``rows`` once."""
    if n <= 0 or not rows:
        return [{**r, "pass": 0} for r in rows]
    out = []
    for i in range(n):
        k, r = divmod(i, len(rows))
        row = rows[r]
        out.append({**row, "id": f"{row['id']}#{k}" if k else row["id"], "pass": k})
    return out


def _spawn(python: str, worker: str, records: Path, repeats: str = "cold") -> dict[str, Any]:
    env = dict(os.environ)
    env["BENCH_REPEATS"] = repeats
    parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([str(ROOT / "src"), *parts]))
    done = subprocess.run(
        [python, str(Path(__file__).resolve()), "--worker", worker, str(records)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{worker} worker failed:\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def ragas_available(python: str) -> bool:
    done = subprocess.run(
        [python, "-c", "import ragas.metrics"], capture_output=True, text=True, cwd="/"
    )
    return done.returncode == 0


def run(
    data_dir: Path,
    rounds: int,
    ragas_python: str,
    seed: int,
    records: int = 8000,
    repeats: str = "cold",
) -> int:
    if str(ROOT) not in sys.path:  # run as a script: ``benchmarks`` is not importable otherwise
        sys.path.insert(0, str(ROOT))
    from benchmarks._common import report
    from probeguard.engine.bench.judge_data import HALUEVAL_FILE, XQUAD_FILE

    if not any((data_dir / f).is_file() for f in (HALUEVAL_FILE, XQUAD_FILE)):
        print(f"skipped: no halueval/ or xquad_en/ data under {data_dir}", flush=True)
        return 0
    shared = build_rows(data_dir, seed)
    rows = cycle_rows(shared, records)
    with_ragas = ragas_available(ragas_python)
    if not with_ragas:
        print(f"RAGAS not importable with {ragas_python}: string baselines only", flush=True)
    sides = ["ours", "ours_eval", "strings"] + (["ragas", "ragas_eval"] if with_ragas else [])
    results: dict[str, list[dict[str, Any]]] = {s: [] for s in sides}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "records.json"
        path.write_text(json.dumps(rows), encoding="utf-8")
        for r in range(rounds):
            for side in sides if r % 2 == 0 else sides[::-1]:
                python = ragas_python if side.startswith("ragas") else sys.executable
                results[side].append(_spawn(python, side, path, repeats))

    def ms(side: str, key: str = "ms_per_record") -> float:
        return statistics.median(x[key] for x in results[side])

    passes = max(r["pass"] for r in rows) + 1 if rows else 0
    print(
        f"{len(rows):,} records ({len(shared):,} shared records, {passes} pass(es), repeats "
        f"{repeats}), {rounds} round(s), medians; CPU ms/record: "
        + ", ".join(f"{s} {ms(s):.3f}" for s in sides)
        + " (wall: "
        + ", ".join(f"{s} {ms(s, 'wall_ms_per_record'):.3f}" for s in sides)
        + ")",
        flush=True,
    )
    pairs = [("ours_eval", "ragas_eval"), ("ours", "ragas")] if with_ragas else []
    if with_ragas:
        info = results["ragas"][0]
        print(f"RAGAS {info['version']} non-LLM metrics: {', '.join(info['metrics'])}", flush=True)
    for ours, base in [*pairs, ("ours", "strings")]:
        report(LABELS[ours], ms(ours), "ms/record", LABELS[base], ms(base), higher_is_better=False)
    return 0


LABELS = {
    "ours_eval": "probeguard eval end to end (evaluate(): read, score, summarise, write)",
    "ragas_eval": "ragas.evaluate() with its non-LLM metrics",
    "ours": "offline eval path (score_record, 8 metrics)",
    "ragas": "RAGAS non-LLM metrics, single_turn_ascore one by one",
    "strings": "string baselines (verbatim + token overlap)",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    parser.add_argument("records", nargs="?", help=argparse.SUPPRESS)
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path(os.environ.get("PROBEGUARD_SHARED_DATA") or ROOT.parent / "shared" / "data"),
        help="shared data folder (default: $PROBEGUARD_SHARED_DATA or ../shared/data)",
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--records",
        dest="n_records",
        type=int,
        default=8000,
        help="records to score, the shared ones cycled when fewer (default 8000; 0: each once)",
    )
    parser.add_argument(
        "--repeats",
        choices=("cold", "warm"),
        default="cold",
        help="cold (default): our memos emptied before each repeat pass; warm: kept",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the swapped half")
    parser.add_argument(
        "--ragas-python",
        default=os.environ.get("RAGAS_PYTHON") or sys.executable,
        help="a Python with ragas installed (default: $RAGAS_PYTHON, else this one)",
    )
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(WORKERS[args.worker](_load(args.records))), flush=True)
        return 0
    return run(
        args.data_dir, args.rounds, args.ragas_python, args.seed, args.n_records, args.repeats
    )


if __name__ == "__main__":
    sys.exit(main())
