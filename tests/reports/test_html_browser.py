"""report.html in a real browser: Debian's chromium driven by Playwright (no browser
download; `make browser` installs chromium with apt-get). The page loads from file:// with no
console error and no request but its own, its filters, search, sorting and keyboard work, and
a hostile scan's payloads execute nothing. A missing chromium or Playwright fails these tests
loudly: they never skip."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from xss_corpus import PAYLOADS, hostile_pages, hostile_scan

CHROMIUM = "chromium"


@pytest.fixture  # function scope: the scans (module and session fixtures) run first, since
def browser() -> Iterator[Any]:  # a sync scan cannot start while Playwright's loop runs
    path = shutil.which(CHROMIUM)
    if path is None:
        pytest.fail("chromium is not installed: run `make browser` (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover - the lock pins it
        pytest.fail("playwright is not installed: pip install --no-deps -r requirements.lock")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=path, args=["--no-sandbox"])
        yield chromium
        chromium.close()


class Visit:
    """A page opened from file://, with what it logged and requested."""

    def __init__(self, browser: Any, html: Path) -> None:
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.console: list[str] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        self.page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.url = html.resolve().as_uri()
        self.page.goto(self.url)
        self.page.wait_for_selector("body[data-ready='1']", timeout=15_000)

    def count(self) -> str:
        return str(self.page.inner_text("#f-count"))

    def check_clean(self) -> None:
        errors = [c for c in self.console if not c.startswith(("log:", "info:", "debug:"))]
        assert errors == []
        assert self.requests == [self.url] and self.dialogs == []


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    return hostile_scan(tmp_path_factory.mktemp("xss-browser"))


def test_hostile_report_executes_nothing(browser, hostile):
    visit = Visit(browser, hostile.html_path)
    rows = visit.page.locator("#units tbody tr")
    assert rows.count() == len(PAYLOADS)
    shown = []
    for i in range(rows.count()):
        rows.nth(i).click()
        shown.append(visit.page.inner_text("#detail"))
    page = visit.page
    assert page.evaluate("typeof window.__pwned") == "undefined"
    hostile_nodes = (
        "img, iframe, svg[onload], [onerror], [onload], a[href^='javascript'], meta[http-equiv"
        "='refresh'], style:not(head style)"
    )
    assert page.locator(hostile_nodes).count() == 0
    assert page.locator("script").count() == 2
    text = "\n".join(shown)
    for payload in PAYLOADS[:8]:  # shown as text, whole
        assert payload in text
    assert "\\x1bc" in text and "\x1b" not in text
    visit.check_clean()


def test_filters_search_sort_and_keyboard(browser, hostile):
    visit = Visit(browser, hostile.html_path)
    page, total = visit.page, len(PAYLOADS)
    assert visit.count() == f"{total} of {total} shown"
    page.select_option("#f-outcome", "fail")
    failing = page.locator("#units tbody tr").count()
    assert 0 < failing < total and visit.count() == f"{failing} of {total} shown"
    page.select_option("#f-outcome", "")
    page.keyboard.press("/")  # "/" focuses the search box
    page.keyboard.type("question #3")
    assert visit.count() == f"1 of {total} shown"
    page.fill("#f-search", "")
    header = page.locator("#units th[data-key='group']")
    header.click()
    header.click()
    assert header.get_attribute("aria-sort") == "descending"
    groups = page.locator("#units tbody tr td:nth-child(2)").all_inner_texts()
    assert groups == sorted(groups, reverse=True)
    page.locator("#units tbody tr").first.focus()
    page.keyboard.press("Enter")
    assert groups[0] in page.inner_text("#detail h3")
    visit.check_clean()


@pytest.mark.slow  # the real demo scan (conftest.demo_cli_runs)
def test_demo_report_loads_offline_and_filters(browser, demo_cli_runs):
    base, first, _ = demo_cli_runs
    assert first.exit_code == 0, first.output
    html = base / "a" / "report.html"
    assert html.read_bytes() == (base / "b" / "report.html").read_bytes()
    assert html.stat().st_size <= 1.75 * 1024 * 1024  # 1.57 MB after packing (limit: 2 MB)
    visit = Visit(browser, html)
    page = visit.page
    probes = page.locator("#f-probe option").all_inner_texts()[1:]
    assert "golden" in probes and len(probes) > 3
    totals = []
    for probe in probes:
        page.select_option("#f-probe", probe)
        totals.append(int(visit.count().split(" of ")[0]))
    assert all(t > 0 for t in totals)
    page.select_option("#f-probe", "")
    page.select_option("#f-outcome", "fail")
    page.locator("#units tbody tr").first.click()
    assert "Retrieved contexts" in page.inner_text("#detail")
    assert page.locator("#fixes pre").count() >= 2
    visit.check_clean()


@pytest.fixture(scope="module")
def eval_page(tmp_path_factory):
    """`probeguard eval` on two records that carry their answers, one hostile."""
    import json

    from click.testing import CliRunner

    from probeguard.cli.main import cli

    root = tmp_path_factory.mktemp("eval-html")
    records = [
        {
            "id": "r1",
            "input": "How long to return?",
            "answer": "30 days.",
            "retrievalContext": ["Items can be returned within 30 days."],
        },
        {
            "id": PAYLOADS[1],
            "input": PAYLOADS[0],
            "answer": PAYLOADS[3],
            "retrievalContext": [PAYLOADS[4]],
            "tags": [PAYLOADS[2]],
        },
    ]
    (root / "d.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    result = CliRunner().invoke(cli, ["eval", str(root / "d.jsonl"), "--out", str(root / "o")])
    assert result.exit_code in (0, 1), result.output
    return root / "o" / "eval.html"


def test_eval_page_loads_sorts_and_executes_nothing(browser, eval_page):
    visit = Visit(browser, eval_page)
    page = visit.page
    assert page.inner_text("#verdict").startswith(("PASS:", "FAIL:"))
    header = page.locator("#records th").first
    header.click()
    assert header.get_attribute("aria-sort") == "ascending"
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator("img, svg[onload], [onerror], a[href^='javascript']").count() == 0
    assert PAYLOADS[0] in page.inner_text("#records")
    visit.check_clean()


@pytest.fixture(scope="module")
def hostile_pages_built(tmp_path_factory, hostile):
    return hostile_pages(tmp_path_factory.mktemp("xss-pages"), hostile)


@pytest.mark.parametrize("kind", ["fix", "compare", "bench"])
def test_report_pages_load_offline_sort_and_execute_nothing(browser, hostile_pages_built, kind):
    visit = Visit(browser, hostile_pages_built[kind])
    page = visit.page
    assert page.evaluate("typeof window.__pwned") == "undefined"
    hostile_nodes = (
        "img, iframe, svg[onload], [onerror], [onload], a, meta[http-equiv='refresh'], "
        "style:not(head style)"
    )
    assert page.locator(hostile_nodes).count() == 0 and page.locator("script").count() == 1
    text = page.inner_text("body")
    assert PAYLOADS[0] in text  # shown as text, not run
    header = page.locator("#report table.sortable thead th").first
    header.click()
    assert header.get_attribute("aria-sort") == "ascending"
    assert page.locator("section.plot svg").count() >= 1
    visit.check_clean()
