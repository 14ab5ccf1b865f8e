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


# -- the one-sentence fast path gives exactly syntok's spans -------------------------------------
ONE_SENTENCE_CASES = [
    "",
    "   ",
    "\u200b \u3000",
    "Mercury is liquid at room temperature.",
    "  Mercury is liquid at room temperature!  ",
    "Is mercury liquid?",
    "no final punctuation",
    "Goertz's videos \u2014 posted on YouTube \u2014 are satirical",
    "\u200bzero width space around\u200b",
    "\x1cfile separator is not syntok whitespace\x1f",
    "tabs\tand\x0bvertical\x0cfeeds\u2028line\u2029separators",
    "co-operate, re-enter_this and 'quoted' words",
    "camelCase wordsLikeThis",
    "won't can't isn\u2019t",
    '"Quoted sentence."',
    "A final terminal then a quote.\u201d",
    "Trailing ellipsis...",
    "One. Two.",
    "Price $3.50 for U.S. buyers",
    "Arthur's Magazine (1844\u20131846) was a periodical.",
    'Allison Beth "Allie" Goertz (born March 2, 1991) is an American musician.',
    "John Charles Layfield ( born November 29, 1966 ), better known as JBL.",
    "Layfield (born 1966 ), better known.",
    "Ruled Annam (Dai Viet) (in 1288) crushed the Mongols.",
    "He was born (in Paris) The next year.",
    "Paris (France).",
    "The 6.213 km long track (over 1.2 km) was built in 1.5m units, v1.2.",
    "A rise of 3.5% a.1 x.2y \u00b2.3 then.",
    "Prices fell 5.. then rose",
    "Versions 1. and 2 differ",
    "It holds .5 litres",
    "camel.Case b.C 3.A words",
    "Arabic \u0661.\u0662 digits",
    "Paris (France)",
    "Two words (a long aside that runs on and on past forty-five characters) end.",
    "First; second",
    "A line\nanother line",
    "Carriage\rreturn",
    "Full-width stop\uff0e next",
    "Ends with a full-width stop\u3002",
    ".",
    "?!",
    "Hello .",
]


def test_the_fast_path_gives_syntoks_spans():
    for text in ONE_SENTENCE_CASES:
        quick = text_module._one_sentence(text)
        if quick is not None:
            assert quick == text_module._segment_syntok(text), text
        assert text_module._segment(text) == text_module._segment_syntok(text), text


def test_the_fast_path_takes_plain_sentences_and_leaves_the_rest_to_syntok():
    assert text_module._one_sentence("  Mercury is liquid.  ") == ((2, 20),)
    assert text_module._one_sentence("") == ()
    for text in ("One. Two.", "A (bracket) here", "A; B", "A line\nanother", "Is it? Yes"):
        assert text_module._one_sentence(text) is None, text


def test_the_fast_path_matches_syntok_on_random_texts():
    import random

    rng = random.Random(19)
    alphabet = list("abcXYZ 019") + [
        ".",
        "!",
        "?",
        ";",
        ",",
        "(",
        ")",
        "'",
        '"',
        "-",
        "_",
        "\t",
        "\u200b",
        "\u3000",
        "\x1c",
        "\u2019",
        "\u2014",
        "\u3002",
        "\uff08",
        "\u00e9",
        "\u00ad",
    ]
    taken = 0
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        quick = text_module._one_sentence(text)
        if quick is not None:
            taken += 1
            assert quick == text_module._segment_syntok(text), repr(text)
    assert taken > 300  # the property was exercised


def test_the_fast_path_takes_short_parentheses_syntok_skips():
    text = 'Allison Beth "Allie" Goertz (born March 2, 1991) is an American musician.'
    assert text_module._one_sentence(text) == ((0, len(text)),)
    assert text_module._one_sentence("Ruled by Annam (Dai Viet), then (1288) by Tran.") is not None
    for text in (
        "Layfield ( born 1966 ), better known.",  # " )," is one syntok token: left open
        "Layfield (born 1966 ), better known.",
        "Paris (France) is (in Europe) (and big).",  # a bracket right after a bracket
        "Paris(France) is big.",
        "(Aside) Paris is big.",
        "Paris (France) is big. Next.",
        "Two words (a long aside that runs on and on past forty-five characters) end.",
    ):
        assert text_module._one_sentence(text) is None, text


def test_the_fast_path_takes_dots_inside_numbers():
    text = "The 6.213 km long track (over 1.2 km) is 1.5m wide."
    assert text_module._one_sentence(text) == ((0, len(text)),)
    for text in ("Versions 1. and 2 differ", "It holds .5 litres", "U.S. Army", "b.C too"):
        assert text_module._one_sentence(text) is None, text


