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
- ``synonym``: general-English synonyms from a built-in table (``SYNONYMS``: buy → purchase,
  return → send back, cost → price, employee → staff member, begin → start, ...).
- ``jargon``: formal or technical register from a built-in table (``JARGON``: refund →
  reimbursement, ship → dispatch, delete → erase, ...).

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
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from probeguard.nlp.text import STOPWORDS

__all__ = [
    "JARGON",
    "KINDS",
    "PARAPHRASERS",
    "Paraphrase",
    "SYNONYMS",
    "declarative",
    "jargon",
    "keywords",
    "paraphrase",
    "paraphrases",
    "question_word",
    "substitute",
    "synonym",
]

KINDS: tuple[str, ...] = ("declarative", "keywords", "question_word", "synonym", "jargon")
"""The deterministic paraphrase kinds, in the order the probe asks them."""


@dataclass(frozen=True)
class Paraphrase:
    """One paraphrase of a question and the rule that made it."""

    kind: str
    text: str


# ---------------------------------------------------------------------------------------
# Word classes shared by the rules
# ---------------------------------------------------------------------------------------

WH_WORDS = frozenset({"what", "which", "who", "whom", "whose", "when", "where", "why", "how"})
AUX_DO = frozenset({"do", "does", "did"})
AUX_BE = frozenset({"is", "are", "was", "were"})
AUX_MODAL = frozenset(
    {
        "can",
        "could",
        "will",
        "would",
        "should",
        "shall",
        "may",
        "might",
        "must",
        "has",
        "have",
        "had",
    }
)
AUXILIARIES = AUX_DO | AUX_BE | AUX_MODAL
PREPOSITIONS = frozenset(
    {
        "in",
        "on",
        "at",
        "from",
        "to",
        "for",
        "by",
        "with",
        "within",
        "under",
        "during",
        "since",
        "until",
        "after",
        "before",
        "of",
        "about",
        "over",
        "into",
        "through",
        "without",
        "per",
        "between",
        "across",
        "upon",
    }
)
DETERMINERS = frozenset(
    {
        "a",
        "an",
        "the",
        "my",
        "your",
        "his",
        "her",
        "its",
        "our",
        "their",
        "this",
        "that",
        "these",
        "those",
        "each",
        "every",
        "any",
        "some",
        "no",
        "whose",
        "which",
        "what",
        "another",
        "either",
        "neither",
        "one",
    }
)
SUBORDINATORS = frozenset(
    {
        "if",
        "when",
        "unless",
        "because",
        "once",
        "while",
        "although",
        "though",
        "whereas",
        "after",
        "before",
        "so",
        "until",
        "whenever",
    }
)
RELATIVES = frozenset({"that", "which", "who", "whom", "whose"})
SUBJECT_PRONOUNS = frozenset({"he", "she", "it", "who", "that", "which", "this", "one"})
NOUN_ADJECTIVES = frozenset(
    {
        "paid",
        "unpaid",
        "sick",
        "full",
        "partial",
        "late",
        "free",
        "new",
        "old",
        "extra",
        "standard",
        "monthly",
        "yearly",
        "weekly",
        "daily",
        "first",
        "last",
        "next",
        "same",
        "other",
        "own",
        "whole",
    }
)

VERB_BASES = frozenset(
    """
accept affect allow apply approve arrive ask be become begin belong book borrow bring build buy
call cancel cause change charge check choose claim close collect come contact contain cost cover
create cut delete deliver depend design die differ do drop earn email end exchange expect expire
fall find fix flow fly follow forward found get give go handle happen have hear help hire hold
include inspect invent issue join keep know last lead leave lend let lie live lose make manufacture
marry matter mean meet move need offer open owe own pay phone pick plant print process produce
protect provide publish put reach read receive refund register remain remove renew rent repair
replace report request require return review run say see sell send set share ship show sign spend
start stay stop store support take tell text travel try turn upgrade use visit want win work write
""".split()
)

_PAST = {
    "be": "was",
    "become": "became",
    "begin": "began",
    "bring": "brought",
    "build": "built",
    "buy": "bought",
    "choose": "chose",
    "come": "came",
    "cut": "cut",
    "do": "did",
    "fall": "fell",
    "find": "found",
    "fly": "flew",
    "get": "got",
    "give": "gave",
    "go": "went",
    "have": "had",
    "hear": "heard",
    "hold": "held",
    "keep": "kept",
    "know": "knew",
    "lead": "led",
    "leave": "left",
    "lend": "lent",
    "let": "let",
    "lie": "lay",
    "lose": "lost",
    "make": "made",
    "mean": "meant",
    "meet": "met",
    "pay": "paid",
    "put": "put",
    "repay": "repaid",
    "read": "read",
    "run": "ran",
    "say": "said",
    "see": "saw",
    "sell": "sold",
    "send": "sent",
    "set": "set",
    "shut": "shut",
    "spend": "spent",
    "stand": "stood",
    "take": "took",
    "tell": "told",
    "win": "won",
    "write": "wrote",
}
"""Simple past of irregular verbs (for "did X <verb>" → "X <past>")."""

