"""The ``declarative`` paraphrase: the question as a request or statement ("How long is the
warranty on a tent?" → "Tell me how long the warranty on a tent is."), by a small rule-based
inversion (rules in ``probeguard.nlp.paraphrase``'s docstring)."""

from __future__ import annotations

import re

import numpy as np

from probeguard.nlp.paraphrase.forms import (
    is_participle,
    lower_first,
    past,
    same,
    strip_punct,
    third_person,
)
from probeguard.nlp.paraphrase.lexicon import (
    AUX_BE,
    AUX_DO,
    AUXILIARIES,
    DETERMINERS,
    NOUN_ADJECTIVES,
    PREDICATE_ADJECTIVES,
    PREPOSITIONS,
    RELATIVES,
    SUBORDINATORS,
    VERB_BASES,
    WH_WORDS,
)

__all__ = ["declarative", "opens_clause"]

_FRAMES = ("Tell me {}.", "I need to know {}.", "I would like to know {}.", "Please tell me {}.")
_ALREADY_DECLARATIVE = re.compile(
    r"^\s*(tell me|i need to know|i would like to know|please|"
    r"i want to know|explain)\b",
    re.IGNORECASE,
)


def opens_clause(first_words: list[str]) -> bool:
    """Whether a question starting with these words opens with a subordinate clause rather
    than with its asking word: "If I ...", "Under the ...", or "When I ..." (a wh-word not
    followed by an auxiliary), but not "When is ..." or "Can I ..."."""
    first = first_words[0] if first_words else ""
    second = first_words[1] if len(first_words) > 1 else ""
    if first in AUXILIARIES:
        return False
    if first in WH_WORDS:
        return first in ("when", "where") and second not in AUXILIARIES
    return True


def _split_leading_clause(tokens: list[str]) -> tuple[list[str], list[str]]:
    """(prefix, main): a leading clause ending in a comma that is followed by the asking
    wh-word or auxiliary ("If I cancel, how long ..."); else no prefix."""
    for i, tok in enumerate(tokens[:-1]):
        if tok.endswith(",") and i > 0:
            nxt = strip_punct(tokens[i + 1])
            if (nxt in WH_WORDS or nxt in AUXILIARIES) and opens_clause(
                [strip_punct(t) for t in tokens[:2]]
            ):
                return tokens[: i + 1], tokens[i + 1 :]
    return [], tokens


def _find_verb(rest: list[str], start: int = 1) -> int | None:
    """Index of the main verb in ``rest`` (subject first, so from ``start``): the first word of
    the verb lexicon that does not follow a determiner (a determiner makes it a noun: "the
    return shipping cost")."""
    for i in range(start, len(rest)):
        word = strip_punct(rest[i])
        prev = strip_punct(rest[i - 1]) if i > 0 else ""
        if word in VERB_BASES and prev not in DETERMINERS and not prev.endswith(("'s", "’s")):
            return i
    return None


def _copula_position(rest: list[str]) -> int:
    """Where a copula goes back in the subject-first clause: before the first participle,
    predicate adjective or subordinator that ends the subject; else at the end."""
    for i in range(1, len(rest)):
        word = strip_punct(rest[i])
        prev_raw = rest[i - 1]
        prev = strip_punct(prev_raw)
        if word in SUBORDINATORS or prev_raw.endswith(","):
            return i
        if prev in DETERMINERS or prev in PREPOSITIONS or prev in RELATIVES:
            continue
        if prev.endswith("ing") or is_participle(prev):
            continue
        if is_participle(word) or word in PREDICATE_ADJECTIVES:
            return i
    return len(rest)


def _embedded(main: list[str]) -> list[str] | None:
    """The question ``main`` (tokens, no "?") as an embedded clause, or None when it is
    neither a wh-question nor a yes/no question."""
    words = [strip_punct(t) for t in main]
    wh = next((i for i, w in enumerate(words) if w in WH_WORDS), None)
    if wh is not None and all(w in PREPOSITIONS for w in words[:wh]):
        # The wh-phrase runs to the first auxiliary, unless a finite verb comes first (the
        # wh-phrase is then the subject: "Which company bought X").
        aux = None
        for i in range(wh + 1, min(len(words), wh + 8)):
            if words[i] in AUXILIARIES:
                aux = i
                break
            prev = words[i - 1]
            nounish = (
                i > wh + 1
                and prev not in DETERMINERS
                and prev not in PREPOSITIONS
                and prev not in WH_WORDS
                and prev not in NOUN_ADJECTIVES
            )
            if nounish and (
                is_participle(words[i]) or (words[i].endswith("s") and words[i][:-1] in VERB_BASES)
            ):
                break  # a finite verb: the wh-phrase is the subject ("Which firm bought X")
        if aux is None:
            return list(main)
        head, aux_tok, rest = list(main[:aux]), main[aux], list(main[aux + 1 :])
        connector: list[str] = []
    elif words and words[0] in AUXILIARIES and len(words) > 1:
        head, aux_tok, rest = [], main[0], list(main[1:])
        connector = ["whether"]
    else:
        return None
    aux_word = strip_punct(aux_tok)
    if not rest:
        return None
    if aux_word == "do":
        clause = rest  # "do I have" → "I have": the base verb already agrees
    elif aux_word in AUX_DO:
        verb_at = _find_verb(rest)
        if verb_at is None:
            return head + [aux_tok] + rest if head else None
        base = strip_punct(rest[verb_at])
        form = third_person(base) if aux_word == "does" else past(base)
        if form is None:
            return head + [aux_tok] + rest if head else None
        inflected = rest[verb_at].lower().replace(base, form, 1)
        clause = rest[:verb_at] + [inflected] + rest[verb_at + 1 :]
    elif aux_word in AUX_BE:
        if is_participle(strip_punct(rest[0])) or strip_punct(rest[0]) in PREDICATE_ADJECTIVES:
            clause = [aux_tok.lower()] + rest  # the wh-phrase is the subject: no inversion
        else:
            at = _copula_position(rest)
            clause = rest[:at] + [aux_tok.lower()] + rest[at:]
    else:
        verb_at = _find_verb(rest)
        if verb_at is None:
            for i in range(1, len(rest)):
                if is_participle(strip_punct(rest[i])) or strip_punct(rest[i]) in ("be", "been"):
                    verb_at = i
                    break
        if verb_at is None:
            return head + [aux_tok] + rest if head else None
        clause = rest[:verb_at] + [aux_tok.lower()] + rest[verb_at:]
    return connector + head + clause


def declarative(question: str, rng: np.random.Generator) -> str | None:
    """The question as a request ("Tell me how long the warranty on a tent is."); None when it
    already is one, or is empty. See the module docstring for the rules."""
    text = question.strip()
    if not text or _ALREADY_DECLARATIVE.match(text):
        return None
    body = text.rstrip("?!. ").strip()
    tokens = body.split()
    if not tokens:
        return None
    prefix, main = _split_leading_clause(tokens)
    clause = _embedded(main)
    frame = _FRAMES[int(rng.integers(len(_FRAMES)))]
    if clause is None:
        if prefix:
            return None
        out = f"Tell me about {lower_first(body)}."
    else:
        if clause and strip_punct(clause[0]) in (
            WH_WORDS | AUXILIARIES | {"whether"} | PREPOSITIONS
        ):
            clause = [clause[0].lower()] + clause[1:]
        sentence = frame.format(" ".join(clause))
        if prefix:
            sentence = " ".join(prefix) + " " + lower_first(sentence)
        out = sentence
    return None if same(out, question) else out
