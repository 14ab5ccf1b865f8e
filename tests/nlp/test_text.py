"""Sentence splitting is memoised by text: the same answer every time, a fresh list per call
(a caller changing it cannot corrupt the memo), bounded in entries and in text length."""

from __future__ import annotations

from probeguard.nlp import text as text_module
from probeguard.nlp.text import (
    SENTENCE_MEMO_MAX_CHARS,
    SENTENCE_MEMO_SIZE,
    sentence_spans,
    split_sentences,
    word_spans,
    words,
)

TEXT = "Dr. Varda built the hygrograph in 1879. It is kept in Marrowby.\n\nOpening hours"


def test_spans_and_sentences_agree_and_repeat():
    spans = sentence_spans(TEXT)
    assert split_sentences(TEXT) == [TEXT[s:e] for s, e in spans]
    assert split_sentences(TEXT) == [
        "Dr. Varda built the hygrograph in 1879.",
        "It is kept in Marrowby.",
        "Opening hours",
    ]
    assert sentence_spans(TEXT) == spans
    assert isinstance(spans, list) and all(isinstance(s, tuple) for s in spans)


def test_a_caller_changing_its_list_does_not_change_the_next_answer():
    text = "One sentence here. Another one there."
    first = sentence_spans(text)
    expected = list(first)
    first.append((0, 1))
    first[0] = (5, 6)
    sentences = split_sentences(text)
    sentences.clear()
    assert sentence_spans(text) == expected
    assert split_sentences(text) == ["One sentence here.", "Another one there."]


def test_a_repeated_text_is_split_once():
    text = "A text seen only by this test. It has two sentences."
    before = text_module._segment_memo.cache_info()
    for _ in range(5):
        sentence_spans(text)
        split_sentences(text)
    after = text_module._segment_memo.cache_info()
    assert after.misses - before.misses == 1
    assert after.hits - before.hits == 9
    assert after.maxsize == SENTENCE_MEMO_SIZE


def test_a_long_text_is_split_without_the_memo():
    sentence = "This sentence is repeated to make a long text. "
    text = sentence * (SENTENCE_MEMO_MAX_CHARS // len(sentence) + 1)
    assert len(text) > SENTENCE_MEMO_MAX_CHARS
    before = text_module._segment_memo.cache_info()
    spans = sentence_spans(text)
    after = text_module._segment_memo.cache_info()
    assert (after.hits, after.misses) == (before.hits, before.misses)
    assert len(spans) == text.count(".")
    assert spans == list(text_module._segment(text))


def test_abbreviations_with_dots_are_one_word():
    # HaluEval qa_one_turn (HotpotQA paragraph), copied
    text = "The George Washington University Hospital is located in Washington, D.C."
    assert words(text)[-2:] == ["washington", "d.c"]
    assert word_spans(text)[-1] == ("D.C", len(text) - 4, len(text) - 1)
