"""The shell every HTML report shares: one self-contained page under a strict
Content-Security-Policy, with the inline CSS and the one inline script (``assets/``) and,
for a scan, the drill-down's data as a JSON block (``html_escape.script_json``)."""

from __future__ import annotations

from importlib.resources import files
from typing import Any

from probeguard.reports.html_escape import esc, script_hash, script_json

__all__ = ["csp", "html_page"]


def _asset(name: str) -> str:
    return (files("probeguard.reports") / "assets" / name).read_text(encoding="utf-8")


def csp(script: str) -> str:
    """The page's Content-Security-Policy: nothing may load; inline styles and SVG are
    allowed, and the one inline script by its hash."""
    return (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        f"script-src {script_hash(script)}; base-uri 'none'; form-action 'none'"
    )


def html_page(title: str, header: str, main: str, data: Any | None = None) -> str:
    """The whole page: ``header`` and ``main`` are HTML the caller escaped; ``data`` (when
    given) is embedded as ``<script type="application/json" id="pg-data">``."""
    script = _asset("report.js")
    block = (
        ""
        if data is None
        else f'<script type="application/json" id="pg-data">{script_json(data)}</script>'
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(csp(script))}">'
        '<meta name="referrer" content="no-referrer">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{_asset('report.css')}</style></head>"
        f"<body><header>{header}</header><main>{main}</main>{block}"
        f"<script>{script}</script></body></html>\n"
    )
