"""``probeguard dataset split``: deterministic, by evidence document, stratified by type."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from probeguard.cli.main import cli
from probeguard.core.errors import InputError
from probeguard.dataset.formats import write_dataset
from probeguard.dataset.schema import DatasetCase
from probeguard.dataset.split import largest_group, parse_ratios, split_cases


def _cases(n: int = 120) -> list[DatasetCase]:
    types = ["factoid", "multi_hop", None]
    return [
        DatasetCase(
            id=f"c{i}",
            input=f"question number {i}",
            evidence=[{"doc_id": f"d{i // 2}"}] if i % 7 else [],
            type=types[i % 3],
        )
        for i in range(n)
    ]


def test_no_document_in_two_splits_and_types_stratified() -> None:
    splits = split_cases(_cases(), (0.7, 0.15, 0.15), seed=1)
    assert [s.name for s in splits] == ["train", "dev", "test"]
    owner: dict[str, str] = {}
    for split in splits:
        for case in split.cases:
            assert case.split == split.name
            for doc in case.evidence_doc_ids:
                assert owner.setdefault(doc, split.name) == split.name
    assert sum(len(s.cases) for s in splits) == 120
    for split, ratio in zip(splits, (0.7, 0.15, 0.15), strict=True):
        per_type = Counter(c.type for c in split.cases)
        for t in ("factoid", "multi_hop", None):
            assert abs(per_type[t] - ratio * 40) <= 2, (split.name, t, per_type)


def test_same_seed_same_bytes_other_seed_differs(tmp_path: Path) -> None:
    a = split_cases(_cases(), (0.7, 0.15, 0.15), seed=5)
    b = split_cases(_cases(), (0.7, 0.15, 0.15), seed=5)
    c = split_cases(_cases(), (0.7, 0.15, 0.15), seed=6)
    assert a == b
    assert [x.cases for x in a] != [x.cases for x in c]
    one = write_dataset(a[0].cases, tmp_path / "a.jsonl").read_bytes()
    assert one == write_dataset(b[0].cases, tmp_path / "b.jsonl").read_bytes()


def test_shared_documents_and_equal_inputs_stay_together() -> None:
    cases = [
        DatasetCase(id="a", input="q a", evidence=[{"doc_id": "x"}, {"doc_id": "y"}]),
        DatasetCase(id="b", input="q b", evidence=[{"doc_id": "y"}]),
        DatasetCase(id="c", input="Q A!", evidence=[{"doc_id": "z"}]),
        *[DatasetCase(id=f"o{i}", input=f"other {i}") for i in range(10)],
    ]
    for seed in range(5):
        splits = split_cases(cases, (0.5, 0.5), seed=seed)
        names = {c.id: s.name for s in splits for c in s.cases}
        assert names["a"] == names["b"] == names["c"]


@pytest.mark.parametrize("text", ["0.5,0.6", "1", "a,b", "0.5,0,0.5", "0.2,0.2,0.2,0.4"])
def test_bad_ratios(text: str) -> None:
    with pytest.raises(InputError):
        parse_ratios(text)


def test_cli_writes_the_splits(tmp_path: Path) -> None:
    src = write_dataset(_cases(30), tmp_path / "cases.jsonl")
    res = CliRunner().invoke(
        cli, ["dataset", "split", str(src), "--out", str(tmp_path / "out"), "--seed", "2"]
    )
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "dev.jsonl",
        "test.jsonl",
        "train.jsonl",
    ]
    res = CliRunner().invoke(cli, ["dataset", "validate", *map(str, (tmp_path / "out").iterdir())])
    assert res.exit_code == 0, res.output
    bad = CliRunner().invoke(
        cli, ["dataset", "split", str(src), "--out", str(tmp_path / "o2"), "--ratios", "0.5,0.6"]
    )
    assert bad.exit_code == 2 and "sum to 1" in bad.output


def test_a_group_larger_than_a_split_is_reported(tmp_path: Path) -> None:
    chained = [
        DatasetCase(
            id=f"c{i}", input=f"q {i}", evidence=[{"doc_id": f"d{i}"}, {"doc_id": f"d{i + 1}"}]
        )
        for i in range(8)
    ]
    others = [DatasetCase(id=f"o{i}", input=f"other {i}") for i in range(2)]
    assert largest_group([*chained, *others]) == 8
    src = write_dataset([*chained, *others], tmp_path / "cases.jsonl")
    res = CliRunner().invoke(cli, ["dataset", "split", str(src), "--out", str(tmp_path / "o")])
    assert res.exit_code == 0 and "largest such group holds 8 of 10" in res.output
