"""``dataset synth --rewrite llm``: the reply format, each check (schema, answer leaked,
planted element dropped, retrieval, near duplicate), the budget before any call,
``--max-calls``, the confirmation, and byte-identical re-runs from the cache; through the
CLI against a real OpenAI-compatible server on 127.0.0.1 (scripted to force failures)."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from click.testing import CliRunner

from probeguard.cli.main import cli
from probeguard.config.loading import load_config
from probeguard.core.cases import Case, Expected
from probeguard.core.documents import Document
from probeguard.corpus.loaders import load_corpus
from probeguard.dataset.synth_rewrite import (
    apply_rewrites,
    check_rewrite,
    must_keep,
    parse_reply,
    rewrite_request,
)
from probeguard.detectors.offline_judge import OfflineJudge
from probeguard.engine.stages import demo_data_dir
from probeguard.engine.synth import bm25_ranker, synthesize_checked
from probeguard.engine.synth_rewrite import judge_support, rewrite_concurrency
from testkit import completion, needs_smollm2, start_chat_server

CORPUS = demo_data_dir() / "corpus.jsonl"
N = 48


def _premise(
    question: str = "Why does Refund Policy say that returns are accepted within 60 days?",
) -> Case:
    return Case(
        id="fp",
        question=question,
        expected=Expected(
            mode="correct_premise",
            answers=("30 days",),
            excludes=("60 days",),
            evidence_doc_ids=("refund",),
        ),
        meta={"attack_type": "false_premise", "origin": "synthesized"},
    )


# -- the reply format and the checks, one by one ----------------------------------------------
def test_parse_reply_takes_one_json_object_alone_or_fenced() -> None:
    template = "According to X, how many days?"
    assert parse_reply('{"question": "How many days, per X?"}', template) == "How many days, per X?"
    fenced = 'Sure:\n```json\n{"question": "How many days, per X?"}\n```'
    assert parse_reply(fenced, template) == "How many days, per X?"
    assert parse_reply("How many days, per X?", template) is None  # not JSON
    assert parse_reply('{"question": "Q?", "note": "x"}', template) is None  # extra key
    assert parse_reply('{"question": 3}', template) is None  # wrong type
    assert parse_reply('{"question": "a\\nb?"}', template) is None  # two lines
    assert parse_reply(json.dumps({"question": "x" * 500}), template) is None  # too long


def test_a_false_premise_rewrite_must_keep_the_false_value() -> None:
    case = _premise()
    assert must_keep(case) == ("60 days",)
    assert "Keep: 60 days" in rewrite_request(case)
    kept = "Why does the Refund Policy claim returns are accepted within 60 days?"
    dropped = "Why does the Refund Policy say returns are accepted for a while?"
    assert check_rewrite(case, kept, None, 5) is None
    assert check_rewrite(case, dropped, None, 5) == "planted_dropped"


def test_a_rewrite_that_states_the_answer_is_refused() -> None:
    leak = "Why does Refund Policy say 60 days when it is really 30 days?"
    assert check_rewrite(_premise(), leak, None, 5) == "answer_leaked"
    # an answer the template already holds is no leak
    held = _premise("Why does Refund Policy say 60 days rather than 30 days?")
    assert check_rewrite(held, "Why would Refund Policy say 60 days, not 30 days?", None, 5) is None


def test_unchanged_schema_and_retrieval_checks() -> None:
    case = _premise()
    assert (
        check_rewrite(
            case, "why does refund policy say that returns are accepted within 60 days", None, 5
        )
        == "unchanged"
    )
    reworded = "Why does the Refund Policy claim returns are accepted within 60 days?"
    assert check_rewrite(case, reworded, lambda q, k: ["other"], 5) == "not_retrieved"
    assert check_rewrite(case, reworded, lambda q, k: ["refund"], 5) is None
    # an empty question fails the case schema (Case.question has min_length 1)
    assert check_rewrite(case, "", None, 5) == "schema"


def _golden(question: str) -> Case:
    return Case(
        id="g",
        question=question,
        expected=Expected(answers=("5 years",), evidence_doc_ids=("leave",)),
        meta={"evolution": "hypothetical", "origin": "synthesized"},
    )


def test_a_rewrite_that_asks_for_less_or_fills_the_slot_is_refused() -> None:
    """Regression: SmolLM2 rewrites that passed every check but no longer asked the
    question: the second wh-phrase cut off, or the asked number filled in."""
    two = _golden("What must the warranty form hold, and at least how many defect photos?")
    cut = "What must the warranty form hold, with defect photos?"
    assert check_rewrite(two, cut, None, 5) == "slot_dropped"
    ok = "What must the warranty form hold, and how many defect photos at least?"
    assert check_rewrite(two, ok, None, 5) is None
    one = _golden("After how many years of service does leave rise to 25 days?")
    filled = "What if after 25 years of service leave rises to 25 days?"
    assert check_rewrite(one, filled, None, 5) == "fact_added"
    ok = "What's the number of years of service before leave rises to 25 days?"
    assert check_rewrite(one, ok, None, 5) is None  # "what's" is a wh-word


def test_a_rewrite_that_drops_what_the_question_is_about_is_refused() -> None:
    """Regression: SmolLM2's "What is the University of Castaby?" passed every check."""
    case = _golden("The University of Castaby was established when and is known for physics?")
    vague = "What is the University of Castaby?"
    assert check_rewrite(case, vague, None, 5) == "content_dropped"
    ok = "When was the University of Castaby, known for physics, established?"
    assert check_rewrite(case, ok, None, 5) is None


