"""Support scores must not depend on the process's string-hash seed: set iteration order does,
and a float sum in that order differs in its last digits from process to process."""

from __future__ import annotations

import os
import subprocess
import sys

SCRIPT = """
from probeguard.core.pipeline import Context
from probeguard.nlp.support import support_scores
contexts = [
    Context("a", "Refunds are issued within 30 days of the return. The warehouse checks each parcel."),
    Context("b", "Customers in Norway pay a shipping fee. Returned parcels need a printed label."),
    Context("c", "Store credit never expires. Gift cards are not refundable after purchase."),
]
question = "How many days do refunds for a returned parcel take in Norway after purchase?"
print(repr([score for score, *_ in support_scores(question, contexts)]))
"""


def _scores(hash_seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def test_support_scores_are_identical_under_any_hash_seed():
    outputs = {_scores(seed) for seed in ("0", "1", "2", "3", "4", "5")}
    assert len(outputs) == 1, outputs
