"""Retrieval metrics: hand-computed cases, the NaN / duplicate / tie rules, batch helpers, and a
randomised cross-check against ir_measures (pytrec_eval, i.e. trec_eval)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from probeguard.metrics.retrieval import (
    evaluate_run,
    first_relevant_rank,
    hit_at_k,
    ndcg_at_k,
    precision_at_k,
    rank_run,
    recall_of,
    reciprocal_rank,
    relevant_set,
    score_query,
    success_at_k,
)


def test_hand_computed_values():
    ranked = ["d3", "d1", "d2", "d4"]
    grades = {"d1": 2, "d2": 0, "d3": -1, "d4": 1}
    assert relevant_set(grades) == {"d1", "d4"}
    assert precision_at_k(ranked, grades, 2) == 0.5
    assert precision_at_k(ranked, grades, 10) == 2 / 10  # divisor is k, not |ranked|
    assert recall_of(ranked, grades, 2) == 0.5
    assert reciprocal_rank(ranked, grades) == 0.5
    assert reciprocal_rank(ranked, grades, k=1) == 0.0
    assert success_at_k(ranked, grades, 1) == 0.0 and success_at_k(ranked, grades, 2) == 1.0
    # graded nDCG@3: DCG = 2/log2(3) (d1 at rank 2; d3's negative grade gains 0);
    # IDCG@3 = 2/log2(2) + 1/log2(3)
    assert ndcg_at_k(ranked, grades, 3) == pytest.approx(
        (2 / math.log2(3)) / (2 + 1 / math.log2(3)), abs=1e-12
    )
    # binary: same ranking, relevant ids {d1, d4}
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    assert ndcg_at_k(ranked, {"d1", "d4"}, 10) == pytest.approx(dcg / (1 + 1 / math.log2(3)))


def test_perfect_and_empty_rankings():
    assert ndcg_at_k(["a", "b"], {"a": 3, "b": 1}, 5) == 1.0
    assert ndcg_at_k(["b", "a"], {"a": 3, "b": 1}, 5) < 1.0
    for measure in ("hit@3", "precision@3", "recall@3", "mrr", "ndcg@3"):
        assert score_query([], {"a"}, measure) == 0.0  # nothing retrieved: 0


def test_nothing_relevant_is_nan_not_zero():
    for relevant in (set(), {"a": 0, "b": -1}):
        for measure in ("hit@3", "precision@3", "recall@3", "recall", "mrr", "mrr@2", "ndcg@3"):
            assert math.isnan(score_query(["a", "b"], relevant, measure)), measure
    assert hit_at_k(["a"], set(), 1) is False  # the yes/no verdict stays a bool


def test_duplicates_count_once_at_best_rank():
    ranked = ["a", "x", "a", "b", "b", "c"]  # chunk-level: docs a and b twice
    assert first_relevant_rank(ranked, {"b"}) == 3
    assert precision_at_k(ranked, {"a", "b"}, 3) == 2 / 3  # top-3 docs: a, x, b
    assert recall_of(ranked, {"a", "b", "c"}, 3) == 2 / 3
    assert ndcg_at_k(ranked, {"a": 1}, 2) == 1.0  # repeat of a gains nothing
    assert ndcg_at_k(ranked, {"a": 1, "x": 1}, 2) == 1.0


def test_a_single_string_is_one_id():
    assert reciprocal_rank(["x", "abc"], "abc") == 0.5


def test_rank_run_sorts_scores_stably():
    assert rank_run(["b", "a"]) == ["b", "a"]  # ids: order as given
    assert rank_run({"a": 0.1, "b": 0.9, "c": 0.9}) == ["b", "c", "a"]  # tie: given order
    assert rank_run([("a", 1.0), ("b", 2.0), ("a", 3.0)]) == ["a", "b", "a"]


def test_unknown_measure_and_bad_k():
    with pytest.raises(ValueError, match="unknown measure"):
        score_query(["a"], {"a"}, "map")
    with pytest.raises(ValueError, match="unknown measure"):
        score_query(["a"], {"a"}, "ndcg")  # needs a cut-off
    with pytest.raises(ValueError):
        precision_at_k(["a"], {"a"}, 0)


def test_evaluate_run_counts_unscored_queries():
    run = {"q1": {"a": 2.0, "b": 1.0}, "q2": ["c"], "q9": ["a"]}
    qrels = {"q1": {"b": 1}, "q2": {"c": 2, "d": 1}, "q3": {"a": 1}, "q4": {"a": 0}}
    res = evaluate_run(run, qrels, ["mrr", "hit@1", "ndcg@2"], seed=7)
    rr = res["mrr"]
    assert rr.per_query["q1"] == 0.5 and rr.per_query["q2"] == 1.0
    assert rr.per_query["q3"] == 0.0  # judged, not retrieved
    assert math.isnan(rr.per_query["q4"]) and math.isnan(rr.per_query["q9"])
    assert rr.unscored == 2 and rr.mean.n == 3 and rr.mean.method == "bootstrap"
    assert rr.mean.value == pytest.approx(1.5 / 3)
    again = evaluate_run(run, qrels, ["mrr"], seed=7)["mrr"].mean
    assert again == rr.mean  # seeded: reproducible
    assert rr.summary()["unscored"] == 2
    graded = res["ndcg@2"].per_query["q2"]
    binary = evaluate_run(run, qrels, ["ndcg@2"], seed=7, binary=True)["ndcg@2"].per_query["q2"]
    assert graded == pytest.approx(2 / (2 + 1 / math.log2(3)))
    assert binary == pytest.approx(1 / (1 + 1 / math.log2(3)))


# ------------------------------------------------------------------ independent cross-check

CUTOFFS = (1, 3, 5, 10)


def _random_collection(seed: int, n_queries: int = 200):
    """Graded qrels (grades −1..3, at least one relevant doc per query) and rankings with
    distinct scores (no tie-order ambiguity), some shorter than the largest cut-off."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_queries):
        qid = f"q{q}"
        pool = [f"d{i}" for i in rng.permutation(40)]
        judged = pool[: int(rng.integers(1, 15))]
        grades = {d: int(rng.choice([-1, 0, 0, 1, 1, 2, 3])) for d in judged}
        if not any(g > 0 for g in grades.values()):
            grades[judged[0]] = int(rng.integers(1, 4))
        qrels[qid] = grades
        retrieved = [str(d) for d in rng.choice(pool, size=int(rng.integers(1, 25)), replace=False)]
        mode = rng.random()
        if mode < 0.15:  # ideal head: relevant docs by grade, then the rest
            head = sorted((d for d in grades if grades[d] > 0), key=lambda d: -grades[d])
            retrieved = head + [d for d in retrieved if d not in head]
        elif mode < 0.3:  # a miss: nothing relevant retrieved
            retrieved = [d for d in retrieved if grades.get(d, 0) <= 0] or pool[-1:]
        # distinct, decreasing along the list (ties would be broken by doc id in trec_eval)
        scores = np.sort(rng.random(len(retrieved)))[::-1] + np.arange(len(retrieved))[::-1]
        order = rng.permutation(len(retrieved))  # stored unsorted: rank_run must sort
        run[qid] = {retrieved[i]: float(scores[i]) for i in order}
    return qrels, run


