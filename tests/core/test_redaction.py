"""``core.redaction``: every form of a configured secret becomes ``***``; ``core.floats``:
run-log floats rounded to 10 significant digits; ``core.plugins``: typed part parameters."""

from __future__ import annotations

import json
import math
from urllib.parse import quote

import pytest

from probeguard.core.errors import PartError
from probeguard.core.floats import normalise_floats
from probeguard.core.plugins import construct
from probeguard.core.redaction import redact, redact_url, url_secrets

KEY = 'sk-live/ab+cd"ef=='


def test_every_form_of_a_secret_is_redacted() -> None:
    text = f"raw {KEY}, url {quote(KEY, safe='')}, json {json.dumps(KEY)}, bearer Bearer {KEY}"
    out = redact(text, [f"Bearer {KEY}"])
    assert "sk-live" not in out and out.count("***") == 4


def test_short_values_are_left_alone() -> None:
    assert redact("top_k=5 lang=en", ["5", "en"]) == "top_k=5 lang=en"


def test_url_secrets_and_display() -> None:
    url = "https://user:pw-123456@host:8443/v1?api_key=abcdef123&x=1"
    assert url_secrets(url) == ["user", "pw-123456", "abcdef123", "1"]
    assert redact_url(url) == "https://host:8443/v1?api_key=***&x=***"


def test_floats_are_rounded_idempotently_and_nan_kept() -> None:
    noisy = {"a": [0.1 + 0.2, 1 / 3], "b": float("nan"), "c": 7, "d": "0.30000000000000004"}
    once = normalise_floats(noisy)
    assert once["a"] == [0.3, 0.3333333333] and math.isnan(once["b"]) and once["d"] == noisy["d"]
    assert normalise_floats(once)["a"] == once["a"]


class _Part:
    def __init__(self, k1: float = 1.5, min_score: float | None = None) -> None:
        if k1 < 0:
            raise ValueError(f"need k1 >= 0, got k1={k1}")


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"min_score": "abc"}, "retriever.min_score"),
        ({"k1": -1}, "retriever.k1"),
        ({"bogus": 1}, "retriever.bogus"),
    ],
)
def test_part_errors_name_the_parameter(params: dict[str, object], field: str) -> None:
    with pytest.raises(PartError) as info:
        construct(_Part, "retriever", "test", params)
    assert info.value.field == field and isinstance(info.value, ValueError)


def test_lax_types_still_pass() -> None:
    assert isinstance(construct(_Part, "retriever", "test", {"k1": 2, "min_score": "0.5"}), _Part)


def test_a_scalar_takes_its_validated_form() -> None:
    class Keeps:
        def __init__(self, min_score: float | None = None) -> None:
            self.min_score = min_score

    assert construct(Keeps, "retriever", "test", {"min_score": "0.5"}).min_score == 0.5