def test_near_duplicates_of_other_cases_keep_their_template() -> None:
    a = _premise()
    b = a.model_copy(
        update={"id": "fp2", "question": "Why does Refund Policy state a 60 days window?"}
    )
    replies = [
        json.dumps({"question": "Why does Refund Policy state a 60 days window?"}),
        None,
    ]
    cases, stats = apply_rewrites([a, b], replies, {1: "over_budget"})
    assert cases[0].meta["rewrite"] == {"status": "kept", "reason": "near_duplicate"}
    assert cases[1].meta["rewrite"] == {"status": "kept", "reason": "over_budget"}
    assert stats.rewritten == 0 and stats.kept == {"over_budget": 1, "near_duplicate": 1}


# -- a scripted OpenAI-compatible server on 127.0.0.1 ---------------------------------------------
class _Server:
    """Replies per template question: ``script[template]`` (a reply text) or, by default,
    ``{"question": "Quick question: <template>"}``; counts the calls."""

    def __init__(self) -> None:
        self.script: dict[str, str] = {}
        self.calls = 0
        self.url = ""
        self.users: list[str] = []

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.calls += 1
        user = body["messages"][-1]["content"]
        self.users.append(user)
        match = re.search(r"Question: (.*)\nKeep:", user, re.DOTALL)
        if match is None:  # the line style: the question, then the instruction
            template = user.split("\n")[0]
            default = f'Sure! Rewritten question: "Quick, {template}"'
        else:
            template = match.group(1)
            default = json.dumps({"question": f"Quick question: {template}"})
        return web.json_response(completion(self.script.get(template, default), body["model"]))


@pytest.fixture(scope="module")
def server() -> Iterator[_Server]:
    state = _Server()
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    runner, state.url = asyncio.run_coroutine_threadsafe(
        start_chat_server(state.handle), loop
    ).result()
    yield state
    asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result()
    loop.call_soon_threadsafe(loop.stop)
    thread.join()


@pytest.fixture(scope="module")
def templates() -> list[Case]:
    s = synthesize_checked(load_corpus(CORPUS), N, 0)
    return [*s.golden, *s.attacks]


def _synth(
    server: _Server, tmp: Path, name: str, *extra: str, yes: bool = True, stdin: str | None = None
) -> Any:
    env = {
        "PROBEGUARD_JUDGE__LLM__BASE_URL": server.url,
        "PROBEGUARD_JUDGE__LLM__API_KEY_ENV": "PG_TEST_REWRITE_KEY",
        "PG_TEST_REWRITE_KEY": "sk-test-secret-123",
    }
    args = [
        "dataset",
        "synth",
        str(CORPUS),
        "--n",
        str(N),
        "--seed",
        "0",
        "--out",
        str(tmp / f"{name}.jsonl"),
    ]
    args += ["--rewrite", "llm", *extra] + (["--yes"] if yes else [])
    return CliRunner().invoke(cli, args, env=env, input=stdin)


