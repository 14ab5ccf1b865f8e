"""HttpPipeline against a real aiohttp server on 127.0.0.1 (random port, own thread and loop)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest
from aiohttp import web

from probeguard.core import redaction
from probeguard.core.cases import Case
from probeguard.core.errors import InputError, PipelineCallError
from probeguard.core.pipeline import Capability, Variation
from probeguard.pipeline.adapters import HttpPipeline, jsonpath
from probeguard.pipeline.adapters import http as http_adapter
from probeguard.pipeline.adapters.http import parse_retry_after, redact_url
from probeguard.runner import RetryPolicy, Runner, RunnerConfig

SECRET = "s3cret-token-value"


class Server:
    """Test endpoints; state is touched only on the server's own event loop."""

    def __init__(self) -> None:
        self.hits: dict[str, list[float]] = defaultdict(list)
        self.in_flight = 0
        self.max_in_flight = 0
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.url = ""

    def reset(self) -> None:
        async def clear() -> None:
            self.hits.clear()
            self.in_flight = self.max_in_flight = 0

        asyncio.run_coroutine_threadsafe(clear(), self.loop).result()

    async def rag(self, request: web.Request) -> web.Response:
        body = await request.json()
        q = body["query"]
        return web.json_response(
            {
                "data": {
                    "answer": f"answer to {q}",
                    "results": [
                        {
                            "text": f"passage about {q}",
                            "meta": {"doc": "d1"},
                            "id": "d1#0-9",
                            "score": 0.9,
                        },
                        {"text": "second", "meta": {"doc": "d2"}, "score": 0.4},
                    ],
                    "citations": ["d1#0-9"],
                    "refused": q == "refuse me",
                    "top_k": body["top_k"],
                }
            }
        )

    async def echo(self, request: web.Request) -> web.Response:
        payload = await request.json() if request.method != "GET" else dict(request.query)
        return web.json_response(
            {
                "answer": json.dumps(payload, sort_keys=True),
                "auth": request.headers.get("Authorization"),
            }
        )

    async def flaky(self, request: web.Request) -> web.Response:
        q = (await request.json())["question"]
        self.hits[q].append(time.monotonic())
        if len(self.hits[q]) == 1:
            return web.Response(status=429, text="slow down", headers={"Retry-After": "0.3"})
        return web.json_response({"answer": "finally " + q})

    async def unavailable(self, request: web.Request) -> web.Response:
        self.hits["503"].append(time.monotonic())
        return web.Response(status=503, text="maintenance")

    async def bad(self, request: web.Request) -> web.Response:
        self.hits["400"].append(time.monotonic())
        return web.Response(status=400, text="missing field 'query' " + "z" * 5000)

    async def slow(self, request: web.Request) -> web.Response:
        await asyncio.sleep(1.0)
        return web.json_response({"answer": "late"})

    async def latency(self, request: web.Request) -> web.Response:
        q = (await request.json())["question"]
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            # long enough that all 32 requests of a batch are in flight together even when a
            # loaded CI machine is slow to open the connections
            await asyncio.sleep(0.2)
        finally:
            self.in_flight -= 1
        return web.json_response({"answer": q})

    async def stop(self) -> None:
        await self.runner.cleanup()
        # Handlers still sleeping (the client gave up on them) must end before the loop does.
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/rag", self.rag)
        app.router.add_route("*", "/echo", self.echo)
        app.router.add_post("/flaky", self.flaky)
        app.router.add_post("/unavailable", self.unavailable)
        app.router.add_post("/bad", self.bad)
        app.router.add_post("/slow", self.slow)
        app.router.add_post("/latency", self.latency)
        self.runner = web.AppRunner(app, shutdown_timeout=0.5)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0, backlog=256)
        await site.start()
        host, port = self.runner.addresses[0][:2]
        self.url = f"http://{host}:{port}"


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    srv = Server()
    srv.thread.start()
    asyncio.run_coroutine_threadsafe(srv.start(), srv.loop).result(timeout=10)
    yield srv
    asyncio.run_coroutine_threadsafe(srv.stop(), srv.loop).result(timeout=10)
    srv.loop.call_soon_threadsafe(srv.loop.stop)
    srv.thread.join(timeout=10)
    srv.loop.close()


