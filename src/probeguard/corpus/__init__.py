"""Corpus: documents, chunks, chunkers, loaders and fingerprints."""

from probeguard.core.documents import Chunk, Document, corpus_fingerprint
from probeguard.corpus.chunkers import (
    DocumentChunker,
    SentenceChunker,
    TokenWindowChunker,
    make_chunker,
)
from probeguard.corpus.chunking_base import Chunker
from probeguard.corpus.jsonl_writer import documents_to_jsonl
from probeguard.corpus.loaders import load_corpus
from probeguard.corpus.questions import load_questions
from probeguard.corpus.tokenizer import (
    RegexWordTokenizer,
    TokenCounter,
    WordPieceTokenizer,
    get_tokenizer,
    load_wordpiece_tokenizer,
)

__all__ = [
    "Chunk",
    "Chunker",
    "Document",
    "DocumentChunker",
    "RegexWordTokenizer",
    "SentenceChunker",
    "TokenCounter",
    "TokenWindowChunker",
    "WordPieceTokenizer",
    "corpus_fingerprint",
    "documents_to_jsonl",
    "get_tokenizer",
    "load_corpus",
    "load_questions",
    "load_wordpiece_tokenizer",
    "make_chunker",
]
