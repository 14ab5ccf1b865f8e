"""An HTTP endpoint as a pipeline (aiohttp).

Request: ``request_template`` is any JSON-able value (default ``{"question": "{question}"}``);
every occurrence of ``{question}`` inside its strings is replaced by the question (nothing
else is interpreted: other braces stay as they are). ``POST``/``PUT`` send it as the JSON body;
``GET`` sends a flat object as query parameters (non-string values JSON-encoded).

Headers: values may reference environment variables as ``${NAME}``, expanded at call time.
Expanded values are never logged, never part of ``fingerprint()``, ``config()`` or ``repr``
(those show header names and the referenced variable names only). Query strings are
redacted from the URL in error messages, ``config()`` and ``repr``. A server may echo a
header value or a URL's query value back: the response text is passed through
``core.redaction.redact`` with those values before anything reads it, and so are error
messages, so no configured secret reaches a record, a log, the cache or a report.

Response: JSON, read with the paths of ``probeguard.pipeline.adapters.jsonpath``:
``answer_path`` (a string; numbers are converted, ``null`` is ``""``), ``contexts_path`` (a
list — or a wildcard path — of strings or objects, whose text, doc id, chunk id and score are
read with ``context_text_field``, ``doc_id_field``, ``chunk_id_field``, ``score_field``, which
are paths too; ``None`` skips a field, and with no text field each context must be a string;
a missing doc id, chunk id or score is left empty: ``""``, ``"ctx-" + sha256(text)[:12]``,
``None``), ``citations_path`` (a list of chunk ids) and ``refused_path`` (a boolean).
A path that does not match is a non-transient ``PipelineCallError`` naming it and showing
what is there.

Failures: HTTP 408, 429 and 5xx, timeouts and connection errors are transient
(``PipelineCallError(transient=True)``); a ``Retry-After`` header (seconds or an HTTP date,
RFC 9110 §10.2.3) becomes ``retry_after``. Other 4xx are not transient; their message holds
the status and the first 300 characters of the body.

Variations: none by default (``capabilities`` is empty). With ``variation_field`` set, the
``Variation`` is sent as JSON in that field of the request and the pipeline declares the
``capabilities`` configured — the server is trusted to honour them.

One ``aiohttp.ClientSession`` per event loop, made on first use, with no connection limit (the
runner bounds concurrency). ``aanswer`` is native; ``answer`` runs one request in its own event
loop (``asyncio.run``; not from inside a running loop). ``await aclose()`` closes the session of
the current loop (``Runner.run`` does this for you).

Fingerprint = sha256 of the canonical JSON of url, method, template, paths and fields,
variation field, capabilities, header *names* and ``version`` — not header values. A header
that changes the output (say ``X-Model``) is not seen: bump ``version`` when you change it.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from probeguard.core.errors import InputError, PipelineCallError
from probeguard.core.hashing import canonical_json, digest, sha256_hex
from probeguard.core.pipeline import (
    Capability,
    PipelineOutput,
    RetrievedChunk,
    Variation,
    check_capabilities,
)
from probeguard.core.redaction import redact_url, replace_pieces, secret_pieces, url_secrets
from probeguard.pipeline.adapters.callable import parse_capabilities
from probeguard.pipeline.adapters.http_request import (
    ENV_REF,
    PLACEHOLDER,
    TRANSIENT_STATUS,
    expand_env,
    parse_retry_after,
    substitute,
    uses_placeholder,
)
from probeguard.pipeline.adapters.jsonpath import (
    MISSING,
    PathError,
    PathSyntaxError,
    Segment,
    has_wildcard,
    lookup,
    parse_path,
    resolve,
)

__all__ = ["HttpPipeline", "parse_retry_after", "expand_env", "redact_url"]

_BODY_LIMIT = 300
_SECRET_MEMO_SIZE = 16
"""Distinct (URL, header values) whose secret pieces an ``HttpPipeline`` keeps."""


def _optional(item: Any, path: str | None) -> Any:
    """The value at ``path`` in ``item``; None when ``path`` is empty or does not match."""
    if not path:
        return None
    value = lookup(item, parse_path(path))
    return None if value is MISSING else value


def _path(value: str | None, field: str) -> tuple[Segment, ...] | None:
    if value is None:
        return None
    try:
        return parse_path(value)
    except PathSyntaxError as exc:
        raise InputError(str(exc), field=field) from None


class HttpPipeline:
    """A RAG pipeline behind an HTTP endpoint (see the module docstring)."""

    def __init__(
        self,
        url: str,
        method: str = "POST",
        *,
        headers: Mapping[str, str] | None = None,
        request_template: Any = None,
        answer_path: str = "answer",
        contexts_path: str | None = None,
        context_text_field: str | None = "text",
        doc_id_field: str | None = "doc_id",
        chunk_id_field: str | None = "chunk_id",
        score_field: str | None = "score",
        citations_path: str | None = None,
        refused_path: str | None = None,
        timeout_s: float = 60.0,
        variation_field: str | None = None,
        capabilities: Iterable[str | Capability] = (),
        name: str | None = None,
        version: str = "",
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise InputError(
                f"bad endpoint URL {redact_url(url)!r}: expected http(s)://host/...", field="url"
            )
        self.url = url
        self.method = method.upper()
        if self.method not in ("GET", "POST", "PUT"):
            raise InputError(
                f"unsupported HTTP method {method!r}; use GET, POST or PUT", field="method"
            )
        self._headers = {str(k): str(v) for k, v in (headers or {}).items()}
        self.header_env = sorted({m for v in self._headers.values() for m in ENV_REF.findall(v)})
        template = {"question": PLACEHOLDER} if request_template is None else request_template
        try:
            canonical_json(template)
        except (TypeError, ValueError) as exc:
            raise InputError(
                f"request_template is not JSON: {exc}", field="request_template"
            ) from None
        if not uses_placeholder(template):
            raise InputError(
                "request_template never uses the {question} placeholder", field="request_template"
            )
        if self.method == "GET" and not isinstance(template, dict):
            raise InputError(
                "a GET request_template must be an object (query parameters)",
                field="request_template",
            )
        self.request_template = template
        self.answer_path = answer_path
        self.contexts_path = contexts_path
        self.context_text_field = context_text_field
        self.doc_id_field = doc_id_field
        self.chunk_id_field = chunk_id_field
        self.score_field = score_field
        self.citations_path = citations_path
        self.refused_path = refused_path
        answer_segments = _path(answer_path, "answer_path")
        if answer_segments is not None and has_wildcard(answer_segments):
            raise InputError(
                f"answer_path {answer_path!r} must point at one value (no [*])", field="answer_path"
            )
        for value, field in [
            (contexts_path, "contexts_path"),
            (context_text_field, "context_text_field"),
            (doc_id_field, "doc_id_field"),
            (chunk_id_field, "chunk_id_field"),
            (score_field, "score_field"),
            (citations_path, "citations_path"),
            (refused_path, "refused_path"),
        ]:
            _path(value, field)
        if not timeout_s > 0:
            raise InputError(f"timeout_s must be > 0, got {timeout_s}", field="timeout_s")
        self.timeout_s = float(timeout_s)
        caps = parse_capabilities(capabilities, where="capabilities")
        if caps and variation_field is None:
            raise InputError(
                "capabilities need a variation_field: without one the endpoint "
                "never sees the variation",
                field="capabilities",
            )
        if variation_field is not None and not isinstance(template, dict):
            raise InputError(
                "variation_field needs a request_template that is an object",
                field="variation_field",
            )
        self.variation_field = variation_field
        self.capabilities: frozenset[Capability] = caps
        self.version = version
        self._shown_url = redact_url(url)
        self.name = name or f"http:{self._shown_url}"
        self._secret_memo: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._sessions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )

    # -- identity -------------------------------------------------------------------------

    def config(self) -> dict[str, Any]:
        """The configuration for the run log: no header values, no query values."""
        return {
            "type": "http",
            "url": redact_url(self.url),
            "method": self.method,
            "headers": sorted(self._headers),
            "header_env": self.header_env,
            "request_template": self.request_template,
            "answer_path": self.answer_path,
            "contexts_path": self.contexts_path,
            "context_text_field": self.context_text_field,
            "doc_id_field": self.doc_id_field,
            "chunk_id_field": self.chunk_id_field,
            "score_field": self.score_field,
            "citations_path": self.citations_path,
            "refused_path": self.refused_path,
            "timeout_s": self.timeout_s,
            "variation_field": self.variation_field,
            "capabilities": sorted(c.value for c in self.capabilities),
            "version": self.version,
        }

    def fingerprint(self) -> str:
        """Digest of ``config()`` minus ``timeout_s`` (it cannot change an answer), with the
        full URL hashed in (query included) instead of the redacted one."""
        identity = {k: v for k, v in self.config().items() if k not in ("timeout_s", "url")}
        identity["url_digest"] = sha256_hex(self.url)  # the full URL, query included, hashed
        return digest(identity)

    def __repr__(self) -> str:
        return (
            f"HttpPipeline({redact_url(self.url)!r}, method={self.method!r}, "
            f"headers={sorted(self._headers)!r})"
        )

    # -- calls ----------------------------------------------------------------------------

    def _session(self) -> Any:
        import aiohttp

        loop = asyncio.get_running_loop()
        session = self._sessions.get(loop)
        if session is None or session.closed:
            session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0),
                timeout=aiohttp.ClientTimeout(total=self.timeout_s),
            )
            self._sessions[loop] = session
        return session

    async def aclose(self) -> None:
        """Close this event loop's session (a later call opens a new one)."""
        session = self._sessions.pop(asyncio.get_running_loop(), None)
        if session is not None and not session.closed:
            await session.close()

    def answer(self, question: str, variation: Variation | None = None) -> PipelineOutput:
        async def once() -> PipelineOutput:
            try:
                return await self.aanswer(question, variation)
            finally:
                await self.aclose()

        return asyncio.run(once())

    async def aanswer(self, question: str, variation: Variation | None = None) -> PipelineOutput:
        check_capabilities(self, variation)
        headers = {k: expand_env(v, header=k) for k, v in self._headers.items()}
        payload = substitute(self.request_template, question)
        if self.variation_field is not None:
            payload[self.variation_field] = (variation or Variation()).model_dump(mode="json")
        if self.method == "GET":
            kwargs: dict[str, Any] = {
                "params": {
                    k: v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
                    for k, v in payload.items()
                }
            }
        else:
            kwargs = {"json": payload}
        secrets = self._secrets(headers)
        try:
            status, text, retry_after = await self._request(headers, kwargs)
        except PipelineCallError as exc:  # aiohttp's message may quote the request
            raise PipelineCallError(
                replace_pieces(str(exc), secrets),
                transient=exc.transient,
                retry_after=exc.retry_after,
                status=exc.status,
            ) from None
        return self._read_response(status, replace_pieces(text, secrets), retry_after)

    def _secrets(self, headers: dict[str, str]) -> tuple[str, ...]:
        """What ``redact(text, secret_pieces([*header values, *url_secrets(url)]))`` replaces,
        i.e. ``secret_pieces`` applied twice, kept per (URL, header values): headers without
        ``${NAME}`` never change, so most calls reuse it (~22 µs a call with one bearer token
        and one query key, issue 18)."""
        memo_key = (self.url, *headers.values())
        pieces = self._secret_memo.get(memo_key)
        if pieces is None:
            if len(self._secret_memo) >= _SECRET_MEMO_SIZE:
                self._secret_memo.clear()
            pieces = secret_pieces(secret_pieces([*headers.values(), *url_secrets(self.url)]))
            self._secret_memo[memo_key] = pieces
        return pieces

    async def _request(
        self, headers: dict[str, str], kwargs: dict[str, Any]
    ) -> tuple[int, str, float | None]:
        """One request: its status, body text (undecodable bytes replaced) and Retry-After;
        a timeout or connection failure is a ``PipelineCallError``."""
        import aiohttp

        where = self._shown_url
        try:
            async with self._session().request(
                self.method, self.url, headers=headers, **kwargs
            ) as resp:
                body = await resp.read()
                retry_after = parse_retry_after(resp.headers.get("Retry-After"))
                return resp.status, body.decode("utf-8", errors="replace"), retry_after
        except TimeoutError:  # aiohttp.ServerTimeoutError is one too
            raise PipelineCallError(
                f"no response from {where} within {self.timeout_s:g} s", transient=True
            ) from None
        except aiohttp.ClientSSLError as exc:
            raise PipelineCallError(f"TLS error talking to {where}: {exc}") from None
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as exc:
            raise PipelineCallError(
                f"connection to {where} failed: {exc}", transient=True
            ) from None
        except aiohttp.ClientError as exc:
            raise PipelineCallError(f"request to {where} failed: {exc}") from None

    def _read_response(self, status: int, text: str, retry_after: float | None) -> PipelineOutput:
        """The output of a response whose ``text`` is already redacted."""
        where = self._shown_url
        if status in TRANSIENT_STATUS or status >= 500:
            raise PipelineCallError(
                f"HTTP {status} from {where}: {text[:_BODY_LIMIT]}",
                transient=True,
                retry_after=retry_after,
                status=status,
            )
        if status >= 300:
            raise PipelineCallError(
                f"HTTP {status} from {where}: {text[:_BODY_LIMIT]}", transient=False, status=status
            )
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            raise PipelineCallError(
                f"response from {where} is not JSON (or nested too deeply): {text[:_BODY_LIMIT]!r}",
                status=status,
            ) from None
        return self.parse_response(data)

    # -- response -------------------------------------------------------------------------

    def parse_response(self, data: Any) -> PipelineOutput:
        """A ``PipelineOutput`` from a decoded JSON response, using the configured paths."""
        answer = resolve(data, self.answer_path, label="answer_path")
        if isinstance(answer, (dict, list)):
            raise PathError(
                f"answer_path {self.answer_path!r} points at "
                f"{'an object' if isinstance(answer, dict) else 'a list'}, "
                f"not a string"
            )
        retrieved: list[RetrievedChunk] = []
        if self.contexts_path is not None:
            items = resolve(data, self.contexts_path, label="contexts_path")
            if not isinstance(items, list):
                items = [items]
            retrieved = [self._chunk(item, rank) for rank, item in enumerate(items, start=1)]
        cited: list[str] = []
        if self.citations_path is not None:
            value = resolve(data, self.citations_path, label="citations_path")
            values = value if isinstance(value, list) else ([] if value is None else [value])
            cited = [str(v) for v in values]
        refused = False
        if self.refused_path is not None:
            value = resolve(data, self.refused_path, label="refused_path")
            refused = (
                value.strip().lower() in ("true", "yes", "1")
                if isinstance(value, str)
                else bool(value)
            )
        return PipelineOutput(
            answer="" if answer is None else str(answer),
            retrieved=retrieved,
            cited_chunk_ids=cited,
            refused=refused,
        )

    def _chunk(self, item: Any, rank: int) -> RetrievedChunk:
        if isinstance(item, str):
            return RetrievedChunk(
                chunk_id="ctx-" + sha256_hex(item)[:12], doc_id="", text=item, rank=rank
            )
        if self.context_text_field is None:
            raise PathError(
                f"context {rank} of contexts_path {self.contexts_path!r} is "
                f"{'an object' if isinstance(item, dict) else type(item).__name__}"
                f"; without a context_text_field each context must be a string"
            )
        text = lookup(item, parse_path(self.context_text_field))
        if text is MISSING:  # raise the error that names the context and the field
            resolve(
                item,
                self.context_text_field,
                label=f"context {rank} of contexts_path {self.contexts_path!r}: context_text_field",
            )
        text = "" if text is None else str(text)
        doc_id = _optional(item, self.doc_id_field)
        chunk_id = _optional(item, self.chunk_id_field)
        score = _optional(item, self.score_field)
        try:
            score_value = None if score is None else float(score)
        except (TypeError, ValueError):
            raise PathError(
                f"context {rank} of contexts_path {self.contexts_path!r}: "
                f"score_field {self.score_field!r} is not a number: "
                f"{str(score)[:60]!r}"
            ) from None
        if chunk_id in (None, ""):
            chunk_id = "ctx-" + sha256_hex(text)[:12]
        return RetrievedChunk(
            chunk_id=str(chunk_id),
            doc_id="" if doc_id is None else str(doc_id),
            text=text,
            rank=rank,
            score=score_value,
        )
