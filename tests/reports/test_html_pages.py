"""The generic HTML page beside fix.md, comparison.md, compare.md and bench.md: the
Markdown subset it reads, its plots, and its data builders."""

from __future__ import annotations

import math
import re

from probeguard.core.estimate import Estimate
from probeguard.reports.escape import md_inline
from probeguard.reports.html_escape import esc
from probeguard.reports.html_gate import configured_gate
from probeguard.reports.html_markdown import markdown_html, markdown_inline_html, split_row
from probeguard.reports.html_pages import (
    Plot,
    bench_html,
    fix_html,
    fix_plots,
    markdown_report_html,
)
from probeguard.reports.html_plots import score_strip, side_by_side
from probeguard.results.fix import FixArtifact
from probeguard.stats import wilson
from xss_corpus import PAYLOADS, _hostile_fix

HOSTILE = (
    '<script>window.__pwned=1</script><img src=x onerror="alert(1)"> [x](javascript:alert(1)) | a'
)


def test_escaped_markdown_round_trips_to_the_original_text():
    # md_inline backslash-escapes every metacharacter; the page shows the text unchanged.
    html = markdown_inline_html(md_inline(HOSTILE, None))
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;" in html and "[x](javascript:alert(1))" in html
    assert "\\" not in html


def test_table_cells_split_on_unescaped_pipes_only():
    row = f"| {md_inline('a|b', None)} | **FAIL** | `x|y` |"
    assert split_row(row) == ["a\\|b", "**FAIL**", "`x", "y`"]
    html = markdown_html(f"| k | v |\n|---|---|\n| {md_inline('a|b', None)} | **FAIL** |\n")
    assert html.count("<td>") == 2
    assert "<td>a|b</td>" in html and "<strong>FAIL</strong>" in html
    assert html.startswith('<table class="sortable">')


def test_blocks_headings_lists_code_and_paragraphs():
    md = "## Head\n\nline one\nline two\n\n- item `c`\n- two\n\n````yaml\na: ```\n````\n"
    html = markdown_html(md)
    assert "<h2>Head</h2>" in html
    assert "<p>line one line two</p>" in html
    assert "<ul><li>item <code>c</code></li><li>two</li></ul>" in html
    assert '<div class="code"><pre>a: ```</pre></div>' in html


def test_escaped_star_and_backtick_open_nothing():
    assert markdown_inline_html(md_inline("**a** `b`", None)) == "**a** `b`"


def test_page_title_verdict_and_plots():
    plot = Plot("p1", "A plot", "<svg></svg>", "How to read it.")
    page = markdown_report_html(
        f"# Title {md_inline('<b>', None)}\n\ntext\n",
        verdict="PASS: ok",
        plots=[plot],
        source="x.json",
    )
    assert "<h1>Title &lt;b&gt;</h1>" in page
    assert '<p id="verdict" class="verdict info">PASS: ok</p>' in page
    assert '<section id="p1" class="plot"><h2>A plot</h2>' in page
    assert page.index('id="p1"') < page.index('id="report"')
    assert "<title>Title &lt;b&gt;</title>" in page


def test_bench_page_is_deterministic_and_self_contained():
    md = "# Bench\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    assert bench_html(md) == bench_html(md)
    page = bench_html(md)
    assert "default-src &#x27;none&#x27;" in page
    assert not re.search(r"https?:|src=|<link", page)


def test_side_by_side_draws_one_mark_per_defined_series():
    est = wilson(3, 10)
    nan = Estimate(value=math.nan, low=math.nan, high=math.nan, n=0, method="wilson")
    svg = side_by_side([("p<1>", [est, nan]), ("p2", [est, None])], ["a", "<b>"], "t")
    assert svg.count('<circle class="dot s0"') == 3  # the legend's and two rows'
    assert svg.count('<circle class="dot s1"') == 1  # the legend's only
    assert "p&lt;1&gt;" in svg and "&lt;b&gt;" in svg and "<b>" not in svg
    assert svg == side_by_side([("p<1>", [est, nan]), ("p2", [est, None])], ["a", "<b>"], "t")


