"""Splitting a dataset into train/dev/test: deterministic, by evidence document, stratified by
type.

Rules:

1. **Groups.** Cases that share an evidence document, or an input (after
   ``normalize_answer``), are joined into one group (union-find, transitively), so no document
   and no question lands in two splits. A case without evidence is a group of its own.
2. **Order.** Groups are shuffled with ``numpy.random.default_rng(seed)`` and then stably
   sorted by size, largest first (big groups are the hard ones to place).
3. **Placement.** Each group goes to the split ``s`` with the largest need
   ``sum_t n_t * (r_s * N_t - c_{s,t}) / N_t`` — ``n_t`` the group's cases of type ``t``,
   ``N_t`` all cases of type ``t``, ``r_s`` the split's ratio, ``c_{s,t}`` the cases of type
   ``t`` already there (stratification by type: each type is spread in proportion). Ties go to
   the split with the largest overall need ``r_s * N - c_s``, then to the earlier split.

The type of a case is its ``type``, or ``"golden"`` when it has none. Same cases, ratios and
seed: the same splits, byte for byte.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from probeguard.core.errors import InputError
from probeguard.dataset.formats import write_dataset
from probeguard.dataset.schema import DatasetCase
from probeguard.nlp.text import normalize_answer

__all__ = [
    "SPLIT_ORDER",
    "Split",
    "case_type",
    "largest_group",
    "parse_ratios",
    "split_cases",
    "write_splits",
]

SPLIT_ORDER = {2: ("train", "test"), 3: ("train", "dev", "test")}
"""The split names for two and three ratios."""


@dataclass(frozen=True)
class Split:
    """One split: its name and its cases (in input order, ``split`` set)."""

    name: str
    cases: tuple[DatasetCase, ...]


def case_type(case: DatasetCase) -> str:
    """The stratum of a case: its ``type``, or ``"golden"``."""
    return case.type or "golden"


def parse_ratios(text: str) -> tuple[float, ...]:
    """``"0.7,0.15,0.15"`` -> ratios: two or three positive numbers summing to 1."""
    try:
        ratios = tuple(float(part) for part in text.split(","))
    except ValueError:
        raise InputError(f"--ratios must be numbers, got {text!r}", field="ratios") from None
    if len(ratios) not in SPLIT_ORDER or any(not r > 0 for r in ratios):
        raise InputError("--ratios takes two or three positive numbers", field="ratios")
    if abs(sum(ratios) - 1.0) > 1e-6:
        raise InputError(f"--ratios must sum to 1, got {sum(ratios):g}", field="ratios")
    return ratios


def _groups(cases: Sequence[DatasetCase]) -> list[list[int]]:
    parent = list(range(len(cases)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[str, int] = {}
    for i, case in enumerate(cases):
        keys = [f"doc:{d}" for d in case.evidence_doc_ids]
        keys.append(f"input:{normalize_answer(case.input)}")
        for key in keys:
            j = owner.setdefault(key, i)
            parent[root(i)] = root(j)
    groups: dict[int, list[int]] = {}
    for i in range(len(cases)):
        groups.setdefault(root(i), []).append(i)
    return list(groups.values())


def largest_group(cases: Sequence[DatasetCase]) -> int:
    """The cases of the largest group (rule 1): a split cannot be smaller than it, so a
    group above a split's share makes the ratios unreachable."""
    return max((len(g) for g in _groups(cases)), default=0)


def _place(
    group: list[int],
    types: list[str],
    ratios: Sequence[float],
    totals: Counter[str],
    placed: list[Counter[str]],
) -> int:
    n = sum(totals.values())
    need_t = Counter(types[i] for i in group)

    def key(s: int) -> tuple[float, float, int]:
        typed = sum(
            k * (ratios[s] * totals[t] - placed[s][t]) / totals[t] for t, k in need_t.items()
        )
        overall = ratios[s] * n - sum(placed[s].values())
        return (typed, overall, -s)

    return max(range(len(ratios)), key=key)


def split_cases(cases: Sequence[DatasetCase], ratios: Sequence[float], seed: int) -> list[Split]:
    """The splits of ``cases`` (rules in the module docstring)."""
    names = SPLIT_ORDER[len(ratios)]
    types = [case_type(c) for c in cases]
    totals = Counter(types)
    groups = _groups(cases)
    order = np.random.default_rng(seed).permutation(len(groups))
    shuffled = sorted((groups[int(i)] for i in order), key=len, reverse=True)
    placed: list[Counter[str]] = [Counter() for _ in ratios]
    where = [0] * len(cases)
    for group in shuffled:
        s = _place(group, types, ratios, totals, placed)
        placed[s].update(types[i] for i in group)
        for i in group:
            where[i] = s
    return [
        Split(
            name,
            tuple(
                c.model_copy(update={"split": name})
                for c, w in zip(cases, where, strict=True)
                if w == s
            ),
        )
        for s, name in enumerate(names)
    ]


def write_splits(splits: Sequence[Split], out_dir: Path) -> list[Path]:
    """Write each split as ``OUT/<name>.jsonl`` (schema JSONL)."""
    return [write_dataset(s.cases, Path(out_dir) / f"{s.name}.jsonl") for s in splits]
