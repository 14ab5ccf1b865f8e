"""Claim×chunk judges: the offline rules, the NLI decision rule, the LLM judge end to end
against a real aiohttp OpenAI-compatible server on 127.0.0.1 (scripted replies, and — marked
slow — the local SmolLM2), position swap, consensus and agreement."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import math
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web

from probeguard.core.errors import MissingExtraError
from probeguard.core.pipeline import Context
from probeguard.detectors.claims import decompose
from probeguard.detectors.judges import (
    Consensus,
    Judge,
    Judgment,
    PositionSwap,
    Verdict,
    agreement,
    as_contexts,
)
from probeguard.detectors.llm_judge import PROMPT_VERSION, ClaimReply, LlmJudge, parse_reply
from probeguard.detectors.nli_judge import NliJudge
from probeguard.detectors.offline_judge import OfflineJudge
from testkit import REFUND, SPEED, FixedProbabilities, completion, needs_smollm2, start_chat_server

PLANS = Context(
    "plans#0",
    "Kestrel Plus costs $12 per month. It includes free standard "
    "shipping. The plan started on 1 March 2024.",
)
CONTEXTS = [REFUND, SPEED, PLANS]
OFFLINE = OfflineJudge()


# -- offline rules ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "claim, chunk, label",
    [
        ("Customers may return items within 30 days of delivery.", REFUND, "supported"),
        ("Customers may return items within 45 days of delivery.", REFUND, "contradicted"),
        ("You have forty-five days to return items.", REFUND, "contradicted"),
        ("You have thirty days to return items.", REFUND, "supported"),
        ("Kestrel Plus costs $15 per month.", PLANS, "contradicted"),
        ("Kestrel Pro costs $15 per month.", PLANS, "unsupported"),  # another name: no clash
        ("The plan started on 1 June 2024.", PLANS, "contradicted"),
        ("The plan started in March 2024.", PLANS, "supported"),
        ("Kestrel Plus includes free standard shipping.", PLANS, "supported"),  # via "It ..."
        ("Refunds are not issued within 5 business days after inspection.", SPEED, "contradicted"),
        ("We ship to Brazil.", PLANS, "unsupported"),
        ("Refunds are issued within 5 business days.", REFUND, "unsupported"),
    ],
)
def test_offline_cells(claim: str, chunk: Context, label: str) -> None:
    v = OFFLINE.judge_pair(claim, chunk)
    assert v.label == label, v
    assert v.chunk_id == chunk.chunk_id and 0.0 <= v.score <= 1.0
    if label != "unsupported":
        assert v.evidence and chunk.text[v.span[0] : v.span[1]] == v.evidence


# Real sentences of the shared data (copied: the tests do not need the data). XQuAD
# (CC BY-SA 4.0): Oxygen, Carolina_Panthers, Jacksonville,_Florida, Scottish_Parliament;
# HaluEval qa_one_turn (MIT; HotpotQA paragraphs): rows 8, 314 and 0.
PRIESTLEY = (
    "Oxygen was discovered independently by Carl Wilhelm Scheele, in Uppsala, in 1773 or "
    "earlier, and Joseph Priestley in Wiltshire, in 1774, but Priestley is often given priority "
    "because his work was published first."
)
KUECHLY = (
    "Davis compiled 5½ sacks, four forced fumbles, and four interceptions, while Kuechly led "
    "the team in tackles (118) forced two fumbles, and intercepted four passes of his own."
)
HOUSEHOLDS = (
    "There were 158,349 households, of which 68,511 (43.3%) had children under the age of 18 "
    "living in them, 69,284 (43.8%) were opposite-sex married couples living together, 30,547 "
    "(19.3%) had a female householder with no husband present, 11,698 (7.4%) had a male "
    "householder with no wife present."
)
JACKSONVILLE = (
    "Consolidation gave Jacksonville its great size and placed most of its metropolitan "
    "population within the city limits; with an estimated population of 853,382 in 2014, it is "
    "the most populous city proper in Florida and the Southeast, and the 12th most populous in "
    "the United States."
)
AMENDMENTS = "Minor amendments were made during the 1960s and 1970s."
ANUBIS = "It first aired in September 2006 and the last episode was broadcast on December 4, 2009."
FREDERICK = (
    'Frederick II (German: "Friedrich" ; 24 January 171217 August 1786) was King of Prussia '
    "from 1740 until 1786, the longest reign of any Hohenzollern king."
)
HOSPITAL = (
    "The George Washington University Hospital is located in Washington, D.C. in the United States."
)


@pytest.mark.parametrize(
    "claim, text, label",
    [
        # a bare year against the same year after a cue word ("in 1774"), or in a calendar date
        ("1774.", PRIESTLEY, "supported"),
        ("Joseph Priestley recognised oxygen in 1774.", PRIESTLEY, "supported"),
        ("1775", PRIESTLEY, "contradicted"),
        ("2006", ANUBIS, "supported"),
        ("It first aired in 2008.", ANUBIS, "contradicted"),
        ("1786", FREDERICK, "supported"),
        ("1790", FREDERICK, "contradicted"),
        # numbers in brackets, ordinals, decades and percentages, on both sides
        ("118", KUECHLY, "supported"),
        ("Kuechly led the team in tackles with 118.", KUECHLY, "supported"),
        ("119", KUECHLY, "unsupported"),
        ("19.3%", HOUSEHOLDS, "supported"),
        ("19.3", HOUSEHOLDS, "unsupported"),  # a plain number does not assert a percentage
        ("12th", JACKSONVILLE, "supported"),
        ("12", JACKSONVILLE, "unsupported"),  # nor a count an ordinal
        (
            "Jacksonville is the 13th most populous city in the United States.",
            JACKSONVILLE,
            "contradicted",
        ),
        ("1970s", AMENDMENTS, "supported"),
        ("the 1960s and 1970s", AMENDMENTS, "supported"),
        ("1980s", AMENDMENTS, "contradicted"),
        ("1970", AMENDMENTS, "unsupported"),  # a year is not its decade
        # an abbreviation with dots is one name, as in the sentence's words
        ("Washington, D.C.", HOSPITAL, "supported"),
        ("The hospital is located in Washington, D.C.", HOSPITAL, "supported"),
        ("The hospital is located in Georgetown.", HOSPITAL, "unsupported"),
    ],
)
def test_offline_years_numbers_and_abbreviations_from_the_shared_data(claim, text, label):
    v = OFFLINE.judge_pair(claim, Context("c", text))
    assert v.label == label, v


def test_offline_year_contradiction_names_both_years():
    v = OFFLINE.judge_pair("1790", Context("c", FREDERICK))
    assert "'1790'" in v.reason and "1786" in v.reason


def test_offline_contradiction_names_both_values():
    v = OFFLINE.judge_pair("Customers may return items within 45 days of delivery.", REFUND)
    assert "'45 days'" in v.reason and "'30 days'" in v.reason
    assert v.evidence.startswith("Customers may return items within 30 days")


def test_offline_unscored_and_matrix_shape():
    j = OFFLINE.judge(["...", "Refunds are issued within 5 business days."], CONTEXTS)
    assert j.shape == (2, 3)
    assert j.verdicts[0][0].label == "unscored" and "no content words" in j.verdicts[0][0].reason
    assert j.claim_labels() == ["unscored", "supported"]
    assert [j.chunk_relevant(k) for k in range(3)] == [None, True, None]
    assert j.detail["fingerprint"] == OFFLINE.fingerprint()
    assert OfflineJudge(support=0.9).fingerprint() != OFFLINE.fingerprint()
    assert isinstance(OFFLINE, Judge)
    with pytest.raises(ValueError):
        OfflineJudge(support=0.4, about=0.5)


def test_claim_label_aggregation():
    def v(label: str) -> Verdict:
        return Verdict(label, 0.5)  # type: ignore[arg-type]

    ctx = as_contexts(["a", "b"])
    rows = (
        (v("unsupported"), v("supported")),
        (v("contradicted"), v("unscored")),
        (v("unscored"), v("unsupported")),
        (v("unsupported"), v("unsupported")),
    )
    j = Judgment(("1", "2", "3", "4"), ctx, rows, "t")
    assert j.claim_labels() == ["supported", "contradicted", "unscored", "unsupported"]
    with pytest.raises(ValueError):
        Judgment(("1",), ctx, ((v("supported"),),), "t")


def test_judges_are_re_exported_from_the_detectors_package():
    import probeguard.detectors as detectors

    assert detectors.OfflineJudge is OfflineJudge and detectors.NliJudge is NliJudge
    assert detectors.LlmJudge is LlmJudge
    with pytest.raises(AttributeError):
        detectors.NoSuchJudge  # noqa: B018


def test_offline_relevance():
    out = OFFLINE.relevance(
        "How many days do customers have to return items?",
        ["Customers may return items within 30 days.", "Kestrel Plus costs $12 per month."],
    )
    assert [r.relevant for r in out] == [True, False]
    assert all(r.relevant is None for r in OFFLINE.relevance("Is it?", ["Anything."]))


# -- position swap ------------------------------------------------------------------------
class FirstSeenBias:
    """Deliberately order-biased: whatever chunk it is shown first supports every claim."""

    name = "first_seen"

    def fingerprint(self) -> str:
        return "first-seen-v1"

    def judge(self, claims: Sequence[str], contexts: Sequence[Context | str]) -> Judgment:
        base = OFFLINE.judge(claims, contexts)
        rows = tuple(
            (Verdict("supported", 1.0, row[0].chunk_id, reason="shown first"),) + row[1:]
            for row in base.verdicts
        )
        return Judgment(base.claims, base.contexts, rows, self.name)


def test_position_swap_exposes_an_order_biased_judge():
    claims = ["Kestrel Plus costs $12 per month.", "Refunds are issued within 5 business days."]
    out = PositionSwap(FirstSeenBias()).judge(claims, CONTEXTS)
    swap = out.detail["position_swap"]
    pairs = {(d["claim"], d["chunk_id"]) for d in swap["disagreements"]}
    # REFUND is first in the given order (biased "supported"), PLANS first when reversed
    assert (0, "refund#0") in pairs and (1, "refund#0") in pairs and (1, "plans#0") in pairs
    assert out.verdicts[0][0].label == "unscored" and "position bias" in out.verdicts[0][0].reason
    assert swap["agreement"]["value"] < 1.0
    assert len(out.parts) == 2 and out.parts[1].contexts == out.contexts
    kept = PositionSwap(FirstSeenBias(), on_disagreement="first").judge(claims, CONTEXTS)
    assert kept.verdicts[0][0].label == "supported"


def test_position_swap_finds_no_disagreement_for_the_offline_judge():
    claims = [
        c.text
        for c in decompose(
            "Customers may return items within 45 days of delivery. Kestrel Plus costs $12 per "
            "month and includes free standard shipping. Refunds are issued within 5 business days."
        )
    ]
    out = PositionSwap(OFFLINE).judge(claims, CONTEXTS)
    assert out.detail["position_swap"]["disagreements"] == []
    assert out.detail["position_swap"]["agreement"]["value"] == 1.0
    assert out.labels() == OFFLINE.judge(claims, CONTEXTS).labels()


# -- consensus ----------------------------------------------------------------------------
@dataclass
class Scripted:
    """Returns a fixed label matrix (to force disagreements no real judge makes on demand)."""

    name: str
    table: list[list[str]]

    def fingerprint(self) -> str:
        return self.name

    def judge(self, claims: Sequence[str], contexts: Sequence[Context | str]) -> Judgment:
        ctx = as_contexts(contexts)
        rows = tuple(
            tuple(
                Verdict(
                    lab,
                    0.9 if lab != "unscored" else math.nan,  # type: ignore[arg-type]
                    c.chunk_id,
                    evidence=f"{self.name} evidence",
                )
                for lab, c in zip(row, ctx)
            )
            for row in self.table
        )
        return Judgment(tuple(claims), ctx, rows, self.name)


S, C, U, X = "supported", "contradicted", "unsupported", "unscored"


def test_consensus_majority_and_unanimous():
    a = Scripted("a", [[S, U], [S, C]])
    b = Scripted("b", [[S, U], [U, C]])
    c = Scripted("c", [[S, S], [X, U]])
    majority = Consensus([a, b, c], "majority").judge(["x", "y"], ["p", "q"])
    unanimous = Consensus([a, b, c], "unanimous").judge(["x", "y"], ["p", "q"])
    assert majority.labels() == [[S, U], [X, C]]
    assert unanimous.labels() == [[S, X], [X, X]]
    assert "no majority verdict" in majority.verdicts[1][0].reason
    assert "a=unsupported, b=unsupported, c=supported" in unanimous.verdicts[0][1].reason
    assert majority.verdicts[0][1].reason.startswith("2 of 3 judges")
    assert majority.detail["consensus"]["no_verdict_cells"] == 1
    assert unanimous.detail["consensus"]["no_verdict_cells"] == 3
    assert len(majority.parts) == 3
    assert (
        Consensus([a, b], "majority").fingerprint() != Consensus([a, b], "unanimous").fingerprint()
    )
    with pytest.raises(ValueError):
        Consensus([a], "majority")


def test_agreement_is_a_wilson_estimate_over_pairs_both_scored():
    a = Scripted("a", [[S, U], [S, C]]).judge(["x", "y"], ["p", "q"])
    b = Scripted("b", [[S, U], [X, U]]).judge(["x", "y"], ["p", "q"])
    est = agreement(a, b)
    assert (est.n, est.value) == (3, 2 / 3) and est.method == "wilson"
    claim_level = agreement(a, b, level="claim")  # a: [S, S]; b: [S, unscored]
    assert (claim_level.n, claim_level.value) == (1, 1.0)
    c = Scripted("c", [[U, U], [C, U]]).judge(["x", "y"], ["p", "q"])
    assert agreement(a, c, level="claim").model_dump()["value"] == 0.0
    none = agreement(
        Scripted("u", [[X]]).judge(["x"], ["p"]), Scripted("v", [[S]]).judge(["x"], ["p"])
    )
    assert none.n == 0 and math.isnan(none.value)
    pooled = agreement([a, a], [b, b])
    assert pooled.n == 6


# -- NLI ----------------------------------------------------------------------------------
HAS_ST = importlib.util.find_spec("sentence_transformers") is not None


class FixedNli(FixedProbabilities, NliJudge):
    """The NLI decision rule over given probabilities (no NLI model ships offline)."""


def test_nli_decision_rule():
    entail = {"entailment": 0.9, "contradiction": 0.05, "neutral": 0.05}
    contra = {"entailment": 0.02, "contradiction": 0.8, "neutral": 0.18}
    first = "Customers may return items within 30 days of delivery for a full refund."
    ok, bad = "You have 30 days.", "You have 45 days."
    judge = FixedNli({(first, ok): entail, (first, bad): contra})
    j = judge.judge([ok, bad, "Unrelated."], [REFUND, PLANS])
    assert j.labels() == [[S, U], [C, U], [U, U]]
    assert j.verdicts[0][0].evidence == first and j.verdicts[0][0].score == 0.9
    assert j.verdicts[1][0].score == 0.8 and j.judge == "nli"


@pytest.mark.skipif(HAS_ST, reason="sentence-transformers is installed")
def test_nli_judge_without_the_extra_names_the_install_command():
    with pytest.raises(MissingExtraError, match=r"probeguard\[sentence-transformers\]"):
        NliJudge().judge(["You have 45 days."], [REFUND])


def test_nli_judge_with_the_hub_model():
    if not HAS_ST:
        pytest.skip(
            "sentence-transformers (extra) is not installed: the NLI judge's model "
            "cannot be loaded here"
        )
    judge = NliJudge()
    try:  # only the model load may skip: no hub access here
        judge.model.probabilities([("a", "b")])
    except Exception as exc:
        pytest.skip(f"cross-encoder/nli-deberta-v3-base cannot be loaded: {exc}")
    j = judge.judge(["Customers may return items within 45 days."], [REFUND])
    assert j.claim_labels() == ["contradicted"]


# -- LLM judge against a real OpenAI-compatible server -------------------------------------
@dataclass
class Server:
    url: str = ""
    replies: list[Callable[[dict[str, Any]], str]] = field(default_factory=list)
    """Reply texts in order; the last repeats."""
    bodies: list[dict[str, Any]] = field(default_factory=list)


def serve(state: Server, respond: Callable[[dict[str, Any]], Any]) -> Iterator[Server]:
    """Runs an aiohttp app on 127.0.0.1 in a thread with its own loop (so the judge's sync
    API can be called from the test)."""
    loop = asyncio.new_event_loop()
    started = threading.Event()
    holder: dict[str, Any] = {}

    async def handle(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        state.bodies.append(body)
        text = await loop.run_in_executor(None, respond, body)
        return web.json_response(completion(text, "judge-test"))

    async def start() -> None:
        holder["runner"], state.url = await start_chat_server(handle)
        started.set()

    thread = threading.Thread(
        target=lambda: (loop.run_until_complete(start()), loop.run_forever()), daemon=True
    )
    thread.start()
    assert started.wait(10)
    try:
        yield state
    finally:
        asyncio.run_coroutine_threadsafe(holder["runner"].cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


@pytest.fixture
def server() -> Iterator[Server]:
    state = Server()

    def respond(body: dict[str, Any]) -> str:
        n = len(state.bodies) - 1
        return state.replies[min(n, len(state.replies) - 1)](body)

    yield from serve(state, respond)


def reply(verdicts: list[tuple[int, str, str]]) -> Callable[[dict[str, Any]], str]:
    return lambda body: json.dumps(
        {
            "verdicts": [
                {"passage": p, "label": lab, "evidence": ev, "reason": "scripted"}
                for p, lab, ev in verdicts
            ]
        }
    )


def judge_for(server: Server, **kw: Any) -> LlmJudge:
    kw.setdefault("backoff_s", 0.001)
    return LlmJudge(base_url=server.url, model="judge-test", api_key_env=None, **kw)


def test_llm_judge_valid_json_gives_verdicts(server: Server):
    server.replies = [
        reply([(1, "supported", "within 30 days of delivery"), (2, "unsupported", "")])
    ]
    j = judge_for(server).judge(["You have 30 days to return items."], [REFUND, SPEED])
    assert j.labels() == [[S, U]]
    v = j.verdicts[0][0]
    assert v.evidence == "within 30 days of delivery" and v.span is not None
    assert REFUND.text[v.span[0] : v.span[1]] == v.evidence and v.retries == 0
    assert j.detail["format_retries"] == 0
    body = server.bodies[0]
    assert body["temperature"] == 0.0 and body["model"] == "judge-test"
    user = body["messages"][1]["content"]
    assert "[1] Customers may return" in user and "[2] Refunds" in user
    assert "Claim: You have 30 days to return items." in user
    assert "JSON" in body["messages"][0]["content"]


def test_llm_judge_retries_once_after_malformed_json(server: Server):
    server.replies = [
        lambda body: "Sure! The claim is supported.",
        reply([(1, "contradicted", "30 days")]),
    ]
    j = judge_for(server).judge(["You have 45 days."], [REFUND])
    assert j.labels() == [[C]] and j.verdicts[0][0].retries == 1
    assert j.detail["format_retries"] == 1 and len(server.bodies) == 2
    assert (
        "previous reply was rejected: not valid JSON" in server.bodies[1]["messages"][1]["content"]
    )


def test_llm_judge_always_malformed_is_unscored_with_the_reason(server: Server):
    server.replies = [lambda body: '{"verdicts": [{"passage": 1, "label": "maybe"}]}']
    j = judge_for(server, format_retries=2).judge(["You have 45 days."], [REFUND, SPEED])
    assert j.labels() == [[X, X]] and len(server.bodies) == 3
    reason = j.verdicts[0][0].reason
    assert "not valid after 3 attempt(s)" in reason and "schema error" in reason
    assert "maybe" in reason and j.verdicts[0][0].retries == 2
    assert math.isnan(j.verdicts[0][0].score)


def test_llm_judge_missing_passage_and_pair_mode_and_relevance(server: Server):
    server.replies = [reply([(1, "supported", "")])]  # 2 passages, 1 verdict
    j = judge_for(server, format_retries=0).judge(["x claim"], [REFUND, SPEED])
    assert j.labels() == [[X, X]] and "one verdict for each of 1..2" in j.verdicts[0][0].reason
    server.bodies.clear()
    server.replies = [
        lambda body: '```json\n{"label": "supported", "evidence": "", "reason": "ok"}\n```'
    ]
    j = judge_for(server, mode="pair").judge(["a", "b"], [REFUND, SPEED])
    assert j.labels() == [[S, S], [S, S]] and len(server.bodies) == 4
    server.replies = [
        lambda body: json.dumps(
            {
                "verdicts": [
                    {"statement": 1, "relevant": True, "reason": "on topic"},
                    {"statement": 2, "relevant": False, "reason": "off topic"},
                ]
            }
        )
    ]
    rel = judge_for(server).relevance("How long do returns take?", ["Returns: 30 days.", "Hi."])
    assert [r.relevant for r in rel] == [True, False]


def test_position_swap_over_the_llm_judge_reports_a_first_passage_bias(server: Server):
    # The server's "model" always finds passage [1] supportive: which chunk that is depends on
    # the order, so the swap pass disagrees on the first and last chunks.
    def first_passage_bias(body: dict[str, Any]) -> str:
        n = body["messages"][1]["content"].count("\n[")  # "Passages:\n[1] ...\n[2] ..."
        return json.dumps(
            {
                "verdicts": [
                    {
                        "passage": i,
                        "label": S if i == 1 else U,
                        "evidence": "",
                        "reason": "scripted",
                    }
                    for i in range(1, n + 1)
                ]
            }
        )

    server.replies = [first_passage_bias]
    out = PositionSwap(judge_for(server)).judge(["You have 30 days."], CONTEXTS)
    pairs = {
        (d["chunk_id"], d["given_order"], d["reversed"])
        for d in out.detail["position_swap"]["disagreements"]
    }
    assert pairs == {("refund#0", S, U), ("plans#0", U, S)}
    assert out.labels() == [[X, U, X]] and len(server.bodies) == 2
    assert out.judge == "swap(llm)"


def test_llm_judge_http_failure_is_unscored_not_raised():
    dead = LlmJudge(
        base_url="http://127.0.0.1:9/v1", model="m", api_key_env=None, max_retries=0, timeout_s=2
    )
    j = dead.judge(["You have 30 days."], [REFUND])
    assert j.labels() == [[X]] and "judge call failed" in j.verdicts[0][0].reason


def test_llm_fingerprint_holds_name_prompt_version_and_model():
    a = LlmJudge(base_url="http://127.0.0.1:1/v1", model="m1", api_key_env=None)
    b = LlmJudge(base_url="http://127.0.0.1:1/v1", model="m2", api_key_env=None)
    assert a.fingerprint() != b.fingerprint()
    assert a.config()["prompt_version"] == PROMPT_VERSION and a.config()["name"] == "llm"
    assert a.config()["generator"]["temperature"] == 0.0
    assert (
        LlmJudge(
            base_url="http://127.0.0.1:1/v1", model="m1", api_key_env=None, mode="pair"
        ).fingerprint()
        != a.fingerprint()
    )


def test_llm_judge_yesno_style_reads_the_first_word_over_http(server: Server):
    # No logprobs over HTTP: "Yes"/"No" decide, anything else stays unscored (never 0 or 1).
    answers = iter(["Yes.", "no", "I cannot tell"])
    server.replies = [lambda body: next(answers)]
    j = judge_for(server, style="yesno", concurrency=1).judge(
        ["You have 30 days to return items.", "You have 45 days.", "Shipping is free."], [REFUND]
    )
    assert j.labels() == [[S], [U], [X]]
    assert [j.verdicts[i][0].support for i in (0, 1)] == [1.0, 0.0]
    assert "I cannot tell" in j.verdicts[2][0].reason and math.isnan(j.verdicts[2][0].score)
    body = server.bodies[0]
    assert body["max_tokens"] == 3 and len(server.bodies) == 3
    assert "Answer yes or no." in body["messages"][1]["content"]
    assert "Claim: You have 30 days to return items." in body["messages"][1]["content"]
    server.bodies.clear()
    server.replies = [lambda body: "Yes" if "30 days" in body["messages"][1]["content"] else "No"]
    rel = judge_for(server, style="yesno").relevance("How long?", ["Returns: 30 days.", "Hi."])
    assert [r.relevant for r in rel] == [True, False] and len(server.bodies) == 2


def test_consensus_composes_with_a_yesno_llm_judge(server: Server):
    server.replies = [lambda body: "Yes"]
    both = Consensus([OFFLINE, judge_for(server, style="yesno")], "unanimous")
    j = both.judge(
        ["Customers may return items within 30 days of delivery.", "We ship to Peru."], [REFUND]
    )
    assert j.labels() == [[S], [X]]  # agree: supported; disagree: unscored under unanimity
    assert [p.judge for p in j.parts] == ["offline", "llm"]


def test_parse_reply_is_strict():
    ok = parse_reply('{"verdicts": [{"passage": 1, "label": "supported"}]}', ClaimReply, 1)
    assert ok.verdicts[0].label == "supported"  # type: ignore[attr-defined]
    for bad, msg in [
        ("[]", "JSON object"),
        ('{"verdicts": [], "extra": 1}', "schema error"),
        ('{"verdicts": [{"passage": "1", "label": "supported"}]}', "schema error"),
        ('Here: {"verdicts": []}', "not valid JSON"),
    ]:
        with pytest.raises(ValueError, match=msg):
            parse_reply(bad, ClaimReply, None)


def test_parse_reply_rejects_json_python_cannot_convert():
    # Regression: json.loads raises a plain ValueError (no .msg/.pos) for an integer longer
    # than Python's int-conversion limit; parse_reply raised AttributeError instead.
    with pytest.raises(ValueError, match="not valid JSON"):
        parse_reply('{"verdicts": [' + "1" * 5000 + "]}", ClaimReply, None)


@needs_smollm2
def test_llm_judge_backed_by_local_smollm2():
    # A real model behind a real OpenAI-compatible server: whatever SmolLM2-135M answers,
    # every cell ends as a verdict or as unscored with a reason — never dropped.
    from probeguard.models.generators.llama_cpp import LlamaCppGenerator
    from probeguard.models.prompts import PromptTemplate

    gen = LlamaCppGenerator(threads=1, max_tokens=96)

    def respond(body: dict[str, Any]) -> str:
        system, user = body["messages"][0]["content"], body["messages"][1]["content"]
        return gen.generate("", [], PromptTemplate("relay", system, user)).text

    for state in serve(Server(), respond):
        j = LlmJudge(
            base_url=state.url,
            model="smollm2",
            api_key_env=None,
            mode="pair",
            format_retries=1,
            concurrency=1,
        ).judge(["Customers may return items within 30 days."], [REFUND])
        v = j.verdicts[0][0]
        assert v.label in (S, C, U) or (v.label == X and v.reason)
        assert 1 <= len(state.bodies) <= 2


# -- offline polarity: negation scoped to the claim's predicate ------------------------------
# Real sentences, copied from the shared data: XQuAD (xquad.en.json) and HaluEval
# (qa_one_turn.jsonl). Before the fix, a negation anywhere in the matched clause flipped a
# bare noun phrase, a name or a number ("reducing poverty" was "contradicted").
BAN_KI_MOON = (  # XQuAD, Economic_inequality
    'In the words of the Secretary General of the United Nations Ban Ki-Moon: "While '
    'economic growth is necessary, it is not sufficient for progress on reducing poverty."'
)
CHARTER = (  # XQuAD, Teacher
    "Many charter schools do not require that their teachers be certified, provided they "
    "meet the standards to be highly qualified as set by No Child Left Behind."
)
FRESNO = "Fresno is the largest U.S. city not directly linked to an Interstate highway."
IQBAL = (  # XQuAD, Islamism
    "He did not support Indian involvement in World War I and remained in close touch with "
    "Muslim political leaders such as Muhammad Ali Johar and Muhammad Ali Jinnah."
)
CARNES = (  # HaluEval: "No. 1" is a chart position
    'Carnes\'s 1981 version spent nine weeks at No. 1 on the "Billboard" Hot 100 and was '
    '"Billboard"\' s biggest hit of 1981.'
)
TESLA = (  # XQuAD, Nikola_Tesla (two sentences: the second one's "He" inherits)
    "Tesla was renowned for his achievements and showmanship, eventually earning him a "
    'reputation in popular culture as an archetypal "mad scientist". His patents earned him '
    "a considerable amount of money, much of which was used to finance his own projects "
    "with varying degrees of success. He lived most of his life in a series of New York "
    "hotels, through his retirement."
)


@pytest.mark.parametrize(
    "claim, context, label",
    [
        # no predicate (noun phrase, name, number): polarity cannot contradict it
        ("reducing poverty", BAN_KI_MOON, "supported"),
        ("United Nations", BAN_KI_MOON, "supported"),
        ("No Child Left Behind", CHARTER, "supported"),
        ("Fresno", FRESNO, "supported"),
        ("nine", CARNES, "supported"),
        # a predicate: the polarity of the clause that carries it
        ("Fresno is directly linked to an Interstate highway.", FRESNO, "contradicted"),
        ("Fresno is not directly linked to an Interstate highway.", FRESNO, "supported"),
        (
            "Economic growth is sufficient for progress on reducing poverty.",
            BAN_KI_MOON,
            "contradicted",
        ),
        ("Economic growth is necessary.", BAN_KI_MOON, "supported"),
        (IQBAL, IQBAL, "supported"),  # was contradicted: "and remained ..." read as its clause
        (IQBAL.replace("did not support", "did support"), IQBAL, "contradicted"),
        ("He remained in close touch with Muslim political leaders.", IQBAL, "supported"),
        (
            "Carnes's version spent nine weeks at No. 1 on the Billboard Hot 100.",
            CARNES,
            "supported",
        ),
        # a negated claim needs a sentence that carries its predicate, never an anaphoric
        # neighbour that merely shares its words
        (
            "Tesla was not renowned for his achievements and showmanship, eventually earning "
            'him a reputation in popular culture as an archetypal "mad scientist".',
            TESLA,
            "contradicted",
        ),
        ("Returns are accepted.", "Returns are not accepted.", "contradicted"),
        ("Returns are not accepted.", "Returns are accepted.", "contradicted"),
        ("Returns are not accepted.", "Returns are not accepted.", "supported"),
        (
            "The company manufactures boots.",
            "The company does not manufacture boots.",
            "unsupported",
        ),
    ],
)
def test_offline_polarity_is_the_predicates(claim: str, context: str, label: str) -> None:
    v = OFFLINE.judge_pair(claim, context)
    assert v.label == label, v


def test_a_bare_word_answer_is_not_unsupported_by_a_negated_predicate():
    # XQuAD, Ctenophora: the answer "monophyletic" to "What are cydippids not?"
    context = (
        'Evidence accumulating since the 1980s indicates that the "cydippids" are not '
        "monophyletic, in other words do not include all and only the descendants of a "
        "single common ancestor."
    )
    assert OFFLINE.judge_pair("monophyletic", context).label == "supported"
    assert OFFLINE.judge_pair("The cydippids are monophyletic.", context).label == "contradicted"


def test_takes_question_is_read_per_judge_method_not_per_class():
    from probeguard.detectors.judges import _takes_question
    from probeguard.detectors.offline_judge import OfflineJudge

    class NoQuestion(OfflineJudge):
        def judge(self, claims, contexts):  # type: ignore[no-untyped-def, override]
            return super().judge(claims, contexts)

    plain, sub = OfflineJudge(), NoQuestion()
    assert _takes_question(plain) and not _takes_question(sub)
    assert _takes_question(plain) and not _takes_question(sub)  # memoised: same answers
    plain.judge = lambda claims, contexts: sub.judge(claims, contexts)  # type: ignore[method-assign]
    assert not _takes_question(plain)
