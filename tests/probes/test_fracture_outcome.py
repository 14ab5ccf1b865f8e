"""The outcome rules of a chunk-fracture group (probes.fracture_outcome)."""

from __future__ import annotations

import pytest

from probeguard.probes.fracture_outcome import OUTCOMES, evidence_split, fracture_outcome


@pytest.mark.parametrize(
    ("split", "lost", "unsplit_answered", "outcome"),
    [
        (True, True, True, "fracture"),
        (True, True, False, "lost_unsplit_too"),
        (True, False, None, "survived"),
        (None, False, None, "survived"),
        (False, False, True, "not_split"),
        (False, True, True, "not_split"),
        (None, True, True, "unscored"),
        (True, True, None, "unscored"),
    ],
)
def test_outcome_rules(split, lost, unsplit_answered, outcome):
    assert fracture_outcome(split, lost, unsplit_answered) == outcome
    assert outcome in OUTCOMES


def test_evidence_split():
    assert evidence_split(True, None) is True and evidence_split(None, True) is True
    assert evidence_split(False, None) is False and evidence_split(None, False) is False
    assert evidence_split(None, None) is None and evidence_split(False, False) is False
