"""Where a gold answer sits in a document, and whether a chunking splits it (the span helpers of
``probeguard.probes.chunk_fracture``): pure functions over texts and character offsets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from probeguard.core.documents import Chunk
from probeguard.nlp.text import contains_answer, content_words, sentence_spans
from probeguard.pipeline.reference import chunking_spec

__all__ = ["answer_span", "chunker_label", "containing_chunks", "straddles", "sweep_spec"]


def answer_span(text: str, answers: Sequence[str], question: str = "") -> tuple[int, int] | None:
    """``(start, end)`` of the answer-bearing sentence of ``text``: a sentence containing one
    of ``answers`` (normalised containment); among several, the one sharing most content
    words with ``question``, then the earliest. None when no sentence contains an answer."""
    found = [
        (s, e)
        for s, e in sentence_spans(text)
        if any(contains_answer(text[s:e], a) for a in answers)
    ]
    if not found:
        return None
    asked = set(content_words(question))
    return max(found, key=lambda se: (len(asked & set(content_words(text[se[0] : se[1]]))), -se[0]))


def straddles(span: tuple[int, int], bounds: Sequence[tuple[int, int]]) -> bool:
    """True when no chunk ``(start, end)`` in ``bounds`` contains the whole ``span``."""
    s, e = span
    return not any(cs <= s and ce >= e for cs, ce in bounds)


def containing_chunks(span: tuple[int, int], chunks: Sequence[Chunk]) -> tuple[bool, list[str]]:
    """``(straddles, chunk ids)``: the first chunk holding the whole span (not straddling), or
    every chunk overlapping it (the chunks the boundary splits it across)."""
    s, e = span
    for chunk in chunks:
        if chunk.start <= s and chunk.end >= e:
            return False, [chunk.id]
    return True, [c.id for c in chunks if c.start < e and c.end > s]


def chunker_label(config: Mapping[str, Any]) -> str:
    """A short name for a chunker config: ``tokens-128-32``, ``sentences-128-0``,
    ``document``."""
    name = str(config.get("name"))
    if name == "tokens":
        return f"tokens-{config.get('size')}-{config.get('overlap')}"
    if name == "sentences":
        return f"sentences-{config.get('max_tokens')}-{config.get('overlap_sentences')}"
    return name


def sweep_spec(item: Mapping[str, Any] | str, tokenizer: str) -> dict[str, Any]:
    """A sweep entry as a chunker spec: a name such as ``"tokens-128-32"`` or a config
    mapping; token and sentence chunkers get the sweep's ``tokenizer`` unless they name one."""
    if isinstance(item, str):
        spec = chunking_spec(item)
    elif isinstance(item, Mapping):
        spec = dict(item)
    else:
        raise ValueError(
            f"chunk_fracture: a sweep entry must be a chunker config mapping or a "
            f"name like 'tokens-128-32', got {item!r}"
        )
    if spec.get("name") in ("tokens", "sentences"):
        spec.setdefault("tokenizer", tokenizer)
    return spec