_PARTICIPLE_SAME_AS_PAST = frozenset(
    {
        "bring",
        "build",
        "buy",
        "cut",
        "find",
        "have",
        "hear",
        "hold",
        "keep",
        "lead",
        "leave",
        "lend",
        "let",
        "lose",
        "make",
        "mean",
        "meet",
        "pay",
        "put",
        "repay",
        "read",
        "say",
        "sell",
        "send",
        "set",
        "shut",
        "spend",
        "stand",
        "tell",
        "win",
    }
)
"""Irregular verbs whose past equals their past participle: an "-ed" surface form can be
re-inflected onto them without knowing which of the two it was."""

_IRREGULAR_PARTICIPLES = frozenset(
    {
        "born",
        "made",
        "given",
        "paid",
        "sent",
        "kept",
        "known",
        "built",
        "held",
        "taken",
        "done",
        "seen",
        "shown",
        "told",
        "sold",
        "bought",
        "found",
        "brought",
        "won",
        "written",
        "chosen",
        "lost",
        "spent",
        "left",
        "worn",
        "broken",
        "hidden",
        "gone",
        "become",
        "begun",
        "met",
        "stolen",
        "thrown",
        "drawn",
        "grown",
        "led",
        "set",
        "put",
        "cut",
        "run",
        "read",
        "let",
    }
)
_PREDICATE_ADJECTIVES = frozenset(
    {
        "open",
        "closed",
        "available",
        "eligible",
        "due",
        "valid",
        "free",
        "allowed",
        "required",
        "responsible",
        "liable",
        "able",
        "unable",
        "possible",
        "necessary",
        "refundable",
        "entitled",
        "subject",
        "located",
        "based",
        "situated",
        "different",
        "similar",
        "true",
        "correct",
        "likely",
        "ready",
        "late",
        "early",
        "older",
        "younger",
        "larger",
        "smaller",
        "cheaper",
        "better",
        "worse",
        "higher",
        "lower",
        "longer",
        "shorter",
        "named",
        "called",
    }
)
_NOT_PARTICIPLES = frozenset(
    {
        "need",
        "speed",
        "hundred",
        "indeed",
        "embed",
        "exceed",
        "proceed",
        "succeed",
        "breed",
        "greed",
        "seed",
        "shed",
        "feed",
        "bred",
        "sacred",
        "kindred",
        "naked",
        "wicked",
        "hatred",
    }
)

_DOUBLE_FINAL = frozenset(
    {
        "permit",
        "refer",
        "prefer",
        "admit",
        "commit",
        "occur",
        "transfer",
        "omit",
        "submit",
        "regret",
        "control",
        "equip",
        "compel",
        "expel",
        "remit",
        "rebut",
        "abet",
        "forget",
    }
)
_VOWELS = frozenset("aeiou")


def _strip_punct(token: str) -> str:
    return token.strip(".,;:!?\"'()[]{}“”‘’").lower()


def _third_person(verb: str) -> str:
    """3rd person singular present: have → has, go → goes, try → tries, cost → costs."""
    irregular = {"have": "has", "do": "does", "go": "goes", "be": "is"}
    if verb in irregular:
        return irregular[verb]
    return _add_s(verb)


def _add_s(word: str) -> str:
    """Plural / 3rd-person -s: box → boxes, policy → policies, day → days."""
    if word.endswith(("s", "sh", "ch", "x", "z", "o")) and not word.endswith(("oo", "eo")):
        return word + "es"
    if len(word) > 1 and word.endswith("y") and word[-2] not in _VOWELS:
        return word[:-1] + "ies"
    return word + "s"


def _doubles(word: str) -> bool:
    """Whether the final consonant doubles before -ed/-ing (ship → shipped, permit →
    permitted): one-syllable consonant-vowel-consonant words and a list of stress-final
    verbs."""
    if word in _DOUBLE_FINAL:
        return True
    if len(word) > 4 or len(word) < 3 or not word.isalpha():
        return False
    c1, v, c2 = word[-3], word[-2], word[-1]
    groups = len(re.findall(r"[aeiou]+", word))
    return (
        c1 not in _VOWELS and v in _VOWELS and c2 not in _VOWELS and c2 not in "wxy" and groups == 1
    )


