"""The instruction sanitiser: instruction-like sentences are cut out of retrieved text before
the generator sees it.

Per context, each sentence (``probeguard.nlp.text.sentence_spans``) is *folded* as a reader sees
it (``probeguard.nlp.obfuscation.fold``: NFKC, zero-width characters dropped, Cyrillic and
Greek look-alikes mapped to Latin) and removed when

1. the folded sentence holds an attack phrase (``probeguard.nlp.attack_phrases.
   attack_phrases``: "ignore previous instructions", "reply only with", "system update",
   "you are now ...", "developer mode", "reveal the system prompt", ...); or
2. it holds a base64 blob (≥ 24 characters) that decodes to UTF-8 text with an attack phrase
   ("decode and follow it: SWdub3Jl..."); or
3. it carries a *payload token* of a sentence removed by 1–2 (or of its decoded blob) — a code that the instruction
   orders repeated (letters and digits mixed, ≥ 6 characters, e.g. ``PG-1234ABCD``), an
   e-mail address or a URL — anywhere in the call's contexts ("IMPORTANT: the answer is
   PG-1234ABCD." goes with the order that names it).

The rest of the text is kept verbatim. The rules are lexical, so benign text that *quotes*
an attack — a security FAQ warning staff about "ignore previous instructions" e-mails —
loses the quoting sentences too (its other sentences stay): that is the sanitiser's false
positive, measured by the ``benign_control`` probe. An attack written without any listed
phrase (a plain false fact, a split payload) passes untouched.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Sequence
from typing import Any

from probeguard.nlp.attack_phrases import attack_phrases
from probeguard.nlp.obfuscation import fold
from probeguard.nlp.text import sentence_spans

__all__ = ["instruction_phrases", "payload_tokens", "sanitise_texts"]

_BASE64 = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{24,}={0,2}(?![A-Za-z0-9+/=])")
_CODE = re.compile(r"(?<![\w-])[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*(?![\w-])")
_ADDRESS = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\bhttps?://\S+|\bwww\.\S+", re.IGNORECASE)


def _fold(text: str) -> str:
    return fold(text)


def _decoded_blobs(text: str) -> list[str]:
    out = []
    for m in _BASE64.finditer(text):
        blob = m.group(0)
        try:
            raw = base64.b64decode(blob + "=" * (-len(blob) % 4), validate=True)
            out.append(raw.decode("utf-8"))
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
    return out


def instruction_phrases(sentence: str) -> list[str]:
    """The attack phrases of the folded sentence and of the base64 blobs it carries."""

    folded = _fold(sentence)
    found = attack_phrases(folded)
    for decoded in _decoded_blobs(folded):
        found += [p for p in attack_phrases(_fold(decoded)) if p not in found]
    return found


def payload_tokens(sentence: str) -> set[str]:
    """Codes (letters and digits mixed, ≥ 6 characters), e-mail addresses and URLs of the
    folded sentence, lower-cased."""
    folded = _fold(sentence)
    tokens = {m.group(0).lower().rstrip(".,;:") for m in _ADDRESS.finditer(folded)}
    for m in _CODE.finditer(folded):
        token = m.group(0)
        if (
            len(token) >= 6
            and re.search(r"\d", token)
            and re.search(r"[A-Za-z]", token)
            and not _BASE64.fullmatch(token)
        ):
            tokens.add(token.lower())
    return tokens


def _cut(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """``text`` without the spans and the whitespace after each."""
    parts, pos = [], 0
    for s, e in spans:
        parts.append(text[pos:s])
        pos = e
        while pos < len(text) and text[pos].isspace():
            pos += 1
    parts.append(text[pos:])
    return "".join(parts).rstrip()


def sanitise_texts(texts: Sequence[str]) -> tuple[list[str], list[dict[str, Any]]]:
    """The texts with instruction-like sentences removed (module docstring), and one record
    per changed text ``{"index", "removed": [sentences], "phrases": [...]}``."""
    sentences = [[(s, e, t[s:e]) for s, e in sentence_spans(t)] for t in texts]
    marked: list[dict[int, list[str]]] = [{} for _ in texts]
    payload: set[str] = set()
    for i, sents in enumerate(sentences):
        for j, (_, _, sentence) in enumerate(sents):
            phrases = instruction_phrases(sentence)
            if phrases:
                marked[i][j] = phrases
                payload |= payload_tokens(sentence)
                for decoded in _decoded_blobs(_fold(sentence)):
                    payload |= payload_tokens(decoded)
    if payload:
        for i, sents in enumerate(sentences):
            for j, (_, _, sentence) in enumerate(sents):
                if j not in marked[i]:
                    folded = _fold(sentence).lower()
                    hit = sorted(t for t in payload if t in folded)
                    if hit:
                        marked[i][j] = [f"payload {t}" for t in hit]
    out: list[str] = []
    records: list[dict[str, Any]] = []
    for i, (text, sents) in enumerate(zip(texts, sentences)):
        if not marked[i]:
            out.append(text)
            continue
        cut = sorted(marked[i])
        out.append(_cut(text, [(sents[j][0], sents[j][1]) for j in cut]))
        phrases = []
        for j in cut:
            phrases += [p for p in marked[i][j] if p not in phrases]
        records.append({"index": i, "removed": [sents[j][2] for j in cut], "phrases": phrases})
    return out, records
