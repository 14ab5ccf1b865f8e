"""The render step's reports: ``report.md`` and ``report.html`` beside a run's ``run.json``.

Both are pure functions of the run log, plus the run's ``fix/fix.json`` when ``probeguard
fix`` has verified its fixes: then each top fix shows its verified before → after. A
``fix.json`` counts only when its header names the same pipeline fingerprint, corpus
fingerprint and seed as the run (a scan re-run into the same folder makes an old one stale);
an unreadable one is left out, never fatal to writing the reports.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from probeguard.core.io import atomic_write_text
from probeguard.reports.html import render_html
from probeguard.reports.markdown import render_markdown
from probeguard.results.fix import FixArtifact
from probeguard.results.run import RunLog

__all__ = ["FIX_DIR", "REPORT_HTML", "REPORT_MD", "load_verified", "write_reports"]

REPORT_MD = "report.md"
REPORT_HTML = "report.html"
FIX_DIR = "fix"
"""Where ``probeguard fix RUN_DIR`` writes ``fix.json`` by default."""


def load_verified(run: RunLog, out_dir: Path) -> FixArtifact | None:
    """``out_dir/fix/fix.json`` when it exists, parses and belongs to ``run`` (module doc)."""
    path = out_dir / FIX_DIR / "fix.json"
    try:
        artifact = FixArtifact.model_validate_json(path.read_bytes())
    except (OSError, ValidationError, ValueError):
        return None
    same = (
        artifact.pipeline_fingerprint == run.pipeline_fingerprint
        and artifact.corpus_fingerprint == run.corpus_fingerprint
        and artifact.seed == run.seed
    )
    return artifact if same else None


def write_reports(run: RunLog, out_dir: Path) -> tuple[Path, Path]:
    """Write ``report.md`` and ``report.html`` (atomically) into ``out_dir``."""
    verified = load_verified(run, out_dir)
    atomic_write_text(out_dir / REPORT_MD, render_markdown(run, verified))
    atomic_write_text(out_dir / REPORT_HTML, render_html(run, verified))
    return out_dir / REPORT_MD, out_dir / REPORT_HTML
