"""Two light rewrites of a question's wording: ``keywords`` (its content words only) and
``question_word`` (the asking wh-word rewritten)."""

from __future__ import annotations

import re

import numpy as np

from probeguard.nlp.paraphrase.forms import match_case, same
from probeguard.nlp.paraphrase.inversion import opens_clause
from probeguard.nlp.paraphrase.lexicon import PREPOSITIONS, WH_WORDS
from probeguard.nlp.text import STOPWORDS

__all__ = ["keywords", "question_word"]

_KEYWORD = re.compile(r"[^\W_]+(?:[.,'’&/-][^\W_]+)*", re.UNICODE)


def keywords(question: str, rng: np.random.Generator | None = None) -> str | None:
    """The question's content words, in order, each once (case-insensitively), original case
    kept; None when nothing is left or nothing was removed. ``rng`` is unused (no choices)."""
    del rng
    seen: set[str] = set()
    kept: list[str] = []
    for match in _KEYWORD.finditer(question):
        word = match.group(0)
        low = word.lower()
        if low in STOPWORDS or low in seen:
            continue
        seen.add(low)
        kept.append(word)
    out = " ".join(kept)
    if not out or same(out, question):
        return None
    return out


# ---------------------------------------------------------------------------------------
# question_word
# ---------------------------------------------------------------------------------------

_WH_RULES: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (re.compile(r"\bin (what|which) year\b", re.I), ("when",)),
    (re.compile(r"\bhow many\b", re.I), ("what number of",)),
    (re.compile(r"\bhow much\b", re.I), ("what amount", "what sum")),
    (re.compile(r"\bhow long\b", re.I), ("for how long", "what length of time")),
    (re.compile(r"\bhow soon\b", re.I), ("how quickly", "after how long")),
    (re.compile(r"\bhow often\b", re.I), ("how frequently",)),
    (re.compile(r"\bwhen\b", re.I), ("at what time", "in what year")),
    (re.compile(r"\bwhere\b", re.I), ("in which place", "in what location")),
    (re.compile(r"\bwhom\b", re.I), ("which person",)),
    (re.compile(r"\bwho\b", re.I), ("which person",)),
    (re.compile(r"\bwhy\b", re.I), ("for what reason",)),
    (re.compile(r"\bwhich\b", re.I), ("what",)),
    (
        re.compile(
            r"\bwhat(?= (?!(?:is|are|was|were|do|does|did|can|could|will|would|should|"
            r"shall|may|might|must|has|have|had)\b)[a-z])",
            re.I,
        ),
        ("which",),
    ),
)


def _asking_wh_offset(question: str) -> int | None:
    """Character offset of the wh-word that asks the question: the one after a leading
    clause's comma ("If I cancel, how long ..."), else the first one preceded only by
    prepositions ("In which city ..."), else the first one anywhere."""
    matches = list(re.finditer(r"\b[\w']+\b", question))
    words = [m.group(0).lower() for m in matches]
    for i, m in enumerate(matches):
        if (
            words[i] in WH_WORDS
            and i > 0
            and question[: m.start()].rstrip().endswith(",")
            and opens_clause(words[:2])
        ):
            return m.start()
    for i, m in enumerate(matches):
        if words[i] in WH_WORDS:
            if all(w in PREPOSITIONS for w in words[:i]):
                return m.start()
            break
    for i, m in enumerate(matches):
        if words[i] in WH_WORDS:
            return m.start()
    return None


def question_word(question: str, rng: np.random.Generator) -> str | None:
    """The asking wh-word rewritten by one applicable rule (chosen by ``rng`` when several
    apply); None when the question has no wh-word any rule rewrites."""
    at = _asking_wh_offset(question)
    if at is None:
        return None
    # Rules may start just before the wh-word ("in what year"): look from the word before it.
    window_start = max(0, question.rfind(" ", 0, max(0, at - 1)) + 1) if at > 0 else 0
    options: list[tuple[int, int, str]] = []
    for pattern, alternatives in _WH_RULES:
        m = pattern.search(question, window_start)
        if m is None or not (m.start() <= at < m.end() or m.start() == at):
            continue
        for alt in alternatives:
            options.append((m.start(), m.end(), alt))
        if options:
            break  # rules are ordered most specific first
    if not options:
        return None
    start, end, alt = options[int(rng.integers(len(options)))]
    replaced = match_case(question[start:end], alt)
    out = question[:start] + replaced + question[end:]
    return None if same(out, question) else out
