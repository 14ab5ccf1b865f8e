"""Chunkers: token windows, sentence packing, whole documents.

All chunkers cut on character offsets, so ``chunk.text == doc.text[chunk.start:chunk.end]``,
and chunk ids (``<doc_id>#<start>-<end>``, see ``Chunk.of``) are the same on every run.

Coverage. Chunks are built from *units* (tokens or sentences) with character spans. A few
characters belong to no unit: the WordPiece normaliser drops control characters, zero-width
spaces and lone combining marks, and a sentence splitter may leave stray characters between
sentences. So that every non-whitespace character of a document lies in some chunk, a chunk
that ends at unit ``j`` extends over the gap up to unit ``j+1``, minus trailing whitespace:
``end = e_j + len(text[e_j:s_{j+1}].rstrip())``; the first chunk starts at the first
non-whitespace character and the last ends at the last one. A document with non-whitespace
text but no units at all becomes one chunk; an empty or whitespace-only document none.

Configs are canonical dicts (``{"name": "tokens", "size": 200, "overlap": 40,
"tokenizer": "wordpiece"}``); ``make_chunker(chunker.config())`` rebuilds the same chunker.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from probeguard.core.documents import Chunk, Document
from probeguard.corpus.chunking_base import Chunker
from probeguard.corpus.tokenizer import (
    Bounds,
    RegexWordTokenizer,
    Span,
    TokenCounter,
    WordPieceTokenizer,
    require_wordpiece,
    resolve_tokenizer_name,
)
from probeguard.nlp.text import sentence_spans

_GROUP = 256
"""Documents tokenized per batch in ``chunk_all`` (bounds memory held by token spans)."""


def _content_bounds(text: str) -> tuple[int, int]:
    """``(first, last+1)`` index of the non-whitespace content of ``text``; ``(0, 0)`` if none."""
    stripped_right = len(text.rstrip())
    if stripped_right == 0:
        return 0, 0
    return len(text) - len(text.lstrip()), stripped_right


def _extend(text: str, end: int, next_start: int) -> int:
    """``end`` pushed over the non-whitespace characters before ``next_start``."""
    if next_start <= end:
        return end
    return end + len(text[end:next_start].rstrip())


def _windows(
    text: str, starts: np.ndarray, ends: np.ndarray, size: int, step: int, lo: int, hi: int
) -> list[Span]:
    """Character spans of token windows ``[w*step, w*step+size)`` over the tokens with
    ``starts``/``ends``, the first starting at ``lo`` and the last ending at ``hi``. There are
    ``1`` windows if ``n <= size`` else ``ceil((n - size) / step) + 1``, so consecutive
    windows share exactly ``size - step`` tokens, every window but the last is full, and only
    the last one reaches token ``n - 1``. Vectorised: Python work is per window, not per
    token."""
    n = len(starts)
    if n == 0:
        return [(lo, hi)] if hi > lo else []
    count = 1 if n <= size else -(-(n - size) // step) + 1
    first = np.arange(count, dtype=np.int64) * step
    last = np.minimum(first + size, n) - 1
    win_starts = starts[first].tolist()
    win_ends = ends[last].tolist()
    next_starts = starts[np.minimum(last + 1, n - 1)].tolist()
    win_starts[0] = lo
    for w in range(count - 1):
        win_ends[w] = _extend(text, win_ends[w], next_starts[w])
    win_ends[-1] = max(hi, win_ends[-1])
    return list(zip(win_starts, win_ends))


def _trimmed(text: str, spans: list[Span]) -> list[Span]:
    """Spans without surrounding whitespace, empty ones dropped. (syntok ends a sentence
    without final punctuation with an empty token placed after the trailing whitespace, so
    ``sentence_spans("a b ")`` gives ``(0, 4)``.)"""
    out: list[Span] = []
    for start, end in spans:
        piece = text[start:end]
        core = piece.strip()
        if core:
            lead = len(piece) - len(piece.lstrip())
            out.append((start + lead, start + lead + len(core)))
    return out


def _to_chunks(doc: Document, spans: Iterable[Span]) -> list[Chunk]:
    """Chunks for the spans, dropping empty spans and exact repeats (so ids stay unique)."""
    chunks: list[Chunk] = []
    prev: Span | None = None
    for start, end in spans:
        if end <= start or (start, end) == prev:
            continue
        prev = (start, end)
        chunks.append(Chunk.of(doc, start, end, len(chunks)))
    return chunks


class _TokenizedChunker(Chunker):
    """Shared plumbing: a named tokenizer resolved at construction, loaded on first use, and
    a batched ``chunk_all``."""

    def __init__(self, tokenizer: str | TokenCounter) -> None:
        if isinstance(tokenizer, str):
            self._tokenizer_name = resolve_tokenizer_name(tokenizer)
            if self._tokenizer_name == "wordpiece":
                require_wordpiece()  # fail now, not at the first document
            self._tokenizer: TokenCounter | None = None
        else:
            if not isinstance(tokenizer, TokenCounter):
                raise TypeError("tokenizer must be 'auto', 'wordpiece', 'regex' or a TokenCounter")
            self._tokenizer_name = tokenizer.name
            self._tokenizer = tokenizer

    @property
    def tokenizer(self) -> TokenCounter:
        if self._tokenizer is None:
            self._tokenizer = (
                WordPieceTokenizer()
                if self._tokenizer_name == "wordpiece"
                else RegexWordTokenizer()
            )
        return self._tokenizer

    def _bounds_batch(self, texts: list[str]) -> list[Bounds]:
        tok = self.tokenizer
        fast = getattr(tok, "token_bounds_batch", None)
        if fast is not None:
            return fast(texts)
        out: list[Bounds] = []
        for spans in tok.token_spans_batch(texts):
            arr = np.array(spans, dtype=np.int64).reshape(-1, 2)
            out.append((arr[:, 0], arr[:, 1]))
        return out

    def chunk(self, doc: Document) -> list[Chunk]:
        if not doc.text.strip():
            return []
        return self._chunk_bounds(doc, *self._bounds_batch([doc.text])[0])

    def chunk_all(self, docs: Iterable[Document]) -> list[Chunk]:
        """All chunks, documents in order; tokenizes ``_GROUP`` documents per batch call."""
        out: list[Chunk] = []
        group: list[Document] = []
        for doc in docs:
            if doc.text.strip():
                group.append(doc)
            if len(group) == _GROUP:
                self._chunk_group(group, out)
                group = []
        if group:
            self._chunk_group(group, out)
        return out

    def _chunk_group(self, group: list[Document], out: list[Chunk]) -> None:
        batch = self._bounds_batch([d.text for d in group])
        for doc, (starts, ends) in zip(group, batch):
            out.extend(self._chunk_bounds(doc, starts, ends))

    def _chunk_bounds(self, doc: Document, starts: np.ndarray, ends: np.ndarray) -> list[Chunk]:
        raise NotImplementedError


class TokenWindowChunker(_TokenizedChunker):
    """Fixed windows of ``size`` tokens, each starting ``size - overlap`` tokens after the
    previous one; consecutive windows share exactly ``overlap`` tokens.

    A window's characters run from its first token's start to its last token's end (extended
    over characters that belong to no token, see the module docstring). ``tokenizer`` is
    ``"wordpiece"`` (MiniLM, ``onnx`` extra), ``"regex"``, ``"auto"`` (wordpiece when
    installed) or a ``TokenCounter``; ``config()`` names the one used.
    """

    name = "tokens"

    def __init__(
        self, size: int = 200, overlap: int = 40, tokenizer: str | TokenCounter = "auto"
    ) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
            raise ValueError(f"tokens chunker: size must be a positive integer, got {size!r}")
        if isinstance(overlap, bool) or not isinstance(overlap, int) or not 0 <= overlap < size:
            raise ValueError(
                f"tokens chunker: overlap must be an integer with "
                f"0 <= overlap < size ({size}), got {overlap!r}"
            )
        self.size = size
        self.overlap = overlap
        super().__init__(tokenizer)

    def _chunk_bounds(self, doc: Document, starts: np.ndarray, ends: np.ndarray) -> list[Chunk]:
        lo, hi = _content_bounds(doc.text)
        if hi == 0:
            return []
        if len(starts):
            lo = min(lo, int(starts[0]))
            hi = max(hi, int(ends[-1]))
        return _to_chunks(
            doc, _windows(doc.text, starts, ends, self.size, self.size - self.overlap, lo, hi)
        )

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "size": self.size,
            "overlap": self.overlap,
            "tokenizer": self._tokenizer_name,
        }


class SentenceChunker(_TokenizedChunker):
    """Whole sentences (``probeguard.nlp.text.sentence_spans``, syntok) packed greedily into chunks
    of at most ``max_tokens`` tokens; each chunk after the first repeats the last
    ``overlap_sentences`` sentences of the previous one (fewer if they and the next sentence
    would not fit in ``max_tokens``).

    A token belongs to the sentence its start falls in (or, in a gap, the sentence before).
    A single sentence longer than ``max_tokens`` tokens becomes chunks of its own, cut into
    token windows of ``max_tokens`` tokens without overlap; packing resumes after it.
    """

    name = "sentences"

    def __init__(
        self,
        max_tokens: int = 200,
        overlap_sentences: int = 0,
        tokenizer: str | TokenCounter = "auto",
    ) -> None:
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens <= 0:
            raise ValueError(
                f"sentences chunker: max_tokens must be a positive integer, got {max_tokens!r}"
            )
        if (
            isinstance(overlap_sentences, bool)
            or not isinstance(overlap_sentences, int)
            or overlap_sentences < 0
        ):
            raise ValueError(
                f"sentences chunker: overlap_sentences must be an integer >= 0, "
                f"got {overlap_sentences!r}"
            )
        self.max_tokens = max_tokens
        self.overlap_sentences = overlap_sentences
        super().__init__(tokenizer)

    def _chunk_bounds(self, doc: Document, starts: np.ndarray, ends: np.ndarray) -> list[Chunk]:
        text = doc.text
        lo, hi = _content_bounds(text)
        if hi == 0:
            return []
        sents = _trimmed(text, sentence_spans(text))
        if not sents:
            return _to_chunks(
                doc, _windows(text, starts, ends, self.max_tokens, self.max_tokens, lo, hi)
            )
        m = len(sents)
        # Unit i covers [u_start[i], u_end[i]): sentence i extended over the gap after it.
        u_start = [s for s, _ in sents]
        u_start[0] = min(lo, u_start[0])
        u_end = [_extend(text, sents[i][1], sents[i + 1][0]) for i in range(m - 1)]
        u_end.append(max(hi, sents[-1][1]))
        # Sentence i owns the tokens starting in [u_start[i], u_start[i+1]).
        cut = [0, *np.searchsorted(starts, u_start[1:], side="left").tolist(), len(starts)]
        counts = [cut[i + 1] - cut[i] for i in range(m)]

        limit, keep = self.max_tokens, self.overlap_sentences
        out: list[Span] = []
        i = 0
        while i < m:
            if counts[i] > limit:
                a, b = cut[i], cut[i + 1]
                out.extend(
                    _windows(
                        text,
                        starts[a:b],
                        ends[a:b],
                        limit,
                        limit,
                        u_start[i],
                        max(u_end[i], int(ends[b - 1])),
                    )
                )
                i += 1
                continue
            j, total = i, 0
            while j < m and total + counts[j] <= limit:
                total += counts[j]
                j += 1
            out.append((u_start[i], u_end[j - 1]))
            if j >= m:
                break
            nxt = j
            if keep and counts[j] <= limit:
                nxt = max(j - keep, i + 1)
                while nxt < j and sum(counts[nxt : j + 1]) > limit:
                    nxt += 1
            i = nxt
        return _to_chunks(doc, out)

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "max_tokens": self.max_tokens,
            "overlap_sentences": self.overlap_sentences,
            "tokenizer": self._tokenizer_name,
        }


class DocumentChunker(Chunker):
    """One chunk per document: its whole text without leading and trailing whitespace."""

    name = "document"

    def chunk(self, doc: Document) -> list[Chunk]:
        lo, hi = _content_bounds(doc.text)
        return [Chunk.of(doc, lo, hi, 0)] if hi > lo else []

    def config(self) -> dict[str, Any]:
        return {"name": self.name}


CHUNKERS: dict[str, Callable[..., Chunker]] = {
    TokenWindowChunker.name: TokenWindowChunker,
    SentenceChunker.name: SentenceChunker,
    DocumentChunker.name: DocumentChunker,
}
"""Chunker classes by config name."""

_PARAMS: dict[str, tuple[str, ...]] = {
    "tokens": ("size", "overlap", "tokenizer"),
    "sentences": ("max_tokens", "overlap_sentences", "tokenizer"),
    "document": (),
}


def make_chunker(spec: dict[str, Any] | str) -> Chunker:
    """A chunker from a config dict (``{"name": "tokens", "size": 200, "overlap": 40}``,
    ``{"name": "sentences", "max_tokens": 200}``, ``{"name": "document"}``) or a bare name.
    Unknown names or parameters raise ``ValueError`` listing the accepted ones."""
    if isinstance(spec, str):
        spec = {"name": spec}
    if not isinstance(spec, dict):
        raise ValueError(f"chunker config must be a mapping with a 'name', got {spec!r}")
    params = dict(spec)
    name = params.pop("name", None)
    if name not in CHUNKERS:
        raise ValueError(f"unknown chunker {name!r}; known chunkers: {', '.join(sorted(CHUNKERS))}")
    unknown = sorted(set(params) - set(_PARAMS[name]))
    if unknown:
        accepted = ", ".join(_PARAMS[name]) or "none"
        raise ValueError(
            f"chunker {name!r}: unknown parameter(s) {', '.join(unknown)}; accepted: {accepted}"
        )
    return CHUNKERS[name](**params)
