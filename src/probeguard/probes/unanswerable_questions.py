"""Unanswerable's questions: the near miss (a golden question with its asked specific —
place, name, year, product, group — swapped for one the corpus never mentions) and the far
miss (an off-topic question); the word lists and rules are in
``probeguard.probes.unanswerable``."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from probeguard.core.cases import Case
from probeguard.detectors.fabrication import CorpusIndex
from probeguard.nlp.text import words
from probeguard.probes.base import ProbeContext

__all__ = [
    "CATEGORIES",
    "CITIES",
    "COUNTRIES",
    "FAR_MISS_QUESTIONS",
    "GROUPS",
    "NAMES",
    "PLACES",
    "PRODUCTS",
    "Swap",
    "far_miss_questions",
    "near_miss_swap",
]

COUNTRIES = (
    "Argentina",
    "Australia",
    "Austria",
    "Belgium",
    "Brazil",
    "Canada",
    "Chile",
    "China",
    "Colombia",
    "Denmark",
    "Egypt",
    "Finland",
    "France",
    "Germany",
    "Greece",
    "Iceland",
    "India",
    "Indonesia",
    "Ireland",
    "Israel",
    "Italy",
    "Japan",
    "Kenya",
    "Malaysia",
    "Mexico",
    "Morocco",
    "New Zealand",
    "Nigeria",
    "Norway",
    "Peru",
    "Poland",
    "Portugal",
    "Singapore",
    "South Africa",
    "South Korea",
    "Spain",
    "Sweden",
    "Switzerland",
    "Thailand",
    "Turkey",
    "Vietnam",
    "the Netherlands",
    "the United Kingdom",
    "the United States",
)
CITIES = (
    "Auckland",
    "Berlin",
    "Boston",
    "Cairo",
    "Chicago",
    "Dublin",
    "Lisbon",
    "London",
    "Madrid",
    "Montreal",
    "Mumbai",
    "Nairobi",
    "Oslo",
    "Paris",
    "Prague",
    "Rome",
    "Seattle",
    "Sydney",
    "Tokyo",
    "Toronto",
    "Vancouver",
    "Vienna",
)
PLACES = COUNTRIES + CITIES
"""Countries and cities recognised in a question; a country is replaced by a country, a
city by a city."""

NAMES = (
    "Albescu",
    "Ashford",
    "Carrick",
    "Dunmore",
    "Ellery",
    "Halloway",
    "Hartley",
    "Kingsley",
    "Lindqvist",
    "Marchetti",
    "Okafor",
    "Penrose",
    "Prescott",
    "Quillon",
    "Ravenscroft",
    "Sorensen",
    "Tanaka",
    "Thornbury",
    "Whitlock",
    "Moreau",
)
"""Surname-like replacement names (read as a person, a product, a firm or a town)."""

PRODUCTS = (
    "tent",
    "backpack",
    "jacket",
    "boot",
    "headlamp",
    "stove",
    "kayak",
    "canoe",
    "bicycle",
    "helmet",
    "laptop",
    "camera",
    "printer",
    "sofa",
    "mattress",
    "surfboard",
    "snowboard",
    "drone",
    "tablet",
    "blender",
    "guitar",
    "piano",
    "hammock",
    "telescope",
    "treadmill",
    "wetsuit",
)
CATEGORIES = (
    "electronics",
    "furniture",
    "jewellery",
    "cosmetics",
    "groceries",
    "toys",
    "perfume",
    "software",
    "textbooks",
    "medicines",
)
"""Product words (singular or plural, plural kept) and product categories (replaced by
a category), recognised in a question and drawn as replacements."""

GROUPS = (
    "employees",
    "staff",
    "customers",
    "members",
    "students",
    "contractors",
    "interns",
    "franchisees",
    "retirees",
    "pilots",
    "nurses",
    "teachers",
    "apprentices",
    "veterans",
)
"""Groups of people recognised in a question and drawn as replacements."""

FAR_MISS_QUESTIONS = (
    "Which planet in the solar system has the most moons?",
    "Who painted the ceiling of the Sistine Chapel?",
    "What is the chemical symbol for tungsten?",
    "Which composer wrote the opera Don Giovanni?",
    "In which ocean is the Mariana Trench?",
    "How many bones are in the adult human skeleton?",
    "Who wrote the novel Pride and Prejudice?",
    "Which gas makes up most of Earth's atmosphere?",
    "What is the tallest mountain in Africa?",
    "Who discovered penicillin?",
    "What is the largest desert on Earth?",
    "Which element has the atomic number 79?",
    "How many strings does a cello have?",
    "What is the main ingredient of guacamole?",
    "Which animal is the fastest sprinter on land?",
    "Who developed the theory of general relativity?",
    "At what temperature does mercury freeze?",
    "Which city hosted the 2016 Summer Olympics?",
    "What do bees collect to make honey?",
    "How far is a marathon race?",
    "What is the currency of Japan?",
    "Who was the first emperor of Rome?",
    "What causes the aurora borealis?",
    "Which vitamin does sunlight help the skin produce?",
    "What is the capital of Mongolia?",
    "How many hearts does an octopus have?",
    "Which chess piece can only move diagonally?",
    "What is the square root of 144?",
)
"""Off-topic questions for ``far_miss`` (kept only when they barely overlap the corpus)."""

_GENERIC = frozenset(
    """policy policies plan plans society group company glassworks river