def _rows(tmp: Path, name: str) -> list[dict[str, Any]]:
    rows = []
    for path in (tmp / f"{name}.jsonl", tmp / f"{name}.attacks.jsonl"):
        rows += [json.loads(line) for line in path.read_text().splitlines()]
    return rows


def _first(templates: list[Case], pick: Callable[[Case], bool]) -> Case:
    return next(c for c in templates if pick(c))


def test_rewrites_are_checked_counted_recorded_and_cached(
    server: _Server, templates, tmp_path: Path
) -> None:
    premise = _first(templates, lambda c: c.meta.get("attack_type") == "false_premise")
    golden = _first(templates, lambda c: c.meta.get("evolution") == "simple")
    broken = _first(templates, lambda c: c.meta.get("evolution") == "hypothetical")
    false_value = premise.expected.excludes[0]
    server.script = {
        broken.question: "Here is a better question: what is it?",  # not JSON
        premise.question: json.dumps(
            {"question": premise.question.replace(false_value, "some value")}
        ),
        golden.question: json.dumps(
            {"question": f"{golden.question} Is it {golden.expected.answers[0]}?"}
        ),
    }
    server.calls = 0
    result = _synth(server, tmp_path, "a", "--cache-dir", str(tmp_path / "cache"))
    assert result.exit_code == 0, result.output
    assert server.calls == N
    lines = result.output.splitlines()
    budget = next(i for i, line in enumerate(lines) if line.startswith("rewrite budget"))
    counts = next(i for i, line in enumerate(lines) if line.startswith("rewritten "))
    assert budget < counts
    assert f"{N} calls for {N} cases (0 cached)" in lines[budget]
    assert "$PG_TEST_REWRITE_KEY" in lines[budget] and "sk-test-secret-123" not in result.output
    rows = {r["id"]: r for r in _rows(tmp_path, "a")}
    assert rows[broken.id]["meta"]["rewrite"] == {"status": "kept", "reason": "bad_reply"}
    assert rows[premise.id]["meta"]["rewrite"] == {"status": "kept", "reason": "planted_dropped"}
    assert rows[golden.id]["meta"]["rewrite"] == {"status": "kept", "reason": "answer_leaked"}
    for case in (broken, premise, golden):
        assert rows[case.id]["question"] == case.question
    rewritten = [r for r in rows.values() if r["meta"]["rewrite"]["status"] == "rewritten"]
    assert rewritten and all(r["question"].startswith("Quick question: ") for r in rewritten)
    assert all(
        r["meta"]["rewrite"]["template"] == r["question"].removeprefix("Quick question: ")
        for r in rewritten
    )
    assert re.search(
        rf"rewritten {len(rewritten)} of {N}; template kept: .*bad_reply 1", result.output
    )
    validated = CliRunner().invoke(
        cli,
        [
            "dataset",
            "validate",
            str(tmp_path / "a.jsonl"),
            str(tmp_path / "a.attacks.jsonl"),
            "--corpus",
            str(CORPUS),
        ],
    )
    assert validated.exit_code == 0, validated.output
    # the same cache: no call, the same bytes
    server.calls = 0
    again = _synth(server, tmp_path, "b", "--cache-dir", str(tmp_path / "cache"))
    assert again.exit_code == 0 and server.calls == 0
    assert f"0 calls for {N} cases ({N} cached)" in again.output
    for suffix in (".jsonl", ".attacks.jsonl"):
        assert (tmp_path / f"a{suffix}").read_bytes() == (tmp_path / f"b{suffix}").read_bytes()


