"""benchmarks/planted_faults.py end to end on one pair: the table's structure, not its
pass/fail (which depends on the probes and the surgeon under measurement)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.planted.components import whole_sentences  # noqa: E402
from benchmarks.planted.measure import names, units  # noqa: E402
from benchmarks.planted.pairs import PAIRS, pair_named  # noqa: E402
from benchmarks.planted_faults import main  # noqa: E402

from probeguard.core.mechanisms import MECHANISMS  # noqa: E402

ROW_KEYS = {
    "name",
    "probe",
    "mechanism",
    "defect_rate",
    "twin_rate",
    "separated",
    "caused",
    "named",
    "twin_blame",
    "basis",
    "passed",
}


def test_ten_pairs_with_known_mechanisms_and_distinct_names():
    assert len(PAIRS) >= 10
    assert len({p.name for p in PAIRS}) == len(PAIRS)
    assert all(p.mechanism in MECHANISMS for p in PAIRS)
    assert all(p.defect != p.twin or p.calibrate_twin_gate for p in PAIRS)
    with pytest.raises(KeyError, match="known"):
        pair_named("no-such-pair")


def test_whole_sentences_drops_fragments_at_both_ends():
    assert whole_sentences("of the main. The fee is $40. It is paid") == "The fee is $40."
    assert whole_sentences("The fee is $40. It is") == "The fee is $40."
    assert whole_sentences("the fee is") == ""


def test_a_verdict_names_by_mechanism_else_by_component():
    assert names({"mechanism": "top_k_too_small", "cause": "retriever"}, "top_k_too_small")
    assert not names({"mechanism": "retrieval_miss", "cause": "retriever"}, "top_k_too_small")
    assert names({"cause": "retriever"}, "top_k_too_small")
    assert not names(None, "top_k_too_small")


def test_golden_units_read_the_verdict_and_keep_unscored_apart():
    run = {
        "records": [
            {"case": {"id": "a", "probe": "golden"}, "verdict": {"passed": False}},
            {"case": {"id": "b", "probe": "golden"}, "verdict": {}},
            {"case": {"id": "c", "probe": "other"}, "verdict": {"passed": True}},
        ],
        "groups": [],
    }
    assert units(run, "golden", None) == {"a": True, "b": None}
    assert units(run, "golden", {"b"}) == {"b": None}


@pytest.mark.slow  # two scans with attribution
def test_one_pair_end_to_end_writes_the_table(tmp_path, capsys):
    code = main(["--only", "top_k_multihop", "--out", str(tmp_path)])
    assert code in (0, 1)
    table = json.loads((tmp_path / "planted_faults.json").read_text())
    (row,) = table["pairs"]
    assert set(row) == ROW_KEYS
    assert row["name"] == "top_k_multihop" and row["probe"] == "golden"
    for key in ("defect_rate", "twin_rate", "named", "twin_blame"):
        assert set(row[key]) == {"value", "low", "high", "n", "method"}
    assert row["defect_rate"]["n"] > 0 and row["twin_rate"]["n"] > 0
    assert row["basis"] in ("mechanism", "cause-only")
    assert row["separated"] == (row["defect_rate"]["low"] > row["twin_rate"]["high"])
    printed = capsys.readouterr().out
    assert "| top_k_multihop | golden | top_k_too_small |" in printed
    assert (tmp_path / "top_k_multihop" / "defect" / "run.json").exists()
    assert (tmp_path / "top_k_multihop" / "twin" / "run.json").exists()
