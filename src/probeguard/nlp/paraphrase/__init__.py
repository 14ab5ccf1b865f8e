"""Deterministic paraphrases of a question, for the retrieval-gap probe.

Five kinds, each a pure function ``f(question, rng) -> str | None`` that returns ``None`` when it
cannot change the question (so a paraphrase equal to the original is never emitted). Where a
rule has alternatives, ``rng`` (a seeded ``numpy.random.Generator``, one stream per question
and kind) picks one; nothing else is random.

- ``declarative``: the question as a request or statement ("How long is the warranty on a
  tent?" → "Tell me how long the warranty on a tent is."). A small rule-based inversion:
  find the wh-phrase (or, for a yes/no question, the leading auxiliary), then put the
  auxiliary back after the subject — *do* is dropped, *does*/*did* move their tense onto the
  main verb (found in a lexicon of common verbs), a copula goes before the first participle,
  predicate adjective or subordinate clause (else to the end), a modal before the main verb.
  When no main verb is found the question keeps its word order inside the request ("Tell me
  how much does it cost"): still a different query, still readable. A leading clause ("If I
  cancel, how long ...") is kept in front. The frame ("Tell me ...", "I need to know ...",
  ...) is chosen by ``rng``.
- ``keywords``: the content words only (``probeguard.nlp.text.STOPWORDS`` removed), in order, each
  once, original case kept ("How long is the warranty on a tent?" → "long warranty tent").
- ``question_word``: the asking wh-word rewritten (What↔Which, How many → What number of,
  When → At what time / In what year, Where → In which place, Who → Which person, ...). Only
  the wh-word that asks the question is rewritten, not a "when" inside a subordinate clause.
- ``synonym``: general-English synonyms from a table (``SYNONYMS``: buy → purchase,
  return → send back, cost → price, employee → staff member, begin → start, ...).
- ``jargon``: formal or technical register from a table (``JARGON``: refund →
  reimbursement, ship → dispatch, delete → erase, ...).

The tables and the rules' longer word lists (verbs, irregular forms, prepositions, ...) are
package data, one file per list in ``probeguard/nlp/data`` (``synonyms.tsv``, ``jargon.tsv``,
``verbs.txt``, ...; sources and licences in its README), read once through
``importlib.resources`` (``probeguard.nlp.wordlists``).

Substitution (``synonym``, ``jargon``) works on words: a table entry is a base form; regular
inflections (-s/-es/-ies, -ed, -ing) and a few irregular forms ("bought", "sent") are mapped
back to it, and the replacement is inflected the same way (on its head word, marked ``*`` in
the table when it is not the last: "send* back" → "sends back"). An entry keyed ``word/n``
applies only where the word reads as a noun (after a determiner, a possessive, a preposition,
an adjective ending in -al, or as a plural), ``word/v`` only elsewhere. Capitalised words inside
the sentence (names: "Kestrel Pro") and acronyms are never replaced; the first word keeps its
capital; "a"/"an" is fixed before a replaced word. Multi-word keys ("money back") match
exactly. Every table word of the question is replaced (the strongest lexical shift the table
allows); ``rng`` picks among a word's alternatives.

Next step — LLM paraphrases. When a scan has an LLM configured, a fifth source of variants is
an LLM asked to rewrite the question. ``Probe.generate`` must stay pure (no I/O), so the LLM
is not called here: the plan is a ``Paraphraser`` that the runner calls like any pipeline —
each request is a ``Case`` (the paraphrase prompt and the question) run against an LLM
"pipeline", so it goes through the runner's content-addressed cache, retries and run log —
and whose outputs the probe turns into variant cases of kind ``"llm"`` in a second
``generate`` pass. These rule-based kinds are the offline, byte-for-byte reproducible baseline.

Targeted rewordings (``targeted``): paraphrases aimed at the words retrieval depends on —
the question's words shared with the gold evidence, rarest first — reworded away from the
evidence (``targeted``) or into the evidence's own words (``evidence_wording``). They read the
evidence and the corpus, so they are not among ``KINDS``; the retrieval-gap probe asks them.

Modules: ``lexicon`` (word classes and tables), ``forms`` (inflection and case), ``inversion``
(``declarative``), ``rewrites`` (``keywords``, ``question_word``), ``substitution``
(``synonym``, ``jargon``), ``targeted`` (``targeted``, ``evidence_wording``); the public names are re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from probeguard.nlp.paraphrase.inversion import declarative
from probeguard.nlp.paraphrase.lexicon import JARGON, SYNONYMS
from probeguard.nlp.paraphrase.rewrites import keywords, question_word
from probeguard.nlp.paraphrase.substitution import jargon, substitute, substitute_with, synonym
from probeguard.nlp.paraphrase.targeted import (
    EVIDENCE_WORDING,
    TARGETED,
    CorpusIdf,
    anchor_terms,
    corpus_idf,
    evidence_wording,
    targeted,
)

__all__ = [
    "EVIDENCE_WORDING",
    "JARGON",
    "KINDS",
    "PARAPHRASERS",
    "Paraphrase",
    "SYNONYMS",
    "TARGETED",
    "CorpusIdf",
    "anchor_terms",
    "corpus_idf",
    "declarative",
    "evidence_wording",
    "jargon",
    "keywords",
    "paraphrase",
    "paraphrases",
    "question_word",
    "substitute",
    "substitute_with",
    "synonym",
    "targeted",
]

KINDS: tuple[str, ...] = ("declarative", "keywords", "question_word", "synonym", "jargon")
"""The deterministic paraphrase kinds, in the order the probe asks them."""


@dataclass(frozen=True)
class Paraphrase:
    """One paraphrase of a question and the rule that made it."""

    kind: str
    text: str


PARAPHRASERS: Mapping[str, Callable[[str, np.random.Generator], str | None]] = {
    "declarative": declarative,
    "keywords": keywords,
    "question_word": question_word,
    "synonym": synonym,
    "jargon": jargon,
}


def paraphrase(question: str, kind: str, rng: np.random.Generator) -> str | None:
    """One paraphrase of ``kind`` (see ``KINDS``), or None when the rule cannot change it."""
    try:
        fn = PARAPHRASERS[kind]
    except KeyError:
        raise ValueError(f"unknown paraphrase kind {kind!r}; known: {', '.join(KINDS)}") from None
    return fn(question, rng)


def paraphrases(
    question: str, rng_for: Callable[[str], np.random.Generator], kinds: Sequence[str] = KINDS
) -> list[Paraphrase]:
    """Every kind that changes ``question``, in ``kinds`` order; ``rng_for(kind)`` gives each
    kind its own stream (so adding a kind leaves the others' choices unchanged)."""
    out: list[Paraphrase] = []
    for kind in kinds:
        text = paraphrase(question, kind, rng_for(kind))
        if text is not None:
            out.append(Paraphrase(kind=kind, text=text))
    return out
