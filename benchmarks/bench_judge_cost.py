"""Per-record cost of the offline eval path vs RAGAS's non-LLM metrics (or, without RAGAS,
vs the string baselines), on the records of ``probeguard bench judge``.

Records: those ``probeguard.engine.bench.judge_data`` builds from the shared data (HaluEval
right + hallucinated answers, XQuAD gold answers over their gold paragraph, and the swapped
half of the gold-may-be-missing variant: 2,785 with the full data), each given a reference
answer (HaluEval's right answer, XQuAD's gold answer) so that both sides compute the
reference-based metrics too.

* **ours**: ``probeguard.engine.evaluate.score_record`` per record — what ``probeguard eval``
  runs per record with the default (offline) judges: claims, one claim×chunk judgment, the
  eight standard metrics. No pipeline call.
* **RAGAS** (the named baseline, when ``ragas`` imports in ``--ragas-python``): its non-LLM
  metrics on the same records, awaited one after another in one event loop —
  ``NonLLMContextRecall`` and ``NonLLMContextPrecisionWithReference`` (retrieved vs reference
  contexts by string similarity), ``NonLLMStringSimilarity``, ``StringPresence`` and
  ``ExactMatch`` (response vs reference). RAGAS has no non-LLM faithfulness or answer
  relevancy, so it computes less than ours.
* **string baselines** (always): ``verbatim`` + ``overlap`` of ``judge_data``.

**How many records** (``--records``, default 8,000, the size issue 19 asks about): the shared
data's records in order, cycled deterministically when there are fewer (record ``i`` is
shared record ``i mod n``, its id suffixed ``#k`` on its ``k``-th repeat); ``--records 0``
takes each shared record once. Both sides score the same list. A repeat is the same text,
so a memo keyed by content would score it for free; with ``--repeats cold`` (default) our
worker empties every ``functools`` memo of ``probeguard`` at the start of each pass over the
shared records (inside the clock), so every pass costs what new records would, as in a fresh
``probeguard eval``; ``--repeats warm`` keeps them (a dataset with exact duplicates). RAGAS
remembers nothing between records, so repeats cost it the same either way.

Each side runs in its own fresh process (``--rounds`` times, taking turns; medians), so memos
start cold in every round as in one ``probeguard eval``; each worker scores one warm-up
record of its own before the clock starts (imports are not the work). The figure is CPU time
(``time.process_time``: the machine is shared, so wall time measures the other load too)
over all records, divided by their number; wall time is printed beside it. Never asserted
anywhere.

RAGAS is not a dependency of the project: install it into a throwaway virtual environment
and point ``--ragas-python`` at it::

    python3 -m venv /tmp/ragas-venv && /tmp/ragas-venv/bin/pip install ragas==0.4.3 rapidfuzz \\
        "langchain-community<0.4"
    PYTHONPATH=src .venv/bin/python -m benchmarks.bench_judge_cost --ragas-python /tmp/ragas-venv/bin/python

(``langchain-community`` 0.4 dropped a module ragas 0.4.3 imports.) This file's top level
imports only the standard library: the RAGAS worker runs it as a script in that environment.
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


def worker_strings(rows: list[dict[str, Any]]) -> dict[str, Any]:
    from probeguard.engine.bench.judge_data import overlap, verbatim

    def one(row: dict[str, Any]) -> None:
        verbatim(row["answer"], row["contexts"])
        overlap(row["answer"], row["contexts"])

    one(WARM_UP)
    return _timed(one, rows)


def worker_ragas(rows: list[dict[str, Any]]) -> dict[str, Any]:
    import asyncio
    import warnings

    warnings.filterwarnings("ignore")
    import ragas
    from ragas.dataset_schema import SingleTurnSample
    from ragas.metrics import (
        ExactMatch,
        NonLLMContextPrecisionWithReference,
        NonLLMContextRecall,
        NonLLMStringSimilarity,
        StringPresence,
    )

    metrics = [
        NonLLMContextRecall(),
        NonLLMContextPrecisionWithReference(),
        NonLLMStringSimilarity(),
        StringPresence(),
        ExactMatch(),
    ]

    def sample(row: dict[str, Any]) -> Any:
        return SingleTurnSample(
            user_input=row["input"],
            response=row["answer"],
            reference=row["reference"],
            retrieved_contexts=row["contexts"],
            reference_contexts=row["reference_contexts"],
        )

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


WORKERS = {"ours": worker_ours, "strings": worker_strings, "ragas": worker_ragas}


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
    sides = ["ours", "strings"] + (["ragas"] if with_ragas else [])
    results: dict[str, list[dict[str, Any]]] = {s: [] for s in sides}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "records.json"
        path.write_text(json.dumps(rows), encoding="utf-8")
        for r in range(rounds):
            for side in sides if r % 2 == 0 else sides[::-1]:
                python = ragas_python if side == "ragas" else sys.executable
                results[side].append(_spawn(python, side, path, repeats))

    def ms(side: str, key: str = "ms_per_record") -> float:
        return statistics.median(x[key] for x in results[side])

    passes = max(r["pass"] for r in rows) + 1 if rows else 0
    print(
        f"{len(rows):,} records ({len(shared):,} shared records, {passes} pass(es), repeats "
        f"{repeats}), {rounds} round(s), medians; CPU ms/record (wall: "
        + ", ".join(f"{s} {ms(s, 'wall_ms_per_record'):.3f}" for s in sides)
        + ")",
        flush=True,
    )
    if with_ragas:
        info = results["ragas"][0]
        print(f"RAGAS {info['version']} non-LLM metrics: {', '.join(info['metrics'])}", flush=True)
        report(
            "offline eval path (score_record, 8 metrics)",
            ms("ours"),
            "ms/record",
            f"RAGAS {info['version']} non-LLM metrics (5)",
            ms("ragas"),
            higher_is_better=False,
        )
    report(
        "offline eval path (score_record, 8 metrics)",
        ms("ours"),
        "ms/record",
        "string baselines (verbatim + token overlap)",
        ms("strings"),
        higher_is_better=False,
    )
    return 0


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
