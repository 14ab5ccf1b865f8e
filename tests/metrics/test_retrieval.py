import math

from probeguard.metrics.retrieval import first_relevant_rank, hit_at_k, recall_of, reciprocal_rank


def test_ranks_count_documents_once():
    ranked = ["a", "a", "b", "c"]  # two chunks of doc a
    assert first_relevant_rank(ranked, {"c"}) == 3
    assert reciprocal_rank(ranked, {"b"}) == 0.5
    assert hit_at_k(ranked, {"c"}, 3) and not hit_at_k(ranked, {"c"}, 2)


def test_missing_relevant():
    assert first_relevant_rank(["a"], {"z"}) is None
    assert reciprocal_rank(["a"], {"z"}) == 0.0
    assert math.isnan(recall_of(["a"], set()))
    assert recall_of(["a", "b", "c"], {"a", "c", "d"}, k=2) == 1 / 3