university bureau team inc ltd department club museum fair bridge row city town street road
mount hall terms faq""".split()
)
_CALENDAR = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday mondays
tuesdays wednesdays thursdays fridays saturdays sundays january february march april may june
july august september october november december""".split()
)
_CAP_RUN = re.compile(r"[A-Z][\w'’-]*(?:\s+(?:&\s+)?[A-Z][\w'’-]*)*")
_YEAR = re.compile(r"(?<![\w.,])(1[6-9]\d\d|20\d\d)(?![\w.,]\d)")
_YEAR_SPAN = 40


@dataclass(frozen=True)
class Swap:
    """One near-miss substitution: ``question[start:end]`` (``original``) → ``term``."""

    kind: str
    start: int
    end: int
    original: str
    term: str

    def apply(self, question: str) -> str:
        return question[: self.start] + self.term + question[self.end :]


def _word_spans(question: str, term: str) -> list[tuple[int, int]]:
    body = r"\s+".join(re.escape(p) for p in term.split())
    return [m.span() for m in re.finditer(rf"(?<!\w){body}(?!\w)", question)]


def _places(question: str) -> list[tuple[int, int, str]]:
    found = []
    for place in PLACES:
        bare = place[4:] if place.startswith("the ") else place
        found += [(s, e, bare) for s, e in _word_spans(question, bare)]
    return sorted(found)


def _names(question: str) -> list[tuple[int, int, str]]:
    places = {w for p in PLACES for w in words(p)}
    found = []
    for run in _CAP_RUN.finditer(question):
        tokens = [
            (m.start() + run.start(), m.end() + run.start(), m.group(0))
            for m in re.finditer(r"[A-Z][\w'’-]*", run.group(0))
        ]
        if run.start() == 0:
            tokens = tokens[1:]  # the question's first word is capitalised anyway
        tokens = [
            t
            for t in tokens
            if t[2].lower() not in _CALENDAR | places and t[2] != "I" and not t[2].isupper()
        ]
        specific = [t for t in tokens if t[2].lower() not in _GENERIC]
        if specific:
            found.append(specific[-1])
    return found


def _plural(word: str) -> str:
    return word if word.endswith("s") else word + "s"


def _products(question: str) -> list[tuple[int, int, str]]:
    found = []
    for product in PRODUCTS:
        for form in (product, _plural(product)):
            found += [(s, e, form) for s, e in _word_spans(question.lower(), form)]
    for category in CATEGORIES:
        found += [(s, e, category) for s, e in _word_spans(question.lower(), category)]
    return sorted(found)


def _groups(question: str) -> list[tuple[int, int, str]]:
    found = []
    for group in GROUPS:
        found += [(s, e, group) for s, e in _word_spans(question.lower(), group)]
    return sorted(found)


def near_miss_swap(ctx: ProbeContext, question: Case, index: CorpusIndex) -> Swap | None:
    """The substitution that makes ``question`` a near miss (module docstring), or None."""
    rng = ctx.rng("unanswerable", "near", question.id, question.question)
    text = question.question

    def draw(options: Sequence[str], original: str) -> str | None:
        pool = [
            o
            for o in options
            if o.lower() != original.lower()
            and index.absent(o)
            and not _word_spans(text.lower(), o.lower())
        ]
        return pool[int(rng.integers(0, len(pool)))] if pool else None

    for start, end, original in _places(text):
        term = draw(
            COUNTRIES if original in COUNTRIES or "the " + original in COUNTRIES else CITIES,
            original,
        )
        if term is not None:
            if term.startswith("the ") and text[max(0, start - 4) : start].lower() == "the ":
                term = term[4:]  # "to the United Kingdom" keeps one article
            return Swap("place", start, end, original, term)
    for start, end, original in reversed(_names(text)):
        term = draw(NAMES, original)
        if term is not None:
            return Swap("name", start, end, original, term)
    for match in _YEAR.finditer(text):
        year = int(match.group(1))
        years = [
            str(y)
            for y in range(year - _YEAR_SPAN, year + _YEAR_SPAN + 1)
            if y != year and 1500 <= y <= 2099
        ]
        term = draw(years, match.group(1))
        if term is not None:
            return Swap("year", match.start(1), match.end(1), match.group(1), term)
    for start, end, original in _products(text):
        if original in CATEGORIES:
            options = list(CATEGORIES)
        else:
            plural = original not in PRODUCTS
            options = [_plural(p) if plural else p for p in PRODUCTS]
        term = draw(options, original)
        if term is not None:
            return Swap("product", start, end, original, term)
    for start, end, original in _groups(text):
        term = draw(GROUPS, original)
        if term is not None:
            return Swap("group", start, end, original, term)
    return None


def far_miss_questions(index: CorpusIndex, max_overlap: float) -> list[tuple[int, str, float]]:
    """``(position, question, overlap)`` of the ``FAR_MISS_QUESTIONS`` whose corpus overlap
    is at most ``max_overlap``."""
    out = []
    for i, q in enumerate(FAR_MISS_QUESTIONS):
        overlap = index.overlap(q)
        if overlap == overlap and overlap <= max_overlap:
            out.append((i, q, overlap))
    return out
