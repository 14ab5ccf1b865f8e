"""The project's own Markdown reports (``fix.md``, ``comparison.md``, ``compare.md``,
``bench.md``) as HTML, so each ``.html`` page shows exactly the tables its ``.md`` shows and
no table is built twice.

Only the subset our renderers write is read (CommonMark 0.31 names): ATX headings (``#`` to
``####``), pipe tables (header row, ``|---|`` rule, body rows; cells split on ``|`` not
preceded by a backslash), fenced code blocks (a run of three or more backticks closes only on
a run at least as long), ``- `` list items, and paragraphs. Inline: backslash escapes of
ASCII punctuation are undone, `` `code` `` spans, ``**strong**`` and the line break
``<br>`` (a cell of ``fix.md`` lists one probe per line) kept; every other character is text
(untrusted text reaches the Markdown through ``escape.md_inline``, so its ``<`` arrives
escaped and is never read as a tag). Links, images and other raw HTML are never produced:
their characters are written as text through ``html_escape.esc``, so an untrusted
``<script>`` or ``[x](javascript:…)`` in a report stays inert.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from probeguard.reports.html_escape import esc

__all__ = ["TableHook", "markdown_html", "markdown_inline_html", "plain_text", "split_row"]

_HEADING = re.compile(r"^(#{1,4}) (.*)$")
_FENCE = re.compile(r"^(`{3,})(.*)$")
_RULE = re.compile(r"^\|(\s*:?-{3,}:?\s*\|)+\s*$")
_UNESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_INLINE = re.compile(r"(`+)(.+?)\1|\*\*(.+?)\*\*|(<br>)")


def plain_text(raw: str) -> str:
    """One line of Markdown as plain text: backslash escapes undone (not HTML-escaped)."""
    return _UNESCAPE.sub(r"\1", raw)


def _text(raw: str) -> str:
    return esc(plain_text(raw))


def markdown_inline_html(raw: str) -> str:
    """One line of Markdown as escaped HTML: code spans, ``**strong**``, ``<br>`` and
    backslash escapes (module doc); a backslash-escaped backtick, star or ``<`` opens
    nothing."""
    out: list[str] = []
    pos = 0
    for match in _INLINE.finditer(raw):
        start = match.start()
        if _escaped(raw, start):
            continue
        out.append(_text(raw[pos:start]))
        if match.group(4):
            out.append("<br>")
        elif match.group(1):
            out.append(f"<code>{esc(match.group(2).strip())}</code>")
        else:
            out.append(f"<strong>{markdown_inline_html(match.group(3))}</strong>")
        pos = match.end()
    out.append(_text(raw[pos:]))
    return "".join(out)


def _escaped(raw: str, index: int) -> bool:
    """Whether the character at ``index`` follows an odd run of backslashes."""
    run = 0
    while index - run - 1 >= 0 and raw[index - run - 1] == "\\":
        run += 1
    return run % 2 == 1


def split_row(line: str) -> list[str]:
    """A pipe-table row's cells (raw Markdown), split on unescaped ``|``."""
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    if body.endswith("|") and not _escaped(body, len(body) - 1):
        body = body[:-1]
    cells, current = [], ""
    for i, char in enumerate(body):
        if char == "|" and not _escaped(body, i):
            cells.append(current)
            current = ""
        else:
            current += char
    cells.append(current)
    return [c.strip() for c in cells]


TableHook = Callable[[list[str], list[list[str]]], str]
"""Called with a table's header cells and body rows (raw Markdown cells); its HTML is written
right after the table (a plot of the table's rates, say)."""


def _table(lines: list[str], after: TableHook | None) -> str:
    head, body = split_row(lines[0]), [split_row(r) for r in lines[2:]]
    heads = "".join(f"<th>{markdown_inline_html(c)}</th>" for c in head)
    rows = "".join(
        "<tr>" + "".join(f"<td>{markdown_inline_html(c)}</td>" for c in r) + "</tr>" for r in body
    )
    table = f'<table class="sortable"><thead><tr>{heads}</tr></thead><tbody>{rows}</tbody></table>'
    return table + (after(head, body) if after is not None else "")


def _code(lines: list[str]) -> str:
    return f'<div class="code"><pre>{esc(chr(10).join(lines))}</pre></div>'


def _blocks(lines: list[str], after: TableHook | None) -> Iterator[str]:
    """Each block's HTML in order (rules in the module doc)."""
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            closing = re.compile(rf"^`{{{len(fence.group(1))},}}\s*$")
            end = next((j for j in range(i + 1, len(lines)) if closing.match(lines[j])), None)
            stop = len(lines) if end is None else end
            yield _code(lines[i + 1 : stop])
            i = stop + 1
        elif line.startswith("|") and i + 1 < len(lines) and _RULE.match(lines[i + 1].strip()):
            j = i + 2
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            yield _table(lines[i:j], after)
            i = j
        elif heading := _HEADING.match(line):
            level = len(heading.group(1))
            yield f"<h{level}>{markdown_inline_html(heading.group(2))}</h{level}>"
            i += 1
        elif line.startswith("- "):
            j = i
            while j < len(lines) and lines[j].startswith("- "):
                j += 1
            items = "".join(f"<li>{markdown_inline_html(x[2:])}</li>" for x in lines[i:j])
            yield f"<ul>{items}</ul>"
            i = j
        elif line.strip():
            j = i
            while j < len(lines) and _plain(lines[j]):
                j += 1
            j = max(j, i + 1)
            yield f"<p>{markdown_inline_html(' '.join(x.strip() for x in lines[i:j]))}</p>"
            i = j
        else:
            i += 1


def _plain(line: str) -> bool:
    """A paragraph line: not blank and not the start of another block."""
    return bool(
        line.strip() and not line.startswith(("|", "- ", "```")) and not _HEADING.match(line)
    )


def markdown_html(markdown: str, after_table: TableHook | None = None) -> str:
    """The whole Markdown text as HTML blocks (module doc); ``after_table`` adds HTML after
    each table."""
    return "".join(_blocks(markdown.splitlines(), after_table))
