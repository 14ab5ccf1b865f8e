"""Every bench's report files: ``bench.md`` (the bench's own Markdown) and ``bench.html``
beside it (``reports.html_pages.bench_html``: the same tables, plus the bench's plots)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from probeguard.core.io import atomic_write_text
from probeguard.reports.html_pages import Plot, bench_html

__all__ = ["BENCH_HTML", "BENCH_MD", "write_bench_report"]

BENCH_MD = "bench.md"
BENCH_HTML = "bench.html"


def write_bench_report(out_dir: Path, markdown: str, plots: Sequence[Plot] = ()) -> None:
    """``bench.md`` and ``bench.html`` into ``out_dir`` (atomically)."""
    atomic_write_text(out_dir / BENCH_MD, markdown)
    atomic_write_text(out_dir / BENCH_HTML, bench_html(markdown, plots))