@pytest.mark.parametrize("binary", [False, True])
def test_cross_check_against_ir_measures(binary: bool):
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import RR, P, R, Success, nDCG

    qrels, run = _random_collection(seed=20261130 + binary)
    if binary:  # binary relevance: every grade > 0 becomes 1 on both sides
        qrels = {q: {d: int(g > 0) for d, g in gs.items()} for q, gs in qrels.items()}
    ours_names: dict[object, str] = {RR: "mrr"}
    for k in CUTOFFS:
        ours_names.update(
            {
                P @ k: f"precision@{k}",
                R @ k: f"recall@{k}",
                nDCG @ k: f"ndcg@{k}",
                Success @ k: f"hit@{k}",
                RR @ k: f"mrr@{k}",
            }
        )
    theirs = {
        (m.query_id, str(m.measure)): m.value
        for m in ir_measures.iter_calc(
            list(ours_names),
            [ir_measures.Qrel(q, d, g) for q, gs in qrels.items() for d, g in gs.items()],
            [ir_measures.ScoredDoc(q, d, s) for q, ds in run.items() for d, s in ds.items()],
        )
    }
    ours = evaluate_run(run, qrels, list(ours_names.values()), seed=1)
    compared = 0
    for measure, name in ours_names.items():
        for qid in qrels:
            assert ours[name].per_query[qid] == pytest.approx(
                theirs[(qid, str(measure))], abs=1e-9
            ), (qid, name)
            compared += 1
        assert ours[name].unscored == 0
    assert compared == len(ours_names) * 200
    # the set is not degenerate: some queries miss, some hit, nDCG spreads
    ndcg = np.array(list(ours["ndcg@10"].per_query.values()))
    assert (ndcg == 0).any() and (ndcg == 1).any() and ((ndcg > 0) & (ndcg < 1)).sum() > 50
