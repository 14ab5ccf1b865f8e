"""Reply styles of ``dataset synth --rewrite llm``: the ``line`` parser (labels, list markers,
quotes, several lines, no question mark, length bounds), the style's prompt and request, the
default style per rewriter and the ``--reply-style`` option."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from probeguard.cli.main import cli
from probeguard.config.loading import load_config
from probeguard.core.cases import Case, Expected
from probeguard.corpus.loaders import load_corpus
from probeguard.dataset.rewrite_reply import LINE_SYSTEM, SYSTEM, parse_line_reply, parse_reply
from probeguard.dataset.synth_rewrite import apply_rewrites, rewrite_request
from probeguard.engine.stages import demo_data_dir
from probeguard.engine.synth import synthesize_checked
from probeguard.engine.synth_rewrite import (
    LINE_MAX_TOKENS,
    REWRITE_MAX_TOKENS,
    RewritePipeline,
    default_style,
    make_rewriter,
    plan_rewrites,
)

TEMPLATE = "According to Refund Policy, within how many days are returns accepted?"
REWRITE = "How many days do I have to return something under the Refund Policy?"


@pytest.mark.parametrize(
    "reply",
    [
        REWRITE,
        f"Question: {REWRITE}",
        f"Rewritten question: {REWRITE}",
        f"**Rephrased question:** {REWRITE}",
        f'"{REWRITE}"',
        f"\u201c{REWRITE}\u201d",
        f"- {REWRITE}",
        f"1. {REWRITE}",
        f"Sure! Here it is:\n\n{REWRITE}\nI hope this helps.",
        f"Paraphrase: '{REWRITE}'",
        f'Rewrite this as "{REWRITE}"',
        f"Rewrite this as: {REWRITE}",
        f"Rephrased: {REWRITE}",
        f'Sure. "{REWRITE}" is how I would ask it.',
    ],
)
def test_line_reply_takes_the_first_line_ending_with_a_question_mark(reply: str) -> None:
    assert parse_line_reply(reply, TEMPLATE) == REWRITE


def test_line_reply_without_a_question_is_refused() -> None:
    assert parse_line_reply("You have 30 days to return an item.", TEMPLATE) is None
    assert parse_line_reply("", TEMPLATE) is None
    # the first question counts, even when a later line would be better
    assert parse_line_reply(f"Can you clarify?\n{REWRITE}", TEMPLATE) is None


def test_line_reply_length_bounds() -> None:
    assert parse_line_reply("What was it?", TEMPLATE) is None  # under a quarter of the template
    assert parse_line_reply("How many days " * 40 + "?", TEMPLATE) is None  # over 200 chars
    assert parse_line_reply("  How many   days do I have to return it?  ", TEMPLATE) == (
        "How many days do I have to return it?"
    )


def test_the_style_picks_the_parser() -> None:
    assert parse_reply(REWRITE, TEMPLATE, "line") == REWRITE
    assert parse_reply(REWRITE, TEMPLATE, "json") is None  # not JSON
    assert parse_reply(f'{{"question": "{REWRITE}"}}', TEMPLATE, "line") is None  # JSON


def test_a_quoted_question_is_taken_whole_with_the_quotes_inside_it() -> None:
    template = 'Which is larger: the one in A for "within ___", or in B for "up to ___"?'
    inner = 'Quick, which is larger: A\'s "within ___" or B\'s "up to ___"?'
    assert parse_line_reply(f'Rewritten question: "{inner}"', template) == inner
    echo = 'A says: "Staff pay 67 cents." Given that, what is the hotel limit per night?'
    assert parse_line_reply(echo, template) == echo  # not a quoted question: the line


def _case() -> Case:
    return Case(
        id="g",
        question=TEMPLATE,
        expected=Expected(answers=("30 days",), evidence_doc_ids=("refund",)),
        meta={"evolution": "simple", "origin": "synthesized"},
    )


def test_line_request_is_the_question_alone_and_the_checks_still_apply() -> None:
    assert rewrite_request(_case(), "line") == f"{TEMPLATE}\nRewrite this as a short question."
    assert rewrite_request(_case(), "json").startswith(f"Question: {TEMPLATE}\nKeep:")
    leak = "Are returns accepted within 30 days under the Refund Policy?"
    cases, stats = apply_rewrites([_case(), _case()], [REWRITE, leak], {}, style="line")
    assert cases[0].question == REWRITE and cases[0].meta["rewrite"]["status"] == "rewritten"
    assert cases[1].meta["rewrite"] == {"status": "kept", "reason": "answer_leaked"}
    assert stats.rewritten == 1


def test_default_style_and_prompt_per_style() -> None:
    assert default_style("llama_cpp") == "line" and default_style("openai") == "json"
    config = load_config()
    line = RewritePipeline(make_rewriter("openai", config, "line"), "line")
    json_ = RewritePipeline(make_rewriter("openai", config, "json"), "json")
    assert line.prompt.system == LINE_SYSTEM and json_.prompt.system == SYSTEM
    assert line.fingerprint() != json_.fingerprint()  # the style is part of the cache key
    assert line.generator.config()["max_tokens"] == LINE_MAX_TOKENS
    assert json_.generator.config()["max_tokens"] == REWRITE_MAX_TOKENS
    with pytest.raises(ValueError, match="reply style"):
        RewritePipeline(line.generator, "yaml")  # type: ignore[arg-type]
    synthesis = synthesize_checked(load_corpus(demo_data_dir() / "corpus.jsonl"), 4, 0)
    plan = plan_rewrites(synthesis, line, None, None)
    assert [r.question.splitlines()[0] for r in plan.requests] == [
        c.question for c in (*synthesis.golden, *synthesis.attacks)
    ]


def test_reply_style_option_is_validated(tmp_path) -> None:
    corpus = demo_data_dir() / "corpus.jsonl"
    args = ["dataset", "synth", str(corpus), "--n", "4", "--out", str(tmp_path / "x.jsonl")]
    bad = CliRunner().invoke(cli, [*args, "--rewrite", "llm", "--reply-style", "xml"])
    assert bad.exit_code == 2 and "xml" in bad.output
