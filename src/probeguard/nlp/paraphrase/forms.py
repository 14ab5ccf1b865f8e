"""Word forms for the paraphrase rules: regular and irregular inflection (-s, -ed, -ing),
participles, capitalisation and the comparison that tells a paraphrase from its question."""

from __future__ import annotations

import re

from probeguard.nlp.paraphrase.lexicon import (
    DOUBLE_FINAL,
    IRREGULAR_PARTICIPLES,
    NOT_PARTICIPLES,
    PARTICIPLE_SAME_AS_PAST,
    PAST,
    VOWELS,
)

__all__ = [
    "add_s",
    "doubles",
    "ing",
    "is_participle",
    "lower_first",
    "match_case",
    "past",
    "past_or_participle",
    "regular_ed",
    "same",
    "strip_punct",
    "third_person",
]


def strip_punct(token: str) -> str:
    return token.strip(".,;:!?\"'()[]{}“”‘’").lower()


def third_person(verb: str) -> str:
    """3rd person singular present: have → has, go → goes, try → tries, cost → costs."""
    irregular = {"have": "has", "do": "does", "go": "goes", "be": "is"}
    if verb in irregular:
        return irregular[verb]
    return add_s(verb)


def add_s(word: str) -> str:
    """Plural / 3rd-person -s: box → boxes, policy → policies, day → days."""
    if word.endswith(("s", "sh", "ch", "x", "z", "o")) and not word.endswith(("oo", "eo")):
        return word + "es"
    if len(word) > 1 and word.endswith("y") and word[-2] not in VOWELS:
        return word[:-1] + "ies"
    return word + "s"


def doubles(word: str) -> bool:
    """Whether the final consonant doubles before -ed/-ing (ship → shipped, permit →
    permitted): one-syllable consonant-vowel-consonant words and a list of stress-final
    verbs."""
    if word in DOUBLE_FINAL:
        return True
    if len(word) > 4 or len(word) < 3 or not word.isalpha():
        return False
    c1, v, c2 = word[-3], word[-2], word[-1]
    groups = len(re.findall(r"[aeiou]+", word))
    return c1 not in VOWELS and v in VOWELS and c2 not in VOWELS and c2 not in "wxy" and groups == 1


def past(verb: str) -> str | None:
    """Simple past (for "did"): irregular table, else regular -ed spelling rules."""
    if verb in PAST:
        return PAST[verb]
    return regular_ed(verb)


def regular_ed(verb: str) -> str:
    if verb.endswith("e"):
        return verb + "d"
    if len(verb) > 1 and verb.endswith("y") and verb[-2] not in VOWELS:
        return verb[:-1] + "ied"
    if doubles(verb):
        return verb + verb[-1] + "ed"
    return verb + "ed"


def past_or_participle(verb: str) -> str | None:
    """The -ed form standing for either simple past or past participle; None for irregular
    verbs whose two forms differ (give: gave/given), where the choice would be a guess."""
    if verb in PAST:
        return PAST[verb] if verb in PARTICIPLE_SAME_AS_PAST else None
    return regular_ed(verb)


def ing(verb: str) -> str:
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and not verb.endswith(("ee", "ye", "oe")) and len(verb) > 2:
        return verb[:-1] + "ing"
    if doubles(verb):
        return verb + verb[-1] + "ing"
    return verb + "ing"


def is_participle(word: str) -> bool:
    if word in IRREGULAR_PARTICIPLES:
        return True
    return len(word) > 4 and word.endswith("ed") and word not in NOT_PARTICIPLES


def match_case(template: str, word: str) -> str:
    """``word`` with the capitalisation of ``template``'s first letter."""
    if template[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def lower_first(text: str) -> str:
    first = text.split(" ", 1)[0]
    if first == "I" or (first.isupper() and len(first) > 1):  # "I" and acronyms keep case
        return text
    return text[:1].lower() + text[1:]


def same(a: str, b: str) -> bool:
    """Whether two texts read the same (case, spacing and final punctuation ignored)."""
    return " ".join(a.lower().split()).rstrip("?.!") == " ".join(b.lower().split()).rstrip("?.!")