def test_the_fast_path_matches_syntok_on_random_parenthesised_texts():
    import random

    rng = random.Random(19)
    vocabulary = (
        "the The He It In Mr Dr No no I IV x A b St Jan 1991 3rd Paris born \u00fcber".split()
    )
    vocabulary += ["\u2014", "-", "'s", '"Allie"', "%", "$5", "&", ":", "a-b", "Co", "WWE", "1,000"]
    vocabulary += ["1.5", "6.213m", "v1.2", "a.1", "b.C", "3.A", "1.", ".5", "U.S"]
    gaps = [" ", " ", ", ", " - ", "  ", "\u00a0", ": "]

    def words(n: int) -> str:
        return "".join(rng.choice(vocabulary) + rng.choice(gaps) for _ in range(n)).rstrip()

    taken = 0
    for _ in range(6000):
        parts = [words(rng.randint(1, 5))]
        for _ in range(rng.randint(1, 3)):
            left, right = rng.choice([" (", " (", "(", " ( "]), rng.choice([")", ")", " )"])
            after = rng.choice([" ", ", ", "", ",", " ,", " ("])
            parts.append(left + words(rng.randint(1, 6)) + right + after + words(rng.randint(0, 4)))
        text = "".join(parts) + rng.choice([".", "!", "?", "", " ."])
        quick = text_module._one_sentence(text)
        if quick is not None:
            taken += 1
            assert quick == text_module._segment_syntok(text), repr(text)
    assert taken > 50  # the property was exercised


PLAIN_CASES = [
    "Mercury is liquid. It boils at 357 degrees. The metal is dense.",
    "Paris is big. Rome is old (founded in 753 BC). In 1990 the city grew.",
    "It was built in 1889. The tower is tall.",
    "Talk to Dr. Smith today. He knows.",
    "Lists etc. The end.",
    "It ran on 5. Jan the next year. Then it stopped.",
    "Born in 1991. Jan was her name.",
    "Ask for no. The answer is no.",
    "Chapter II. The return.",
    "Plan A. The backup.",
    "The river. the lower case next.",
    'She said go. "Now" he said.',
    "One two.  Three four.",
    "One two.\u00a0Three four.",
    "Line one. Line two\nLine three.",
    "He left. (Then) he came back.",
    "Abroad; he went. Home. Then back.",
]


def test_plain_sentences_are_read_as_syntok_reads_them():
    assert text_module._plain_sentences("Paris is big. Rome is old.") == ((0, 13), (14, 26))
    for text in PLAIN_CASES:
        quick = text_module._plain_sentences(text)
        if quick is not None:
            assert quick == text_module._segment_syntok(text), text
        assert text_module._segment(text) == text_module._segment_syntok(text), text
    for text in ("Talk to Dr. Smith today.", "It ran on 5. Jan the next year.", "Chapter II. The"):
        assert text_module._plain_sentences(text) is None, text


def test_plain_sentences_match_syntok_on_random_texts():
    import random

    rng = random.Random(19)
    vocabulary = (
        "the The He It In Mr Dr No no I IV x A b St Jan 1991 12 Paris born etc vs de".split()
    )
    vocabulary += ["river", "Rome", "went", "Iv", "ii", "a", "Sun", "sun", "June"] * 3
    vocabulary += ["\u2014", "'s", '"Allie"', "%", "a-b", "WWE", "1.5", "(born 1991)", "McDonald"]
    gaps = [" ", " ", " ", ", ", "  ", "\u00a0", ": "]
    ends = [". "] * 12 + ["! ", "? ", ".  ", '." ', ". (", "; ", "."]
    taken = 0
    for _ in range(6000):
        text = "".join(
            rng.choice(vocabulary)
            + "".join(rng.choice(gaps) + rng.choice(vocabulary) for _ in range(rng.randint(1, 6)))
            + rng.choice(ends)
            for _ in range(rng.randint(2, 5))
        )
        quick = text_module._plain_sentences(text)
        if quick is not None:
            taken += 1
            assert quick == text_module._segment_syntok(text), repr(text)
    assert taken > 50  # the property was exercised


# -- word memos -----------------------------------------------------------------------------------
def test_words_are_memoised_and_each_call_gets_a_new_list():
    from probeguard.nlp.text import WORDS_MEMO_MAX_CHARS, content_words, words

    text = "The Tower's 1,299.00 steps were built in 2024-03-01 by Eiffel."
    first = words(text)
    assert first == ["the", "tower's", "1,299.00", "steps", "were", "built", "in"] + [
        "2024-03-01",
        "by",
        "eiffel",
    ]
    first.append("changed")
    assert words(text)[-1] == "eiffel"
    cw = content_words(text)
    assert cw == ["tower's", "1,299.00", "steps", "built", "2024-03-01", "eiffel"]
    cw.clear()
    assert content_words(text) == ["tower's", "1,299.00", "steps", "built", "2024-03-01", "eiffel"]
    long_text = "word " * (WORDS_MEMO_MAX_CHARS // 5 + 1)
    before = text_module._words_memo.cache_info()
    assert words(long_text) == ["word"] * (WORDS_MEMO_MAX_CHARS // 5 + 1)
    assert content_words(long_text) == ["word"] * (WORDS_MEMO_MAX_CHARS // 5 + 1)
    after = text_module._words_memo.cache_info()
    assert (after.hits, after.misses) == (before.hits, before.misses)