def _past(verb: str) -> str | None:
    """Simple past (for "did"): irregular table, else regular -ed spelling rules."""
    if verb in _PAST:
        return _PAST[verb]
    return _regular_ed(verb)


def _regular_ed(verb: str) -> str:
    if verb.endswith("e"):
        return verb + "d"
    if len(verb) > 1 and verb.endswith("y") and verb[-2] not in _VOWELS:
        return verb[:-1] + "ied"
    if _doubles(verb):
        return verb + verb[-1] + "ed"
    return verb + "ed"


def _past_or_participle(verb: str) -> str | None:
    """The -ed form standing for either simple past or past participle; None for irregular
    verbs whose two forms differ (give: gave/given), where the choice would be a guess."""
    if verb in _PAST:
        return _PAST[verb] if verb in _PARTICIPLE_SAME_AS_PAST else None
    return _regular_ed(verb)


def _ing(verb: str) -> str:
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and not verb.endswith(("ee", "ye", "oe")) and len(verb) > 2:
        return verb[:-1] + "ing"
    if _doubles(verb):
        return verb + verb[-1] + "ing"
    return verb + "ing"


def _is_participle(word: str) -> bool:
    if word in _IRREGULAR_PARTICIPLES:
        return True
    return len(word) > 4 and word.endswith("ed") and word not in _NOT_PARTICIPLES


