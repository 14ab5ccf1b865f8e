"""An LLM judge over any OpenAI-compatible chat-completions endpoint.

HTTP goes through ``OpenAICompatibleGenerator`` (aiohttp, retries on timeouts / 429 / 5xx,
the key read from ``api_key_env`` at call time and never stored): the judge prompt is a
``PromptTemplate`` whose ``{contexts}`` are the numbered passages (or statements) and whose
``{question}`` is the claim (or question). Decoding is greedy: ``temperature=0``.

**Strict output.** The reply must be one JSON object — alone, or inside one Markdown code
fence — that validates against a pydantic schema (``extra="forbid"``):

* ``mode="claim"`` (default; one call per claim, all passages in the prompt, which is where
  position bias can show): ``{"verdicts": [{"passage": n, "label": "supported" |
  "contradicted" | "unsupported", "evidence": str, "reason": str}, ...]}`` with exactly one
  entry per passage 1..N;
* ``mode="pair"`` (one call per claim and passage, for small models):
  ``{"label": ..., "evidence": str, "reason": str}``;
* relevance: ``{"verdicts": [{"statement": n, "relevant": bool, "reason": str}, ...]}``,
  one entry per statement.

A reply that fails is re-asked with the validation error appended to the prompt, at most
``format_retries`` times; each verdict records its ``retries``. When every attempt fails, the
cells are ``unscored`` and the reason quotes the last error and the start of the last reply —
never a silent 0, never dropped. A failed HTTP call (after the generator's own retries) is
also ``unscored``, with the error.

**Style.** ``style="json"`` (default, for capable remote models) is the above;
``style="yesno"`` (small local models such as the bundled SmolLM2) asks one yes/no question
per (claim, chunk) and per (question, statement) instead, with replies capped at
``YESNO_MAX_TOKENS`` tokens and evidence cut to ``evidence_words`` words — scoring, parsing and
the truncation rule in ``detectors.yesno``; ``mode`` and ``format_retries`` do not apply.

``fingerprint()`` — the cache-key part: sha256 over the judge name, ``PROMPT_VERSION``, the
prompt texts, the mode, the style (and for yes/no its evidence budget) and the generator's output-relevant config (server, model,
temperature, max_tokens, seed).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from probeguard.core.asyncio_sync import run_sync
from probeguard.core.errors import PipelineCallError
from probeguard.core.hashing import digest
from probeguard.core.pipeline import Context
from probeguard.detectors.claims import AtomicClaim
from probeguard.detectors.judges import NAN, Judgment, Relevance, Verdict, as_contexts, claim_texts
from probeguard.detectors.yesno import YESNO_MAX_TOKENS, ask_yes_no
from probeguard.models.generators.openai_compat import OpenAICompatibleGenerator
from probeguard.models.prompts import YESNO_JUDGE, YESNO_RELEVANCE, PromptTemplate

__all__ = ["LlmJudge", "PROMPT_VERSION", "parse_reply"]

PROMPT_VERSION = 1
"""Bumped whenever a judge prompt or schema changes (part of ``fingerprint()``)."""

_LABEL_RULES = (
    '"supported": the passage states the claim or clearly implies it; '
    '"contradicted": the passage states something incompatible with the claim; '
    '"unsupported": the passage does neither. Judge each passage on its own.'
)

_FIELDS = (
    '"label" (one of "supported", "contradicted", "unsupported"), "evidence" (a short '
    'exact quote from the passage, or "") and "reason" (one short sentence)'
)
CLAIM_SYSTEM = (
    "You check a claim against numbered context passages. " + _LABEL_RULES + " Reply with "
    'only a JSON object and no other text: {"verdicts": [...]} with exactly one entry per '
    'passage, each entry an object with the keys "passage" (its number), ' + _FIELDS + ". "
    'Example: {"verdicts": [{"passage": 1, "label": "unsupported", "evidence": "", '
    '"reason": "The passage does not mention it."}]}'
)
PAIR_SYSTEM = (
    "You check a claim against one context passage. " + _LABEL_RULES + " Reply with only a "
    "JSON object and no other text, with the keys " + _FIELDS + '. Example: {"label": '
    '"unsupported", "evidence": "", "reason": "The passage does not mention it."}'
)
RELEVANCE_SYSTEM = (
    "You decide whether each numbered statement is relevant to a question: relevant when it "
    "helps answer the question, not relevant when it is off topic or only background. Reply "
    'with only a JSON object and no other text: {"verdicts": [...]} with exactly one entry '
    'per statement, each an object with the keys "statement" (its number), "relevant" '
    '(true or false) and "reason" (one short sentence). Example: {"verdicts": '
    '[{"statement": 1, "relevant": true, "reason": "It states the answer."}]}'
)
CLAIM_USER = "Passages:\n{contexts}\n\nClaim: {question}"
PAIR_USER = "Passage:\n{contexts}\n\nClaim: {question}"
RELEVANCE_USER = "Question: {question}\n\nStatements:\n{contexts}"
_RETRY_NOTE = (
    "\n\nYour previous reply was rejected: {error}. Reply again with only the JSON "
    "object described above."
)
_QUOTE = 200


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class PassageVerdict(_Strict):
    passage: int
    label: Literal["supported", "contradicted", "unsupported"]
    evidence: str = ""
    reason: str = ""


class ClaimReply(_Strict):
    verdicts: list[PassageVerdict]


class PairReply(_Strict):
    label: Literal["supported", "contradicted", "unsupported"]
    evidence: str = ""
    reason: str = ""


class StatementVerdict(_Strict):
    statement: int
    relevant: bool
    reason: str = ""


class RelevanceReply(_Strict):
    verdicts: list[StatementVerdict]


_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n?(.*?)\n?```$", re.DOTALL)


def parse_reply(text: str, schema: type[BaseModel], expected: int | None = None) -> BaseModel:
    """The reply as ``schema``; ``ValueError`` saying what is wrong otherwise. The reply must be
    a JSON object, alone or in one code fence; with ``expected``, its ``verdicts`` must number
    ``1..expected`` once each (field ``passage`` or ``statement``)."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at char {exc.pos})") from None
    except ValueError as exc:  # not a syntax error: e.g. an int over Python's digit limit
        raise ValueError(f"not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    try:
        reply = schema.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(root)"
        raise ValueError(f"schema error at {where}: {first['msg']}") from None
    if expected is not None:
        verdicts = reply.verdicts  # type: ignore[attr-defined]  # schemas with `expected` have it
        numbers = sorted(getattr(v, "passage", 0) or getattr(v, "statement", 0) for v in verdicts)
        if numbers != list(range(1, expected + 1)):
            raise ValueError(f"expected one verdict for each of 1..{expected}, got {numbers}")
    return reply


def _locate(evidence: str, text: str) -> tuple[int, int] | None:
    if not evidence.strip():
        return None
    i = text.find(evidence.strip())
    return (i, i + len(evidence.strip())) if i >= 0 else None


class LlmJudge:
    """Judges claims with an LLM over an OpenAI-compatible endpoint (rules in the module
    docstring). ``base_url``/``model``/``api_key_env``/``max_tokens``/``timeout_s``/
    ``max_retries`` (HTTP retries) go to ``OpenAICompatibleGenerator`` with ``temperature=0``;
    ``format_retries``: re-asks after a malformed reply; ``concurrency``: calls in flight;
    ``mode``: ``"claim"`` or ``"pair"``; ``style``: ``"json"`` or ``"yesno"`` (then
    ``max_tokens`` is capped at ``YESNO_MAX_TOKENS`` and ``evidence_words`` bounds each
    evidence text)."""

    name = "llm"

    def __init__(
        self,
        base_url: str = "https://api.openai.com/v1",
        model: str = "gpt-4o-mini",
        api_key_env: str | None = "OPENAI_API_KEY",
        *,
        mode: Literal["claim", "pair"] = "claim",
        style: Literal["json", "yesno"] = "json",
        evidence_words: int = 400,
        format_retries: int = 2,
        max_tokens: int = 512,
        timeout_s: float = 60,
        max_retries: int = 3,
        seed: int | None = None,
        concurrency: int = 8,
        backoff_s: float = 0.5,
    ) -> None:
        if mode not in ("claim", "pair"):
            raise ValueError(f"mode must be 'claim' or 'pair', got {mode!r}")
        if style not in ("json", "yesno"):
            raise ValueError(f"style must be 'json' or 'yesno', got {style!r}")
        if evidence_words < 1:
            raise ValueError(f"evidence_words must be >= 1, got {evidence_words}")
        if format_retries < 0:
            raise ValueError(f"format_retries must be >= 0, got {format_retries}")
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        self.mode = mode
        self.style = style
        self.evidence_words = int(evidence_words)
        self.format_retries = int(format_retries)
        self.concurrency = int(concurrency)
        self.generator = OpenAICompatibleGenerator(
            base_url=base_url,
            model=model,
            api_key_env=api_key_env,
            temperature=0.0,
            max_tokens=min(max_tokens, YESNO_MAX_TOKENS) if style == "yesno" else max_tokens,
            timeout_s=timeout_s,
            max_retries=max_retries,
            seed=seed,
            backoff_s=backoff_s,
        )

    def config(self) -> dict[str, Any]:
        if self.style == "yesno":
            return {
                "name": self.name,
                "prompt_version": PROMPT_VERSION,
                "style": self.style,
                "prompts": digest([YESNO_JUDGE.config(), YESNO_RELEVANCE.config()])[:16],
                "evidence_words": self.evidence_words,
                "generator": self.generator.config(),
            }
        return {
            "name": self.name,
            "prompt_version": PROMPT_VERSION,
            "mode": self.mode,
            "prompts": digest(
                [
                    CLAIM_SYSTEM,
                    CLAIM_USER,
                    PAIR_SYSTEM,
                    PAIR_USER,
                    RELEVANCE_SYSTEM,
                    RELEVANCE_USER,
                    _RETRY_NOTE,
                ]
            )[:16],
            "format_retries": self.format_retries,
            "generator": self.generator.config(),
        }

    def fingerprint(self) -> str:
        """Cache-key part: judge name, prompt version and texts, mode, model and decoding."""
        return digest(self.config())[:16]

    # -- one call with format retries ---------------------------------------------------
    async def _ask(
        self,
        system: str,
        user: str,
        question: str,
        contexts: Sequence[Context],
        schema: type[BaseModel],
        expected: int | None,
    ) -> tuple[BaseModel | None, int, str]:
        """(reply or None, retries used, reason when None)."""
        error, reply_text = "", ""
        for attempt in range(self.format_retries + 1):
            note = _RETRY_NOTE.replace("{error}", error) if attempt else ""
            prompt = PromptTemplate(f"judge-v{PROMPT_VERSION}", system, user + note)
            try:
                generation = await self.generator.agenerate(question, contexts, prompt)
            except PipelineCallError as exc:
                return None, attempt, f"judge call failed: {exc}"
            reply_text = generation.text
            try:
                return parse_reply(reply_text, schema, expected), attempt, ""
            except ValueError as exc:
                error = str(exc)
        tries = self.format_retries + 1
        return (
            None,
            self.format_retries,
            (
                f"judge reply not valid after {tries} attempt(s): {error}; last reply: "
                f"{reply_text[:_QUOTE]!r}"
            ),
        )

    async def _claim_row(self, claim: str, ctxs: tuple[Context, ...]) -> tuple[Verdict, ...]:
        if not ctxs:
            return ()
        if self.style == "yesno":
            return tuple(await asyncio.gather(*(self._yes_no(claim, c) for c in ctxs)))
        if self.mode == "pair":
            return tuple(await asyncio.gather(*(self._pair(claim, c) for c in ctxs)))
        reply, retries, why = await self._ask(
            CLAIM_SYSTEM, CLAIM_USER, claim, ctxs, ClaimReply, len(ctxs)
        )
        if reply is None:
            return tuple(
                Verdict("unscored", NAN, c.chunk_id, reason=why, retries=retries) for c in ctxs
            )
        by_n = {v.passage: v for v in reply.verdicts}  # type: ignore[attr-defined]
        return tuple(self._verdict(by_n[i + 1], c, retries) for i, c in enumerate(ctxs))

    async def _pair(self, claim: str, ctx: Context) -> Verdict:
        reply, retries, why = await self._ask(
            PAIR_SYSTEM, PAIR_USER, claim, (ctx,), PairReply, None
        )
        if reply is None:
            return Verdict("unscored", NAN, ctx.chunk_id, reason=why, retries=retries)
        return self._verdict(reply, ctx, retries)

    async def _yes_no(self, claim: str, ctx: Context) -> Verdict:
        answer = await ask_yes_no(self.generator, claim, ctx, YESNO_JUDGE, self.evidence_words)
        return answer.verdict(ctx.chunk_id)

    @staticmethod
    def _verdict(v: Any, ctx: Context, retries: int) -> Verdict:
        return Verdict(
            v.label, 1.0, ctx.chunk_id, v.evidence, _locate(v.evidence, ctx.text), v.reason, retries
        )

    # -- public -------------------------------------------------------------------------
    async def ajudge(
        self, claims: Sequence[str | AtomicClaim], contexts: Sequence[Context | str]
    ) -> Judgment:
        """``judge`` in the running event loop."""
        texts, ctxs = claim_texts(claims), as_contexts(contexts)
        gate = asyncio.Semaphore(self.concurrency)

        async def row(claim: str) -> tuple[Verdict, ...]:
            async with gate:
                return await self._claim_row(claim, ctxs)

        rows = tuple(await asyncio.gather(*(row(t) for t in texts)))
        retries = (
            sum(v.retries for r in rows for v in r)
            if self.mode == "pair"
            else sum(r[0].retries for r in rows if r)
        )
        return Judgment(
            texts,
            ctxs,
            rows,
            self.name,
            {"fingerprint": self.fingerprint(), "format_retries": retries},
        )

    async def arelevance(self, question: str, statements: Sequence[str]) -> list[Relevance]:
        """``relevance`` in the running event loop."""
        if not statements:
            return []
        if self.style == "yesno":
            return await self._yes_no_relevance(question, statements)
        ctxs = [Context(str(i + 1), s) for i, s in enumerate(statements)]
        reply, retries, why = await self._ask(
            RELEVANCE_SYSTEM, RELEVANCE_USER, question, ctxs, RelevanceReply, len(ctxs)
        )
        if reply is None:
            return [Relevance(None, NAN, why) for _ in statements]
        by_n = {v.statement: v for v in reply.verdicts}  # type: ignore[attr-defined]
        return [
            Relevance(by_n[i + 1].relevant, 1.0, by_n[i + 1].reason) for i in range(len(statements))
        ]

    async def _yes_no_relevance(self, question: str, statements: Sequence[str]) -> list[Relevance]:
        gate = asyncio.Semaphore(self.concurrency)

        async def one(i: int, statement: str) -> Relevance:
            async with gate:
                ctx = Context(str(i + 1), statement)
                answer = await ask_yes_no(
                    self.generator, question, ctx, YESNO_RELEVANCE, self.evidence_words
                )
            return answer.relevance()

        return list(await asyncio.gather(*(one(i, s) for i, s in enumerate(statements))))

    def judge(
        self, claims: Sequence[str | AtomicClaim], contexts: Sequence[Context | str]
    ) -> Judgment:
        """The claim×chunk judgment (sync: runs ``ajudge`` in a fresh event loop, in a helper
        thread when called from inside a running loop)."""
        return self._sync(self.ajudge(claims, contexts))

    def relevance(self, question: str, statements: Sequence[str]) -> list[Relevance]:
        """Each statement's relevance to the question (sync wrapper of ``arelevance``)."""
        return self._sync(self.arelevance(question, statements))

    def _sync(self, coro: Any) -> Any:
        async def run() -> Any:
            try:
                return await coro
            finally:
                await self.generator.aclose()

        return run_sync(run, thread_name="probeguard-llm-judge")