def test_score_strip_counts_empty_and_draws_the_gate():
    svg = score_strip(
        [("answerable", [0.5, 0.7, -math.inf]), ("unanswerable", [0.1, math.nan])],
        [("gate", 0.3)],
        "scores",
    )
    assert svg.count('class="pt ') == 3
    assert "n=3, 1 none retrieved" in svg and "n=2, 1 no score" in svg
    assert svg.count('class="threshold') == 1 and "gate 0.3" in svg
    # the gate sits between the two groups' scores on the shared axis
    xs = [float(v) for v in re.findall(r'class="pt s\d" cx="([\d.]+)"', svg)]
    gate_x = float(re.search(r'class="threshold g0" x1="([\d.]+)"', svg).group(1))
    assert xs[2] < gate_x < min(xs[:2])


def test_score_strip_with_no_finite_score_still_draws():
    svg = score_strip([("a", [-math.inf]), ("u", [])], [], "none")
    assert "n=1, 1 none retrieved" in svg and 'class="pt' not in svg


def test_configured_gate_reads_the_retriever_then_the_defence_gate():
    def config(retriever, gate):
        return {"pipeline": {"reference": {"retriever": retriever, "defences": {"gate": gate}}}}

    assert configured_gate(config({"name": "bm25", "min_score": 2.5}, {"bm25": 1.0})) == 2.5
    assert configured_gate(config({"name": "bm25"}, {"bm25": 1.0, "dense": 0.3})) == 1.0
    assert configured_gate(config({"name": "hybrid"}, {"bm25": 1.0})) is None
    assert configured_gate({"pipeline": {"type": "http"}}) is None


def test_fix_plots_pair_before_and_after_for_measured_fixes_only():
    before, after = wilson(3, 4), wilson(0, 4)
    art = FixArtifact.model_validate(_hostile_fix(before.model_dump(), after.model_dump()))
    (plot,) = fix_plots(art)
    assert plot.svg.count(">fix-1: targeted</text>") == 1
    assert plot.svg.count('class="dot s0"') == 3 and plot.svg.count('class="dot s1"') == 3
    assert esc_payload(PAYLOADS[7]) in plot.svg and plot.svg.count('class="label"') == 2
    unmeasured = art.model_copy(update={"fixes": art.fixes[1:]})
    assert fix_plots(unmeasured) == []
    page = fix_html(art, "# Fix\n")
    assert '<p id="verdict" class="verdict pass">2 fixes checked against 4 failures: ' in page


def esc_payload(text: str) -> str:
    return esc(f"fix-1: {text}")


def test_a_line_break_in_a_cell_is_kept_but_an_escaped_one_is_text():
    html = markdown_inline_html(f"a<br>b {md_inline('<br><script>', None)}")
    assert html == "a<br>b &lt;br&gt;&lt;script&gt;"


def test_bench_tables_with_rates_get_a_plot_under_them():
    md = (
        "# B\n\n| backend | n | generator | rate | latency | other rate | Δ |\n"
        "|---|---|---|---|---|---|---|\n"
        f"| {md_inline('<b>bm25</b>', None)} | 40 (0) | x | 0.412 [0.301, 0.531] (n=40) | 3.1 s "
        "| — | 0.011 [-0.031, 0.053] (n=9) |\n"
        "| dense | 40 (0) | y | 0.100 [0.050, 0.200] (n=40) | 2.0 s | 0.5 [0.4, 0.6] (n=9) "
        "| 0.049 [0.013, 0.085] (n=9) |\n\n"
        "| judge | ΔAUROC vs baseline |\n|---|---|\n| a | 0.049 [0.013, 0.085] (n=9) |\n\n"
        "| measure | value |\n|---|---|\n| mean rank | 2.5 [2.0, 3.0] (n=4) |\n"
    )
    page = bench_html(md)
    assert page.count('<div class="table-plot">') == 1  # ranks above 1 are not rates
    plot = page.split('<div class="table-plot">')[1].split("</div>")[0]
    assert "&lt;b&gt;bm25&lt;/b&gt; / x" in plot and ">dense / y</text>" in plot
    assert plot.count('<circle class="dot s0"') == 3 and plot.count('<circle class="dot s1"') == 2
    assert 'class="dot s2"' not in plot  # Δ: one cell below 0, so not a rate column
    assert "40 (0)" not in plot  # counts are not part of a row's name
    assert page.index("</table>") < page.index('<div class="table-plot">')
    assert bench_html(md) == page
