"""benchmarks/bench_judge_cost.py's record list and memo reset (no timing asserted)."""

from __future__ import annotations

from benchmarks import bench_judge_cost as bench

ROWS = [{"id": f"r{i}", "answer": f"answer {i}"} for i in range(3)]


def test_records_cycle_deterministically_with_distinct_ids():
    rows = bench.cycle_rows(ROWS, 8)
    assert [r["id"] for r in rows] == ["r0", "r1", "r2", "r0#1", "r1#1", "r2#1", "r0#2", "r1#2"]
    assert [r["pass"] for r in rows] == [0, 0, 0, 1, 1, 1, 2, 2]
    assert [r["answer"] for r in rows] == [ROWS[i % 3]["answer"] for i in range(8)]
    assert bench.cycle_rows(ROWS, 8) == rows
    assert [r["id"] for r in bench.cycle_rows(ROWS, 0)] == ["r0", "r1", "r2"]
    assert [r["id"] for r in bench.cycle_rows(ROWS, 2)] == ["r0", "r1"]


def test_each_repeat_pass_starts_with_empty_memos():
    from probeguard.nlp.stemming import stem

    seen: list[int] = []

    def one(row):
        stem("releasing")
        seen.append(stem.cache_info().currsize)

    passes = []
    result = bench._timed(
        one, bench.cycle_rows(ROWS, 7), lambda: passes.append(bench.clear_memos())
    )
    assert result["n"] == 7 and result["ms_per_record"] >= 0 and result["wall_ms_per_record"] >= 0
    assert len(passes) == 2 and all(n > 0 for n in passes)
    assert seen[3] == 1 and seen[6] == 1  # stem's memo was emptied before each repeat pass


def test_passes_split_where_a_repeat_starts():
    rows = bench.cycle_rows(ROWS, 7)
    assert [[r["id"] for r in p] for p in bench.split_passes(rows)] == [
        ["r0", "r1", "r2"],
        ["r0#1", "r1#1", "r2#1"],
        ["r0#2"],
    ]
    assert bench.split_passes([]) == []
    assert {"BleuScore", "RougeScore", "NonLLMContextRecall"} <= set(bench.RAGAS_METRICS)


def test_eval_lines_are_probeguard_eval_records(tmp_path):
    from probeguard.dataset.eval_records import load_eval_records

    path = tmp_path / "pass.jsonl"
    path.write_text(bench.eval_line(bench.WARM_UP) + "\n", encoding="utf-8")
    (record,) = load_eval_records(path)
    assert record.answer == bench.WARM_UP["answer"]
    assert record.ground_truth == bench.WARM_UP["reference"]
    assert record.retrieval_context == tuple(bench.WARM_UP["contexts"])