@pytest.fixture()
def srv(server: Server) -> Server:
    server.reset()
    return server


def cases(n: int, prefix: str = "q") -> list[Case]:
    return [Case(id=f"c{i:03d}", question=f"{prefix}{i}") for i in range(n)]


async def test_answer_contexts_citations_and_refusal_via_paths(srv: Server) -> None:
    pipe = HttpPipeline(
        f"{srv.url}/rag",
        request_template={"query": "{question}", "top_k": 5},
        answer_path="data.answer",
        contexts_path="data.results",
        doc_id_field="meta.doc",
        chunk_id_field="id",
        citations_path="data.citations",
        refused_path="data.refused",
    )
    try:
        out = await pipe.aanswer("what?")
        assert out.answer == "answer to what?"
        first, second = out.retrieved
        assert (first.text, first.doc_id, first.chunk_id, first.score, first.rank) == (
            "passage about what?",
            "d1",
            "d1#0-9",
            0.9,
            1,
        )
        assert (second.doc_id, second.rank) == ("d2", 2)
        assert second.chunk_id.startswith("ctx-")  # no id field: content-derived
        assert out.cited_chunk_ids == ["d1#0-9"] and not out.refused
        assert (await pipe.aanswer("refuse me")).refused
        # A wildcard path for the contexts works too.
        texts = HttpPipeline(
            f"{srv.url}/rag",
            request_template={"query": "{question}", "top_k": 1},
            answer_path="data.answer",
            contexts_path="data.results[*].text",
        )
        assert [c.text for c in (await texts.aanswer("x")).retrieved] == [
            "passage about x",
            "second",
        ]
        await texts.aclose()
    finally:
        await pipe.aclose()


def test_sync_answer_and_get_requests(srv: Server) -> None:
    pipe = HttpPipeline(
        f"{srv.url}/echo", method="GET", request_template={"q": "Q: {question}", "k": 3}
    )
    assert json.loads(pipe.answer("hello").answer) == {"k": "3", "q": "Q: hello"}


