"""The planted-fault acceptance suite, one command::

    python -m benchmarks.planted_faults [--only NAME ...] [--out DIR]

For each planted defect (``benchmarks.planted.pairs``) it scans the defective pipeline and its
clean twin with attribution, on the suite's own corpus (``benchmarks/planted/data``: a water
utility's policies, not the demo data), and prints one row: the target probe, the defect's and
the twin's failure rates with Wilson intervals, whether they separate, the units the defect
causes, the share of them the surgeon names with the planted mechanism, the twin's share
falsely given it, and PASS/FAIL (criteria in ``benchmarks.planted.measure``). The table is
also written to ``DIR/planted_faults.json`` (deterministic: no timings) and
``DIR/planted_faults.md``; each side's run log stays in ``DIR/<pair>/{defect,twin}``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.planted.components import register
from benchmarks.planted.measure import PairResult, measure_pair
from benchmarks.planted.pairs import PAIRS, pair_named
from probeguard.core.estimate import Estimate

HEADER = (
    "| defect | probe | mechanism | defect rate [95% CI] | twin rate [95% CI] | separated "
    "| units | planted named | twin false blame | basis | result |"
)


def _interval(e: Estimate) -> str:
    if not e.defined:
        return f"n/a (n={e.n})"
    return f"{e.value:.3f} [{e.low:.3f}, {e.high:.3f}] n={e.n}"


def _share(e: Estimate) -> str:
    if not e.defined:
        return f"n/a (0/{e.n})"
    return f"{e.value:.2f} ({round(e.value * e.n)}/{e.n})"


def row(result: PairResult) -> str:
    """One markdown table row."""
    cells = (
        result.name,
        result.probe,
        result.mechanism,
        _interval(result.defect_rate),
        _interval(result.twin_rate),
        "yes" if result.separated else "no",
        str(result.caused),
        _share(result.named),
        _share(result.twin_blame),
        result.basis,
        "PASS" if result.passed else "FAIL",
    )
    return "| " + " | ".join(cells) + " |"


def table(results: Sequence[PairResult]) -> str:
    """The markdown table with a closing count."""
    lines = [HEADER, "|" + "---|" * 11, *(row(r) for r in results)]
    passed = sum(r.passed for r in results)
    lines.append(f"\n{passed} of {len(results)} pairs pass.")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", default=[], help="pair name (repeatable)")
    parser.add_argument("--out", default="runs/planted-faults", help="output folder")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    register()
    pairs = [pair_named(n) for n in args.only] if args.only else list(PAIRS)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    results: list[PairResult] = []
    for pair in pairs:
        result = measure_pair(pair, out)
        print(f"{pair.name}: {result.wall_s:.1f} s", file=sys.stderr, flush=True)
        results.append(result)
    text = table(results)
    print(text)
    (out / "planted_faults.md").write_text(text + "\n", encoding="utf-8")
    payload = {"pairs": [r.to_json() for r in results]}
    (out / "planted_faults.json").write_text(
        json.dumps(payload, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    print(f"total {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return 0 if all(r.passed for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
