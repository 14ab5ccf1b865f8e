from probeguard.reports.escape import md_inline


def test_markdown_metacharacters_are_escaped():
    hostile = "x | y <script>alert(1)</script> ![img](http://evil.example/a.png) `code` [link](u)"
    out = md_inline(hostile, max_len=None)
    assert "<script>" not in out and "](" not in out
    assert "\\|" in out and "\\<" in out and "\\`" in out and "\\!" in out


def test_newlines_cannot_forge_rows():
    out = md_inline("a\n| forged | row |\n", max_len=None)
    assert "\n" not in out and "\\| forged" in out


def test_truncation_happens_before_escaping():
    out = md_inline("|" * 500, max_len=10)
    assert out.endswith("…") and out.count("\\|") == 9


def test_report_shows_escaped_pipeline_name_outside_a_code_span():
    # Regression: the escaped name sat inside backticks, where Markdown shows the escapes
    # literally ("my\_rag") and an escaped backtick still closes the span.
    from probeguard.reports.markdown import render_markdown
    from probeguard.results.run import RunLog

    run = RunLog(
        probeguard_version="0",
        config={},
        pipeline_name="app:my_rag`x",
        pipeline_fingerprint="f" * 64,
    )
    line = next(x for x in render_markdown(run).splitlines() if x.startswith("- Pipeline:"))
    assert line == "- Pipeline: app:my\\_rag\\`x (fingerprint `ffffffffffff`)"


def test_per_style_breakdowns_become_escaped_tables():
    from probeguard.reports.markdown import render_markdown
    from probeguard.results.run import RunLog
    from probeguard.stats import wilson

    rate = wilson(3, 4).model_dump()
    run = RunLog(
        probeguard_version="0",
        config={},
        pipeline_name="p",
        pipeline_fingerprint="f" * 64,
        summary={
            "probes": {
                "corpus_poisoning": {
                    "failure_rate": rate,
                    "groups": 4,
                    "unscored": 0,
                    "overlap_weight": 0.1,
                    "per_style": {
                        "direct": {"attack_success_rate": rate, "runs": 4},
                        "x | forged": {"attack_success_rate": rate, "outcomes": {"succeeded": 3}},
                    },
                }
            }
        },
    )
    lines = render_markdown(run).splitlines()
    header = next(i for i, x in enumerate(lines) if x.startswith("  | per\\_style |"))
    assert lines[header] == "  | per\\_style | attack\\_success\\_rate | runs | outcomes |"
    assert lines[header + 2].startswith("  | direct | 0.750 [") and lines[header + 2].endswith(
        "| 4 | – |"
    )
    assert lines[header + 3].startswith("  | x \\| forged |") and lines[header + 3].endswith(
        "| succeeded: 3 |"
    )
