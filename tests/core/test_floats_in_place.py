"""``normalise_floats_in_place`` (issue 18): the values of ``normalise_floats`` without a
second tree, so serialising a run log rounds its floats where the dump put them."""

from __future__ import annotations

import copy
import math

import numpy as np

from probeguard.core.floats import normalise_floats, normalise_floats_in_place


def awkward_tree() -> dict[str, object]:
    return {
        "a": 1 / 3,
        "b": [0.1 + 0.2, "s", (2 / 3, 1), {"c": [math.nan, -math.inf, 1.00000000001]}],
        "d": {"e": np.float64(1 / 7), "f": True, "g": None, "h": 7},
        "i": [[[], {}], {0.5: 1 / 9}],
    }


def test_in_place_gives_the_values_of_the_copying_normaliser() -> None:
    tree = awkward_tree()
    expected = normalise_floats(copy.deepcopy(tree))
    assert repr(normalise_floats_in_place(tree)) == repr(expected)


def test_in_place_reuses_the_containers_and_rounds_them() -> None:
    tree = awkward_tree()
    inner = tree["b"]
    nested = tree["d"]
    result = normalise_floats_in_place(tree)
    assert result is tree and tree["b"] is inner and tree["d"] is nested
    assert tree["a"] == 0.3333333333 and inner[0] == 0.3  # type: ignore[index]
    assert inner[2] == [0.6666666667, 1]  # type: ignore[index]
    assert type(nested["e"]) is float  # type: ignore[index]


def test_scalars_and_tuples_come_back_normalised() -> None:
    assert normalise_floats_in_place(2 / 3) == 0.6666666667
    assert normalise_floats_in_place((0.1 + 0.2,)) == [0.3]
    assert normalise_floats_in_place("x") == "x"
    assert math.isnan(normalise_floats_in_place(math.nan))