async def test_header_env_vars_are_expanded_at_call_time_and_never_shown(
    srv: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PG_TEST_TOKEN", SECRET)
    pipe = HttpPipeline(
        f"{srv.url}/echo?api_key=hunter2", headers={"Authorization": "Bearer ${PG_TEST_TOKEN}"}
    )
    try:
        resp = await pipe.aanswer("q")
        assert json.loads(resp.answer) == {"question": "q"}
        fp = pipe.fingerprint()
        shown = repr(pipe) + json.dumps(pipe.config()) + fp + pipe.name
        assert SECRET not in shown and "hunter2" not in shown
        assert pipe.config()["header_env"] == ["PG_TEST_TOKEN"]
        monkeypatch.setenv("PG_TEST_TOKEN", "another-value")
        assert pipe.fingerprint() == fp  # header values are not part of the fingerprint
        monkeypatch.delenv("PG_TEST_TOKEN")
        with pytest.raises(PipelineCallError, match="'PG_TEST_TOKEN'.*'Authorization'") as info:
            await pipe.aanswer("q")
        assert not info.value.transient
    finally:
        await pipe.aclose()


async def test_the_server_sees_the_expanded_header(srv: Server, monkeypatch) -> None:
    monkeypatch.setenv("PG_TEST_TOKEN", SECRET)
    pipe = HttpPipeline(
        f"{srv.url}/echo", headers={"Authorization": "Bearer ${PG_TEST_TOKEN}"}, answer_path="auth"
    )
    try:
        # the server echoed the expanded value, which the adapter redacts (issue 17); an
        # unexpanded "${PG_TEST_TOKEN}" would have come back as it is
        assert (await pipe.aanswer("q")).answer == "***"
    finally:
        await pipe.aclose()


async def test_429_then_success_through_the_runner(srv: Server) -> None:
    pipe = HttpPipeline(f"{srv.url}/flaky")
    config = RunnerConfig(concurrency=4, retry=RetryPolicy(retries=2, base_s=0.001, max_s=5))
    try:
        result = await Runner(pipe, config).arun(cases(3))
    finally:
        await pipe.aclose()
    assert [r.output.answer for r in result.records] == ["finally q0", "finally q1", "finally q2"]
    assert all(r.attempts == 2 for r in result.records)
    assert (result.stats.calls, result.stats.retries) == (6, 3)
    for times in srv.hits.values():
        assert times[1] - times[0] >= 0.3 - 0.01  # Retry-After: 0.3 was honoured


def test_503_is_transient_and_retried_then_recorded(srv: Server) -> None:
    pipe = HttpPipeline(f"{srv.url}/unavailable")
    config = RunnerConfig(retry=RetryPolicy(retries=1, base_s=0.001))
    result = Runner(pipe, config).run(cases(1))  # run() closes the session itself
    (record,) = result.records
    assert record.error.transient and record.attempts == 2
    assert record.error.message.startswith(f"HTTP 503 from {srv.url}/unavailable: maintenance")
    assert len(srv.hits["503"]) == 2


async def test_400_is_not_retried_and_its_body_is_truncated(srv: Server) -> None:
    pipe = HttpPipeline(f"{srv.url}/bad")
    try:
        result = await Runner(pipe, RunnerConfig(retry=RetryPolicy(base_s=0.001))).arun(cases(1))
        with pytest.raises(PipelineCallError) as info:
            await pipe.aanswer("q")
    finally:
        await pipe.aclose()
    (record,) = result.records
    assert not record.error.transient and record.attempts == 1
    assert "HTTP 400" in record.error.message and "missing field 'query'" in record.error.message
    assert len(record.error.message) < 400
    assert info.value.status == 400
    assert len(srv.hits["400"]) == 2


async def test_timeout_is_a_transient_error(srv: Server) -> None:
    pipe = HttpPipeline(f"{srv.url}/slow", timeout_s=0.1)
    try:
        with pytest.raises(PipelineCallError, match="within 0.1 s") as info:
            await pipe.aanswer("q")
        assert info.value.transient
        result = await Runner(pipe, RunnerConfig(retry=RetryPolicy(retries=0))).arun(cases(1))
        assert result.records[0].error.transient
    finally:
        await pipe.aclose()


async def test_connection_refused_is_transient() -> None:
    pipe = HttpPipeline("http://127.0.0.1:9/nothing", timeout_s=2)
    try:
        with pytest.raises(
            PipelineCallError, match="connection to http://127.0.0.1:9/nothing"
        ) as info:
            await pipe.aanswer("q")
        assert info.value.transient
    finally:
        await pipe.aclose()


async def test_a_wrong_path_names_the_path_and_shows_the_keys(srv: Server) -> None:
    pipe = HttpPipeline(
        f"{srv.url}/rag",
        request_template={"query": "{question}", "top_k": 1},
        answer_path="data.answr",
    )
    try:
        result = await Runner(pipe).arun(cases(1))
    finally:
        await pipe.aclose()
    err = result.records[0].error
    assert not err.transient and result.records[0].attempts == 1
    assert "answer_path 'data.answr'" in err.message
    assert "key 'answr' not found at $.data" in err.message
    assert "answer, citations, refused, results, top_k" in err.message


async def test_variation_field_sends_the_variation_and_declares_capabilities(srv: Server) -> None:
    pipe = HttpPipeline(
        f"{srv.url}/echo", variation_field="variation", capabilities=["oracle_context"]
    )
    plain = HttpPipeline(f"{srv.url}/echo")
    assert pipe.capabilities == frozenset({Capability.ORACLE_CONTEXT})
    assert plain.capabilities == frozenset()
    assert pipe.fingerprint() != plain.fingerprint()
    cs = [
        Case(id="a", question="q", variation=Variation(contexts=("gold",))),
        Case(id="b", question="q", variation=Variation(prompt="hardened")),
    ]
    try:
        result = await Runner(pipe).arun(cs)
        refused = await Runner(plain).arun(cs[:1])
    finally:
        await pipe.aclose()
        await plain.aclose()
    sent = json.loads(result.records[0].output.answer)
    assert sent["variation"]["contexts"] == ["gold"] and sent["question"] == "q"
    assert result.records[1].error.type == "UnsupportedCapabilityError"
    assert refused.records[0].error.type == "UnsupportedCapabilityError"


async def test_many_requests_really_run_concurrently(srv: Server) -> None:
    pipe = HttpPipeline(f"{srv.url}/latency")
    try:
        result = await Runner(pipe, RunnerConfig(concurrency=32)).arun(cases(64))
    finally:
        await pipe.aclose()
    assert all(r.ok for r in result.records)
    assert [r.output.answer for r in result.records] == [f"q{i}" for i in range(64)]
    assert srv.max_in_flight >= 24


def test_configuration_mistakes_are_input_errors() -> None:
    with pytest.raises(InputError, match="expected http"):
        HttpPipeline("ftp://x/y")
    with pytest.raises(InputError, match="never uses the {question}"):
        HttpPipeline("http://h/x", request_template={"query": "fixed"})
    with pytest.raises(InputError) as info:
        HttpPipeline("http://h/x", answer_path="a..b")
    assert info.value.field == "answer_path"
    with pytest.raises(InputError, match="need a variation_field"):
        HttpPipeline("http://h/x", capabilities=["mask"])
    with pytest.raises(InputError, match="unknown capability"):
        HttpPipeline("http://h/x", variation_field="v", capabilities=["magic"])
    with pytest.raises(InputError, match="one value"):
        HttpPipeline("http://h/x", answer_path="choices[*].text")


def test_fingerprint_covers_what_changes_answers() -> None:
    base = HttpPipeline("http://h/x", headers={"Authorization": "Bearer abc"})
    same = HttpPipeline("http://h/x", headers={"Authorization": "Bearer xyz"}, timeout_s=5)
    assert base.fingerprint() == same.fingerprint()
    for other in [
        HttpPipeline("http://h/y"),
        HttpPipeline("http://h/x", answer_path="text"),
        HttpPipeline("http://h/x", request_template={"q": "{question}"}),
        HttpPipeline("http://h/x", method="PUT"),
        HttpPipeline("http://h/x", version="2"),
    ]:
        assert other.fingerprint() != base.fingerprint()


def test_parse_response_without_optional_fields() -> None:
    pipe = HttpPipeline(
        "http://h/x",
        contexts_path="c",
        doc_id_field=None,
        chunk_id_field=None,
        score_field=None,
        context_text_field=None,
    )
    with pytest.raises(PipelineCallError, match="without a context_text_field"):
        pipe.parse_response({"answer": "x", "c": [{"text": "t"}]})
    whole = HttpPipeline("http://h/x", answer_path="", doc_id_field=None, score_field=None)
    assert whole.parse_response("plain text answer").answer == "plain text answer"
    texts_only = HttpPipeline(
        "http://h/x", answer_path="a", contexts_path="c", context_text_field=None
    )
    out = texts_only.parse_response({"a": None, "c": ["one", "two"]})
    assert out.answer == "" and [c.text for c in out.retrieved] == ["one", "two"]
    with pytest.raises(PipelineCallError, match="points at a list"):
        HttpPipeline("http://h/x", answer_path="c").parse_response({"c": []})
    with pytest.raises(PipelineCallError, match="score_field 'score' is not a number"):
        HttpPipeline("http://h/x", contexts_path="c").parse_response(
            {"answer": "a", "c": [{"text": "t", "score": "high"}]}
        )


def test_parse_retry_after() -> None:
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after(" 1.5 ") == 1.5
    assert (
        parse_retry_after(format_datetime(now + timedelta(seconds=30), usegmt=True), now=now)
        == 30.0
    )
    assert parse_retry_after("Wed, 01 Jan 2025 11:00:00 GMT", now=now) == 0.0
    for bad in [None, "", "soon", "nan", "-inf"]:
        assert parse_retry_after(bad) in (None, 0.0)
    assert parse_retry_after("soon") is None


def test_redact_url() -> None:
    assert redact_url("https://user:pw@api.x.com:8443/v1/ask?key=abc&x=1") == (
        "https://api.x.com:8443/v1/ask?key=***&x=***"
    )


async def test_secret_pieces_are_worked_out_once_per_header_values(
    srv: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 18: the pieces to redact are kept per (URL, header values), so a header that
    changes (an env var set anew) is still redacted, and a steady one costs no work a call
    (neither in the adapter nor inside ``redact``)."""
    calls: list[tuple[str, ...]] = []
    real = redaction.secret_pieces

    def counting(values: Any) -> tuple[str, ...]:
        values = list(values)
        calls.append(tuple(values))
        return real(values)

    monkeypatch.setattr(http_adapter, "secret_pieces", counting)
    monkeypatch.setattr(redaction, "secret_pieces", counting)
    monkeypatch.setenv("PG_TEST_TOKEN", SECRET)
    pipe = HttpPipeline(
        f"{srv.url}/echo?api_key=hunter2-key",
        headers={"Authorization": "Bearer ${PG_TEST_TOKEN}"},
        answer_path="auth",
    )
    try:
        for _ in range(3):
            assert (await pipe.aanswer("q")).answer == "***"
        first = len(calls)
        assert first <= 2
        monkeypatch.setenv("PG_TEST_TOKEN", "another-secret-value")
        assert (await pipe.aanswer("q")).answer == "***"
        assert len(calls) == 2 * first
    finally:
        await pipe.aclose()


def test_missing_optional_context_fields_build_no_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 18: a context without a chunk id or score is the usual case; reading it must not
    format a ``PathError`` (that cost more than the rest of the context)."""

    def no_error(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("an optional field built a PathError")

    monkeypatch.setattr(jsonpath, "_fail", no_error)
    pipe = HttpPipeline("http://h/x", contexts_path="c[*]", chunk_id_field="meta.id")
    out = pipe.parse_response({"answer": "a", "c": [{"text": "t", "doc_id": "d1"}, {"text": "u"}]})
    assert [(c.doc_id, c.score) for c in out.retrieved] == [("d1", None), ("", None)]
    assert out.retrieved[0].chunk_id.startswith("ctx-")


@pytest.mark.parametrize(
    "path",
    ["a", "a.b", "a[0]", "a[-1]", "a[5]", "a.b[1].c", "x", "a.*", "a[*].c", "$", "n.k", "l[0].k"],
)
@pytest.mark.parametrize(
    "doc",
    [
        {"a": {"b": [1, {"c": 2}]}},
        {"a": [{"c": 1}, {"c": None}, {"d": 3}]},
        {"a": [], "n": None, "l": [5]},
        {"a": "text", "x": 0},
        [1, 2],
        None,
    ],
)
def test_lookup_is_resolve_or_missing(doc: Any, path: str) -> None:
    segments = jsonpath.parse_path(path)
    try:
        expected = jsonpath.resolve(doc, segments)
    except jsonpath.PathError:
        expected = jsonpath.MISSING
    assert jsonpath.lookup(doc, segments) == expected  # MISSING compares by identity
