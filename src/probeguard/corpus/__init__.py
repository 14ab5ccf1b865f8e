"""Corpus: documents, chunks, chunkers, loaders and fingerprints."""

from probeguard.corpus.models import Chunk, Document, corpus_fingerprint

__all__ = ["Chunk", "Document", "corpus_fingerprint"]
