"""Reply styles of ``dataset synth --rewrite llm``: what the rewriting model is asked and how
its reply is read, per style (``--reply-style``). Pure; the checks that follow are
``probeguard.dataset.synth_rewrite``'s.

**json** (for an instruction-following endpoint): the system text ``SYSTEM`` asks for one
JSON object ``{"question": "..."}``, the user text holds the template question and the
phrases it must keep (``Keep:``). The reply must be that object alone or inside one Markdown
code fence (``extra="forbid"``, strict types), its question one line.

**line** (for a small local model, e.g. the bundled 135M SmolLM2, which does not keep to a
JSON schema; as the judge's ``yesno`` style): the system text ``LINE_SYSTEM`` asks for the
question in other words and nothing else; the user text ``LINE_USER`` is the template question
followed by "Rewrite this as a short question." (no list of phrases to keep: the checks
enforce them). Chosen on 8 demo cases from five wordings: with the question alone, or after
"Paraphrase this question:", "Original question: ... The same question in other words:" or
"Ask this question in a different way", SmolLM2-135M answered the question or restated it as
a statement (0-2 of 8 replies were questions); this one gave questions for 5 of 8. The
rewrite is the first line of the reply that, once cleaned, ends with ``?``; or, when the
line is a quoted question (double or curly quotes, from the first opening quote to the last
closing one) with at most 40 characters of other text around it (``Rewrite this as "How
...?"``), that question. Cleaning, in
order: surrounding whitespace; Markdown emphasis (``*``, ``_``); a list marker (``-``,
``*``, ``•``, ``1.``, ``1)``); a label of letters and spaces ending in a colon that holds
"question", "rewrite", "rewritten", "paraphrase(d)" or "rephrase(d)" ("Question:",
"Rewritten question:", "Paraphrase:", "Rewrite this as:"); surrounding quotes (straight,
curly or backticks).

**Length bounds** (both styles): the question (whitespace collapsed) is non-empty and at most
``max(MAX_GROWTH × len(template), MIN_LIMIT)`` characters; in the line style it is also at
least ``MIN_SHARE × len(template)`` characters (a shorter "question" is a fragment, such as
"What was it?"). Anything else is None: the caller keeps the template with ``bad_reply``.
"""

from __future__ import annotations

import json
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

__all__ = [
    "LINE_SYSTEM",
    "LINE_USER",
    "MAX_GROWTH",
    "MIN_LIMIT",
    "MIN_SHARE",
    "REPLY_STYLES",
    "SYSTEM",
    "USER",
    "ReplyStyle",
    "parse_json_reply",
    "parse_line_reply",
    "parse_reply",
    "style_texts",
]

ReplyStyle = Literal["json", "line"]
REPLY_STYLES: tuple[ReplyStyle, ...] = ("json", "line")

SYSTEM = (
    "You rewrite one question so that it reads like a question a real person would ask. "
    "Keep its meaning exactly: the same facts, names, numbers and conditions. Do not answer "
    "it and do not add facts. Every phrase listed after 'Keep:' must appear in your question "
    'word for word. Reply with only a JSON object and no other text: {"question": "..."}'
)
USER = "Question: {question}\nKeep: {keep}"

LINE_SYSTEM = "Rewrite the question in other words. Reply with the question only."
LINE_USER = "{question}\nRewrite this as a short question."

MAX_GROWTH = 2.0
MIN_LIMIT = 200
MIN_SHARE = 1 / 4

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
_EMPHASIS = re.compile(r"^[*_]+|[*_]+$")
_LIST_MARKER = re.compile(r"^(?:[-*\u2022]|\d{1,2}[.)])\s+")
_LABEL = re.compile(
    r"^[A-Za-z ]{0,30}\b(?:question|rewrite|rewritten|paraphrased?|rephrased?)\b[A-Za-z ]{0,15}:\s*",
    re.IGNORECASE,
)
_QUOTES = "\"'`\u201c\u201d\u2018\u2019"
_QUOTED = re.compile(r"^[^\"\u201c{]{0,40}[\"\u201c](.+\?)[\"\u201d][^\"\u201d]{0,40}$")


class _Reply(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    question: str


def style_texts(style: ReplyStyle) -> tuple[str, str]:
    """(system text, user text with ``{question}``/``{keep}`` slots) of a reply style."""
    return (SYSTEM, USER) if style == "json" else (LINE_SYSTEM, LINE_USER)


def _bounded(question: str, template: str, min_share: float) -> str | None:
    question = " ".join(question.split())
    limit = max(MAX_GROWTH * len(template), MIN_LIMIT)
    if not question or len(question) > limit or len(question) < min_share * len(template):
        return None
    return question


def parse_json_reply(text: str, template: str) -> str | None:
    """The question of a ``json``-style reply, or None when it breaks the format."""
    fenced = _FENCE.search(text)
    body = (fenced.group(1) if fenced else text).strip()
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end < start:
        return None
    try:
        reply = _Reply.model_validate(json.loads(body[start : end + 1]))
    except (ValueError, ValidationError):
        return None
    if "\n" in reply.question.strip():
        return None
    return _bounded(reply.question, template, 0.0)


def _clean(line: str) -> str:
    line = _EMPHASIS.sub("", line.strip()).strip()
    line = _LIST_MARKER.sub("", line)
    line = _LABEL.sub("", line)
    return _EMPHASIS.sub("", line.strip()).strip().strip(_QUOTES).strip()


def parse_line_reply(text: str, template: str) -> str | None:
    """The first line of a ``line``-style reply that ends with ``?`` once cleaned (module
    docstring), within the length bounds; None when there is none."""
    for raw in text.splitlines():
        quoted = _QUOTED.match(raw.strip())
        line = _clean(quoted.group(1) if quoted else raw)
        if line.endswith("?"):
            return _bounded(line, template, MIN_SHARE)
    return None


def parse_reply(text: str, template: str, style: ReplyStyle = "json") -> str | None:
    """The rewritten question of a reply in ``style``, or None (``bad_reply``)."""
    if style == "line":
        return parse_line_reply(text, template)
    return parse_json_reply(text, template)
