"""The yes/no judge style (``detectors.yesno``): first-word parsing (yes/no/garbage ->
1/0/NaN), the P(yes)/(P(yes)+P(no)) share, the evidence budget rule, verdicts and relevance
from one answer, and the config that selects the style. The HTTP path is in
``test_judges.py``; next-token probabilities in ``tests/models``."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from probeguard.detectors.config import JudgeConfig, LlmJudgeConfig
from probeguard.detectors.llm_judge import LlmJudge
from probeguard.detectors.yesno import YesNo, fit_evidence, parse_yes_no, yes_share


@pytest.mark.parametrize(
    "reply, score",
    [
        ("Yes", 1.0),
        ("yes.", 1.0),
        ("  **Yes**, the evidence says so", 1.0),
        ("No", 0.0),
        ("no, it does not", 0.0),
        ("NO.", 0.0),
    ],
)
def test_first_word_yes_and_no(reply: str, score: float):
    assert parse_yes_no(reply) == score


@pytest.mark.parametrize("reply", ["", "   ", "Maybe", "Yesterday it rained", "Noon", "The claim"])
def test_anything_else_is_unscored_never_0_or_1(reply: str):
    assert math.isnan(parse_yes_no(reply))


def test_yes_share():
    assert yes_share(0.3, 0.1) == pytest.approx(0.75)
    assert yes_share(0.0, 0.2) == 0.0
    assert math.isnan(yes_share(0.0, 0.0))


PAGE = (
    "The city hosts a large port. "
    "Its football club was founded in 1899 by English sailors. "
    "The mayor opened a new library in the old harbour district. "
    "Rainfall peaks in November."
)


def test_evidence_within_budget_is_kept_as_it_is():
    assert fit_evidence("The club was founded in 1899.", PAGE, 100) == PAGE


def test_long_evidence_keeps_the_sentences_sharing_most_words_with_the_claim():
    claim = "The football club was founded in 1899."
    # 10 words: only the club sentence (10 words) fits beside nothing else.
    assert fit_evidence(claim, PAGE, 10) == (
        "Its football club was founded in 1899 by English sailors."
    )
    # 16 words: the club sentence, then the first of the others that share no word with the
    # claim and still fits (the 6-word opening; the mayor's 12 would not), in document order.
    kept = fit_evidence(claim, PAGE, 16)
    assert kept == (
        "The city hosts a large port. Its football club was founded in 1899 by English sailors."
    )
    # a sentence sharing a word with the claim outranks earlier ones
    assert fit_evidence("Rainfall peaks then.", PAGE, 5) == "Rainfall peaks in November."
    assert len(kept.split()) <= 16


def test_ties_go_to_the_earlier_sentence_and_no_fit_cuts_the_best_one():
    assert fit_evidence("Unrelated words here.", PAGE, 6) == "The city hosts a large port."
    claim = "The football club was founded by sailors."
    assert fit_evidence(claim, PAGE, 3) == "Its football club"  # every sentence is longer


def test_an_answer_is_a_verdict_and_a_relevance():
    sure = YesNo(0.8, "logprobs", "Yes")
    v = sure.verdict("c1")
    assert (v.label, v.score, v.support, v.chunk_id) == ("supported", 0.8, 0.8, "c1")
    assert "0.800" in v.reason and sure.relevance().relevant is True
    low = YesNo(0.2, "logprobs", "No").verdict("c1")
    assert (low.label, low.score, low.support) == ("unsupported", 0.8, 0.2)
    said_no = YesNo(0.0, "first_word", "No.").verdict("c1")
    assert said_no.label == "unsupported" and "first word" in said_no.reason
    junk = YesNo(math.nan, "first_word", "The claim is")
    assert junk.verdict("c1").label == "unscored" and math.isnan(junk.verdict("c1").score)
    assert "The claim is" in junk.verdict("c1").reason and junk.relevance().relevant is None


def test_style_is_chosen_and_validated_by_the_config():
    assert LlmJudgeConfig().style == "json"
    config = JudgeConfig.model_validate(
        {"name": "llm", "llm": {"style": "yesno", "evidence_words": 64, "api_key_env": None}}
    )
    judge = LlmJudge(**config.llm.model_dump())
    assert (judge.style, judge.evidence_words) == ("yesno", 64)
    assert judge.generator.max_tokens == 3  # a yes/no reply needs 1-3 tokens
    assert judge.config()["style"] == "yesno"
    json_judge = LlmJudge(**LlmJudgeConfig(api_key_env=None).model_dump())
    assert json_judge.fingerprint() != judge.fingerprint()
    for bad in ({"style": "prose"}, {"evidence_words": 0}):
        with pytest.raises(ValidationError):
            LlmJudgeConfig.model_validate(bad)
    with pytest.raises(ValueError, match="style"):
        LlmJudge(api_key_env=None, style="prose")  # type: ignore[arg-type]