def test_line_style_sends_the_question_alone_and_reads_the_question_line(
    server: _Server, tmp_path: Path
) -> None:
    server.script, server.calls, server.users = {}, 0, []
    result = _synth(server, tmp_path, "l", "--reply-style", "line")
    assert result.exit_code == 0, result.output
    assert server.calls == N
    assert all(u.endswith("\nRewrite this as a short question.") for u in server.users)
    assert not any("Keep:" in u for u in server.users)
    rows = _rows(tmp_path, "l")
    rewritten = [r for r in rows if r["meta"]["rewrite"]["status"] == "rewritten"]
    assert rewritten and all(
        r["question"] == f"Quick, {r['meta']['rewrite']['template']}" for r in rewritten
    )


def test_max_calls_bounds_the_calls_and_the_rest_keep_their_template(
    server: _Server, tmp_path: Path
) -> None:
    server.script, server.calls = {}, 0
    result = _synth(
        server, tmp_path, "m", "--cache-dir", str(tmp_path / "cache"), "--max-calls", "5"
    )
    assert result.exit_code == 0, result.output
    assert server.calls == 5
    assert f"5 calls for {N} cases (0 cached)" in result.output
    assert f"{N - 5} over --max-calls keep their template" in result.output
    reasons = [r["meta"]["rewrite"].get("reason") for r in _rows(tmp_path, "m")]
    assert reasons.count("over_budget") == N - 5


def test_no_call_is_made_without_confirmation(server: _Server, tmp_path: Path) -> None:
    server.script, server.calls = {}, 0
    result = _synth(
        server, tmp_path, "c", "--cache-dir", str(tmp_path / "cache"), yes=False, stdin="n\n"
    )
    assert result.exit_code == 1
    assert "rewrite budget" in result.output and server.calls == 0
    assert not (tmp_path / "c.jsonl").exists()


def test_failed_calls_keep_the_template(tmp_path: Path) -> None:
    env = {
        "PROBEGUARD_JUDGE__LLM__BASE_URL": "http://127.0.0.1:9/v1",
        "PROBEGUARD_JUDGE__LLM__MAX_RETRIES": "0",
    }
    args = ["dataset", "synth", str(CORPUS), "--n", "6", "--out", str(tmp_path / "f.jsonl")]
    args += ["--rewrite", "llm", "--yes", "--cache-dir", str(tmp_path / "cache")]
    result = CliRunner().invoke(cli, args, env=env)
    assert result.exit_code == 0, result.output
    assert "rewritten 0 of 6; template kept: call_failed 6" in result.output
    assert "6 failed" in result.output


def test_without_rewrite_no_case_carries_rewrite_meta(tmp_path: Path) -> None:
    args = ["dataset", "synth", str(CORPUS), "--n", "6", "--out", str(tmp_path / "p.jsonl")]
    assert CliRunner().invoke(cli, args).exit_code == 0
    assert all("rewrite" not in r["meta"] for r in _rows(tmp_path, "p"))


@needs_smollm2
def test_smollm2_rewrites_offline_and_reruns_identically(tmp_path: Path) -> None:
    docs = load_corpus(CORPUS)
    base = [
        "dataset",
        "synth",
        str(CORPUS),
        "--n",
        "48",
        "--seed",
        "0",
        "--rewrite",
        "llm",
        "--llm",
        "llama_cpp",
    ]
    base += ["--yes", "--cache-dir", str(tmp_path / "cache")]
    # the 19th call (a "simple" question) passes every check; the 18 before do not
    first = CliRunner().invoke(
        cli, [*base, "--max-calls", "19", "--out", str(tmp_path / "s.jsonl")]
    )
    assert first.exit_code == 0, first.output
    assert "llama.cpp, SmolLM2 (offline)" in first.output
    assert "rewritten 0 of" not in first.output  # the line style: at least one accepted
    rows = _rows(tmp_path, "s")
    assert len(rows) == 48 and all(
        r["meta"]["rewrite"]["status"] in {"rewritten", "kept"} for r in rows
    )
    assert any(r["meta"]["rewrite"]["status"] == "rewritten" for r in rows)
    validated = CliRunner().invoke(
        cli,
        ["dataset", "validate", str(tmp_path / "s.jsonl"), str(tmp_path / "s.attacks.jsonl")]
        + ["--corpus", str(CORPUS)],
    )
    assert validated.exit_code == 0, validated.output
    rank = bm25_ranker(docs)
    for r in rows:  # every accepted rewrite passed the retrieval check
        if (
            r["meta"]["rewrite"]["status"] == "rewritten"
            and r["mode"] != "abstain"
            and r.get("type") != "lexical_mismatch"
        ):
            assert set(r["evidence_doc_ids"]) <= set(rank(r["question"], 5))
    second = CliRunner().invoke(
        cli, [*base, "--max-calls", "0", "--out", str(tmp_path / "t.jsonl")]
    )
    assert "0 calls for 48 cases (19 cached)" in second.output
    for suffix in (".jsonl", ".attacks.jsonl"):
        assert (tmp_path / f"s{suffix}").read_bytes() == (tmp_path / f"t{suffix}").read_bytes()


