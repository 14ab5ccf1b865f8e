"""Configured secrets never reach an output, even when the server echoes them (issue 17).

A real aiohttp server on 127.0.0.1 echoes every request header and query parameter it
receives: into the body of a 500 for questions that say "fail", into the answer otherwise, and
into the 500s of its OpenAI-style endpoint. Scans through the CLI use an HTTP pipeline (a
literal header, a ``${NAME}`` header and an ``api_key`` query parameter) and the reference
pipeline with the OpenAI-compatible generator (an API key and a literal extra header). No
secret may appear in any file they write (run.jsonl, run.json, report.md, the cache), in the
CLI's output or in the log records."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web
from click.testing import CliRunner

from probeguard.cli.main import cli

SECRETS = {
    "literal header": "hdr-SECRET-0a1b2c3d4e",
    "env header": "env-SECRET-5f6a7b8c9d",
    "query": "qry-SECRET-1122334455",
    "api key": "sk-SECRET-99887766aa",
    "extra header": "xtr-SECRET-abcdef0123",
}


def _echo(request: web.Request) -> str:
    return json.dumps(
        {"headers": dict(request.headers), "query": dict(request.query), "url": str(request.url)}
    )


async def _rag(request: web.Request) -> web.Response:
    body = await request.json()
    if "fail" in body["question"]:
        return web.Response(status=500, text="internal error; request was " + _echo(request))
    return web.json_response({"answer": "You sent " + _echo(request)})


async def _chat(request: web.Request) -> web.Response:
    return web.Response(status=500, text="upstream failed for " + _echo(request))


@pytest.fixture(scope="module")
def echo_url() -> Iterator[str]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    app = web.Application()
    app.router.add_post("/rag", _rag)
    app.router.add_post("/v1/chat/completions", _chat)
    runner = web.AppRunner(app, shutdown_timeout=0.5)

    async def start() -> str:
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        host, port = runner.addresses[0][:2]
        return f"http://{host}:{port}"

    url = asyncio.run_coroutine_threadsafe(start(), loop).result(timeout=10)
    yield url
    asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(timeout=10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=10)
    loop.close()


def _inputs(tmp_path: Path) -> None:
    (tmp_path / "c.jsonl").write_text(
        '{"id": "a", "text": "The Eiffel Tower is in Paris."}\n'
        '{"id": "b", "text": "Mount Everest is 8849 metres tall."}\n'
    )
    questions = [
        ("q1", "Where is the Eiffel Tower?", "Paris", "a"),
        ("q2", "Please fail: how tall is Everest?", "8849", "b"),
        ("q3", "How tall is Mount Everest?", "8849", "b"),
        ("q4", "fail again: where is the tower?", "Paris", "a"),
    ]
    (tmp_path / "q.jsonl").write_text(
        "".join(
            json.dumps({"id": i, "question": q, "answers": [a], "evidence_doc_ids": [d]}) + "\n"
            for i, q, a, d in questions
        )
    )


HTTP_CONFIG = """\
corpus: {{path: c.jsonl, questions: q.jsonl}}
pipeline:
  type: http
  http:
    url: "{url}/rag?api_key={query}"
    headers: {{X-Api-Key: "{literal}", Authorization: "Bearer ${{PG_ECHO_TOKEN}}"}}
probes: {{enabled: []}}
metrics: {{standard: false}}
runner: {{cache_dir: "{cache}", retries: 0}}
"""

GENERATOR_CONFIG = """\
corpus: {{path: c.jsonl, questions: q.jsonl}}
pipeline:
  reference:
    embedder: {{name: hashing, dim: 64}}
    retriever: {{name: bm25}}
    generator:
      name: openai
      base_url: "{url}/v1"
      api_key_env: PG_ECHO_KEY
      max_retries: 0
      extra_headers: {{X-Extra: "{extra}"}}
probes: {{enabled: []}}
metrics: {{standard: false}}
runner: {{cache_dir: "{cache}", retries: 0}}
"""


def _everything_written(root: Path) -> str:
    return "\n".join(
        p.read_bytes().decode("utf-8", errors="replace") for p in root.rglob("*") if p.is_file()
    )


@pytest.mark.parametrize("template", [HTTP_CONFIG, GENERATOR_CONFIG], ids=["http", "openai"])
def test_echoed_secrets_appear_in_no_output(
    tmp_path, echo_url, monkeypatch, caplog, template
) -> None:
    monkeypatch.setenv("PG_ECHO_TOKEN", SECRETS["env header"])
    monkeypatch.setenv("PG_ECHO_KEY", SECRETS["api key"])
    _inputs(tmp_path)
    config = tmp_path / "probeguard.yaml"
    config.write_text(
        template.format(
            url=echo_url,
            query=SECRETS["query"],
            literal=SECRETS["literal header"],
            extra=SECRETS["extra header"],
            cache=tmp_path / "cache",
        )
    )
    caplog.set_level(logging.DEBUG)
    result = CliRunner().invoke(
        cli, ["-vv", "scan", "--config", str(config), "--out", str(tmp_path / "out")]
    )
    run = json.loads((tmp_path / "out" / "run.json").read_text())
    assert run["stats"]["errors"] >= 2  # the echoing 500s really happened
    # A scan whose every case errored is incomplete (exit 3, issue 13); otherwise exit 0.
    every_case_errored = run["stats"]["errors"] == run["stats"]["cases"]
    assert result.exit_code == (3 if every_case_errored else 0), result.output
    written = _everything_written(tmp_path / "out") + _everything_written(tmp_path / "cache")
    ours = [r for r in caplog.records if not r.name.startswith("aiohttp.")]  # not the server's
    shown = result.output + "\n".join(r.getMessage() for r in ours)
    assert "***" in written  # the echoes are there, redacted
    for name, secret in SECRETS.items():
        assert secret not in written, f"the {name} reached a file"
        assert secret not in shown, f"the {name} reached the output or the log"
        assert secret[4:] not in written + shown  # nor a tail of it
