"""Next-token probabilities from a llama.cpp model (cyllama), for answers that are scored
rather than generated (the yes/no judge).

One forward pass over the prompt; the logits at its last position give the log-softmax
``log p(t) = z_t - logsumexp(z)`` over the whole vocabulary. An answer word's probability is
the summed probability of the distinct single-token spellings of its first token
(``answer_variants``: ``yes``, ``Yes``, ``YES``, each with and without a leading space, the
ones that are one token in the model's vocabulary) — the mass the model puts on starting its
reply with that word.

cyllama 0.2.18's ``LlamaContext.get_logits``/``get_logits_ith`` read ``model.n_vocab``, which
its ``LlamaModel`` no longer has (the size moved to the vocab), so both raise
``AttributeError``. ``LogitsSession`` loads the model as a ``LlamaModel`` subclass that adds
``n_vocab`` from its vocab; the weights are memory-mapped, so a second load of a file the
generator already mapped shares its pages.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from probeguard.core.errors import MissingExtraError, PipelineCallError

__all__ = ["AnswerProbabilities", "LogitsSession", "answer_mass", "answer_variants", "log_softmax"]

_BATCH = 512


@dataclass(frozen=True)
class AnswerProbabilities:
    """Next-token probability of each answer word, and the greedy first token's text."""

    probabilities: dict[str, float]
    top: str
    metadata: dict[str, Any] = field(default_factory=dict)


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """``z - logsumexp(z)`` in float64, stable (the maximum subtracted first)."""
    z = np.asarray(logits, dtype=np.float64)
    top = float(z.max())
    return z - (top + math.log(float(np.exp(z - top).sum())))


def answer_variants(word: str) -> tuple[str, ...]:
    """The spellings whose first token counts for ``word``: lower, Capitalised and UPPER
    case, each bare and after one space, without duplicates (order kept)."""
    forms = dict.fromkeys((word.lower(), word.capitalize(), word.upper()))
    return tuple(dict.fromkeys(p + f for f in forms for p in ("", " ")))


def answer_mass(logprobs: np.ndarray, token_ids: Mapping[str, Sequence[int]]) -> dict[str, float]:
    """Each answer's probability: ``sum(exp(logprobs[t]) for t in its distinct token ids)``
    (0.0 for an answer with none)."""
    return {
        answer: float(sum(math.exp(float(logprobs[t])) for t in set(ids)))
        for answer, ids in token_ids.items()
    }


@lru_cache(maxsize=1)
def _vocab_model_class() -> type:
    try:
        from cyllama.llama.llama_cpp import LlamaModel
    except ImportError as exc:
        raise MissingExtraError("llm", "cyllama") from exc

    class _VocabModel(LlamaModel):
        """``LlamaModel`` with the ``n_vocab`` that cyllama 0.2.18's logits getters read."""

        @property
        def n_vocab(self) -> int:
            return int(self.get_vocab().n_vocab)

    return _VocabModel


class LogitsSession:
    """A model and one context for next-token log-probabilities (not thread-safe: the
    caller holds a lock). ``n_ctx``: the most prompt tokens; ``n_threads``: decoding
    threads."""

    def __init__(self, model_path: Path, n_ctx: int, n_threads: int) -> None:
        try:
            from cyllama.llama import llama_cpp as cpp
        except ImportError as exc:
            raise MissingExtraError("llm", "cyllama") from exc
        self._cpp = cpp
        params = cpp.LlamaModelParams()
        params.n_gpu_layers = 0
        self.model: Any = _vocab_model_class()(str(model_path), params)
        self.vocab: Any = self.model.get_vocab()
        ctx_params = cpp.LlamaContextParams()
        ctx_params.n_ctx = n_ctx
        ctx_params.n_batch = _BATCH
        self.n_ctx = n_ctx
        self.ctx: Any = cpp.LlamaContext(self.model, ctx_params)
        self.ctx.set_n_threads(n_threads, n_threads)

    def first_token_ids(self, word: str) -> tuple[int, ...]:
        """The token ids of ``answer_variants(word)`` that are one token each."""
        ids = []
        for form in answer_variants(word):
            tokens = self.vocab.tokenize(form, add_special=False, parse_special=False)
            if len(tokens) == 1:
                ids.append(int(tokens[0]))
        return tuple(dict.fromkeys(ids))

    def next_logprobs(self, tokens: Sequence[int]) -> np.ndarray:
        """Log-softmax of the logits after ``tokens`` (the KV cache cleared first)."""
        if not tokens:
            raise PipelineCallError("an empty prompt has no next token")
        if len(tokens) > self.n_ctx:
            raise PipelineCallError(f"prompt of {len(tokens)} tokens exceeds n_ctx={self.n_ctx}")
        self.ctx.kv_cache_clear()
        for start in range(0, len(tokens), _BATCH):
            batch = self._cpp.llama_batch_get_one(list(tokens[start : start + _BATCH]), start)
            self.ctx.decode(batch)
        return log_softmax(np.asarray(self.ctx.get_logits_ith(-1), dtype=np.float64))

    def piece(self, token: int) -> str:
        """The text of one token."""
        try:
            return str(self.vocab.token_to_piece(int(token), special=True))
        except UnicodeDecodeError:
            return ""