def test_llama_cpp_rewrites_one_call_at_a_time() -> None:
    """Regression: llama.cpp got judge.llm.concurrency (8) calls in flight, which only
    waited on the model's lock, timed out in the runner and were retried."""
    config = load_config(environ={"PROBEGUARD_JUDGE__LLM__CONCURRENCY": "8"})
    assert rewrite_concurrency("llama_cpp", config) == 1
    assert rewrite_concurrency("openai", config) == 8


def test_markers_and_forbidden_words_of_an_attack() -> None:
    temporal = Case(
        id="t",
        question="Under the current rules, how many days does a refund take?",
        expected=Expected(answers=("5 days",), evidence_doc_ids=("refund",)),
        meta={"attack_type": "temporal_conflict"},
    )
    assert rewrite_request(temporal).endswith("Keep: current")
    assert check_rewrite(temporal, "How many days does a refund take now?", None, 5) is None
    assert (
        check_rewrite(temporal, "How many days does a refund take?", None, 5) == "planted_dropped"
    )
    collision = Case(
        id="e",
        question="According to Kestrel Plus, how much is the monthly fee?",
        expected=Expected(answers=("$10",), evidence_doc_ids=("plans",)),
        meta={
            "attack_type": "entity_collision",
            "entity": "Kestrel Plus",
            "competitor": "Kestrel Pro",
        },
    )
    assert check_rewrite(collision, "What is the monthly fee of Kestrel Plus?", None, 5) is None
    assert (
        check_rewrite(collision, "What is the monthly fee of Kestrel Pro?", None, 5)
        == "planted_dropped"
    )
    assert (
        check_rewrite(collision, "Kestrel Plus or Kestrel Pro: the monthly fee?", None, 5)
        == "planted_dropped"
    )


# -- the judge's support check (check 8) -------------------------------------------------------
def test_offline_judge_refuses_a_rewrite_that_swaps_a_name_and_keeps_a_faithful_one() -> None:
    """A rewrite naming a body neither the template nor the evidence holds is refused
    (``unsupported``: a SmolLM2 rewrite turned "Castaby Meteorological Bureau" into
    "Vessary ..."); a reworded one passes. Without the check both pass."""
    evidence = Document.create(
        "Castaby is home to the Castaby Meteorological Bureau, which has kept daily weather "
        "records since 1871.",
        id="castaby",
    )
    case = Case(
        id="q",
        question="Since when has the Castaby Meteorological Bureau, based in Castaby, kept "
        "daily weather records?",
        expected=Expected(answers=("1871",), evidence_doc_ids=("castaby",)),
    )
    swapped = (
        "Since when has the Vessary Meteorological Bureau in Castaby kept daily weather records?"
    )
    faithful = "From when has the Castaby Meteorological Bureau kept its daily weather records?"
    supported = judge_support(OfflineJudge(), [evidence])
    assert check_rewrite(case, swapped, None, 5) is None
    assert check_rewrite(case, swapped, None, 5, supported) == "unsupported"
    assert check_rewrite(case, faithful, None, 5, supported) is None
    _, stats = apply_rewrites([case], [json.dumps({"question": swapped})], {}, supported=supported)
    assert stats.kept == {"unsupported": 1}
