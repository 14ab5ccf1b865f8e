"""OpenAICompatibleGenerator against a real aiohttp server on 127.0.0.1 speaking the OpenAI
chat-completions format. Each test scripts the server's replies; the server records what it
received, when, and how many requests it held at once."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web

from probeguard.core.documents import Document
from probeguard.core.errors import PipelineCallError
from probeguard.core.hashing import canonical_json
from probeguard.core.pipeline import Context
from probeguard.models.generators.openai_compat import OpenAICompatibleGenerator
from probeguard.models.prompts import DEFAULT, REFUSAL_TEXT
from probeguard.pipeline.config import ReferencePipelineConfig
from probeguard.pipeline.reference import ReferencePipeline
from testkit import completion as chat_completion
from testkit import start_chat_server

CONTEXTS = [
    Context("eiffel#0-36", "The Eiffel Tower is 330 metres tall."),
    Context("louvre#0-30", "The Louvre is a museum."),
]
QUESTION = "How tall is the Eiffel Tower?"
SECRET = "sk-test-9f8e7d6c5b4a-SECRET"


def completion(text: str, prompt_tokens: int = 42, completion_tokens: int = 7) -> dict[str, Any]:
    return chat_completion(text, "tiny-test", (prompt_tokens, completion_tokens))


@dataclass
class Server:
    url: str
    replies: list[Callable[[web.Request, dict[str, Any]], Any]] = field(default_factory=list)
    """Scripted handlers, used in order; the last one repeats."""
    delay_s: float = 0.0
    bodies: list[dict[str, Any]] = field(default_factory=list)
    auth: list[str | None] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    state = Server(url="")

    async def handle(request: web.Request) -> web.StreamResponse:
        state.in_flight += 1
        state.max_in_flight = max(state.max_in_flight, state.in_flight)
        try:
            state.times.append(time.monotonic())
            body = await request.json()
            state.bodies.append(body)
            state.auth.append(request.headers.get("Authorization"))
            n = len(state.bodies) - 1
            reply = state.replies[min(n, len(state.replies) - 1)] if state.replies else None
            if state.delay_s:
                await asyncio.sleep(state.delay_s)
            if reply is None:
                return web.json_response(completion("The Eiffel Tower is 330 metres tall [1]."))
            result = reply(request, body)
            if asyncio.iscoroutine(result):
                result = await result
            return result
        finally:
            state.in_flight -= 1

    runner, state.url = await start_chat_server(handle)
    yield state
    await runner.cleanup()


def make(server: Server, **kw: Any) -> OpenAICompatibleGenerator:
    kw.setdefault("backoff_s", 0.001)
    return OpenAICompatibleGenerator(base_url=server.url, model="tiny-test", **kw)


async def test_success_text_citations_usage_and_request(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    gen = make(server, seed=7, max_tokens=64)
    try:
        out = await gen.agenerate(QUESTION, CONTEXTS, DEFAULT)
    finally:
        await gen.aclose()
    assert out.text == "The Eiffel Tower is 330 metres tall [1]."
    assert out.cited_chunk_ids == ("eiffel#0-36",)
    assert not out.refused
    assert (out.usage.prompt_tokens, out.usage.completion_tokens) == (42, 7)
    assert out.metadata["retries"] == 0 and out.metadata["finish_reason"] == "stop"
    body = server.bodies[0]
    assert body["model"] == "tiny-test" and body["seed"] == 7 and body["max_tokens"] == 64
    assert body["temperature"] == 0.0
    assert body["messages"] == DEFAULT.messages(QUESTION, CONTEXTS)
    assert server.auth == [None]  # a loopback server needs no key, and none was set


async def test_refusal_is_detected(server: Server) -> None:
    server.replies = [lambda r, b: web.json_response(completion(REFUSAL_TEXT))]
    gen = make(server)
    out = await gen.agenerate(QUESTION, CONTEXTS, DEFAULT)
    await gen.aclose()
    assert out.refused and out.cited_chunk_ids == ()


async def test_429_with_retry_after_is_honoured_then_succeeds(server: Server) -> None:
    server.replies = [
        lambda r, b: web.json_response(
            {"error": {"message": "slow down"}}, status=429, headers={"Retry-After": "0.2"}
        ),
        lambda r, b: web.json_response(completion("330 metres [1]")),
    ]
    gen = make(server)
    out = await gen.agenerate(QUESTION, CONTEXTS, DEFAULT)
    await gen.aclose()
    assert out.text == "330 metres [1]"
    assert out.metadata["retries"] == 1 and len(server.bodies) == 2
    # backoff_s is 1 ms, so a gap of 0.2 s or more means the Retry-After hint was used
    assert server.times[1] - server.times[0] >= 0.2


async def test_500_then_success(server: Server) -> None:
    server.replies = [
        lambda r, b: web.Response(status=500, text="boom"),
        lambda r, b: web.Response(status=503, text="overloaded"),
        lambda r, b: web.json_response(completion("ok [2]")),
    ]
    gen = make(server, max_retries=3)
    out = await gen.agenerate(QUESTION, CONTEXTS, DEFAULT)
    await gen.aclose()
    assert out.text == "ok [2]" and out.cited_chunk_ids == ("louvre#0-30",)
    assert out.metadata["retries"] == 2 and len(server.bodies) == 3


async def test_5xx_exhausts_retries_as_transient(server: Server) -> None:
    server.replies = [
        lambda r, b: web.Response(status=502, text="bad gateway", headers={"Retry-After": "0"})
    ]
    gen = make(server, max_retries=2)
    with pytest.raises(PipelineCallError) as info:
        await gen.agenerate(QUESTION, CONTEXTS, DEFAULT)
    await gen.aclose()
    err = info.value
    assert err.transient and err.status == 502 and err.retry_after == 0.0
    assert "3 attempt" in str(err) and "bad gateway" in str(err)
    assert len(server.bodies) == 3


async def test_400_is_not_retried_and_says_why(server: Server) -> None:
    server.replies = [
        lambda r, b: web.json_response(
            {
                "error": {
                    "message": "model 'tiny-test' does not support max_tokens=64 " + "x" * 1000,
                    "type": "invalid_request_error",
                }
            },
            status=400,
        )
    ]
    gen = make(server, max_retries=3)
    with pytest.raises(PipelineCallError) as info:
        await gen.agenerate(QUESTION, CONTEXTS, DEFAULT)
    await gen.aclose()
    err = info.value
    assert not err.transient and err.status == 400 and len(server.bodies) == 1
    assert "HTTP 400" in str(err) and "does not support max_tokens" in str(err)
    assert len(str(err)) < 500  # the server's message is truncated


async def test_timeout_is_retried_then_transient(server: Server) -> None:
    server.delay_s = 0.5
    gen = make(server, timeout_s=0.1, max_retries=1)
    with pytest.raises(PipelineCallError) as info:
        await gen.agenerate(QUESTION, CONTEXTS, DEFAULT)
    await gen.aclose()
    assert info.value.transient and info.value.status is None
    assert "timeout_s=0.1" in str(info.value)
    assert len(server.bodies) == 2


async def test_connection_refused_is_transient() -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    gen = OpenAICompatibleGenerator(
        base_url=f"http://127.0.0.1:{port}/v1", max_retries=1, backoff_s=0.001
    )
    with pytest.raises(PipelineCallError, match="connection error") as info:
        await gen.agenerate(QUESTION, CONTEXTS, DEFAULT)
    await gen.aclose()
    assert info.value.transient


async def test_api_key_is_sent_but_never_leaked(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PG_TEST_LLM_KEY", SECRET)

    def echo_key(request: web.Request, body: dict[str, Any]) -> web.Response:
        # a careless server that echoes the credential back in its error message
        auth = request.headers.get("Authorization", "")
        return web.json_response({"error": {"message": f"invalid credential: {auth}"}}, status=401)

    server.replies = [echo_key]
    gen = make(server, api_key_env="PG_TEST_LLM_KEY", extra_headers={"X-Org": "org-secret"})
    with pytest.raises(PipelineCallError) as info:
        await gen.agenerate(QUESTION, CONTEXTS, DEFAULT)
    await gen.aclose()
    assert server.auth == [f"Bearer {SECRET}"]
    err = info.value
    assert not err.transient and err.status == 401 and "invalid credential" in str(err)
    texts = [
        str(err),
        repr(err),
        repr(err.args),
        repr(gen),
        canonical_json(gen.config()),
        json.dumps(vars(gen), default=repr),
    ]
    for text in texts:
        assert SECRET not in text and SECRET[:12] not in text
    assert "org-secret" not in canonical_json(gen.config())
    # a server that echoes the key in a retried (5xx) error, until retries run out
    server.bodies.clear()
    server.replies = [lambda r, b: web.Response(status=500, text=r.headers["Authorization"])]
    with pytest.raises(PipelineCallError) as info:
        await gen.agenerate(QUESTION, CONTEXTS, DEFAULT)
    await gen.aclose()
    assert info.value.transient and SECRET not in str(info.value) and "***" in str(info.value)


def test_missing_key_for_a_remote_host_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PG_TEST_MISSING_KEY", raising=False)
    gen = OpenAICompatibleGenerator(
        base_url="https://api.example.invalid/v1", api_key_env="PG_TEST_MISSING_KEY"
    )
    with pytest.raises(
        PipelineCallError, match="set the environment variable 'PG_TEST_MISSING_KEY'"
    ) as info:
        gen.generate(QUESTION, CONTEXTS, DEFAULT)
    assert not info.value.transient


async def test_sync_generate_from_a_worker_thread(server: Server) -> None:
    gen = make(server)
    outs = await asyncio.gather(
        *(asyncio.to_thread(gen.generate, QUESTION, CONTEXTS, DEFAULT) for _ in range(4))
    )
    assert {o.text for o in outs} == {"The Eiffel Tower is 330 metres tall [1]."}
    assert len(server.bodies) == 4
    assert gen._sessions == {}  # each short-lived loop closed its own session


async def test_32_concurrent_calls_run_as_one_batch(server: Server) -> None:
    server.delay_s = 0.2  # room for a loaded CI machine to get all 32 requests in flight
    gen = make(server)
    try:
        outs = await asyncio.gather(
            *(gen.agenerate(f"{QUESTION} #{i}", CONTEXTS, DEFAULT) for i in range(32))
        )
    finally:
        await gen.aclose()
    assert len(outs) == 32 and len(server.bodies) == 32
    # a serial client holds 1 request at a time, a pool of 10 holds 10; one batch holds ~32
    assert server.max_in_flight >= 24, server.max_in_flight


def test_config_is_canonical_and_leaves_out_infrastructure() -> None:
    a = OpenAICompatibleGenerator(
        base_url="http://localhost:11434/v1/", model="llama3", timeout_s=5, max_retries=0
    )
    b = OpenAICompatibleGenerator(base_url="http://localhost:11434/v1", model="llama3")
    assert a.config() == b.config()
    assert a.config() == {
        "name": "openai",
        "base_url": "http://localhost:11434/v1",
        "model": "llama3",
        "temperature": 0.0,
        "max_tokens": 256,
        "seed": None,
        "extra_headers": [],
    }
    with pytest.raises(ValueError, match="http"):
        OpenAICompatibleGenerator(base_url="api.openai.com/v1")


async def test_reference_pipeline_closes_the_generators_session(server: Server) -> None:
    """Regression (issue 17): the reference pipeline had no ``aclose``, so a scan with this
    generator left its aiohttp session open ("Unclosed client session")."""
    config = ReferencePipelineConfig(
        embedder={"name": "hashing", "dim": 64},
        retriever={"name": "bm25"},
        generator={"name": "openai", "base_url": server.url, "model": "tiny-test"},
    )
    pipe = ReferencePipeline([Document.create("The Eiffel Tower is 330 metres tall.")], config)
    out = await pipe.aanswer(QUESTION)
    assert out.answer and pipe._generator._sessions  # type: ignore[attr-defined]
    await pipe.aclose()
    assert not pipe._generator._sessions  # type: ignore[attr-defined]