def _match_case(template: str, word: str) -> str:
    """``word`` with the capitalisation of ``template``'s first letter."""
    if template[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


# ---------------------------------------------------------------------------------------
# declarative
# ---------------------------------------------------------------------------------------

_FRAMES = ("Tell me {}.", "I need to know {}.", "I would like to know {}.", "Please tell me {}.")
_ALREADY_DECLARATIVE = re.compile(
    r"^\s*(tell me|i need to know|i would like to know|please|"
    r"i want to know|explain)\b",
    re.IGNORECASE,
)


def _opens_clause(first_words: list[str]) -> bool:
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
            nxt = _strip_punct(tokens[i + 1])
            if (nxt in WH_WORDS or nxt in AUXILIARIES) and _opens_clause(
                [_strip_punct(t) for t in tokens[:2]]
            ):
                return tokens[: i + 1], tokens[i + 1 :]
    return [], tokens


def _find_verb(rest: list[str], start: int = 1) -> int | None:
    """Index of the main verb in ``rest`` (subject first, so from ``start``): the first word of
    the verb lexicon that does not follow a determiner (a determiner makes it a noun: "the
    return shipping cost")."""
    for i in range(start, len(rest)):
        word = _strip_punct(rest[i])
        prev = _strip_punct(rest[i - 1]) if i > 0 else ""
        if word in VERB_BASES and prev not in DETERMINERS and not prev.endswith(("'s", "’s")):
            return i
    return None


def _copula_position(rest: list[str]) -> int:
    """Where a copula goes back in the subject-first clause: before the first participle,
    predicate adjective or subordinator that ends the subject; else at the end."""
    for i in range(1, len(rest)):
        word = _strip_punct(rest[i])
        prev_raw = rest[i - 1]
        prev = _strip_punct(prev_raw)
        if word in SUBORDINATORS or prev_raw.endswith(","):
            return i
        if prev in DETERMINERS or prev in PREPOSITIONS or prev in RELATIVES:
            continue
        if prev.endswith("ing") or _is_participle(prev):
            continue
        if _is_participle(word) or word in _PREDICATE_ADJECTIVES:
            return i
    return len(rest)


def _embedded(main: list[str]) -> list[str] | None:
    """The question ``main`` (tokens, no "?") as an embedded clause, or None when it is
    neither a wh-question nor a yes/no question."""
    words = [_strip_punct(t) for t in main]
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
                _is_participle(words[i]) or (words[i].endswith("s") and words[i][:-1] in VERB_BASES)
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
    aux_word = _strip_punct(aux_tok)
    if not rest:
        return None
    if aux_word == "do":
        clause = rest  # "do I have" → "I have": the base verb already agrees
    elif aux_word in AUX_DO:
        verb_at = _find_verb(rest)
        if verb_at is None:
            return head + [aux_tok] + rest if head else None
        base = _strip_punct(rest[verb_at])
        form = _third_person(base) if aux_word == "does" else _past(base)
        if form is None:
            return head + [aux_tok] + rest if head else None
        inflected = rest[verb_at].lower().replace(base, form, 1)
        clause = rest[:verb_at] + [inflected] + rest[verb_at + 1 :]
    elif aux_word in AUX_BE:
        if _is_participle(_strip_punct(rest[0])) or _strip_punct(rest[0]) in _PREDICATE_ADJECTIVES:
            clause = [aux_tok.lower()] + rest  # the wh-phrase is the subject: no inversion
        else:
            at = _copula_position(rest)
            clause = rest[:at] + [aux_tok.lower()] + rest[at:]
    else:
        verb_at = _find_verb(rest)
        if verb_at is None:
            for i in range(1, len(rest)):
                if _is_participle(_strip_punct(rest[i])) or _strip_punct(rest[i]) in ("be", "been"):
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
        out = f"Tell me about {_lower_first(body)}."
    else:
        if clause and _strip_punct(clause[0]) in (
            WH_WORDS | AUXILIARIES | {"whether"} | PREPOSITIONS
        ):
            clause = [clause[0].lower()] + clause[1:]
        sentence = frame.format(" ".join(clause))
        if prefix:
            sentence = " ".join(prefix) + " " + _lower_first(sentence)
        out = sentence
    return None if _same(out, question) else out


def _lower_first(text: str) -> str:
    first = text.split(" ", 1)[0]
    if first == "I" or (first.isupper() and len(first) > 1):  # "I" and acronyms keep case
        return text
    return text[:1].lower() + text[1:]


def _same(a: str, b: str) -> bool:
    return " ".join(a.lower().split()).rstrip("?.!") == " ".join(b.lower().split()).rstrip("?.!")


# ---------------------------------------------------------------------------------------
# keywords
# ---------------------------------------------------------------------------------------

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
    if not out or _same(out, question):
        return None
    return out


# ---------------------------------------------------------------------------------------
# question_word
# ---------------------------------------------------------------------------------------

_AUX_AFTER = AUXILIARIES | {"'s", "’s"}
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
            and _opens_clause(words[:2])
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
    replaced = _match_case(question[start:end], alt)
    out = question[:start] + replaced + question[end:]
    return None if _same(out, question) else out


# ---------------------------------------------------------------------------------------
# synonym and jargon substitution
# ---------------------------------------------------------------------------------------

SYNONYMS_TEXT = """
# general English. key: alternatives. word/n = only as a noun, word/v = only elsewhere.
# '*' marks the word that takes the inflection in a multi-word alternative.
buy: purchase
purchase: buy
bought: purchased
return/v: send* back, give* back
return/n: returned item
cost/n: price, charge
price: cost
employee: staff member, worker
worker: employee
staff: employees, workers
begin: start
start: begin
commence: start
item: product, article
product: item, article
goods: products, items
order/n: purchase
customer: client, shopper
client: customer
shopper: customer
money: funds, cash
cash: money
refund/n: repayment
refund/v: repay, pay* back
money back: refund
send back: return
give back: return
fee: charge, cost
charge/n: fee, cost
charge/v: bill
deliver: bring, send
delivery: shipping, arrival
ship: send
shipping: delivery
shipment: delivery, consignment
send: mail
get: receive, obtain
receive: get
obtain: get
need: require
require: need
required: needed, necessary
necessary: needed
want: wish
help: assist, aid
assist: help
delete: remove, erase
remove: delete
cancel: call* off, end
end/v: finish, close
end/n: close, finish
finish: complete, end
close: shut
shut: close
big: large
large: big
small: little
little: small
quick: fast
fast: quick
quickly: rapidly, fast
soon: quickly
often: frequently
frequently: often
usually: typically, normally
typically: usually
allow: permit
allowed: permitted
allowing: permitting
permit/v: allow
permitted: allowed
cheap: inexpensive
inexpensive: cheap
expensive: costly, pricey
costly: expensive
for free: at no cost, free of charge
free: complimentary
claim for: request, ask for
damaged: broken, faulty
broken: damaged, faulty
faulty: defective
defective: faulty
problem: issue, fault
issue/n: problem
issue/v: grant, give* out
mistake: error
error: mistake
fix: repair
repair: fix
replace: swap
check: verify, inspect
checked: verified, inspected
inspect: examine, check
examine: inspect
keep: retain, hold* on to
retain: keep
store/n: shop
store/v: keep
shop/n: store
phone: telephone
telephone: phone
call/v: phone, ring
contact: reach, get* in touch with
reach: contact
talk: speak
speak: talk
tell: inform
show: display
display: show
find: locate
locate: find
choose: pick, select
pick: choose, select
select: choose
change: alter, modify
alter: change
modify: change
job: position, role
boss: manager
manager: supervisor
supervisor: manager
company: firm, business
business: company, firm
firm: company
house: home
famous: well-known, renowned
well-known: famous
late: overdue
overdue: late
rent: hire, lease
rental: hire, lease
hire: rent
gear: equipment, kit
equipment: gear
discount: reduction, markdown
reduction: discount
claim/v: request
claim/n: request
account: profile
password: passcode
information: details, data
info: details
document: file
file/n: document
record/n: file
invoice: bill
bill: invoice
receipt: proof* of purchase
policy: rule, guideline
rule: regulation
regulation: rule
agreement: contract
contract: agreement
period: span, stretch
holiday: vacation
vacation: holiday
leave/n: time* off, absence
trip: journey
journey: trip
travel/v: journey
hotel: accommodation
car: vehicle
vehicle: car
meal: food
drink: beverage
beverage: drink
child: kid
children: kids
kid: child
people: persons, individuals
person: individual
individual: person
member: subscriber
membership: subscription
subscription: membership
plan/n: scheme, package
amount: sum
total: sum
limit: cap, ceiling
cap: limit
allowance: allocation
deadline: due* date, cutoff
yearly: annual
annual: yearly
happen: occur
occur: happen
stop: halt, cease
halt: stop
continue: proceed, carry* on
try: attempt
attempt: try
give: provide, hand* over
provide: give, supply
supply: provide
offer/v: provide
include: contain, cover
contain: include
cover/v: include
protect: safeguard, shield
safe: secure
secure: safe
risk: danger, hazard
danger: risk
damage: harm
harm: damage
sick: ill
ill: sick
doctor: physician
medicine: medication
salary: pay, wage
wage: pay
answer/n: reply, response
answer/v: respond* to
reply: answer
response: answer, reply
question/n: query
query: question
request/v: ask* for
easy: simple
simple: easy
hard: difficult
difficult: hard
important: key, significant
main: principal, primary
whole: entire
entire: whole
in full: in its entirety
business day: working day
business days: working days
exact: precise
precise: exact
correct: right, accurate
wrong: incorrect
incorrect: wrong
similar: comparable
dirty: soiled
wet: damp
outdoors: outside
worn: used
unused: unworn, untouched
opened: unsealed
sealed: unopened
package: parcel
parcel: package
packaging: wrapping
box: carton
bag: sack
label: tag
tag: label
gift: present
country: nation
nation: country
abroad: overseas
overseas: abroad
international: global, worldwide
area: region, zone
region: area
place: location, spot
location: place, site
site: location
street: road
road: street
department: division
division: department
team: group
meeting: gathering
suspicious: dubious, questionable
strange: odd, unusual
odd: strange
message: note
attacker: intruder
hidden: concealed
hide: conceal
instruction: directive, direction
example: instance, sample
build: construct
construct: build
create: make
invent: devise
inventor: creator
win: earn
prize: award
award: prize
live: reside
marry: wed
manufacture: make, produce
produce/v: make, manufacture
acquire: obtain
own/v: possess
huge: enormous, massive
enough: sufficient
extra: additional
additional: extra
mostly: mainly
mainly: mostly
almost: nearly
nearly: almost
maybe: perhaps
perhaps: maybe
immediately: instantly, at* once
shortly: soon
afterwards: later
later: afterwards
every: each
each: every
rarely: seldom
kind/n: type, sort
type: kind, sort
way: method, manner
method: way, approach
result: outcome
outcome: result
goal: aim
aim: goal
choice: option
option: choice
permission: approval, consent
approval: consent
refuse: decline, reject
reject: refuse, decline
decline: refuse
accept: take
complaint: grievance
sure: certain
likely: probable
forbidden: prohibited, banned
ban: prohibit
prohibit: ban, forbid
warranty: guarantee
guarantee: warranty
expense: cost
learned: scholarly
society: association
elect: choose
birthplace: place* of birth
hometown: home* town
founded: established, set* up
establish: found, set* up
river: waterway
city: town
"""

JARGON_TEXT = """
# formal or technical register
refund/n: reimbursement
refund/v: reimburse
refunded: reimbursed
money back: reimbursement
send back: remit
buy: procure
bought: procured
purchase/n: acquisition
purchase/v: procure
ship: dispatch
shipping: dispatch, freight
shipment: consignment
delivery: fulfilment
deliver: dispatch
delete: erase, purge
deleted: erased, purged
remove: eliminate
employee: workforce member, personnel member
staff: personnel
customer: client, account holder
pay/v: remit
payment: remittance
salary: remuneration, compensation
wage: remuneration
fee: levy, surcharge
cost/n: expenditure
price: rate, tariff
order/n: purchase order
item: unit, article
product: merchandise
goods: merchandise
stock: inventory
damaged: impaired
broken: non-functional
faulty: defective, nonconforming
repair: rectify
fix: remediate, rectify
problem: incident
issue/n: incident
issue/v: disburse
bug: defect
error: fault
cancel: terminate, rescind
end/v: terminate
stop: discontinue
start: commence, initiate
begin: commence
use/v: utilise
help/n: assistance
check: verify, audit
checked: verified, audited
inspect: examine
allow: authorise
allowed: authorised
approve: authorise, ratify
permission: authorisation
tell: advise
inform: notify
need: require
get: obtain, acquire
receive: obtain
give: furnish
provide: furnish
send: transmit, dispatch
keep: retain
information: particulars
document: documentation
leave/n: leave* of absence, absence
hotel: lodging, accommodation
food: subsistence
car: vehicle
phone: telephone
contact: liaise* with
company: organisation, enterprise
business: enterprise
team: unit
department: division
manager: line* manager
boss: supervisor
job: role
worker: operative
rule: regulation, provision
policy: protocol, directive
law: statute
deadline: cut-off
limit: threshold, cap
total: aggregate
discount: rebate, markdown
for free: at no charge
free: complimentary
cheap: low-cost
late: overdue
fine/n: penalty
penalty: sanction
claim for: file a claim for
claim/v: file* a claim for
difference: differential
suspicious: anomalous
attacker: threat actor
hidden: embedded, obfuscated
instruction: directive
password: credential
customer support: client services
business day: working day
business days: working days
paid: remunerated
per year: per annum
example: instance
person: individual
people: individuals
child: minor, dependant
children: minors, dependants
member: subscriber
membership: subscription
plan/n: tier
city: municipality
town: municipality
river: watercourse
birthplace: place* of birth
founded: established, incorporated
manufacture: fabricate
invent: devise, engineer
inventor: originator
win: secure
society: association
elect: appoint
president: chair
marry: wed
travel/v: commute
trip: excursion
warehouse: distribution* centre
tent: shelter
account: user* account
"""


@dataclass(frozen=True)
class _Entry:
    any: tuple[str, ...] = ()
    noun: tuple[str, ...] = ()
    other: tuple[str, ...] = ()


def _parse_table(text: str) -> dict[str, _Entry]:
    """``{key: _Entry}`` from lines ``key[/n|/v]: alt, alt``; ``#`` starts a comment."""
    raw: dict[str, dict[str, tuple[str, ...]]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        key, sep, alts = line.partition(":")
        if not sep:
            raise ValueError(f"paraphrase table line {number}: no ':' in {line!r}")
        key = key.strip().lower()
        pos = "any"
        if key.endswith("/n"):
            key, pos = key[:-2], "noun"
        elif key.endswith("/v"):
            key, pos = key[:-2], "other"
        values = tuple(a.strip() for a in alts.split(",") if a.strip())
        if not values:
            raise ValueError(f"paraphrase table line {number}: no alternatives for {key!r}")
        raw.setdefault(key, {})[pos] = values
    return {k: _Entry(**v) for k, v in raw.items()}


@cache
def _tables() -> dict[str, dict[str, _Entry]]:
    return {"synonym": _parse_table(SYNONYMS_TEXT), "jargon": _parse_table(JARGON_TEXT)}


def _flat(text: str) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for key, entry in _parse_table(text).items():
        for pos, alts in (("", entry.any), ("/n", entry.noun), ("/v", entry.other)):
            if alts:
                out[key + pos] = alts
    return out


SYNONYMS: Mapping[str, tuple[str, ...]] = _flat(SYNONYMS_TEXT)
"""The synonym table (``key`` or ``key/n`` / ``key/v`` → alternatives), for readers and tests."""
JARGON: Mapping[str, tuple[str, ...]] = _flat(JARGON_TEXT)
"""The jargon table, same form as ``SYNONYMS``."""

_VERB_KEYS = VERB_BASES | frozenset(
    """
acquire advise alter answer assist attempt audit authorise ban bill cease commence commute
conceal construct continue decline devise dispatch display eliminate elect engineer erase
establish examine fabricate file forbid furnish halt harm hide initiate invoice liaise locate
modify notify obtain permit possess prohibit procure purchase purge ratify rectify reimburse
reject remediate remit repay rescind reside retain safeguard select shield speak supply talk
terminate transmit utilise verify wed
""".split()
)
"""Table keys that are verbs: only these take a stripped -ed/-ing back onto a replacement."""

_IRREGULAR_SOURCE = {
    "bought": ("buy", "ed"),
    "sent": ("send", "ed"),
    "paid": ("pay", "ed"),
    "got": ("get", "ed"),
    "gotten": ("get", "ed"),
    "kept": ("keep", "ed"),
    "began": ("begin", "ed"),
    "begun": ("begin", "ed"),
    "told": ("tell", "ed"),
    "gave": ("give", "ed"),
    "given": ("give", "ed"),
    "took": ("take", "ed"),
    "taken": ("take", "ed"),
    "spent": ("spend", "ed"),
    "held": ("hold", "ed"),
    "built": ("build", "ed"),
    "won": ("win", "ed"),
    "lost": ("lose", "ed"),
    "met": ("meet", "ed"),
    "sold": ("sell", "ed"),
    "made": ("make", "ed"),
    "brought": ("bring", "ed"),
    "chose": ("choose", "ed"),
    "chosen": ("choose", "ed"),
    "wrote": ("write", "ed"),
    "written": ("write", "ed"),
    "children": ("child", "s"),
    "people": ("person", "s"),
    "men": ("man", "s"),
    "women": ("woman", "s"),
}


def _candidates(word: str) -> list[tuple[str, str]]:
    """(base, suffix) readings of a surface word, most literal first."""
    out = [(word, "")]
    if word in _IRREGULAR_SOURCE:
        out.append(_IRREGULAR_SOURCE[word])
    if len(word) < 4:
        return out
    if word.endswith("ies"):
        out.append((word[:-3] + "y", "s"))
    if word.endswith("es"):
        out += [(word[:-2], "s"), (word[:-1], "s")]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        out.append((word[:-1], "s"))
    if word.endswith("ied"):
        out.append((word[:-3] + "y", "ed"))
    elif word.endswith("ed"):
        out += [(word[:-2], "ed"), (word[:-1], "ed")]
        if len(word) > 4 and word[-3] == word[-4]:
            out.append((word[:-3], "ed"))
    if word.endswith("ing") and len(word) > 5:
        out += [(word[:-3], "ing"), (word[:-3] + "e", "ing")]
        if word[-4] == word[-5]:
            out.append((word[:-4], "ing"))
    return out


def _inflect(alt: str, suffix: str) -> str | None:
    """``alt`` with ``suffix`` applied to its head word (``*``-marked, else the last)."""
    parts = alt.split(" ")
    head = next((i for i, p in enumerate(parts) if p.endswith("*")), len(parts) - 1)
    parts = [p.rstrip("*") for p in parts]
    word = parts[head]
    if suffix == "s":
        parts[head] = _add_s(word)
    elif suffix == "ed":
        form = _past_or_participle(word)
        if form is None:
            return None
        parts[head] = form
    elif suffix == "ing":
        parts[head] = _ing(word)
    return " ".join(parts)


def _noun_context(prev: str | None, suffix: str) -> bool:
    """Whether a word reads as a noun after ``prev`` (see the module docstring)."""
    if suffix in ("ed", "ing"):
        return False
    if prev is None:
        return True  # a question opens with its wh-word: a content word first is a query noun
    if (
        prev in DETERMINERS
        or prev.endswith(("'s", "’s"))
        or prev in NOUN_ADJECTIVES
        or (prev in PREPOSITIONS and prev != "to")
        or prev.endswith("al")
        or prev.isdigit()
    ):
        return True
    return suffix == "s" and prev not in SUBJECT_PRONOUNS


def _lookup(
    table: Mapping[str, _Entry], word: str, prev: str | None
) -> tuple[tuple[str, ...], str] | None:
    for base, suffix in _candidates(word):
        entry = table.get(base)
        if entry is None:
            continue
        if suffix == "ing" and prev in DETERMINERS:
            return None  # "the building": a noun in -ing, not a verb form
        if suffix in ("ed", "ing") and base not in _VERB_KEYS:
            return None  # "discounted" is not "discount" + -ed of a verb we can re-inflect
        if _noun_context(prev, suffix) and entry.noun:
            return entry.noun, suffix
        if not _noun_context(prev, suffix) and entry.other:
            return entry.other, suffix
        if entry.any:
            return entry.any, suffix
        return None
    return None


_TOKEN = re.compile(r"[A-Za-z]+(?:['’-][A-Za-z]+)*")
_SENTENCE_END = re.compile(r"[.!?]\s*$")


def substitute(question: str, table_name: str, rng: np.random.Generator) -> str | None:
    """Replace every word of ``question`` found in the named table (``"synonym"`` or
    ``"jargon"``); None when no word changes. Phrase keys (two or three words) are matched
    first."""
    table = _tables()[table_name]
    matches = list(_TOKEN.finditer(question))
    pieces: list[str] = []
    replaced_at: list[bool] = []  # per emitted word piece: was it replaced?
    word_pieces: list[int] = []  # indexes into pieces of emitted words
    pos = 0
    i = 0
    changed = False
    prev_word: str | None = None
    while i < len(matches):
        m = matches[i]
        at_sentence_start = i == 0 or bool(_SENTENCE_END.search(question[: m.start()]))
        surface = m.group(0)
        # Phrase keys: up to three words joined by single spaces, matched literally.
        phrase_hit = None
        for n in (3, 2):
            if i + n <= len(matches):
                span = matches[i : i + n]
                if all(question[a.end() : b.start()] == " " for a, b in zip(span, span[1:])):
                    key = " ".join(x.group(0).lower() for x in span)
                    entry = table.get(key)
                    if (
                        entry is not None
                        and entry.any
                        and not any(x.group(0)[:1].isupper() for x in span[1:])
                    ):
                        phrase_hit = (n, entry.any)
                        break
        if phrase_hit is not None:
            n, alts = phrase_hit
            alt = alts[int(rng.integers(len(alts)))].replace("*", "")
            pieces.append(question[pos : m.start()])
            word_pieces.append(len(pieces))
            pieces.append(_match_case(surface, alt) if at_sentence_start else alt)
            replaced_at.append(True)
            pos = matches[i + n - 1].end()
            prev_word = alt.split(" ")[-1].lower()
            changed = True
            i += n
            continue
        pieces.append(question[pos : m.start()])
        word_pieces.append(len(pieces))
        replacement = None
        is_name = surface[:1].isupper() and not at_sentence_start
        is_acronym = len(surface) > 1 and surface.isupper()
        if not is_name and not is_acronym:
            found = _lookup(table, surface.lower(), prev_word)
            if found is not None:
                alts, suffix = found
                order = [int(k) for k in rng.permutation(len(alts))]
                for k in order:
                    inflected = _inflect(alts[k], suffix)
                    if inflected is not None and inflected.lower() != surface.lower():
                        replacement = _match_case(surface, inflected)
                        break
        pieces.append(replacement if replacement is not None else surface)
        replaced_at.append(replacement is not None)
        changed = changed or replacement is not None
        prev_word = (replacement or surface).split(" ")[-1].lower()
        pos = m.end()
        i += 1
    pieces.append(question[pos:])
    if not changed:
        return None
    _fix_articles(pieces, word_pieces, replaced_at)
    out = "".join(pieces)
    return None if _same(out, question) else out


_CONSONANT_SOUND = re.compile(r"^(uni|use|usu|uti|eu|one|once|ewe)", re.I)
_VOWEL_SOUND = re.compile(r"^(hour|honest|honou?r|heir)", re.I)


def _vowel_sound(word: str) -> bool:
    """Whether ``word`` starts with a vowel sound (by spelling, with the common exceptions:
    "a unit", "a one-off", "an hour")."""
    if _VOWEL_SOUND.match(word):
        return True
    if _CONSONANT_SOUND.match(word):
        return False
    return word[:1].lower() in _VOWELS


def _fix_articles(pieces: list[str], word_pieces: list[int], replaced: list[bool]) -> None:
    """ "a"/"an" before a replaced word agrees with the word's first sound."""
    for j in range(1, len(word_pieces)):
        if not replaced[j]:
            continue
        art_at = word_pieces[j - 1]
        article = pieces[art_at]
        if article.lower() not in ("a", "an"):
            continue
        wanted = "an" if _vowel_sound(pieces[word_pieces[j]]) else "a"
        pieces[art_at] = _match_case(article, wanted)


def synonym(question: str, rng: np.random.Generator) -> str | None:
    """General-English synonym substitution (``SYNONYMS``); None when no word changes."""
    return substitute(question, "synonym", rng)


def jargon(question: str, rng: np.random.Generator) -> str | None:
    """Formal/technical register substitution (``JARGON``); None when no word changes."""
    return substitute(question, "jargon", rng)


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
