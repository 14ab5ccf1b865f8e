"""Number, date and negation mentions in English text: what the contradiction judges, the
offline claim judge, the conflict defence and the contradiction probe's mutations read.

* Numbers (``number_mentions``): digits with thousands separators and decimals
  (``1,299.00``), currency (``$ € £`` or a following "dollars"/"euros"/"pounds"), percent
  (``%``, "percent", "per cent") and number words up to 99 ("thirty", "forty-five"; "one"
  alone is left out, being far more often a pronoun); a number in brackets counts
  ("tackles (118)", "(19.3%)"). Numbers inside phone numbers (``555-0147``, the area code of
  ``(802) 555-0147``) and identifiers and, by default, inside dates are not numeric mentions.
  With ``every_kind`` (what a claim can assert, read the same way on both sides of a
  comparison), three more kinds: **years** (every integer 1000–2099 written without
  separators, currency or percent — "1774." as much as "in 1774" — unless a lower-case
  content word follows it without a year cue before it: "1500 troops" is a count), only
  numbers inside *calendar* dates (with a month or a day) being left out; **ordinals**
  ("12th", "21st"); **decades** ("1970s", value 1970).
  ``same_number``: the same value and the same kind of quantity (percent only matches
  percent, ordinal ordinal, decade decade; plain numbers, currency and years match each
  other: "1,500" is "1500").
* Dates (``date_mentions``): ``1 March 2024``, ``March 1, 2024``, ``March 2024``, ``1 March``,
  ``2024-03-01`` and bare years 1000–2099, parsed to (year, month, day). A bare year needs a
  cue word before it — "in 1889", "since 2020", "(1903" — so that a quantity such as "costs
  1299" is not taken for a year, unless ``any_year`` (for a claim value such as "1889").
  Month names are matched case-sensitively: "may" and "march" are also verbs.
* Negation (``negation_cues``, ``negation_parity``): the words of ``NEGATION_CUES`` (not, no,
  never, cannot, none, nobody, nothing, neither, nor) and any word ending in ``n't``, except
  "No." before a number ("No. 1": the abbreviation of "number") and a capitalised "No" after
  a word or a comma (a name: "set by No Child Left Behind"). ``negation_parity``: the parity
  of a text's cues; 1 is negative polarity. Which cues scope over which predicate is the
  offline judge's business (``probeguard.detectors.offline_judge``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from probeguard.nlp.text import STOPWORDS

__all__ = [
    "MONTHS",
    "NEGATION_CUES",
    "DateMention",
    "NumberKind",
    "NumberMention",
    "date_mentions",
    "is_negation",
    "negation_cues",
    "negation_parity",
    "number_mentions",
    "number_word",
    "same_kind",
    "same_number",
]


# -- numbers ------------------------------------------------------------------------------
_UNITS = {
    "zero": 0,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
_ONES = {"one": 1, **{k: v for k, v in _UNITS.items() if 2 <= v <= 9}}
_TENS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_WORD_OF = {v: k for k, v in {**_UNITS, "one": 1, **_TENS}.items()}
# "one" alone is left out: it is far more often a pronoun ("one of the ...") than a count.
_NUMBER_WORD = re.compile(
    r"\b(?:(?P<tens>" + "|".join(_TENS) + r")(?:[-\s](?P<ones>" + "|".join(_ONES) + r"))?"
    r"|(?P<unit>" + "|".join(sorted(_UNITS, key=len, reverse=True)) + r"))\b",
    re.IGNORECASE,
)
# A number closing a bracket that a digit follows is a phone area code: "(802) 555-0147".
_NUMBER_DIGITS = re.compile(
    r"(?<![\w.+/:])(?<!\d-)(?<!\d,)"
    r"(?P<cur>[$€£]\s?)?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?P<suffix>(?<=1)st|(?<=2)nd|(?<=3)rd|th|(?<=0)'?s)?"
    r"(?!\w|[-/:]\d|[.,]\d|\)\s?\d)"
    r"(?P<pct>\s?%|\s?per\s?cent\b)?"
    r"(?P<curword>\s(?:dollars?|euros?|pounds?|USD|EUR|GBP)\b)?",
    re.IGNORECASE,
)


NumberKind = Literal["plain", "percent", "currency", "year", "ordinal", "decade"]
"""What a number mention counts: ``year``, ``ordinal`` and ``decade`` only with
``number_mentions(..., every_kind=True)``."""


@dataclass(frozen=True)
class NumberMention:
    """A number in a text. ``start``/``end`` cover the whole mention (currency sign and
    percent sign included); ``num_start``/``num_end`` only the digits or number word."""

    start: int
    end: int
    num_start: int
    num_end: int
    value: float
    kind: NumberKind
    decimals: int = 0
    grouped: bool = False
    """Written with thousands separators (``1,299``)."""
    word: bool = False
    """Written as a word ("thirty")."""


def number_word(value: float) -> str | None:
    """The English word for an integer 0–99 ("forty-five"), else None."""
    if value != int(value) or not 0 <= value <= 99:
        return None
    n = int(value)
    if n in _WORD_OF:
        return _WORD_OF[n]
    return f"{_WORD_OF[n - n % 10]}-{_WORD_OF[n % 10]}"


MENTIONS_MEMO_SIZE = 16384
"""How many (text, options) the mention readers remember: a judge reads the same claim and
the same context sentences once per claim × sentence pair."""


def number_mentions(
    text: str, *, skip_dates: bool = True, every_kind: bool = False
) -> list[NumberMention]:
    """The numbers in ``text``, in order (see the module docstring for what counts).
    With ``skip_dates`` (default), numbers inside date mentions are left out: inside
    every date, or with ``every_kind`` only inside calendar dates (a month or a day), a year
    on its own being a year mention. ``every_kind`` adds years, ordinals and decades.
    Memoised by ``(text, options)``; each call returns a new list (mentions are frozen)."""
    return list(_number_mentions(text, skip_dates, every_kind))


@lru_cache(maxsize=MENTIONS_MEMO_SIZE)
def _number_mentions(text: str, skip_dates: bool, every_kind: bool) -> tuple[NumberMention, ...]:
    return tuple(_read_numbers(text, skip_dates=skip_dates, every_kind=every_kind))


def _read_numbers(text: str, *, skip_dates: bool, every_kind: bool) -> list[NumberMention]:
    dates = (
        [(d.start, d.end) for d in date_mentions(text) if not every_kind or d.format != "y"]
        if skip_dates
        else []
    )

    def in_date(s: int, e: int) -> bool:
        return any(s < de and ds < e for ds, de in dates)

    out: list[NumberMention] = []
    for m in _NUMBER_DIGITS.finditer(text):
        s, e = m.span("num")
        if in_date(s, e):
            continue
        raw, suffix = m.group("num"), m.group("suffix")
        value = float(raw.replace(",", ""))
        kind: NumberKind = "plain"
        if suffix:
            if not every_kind or m.group("cur") or m.group("pct") or "." in raw:
                continue
            kind = "ordinal" if suffix[-1] != "s" else "decade"
        elif m.group("pct"):
            kind = "percent"
        elif m.group("cur") or m.group("curword"):
            kind = "currency"
        elif every_kind and _is_year(text, raw, m.start(), e):
            kind = "year"
        decimals = len(raw.split(".")[1]) if "." in raw else 0
        end = m.end("pct") if m.group("pct") else m.end("suffix") if suffix else e
        out.append(NumberMention(m.start(), end, s, e, value, kind, decimals, "," in raw))
    for m in _NUMBER_WORD.finditer(text):
        if in_date(*m.span()):
            continue
        if m.group("tens"):
            value = float(
                _TENS[m.group("tens").lower()]
                + (_ONES[m.group("ones").lower()] if m.group("ones") else 0)
            )
        else:
            value = float(_UNITS[m.group("unit").lower()])
        rest = text[m.end() : m.end() + 12]
        pct = re.match(r"\s?(%|per\s?cent\b)", rest, re.IGNORECASE)
        kind = "percent" if pct else "plain"
        end = m.end() + (pct.end() if pct else 0)
        out.append(NumberMention(m.start(), end, m.start(), m.end(), value, kind, word=True))
    out.sort(key=lambda n: n.start)
    return out


_COUNTED = re.compile(r"\s+([a-z][\w'’-]*)")


def _is_year(text: str, raw: str, start: int, end: int) -> bool:
    """A bare integer 1000–2099 is a year ("1774.", "in 1774", "the 1990 World Cup"), unless
    a lower-case content word follows it with no year cue before it ("1500 troops")."""
    if not (len(raw) == 4 and _YEAR.fullmatch(raw)):
        return False
    counted = _COUNTED.match(text, end)
    return not counted or counted.group(1) in STOPWORDS or _year_context(text, start)


def _kind_class(kind: NumberKind) -> str:
    return kind if kind in ("percent", "ordinal", "decade") else "quantity"


def same_number(a: NumberMention, b: NumberMention) -> bool:
    """The same value and kind of quantity (module docstring)."""
    if not math.isclose(a.value, b.value, rel_tol=0.0, abs_tol=1e-9):
        return False
    return same_kind(a, b)


def same_kind(a: NumberMention, b: NumberMention) -> bool:
    """Comparable quantities: percent with percent, ordinal with ordinal, decade with decade,
    and plain numbers, currency and years with each other."""
    return _kind_class(a.kind) == _kind_class(b.kind)


# -- dates --------------------------------------------------------------------------------
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_MONTH_NUMBER = {m: i + 1 for i, m in enumerate(MONTHS)}
_MONTH_NUMBER.update({m[:3]: i + 1 for i, m in enumerate(MONTHS)})
_MONTH_NUMBER["Sept"] = 9
# Case-sensitive on purpose: "may" and "march" are also verbs.
_M = r"(?P<month>" + "|".join(sorted(_MONTH_NUMBER, key=len, reverse=True)) + r")\b\.?"
_D = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_Y = r"(?P<year>1\d{3}|20\d{2})"
_YEAR = re.compile(_Y)
_DATE_PATTERNS = (
    ("dmy", re.compile(r"\b" + _D + r"\s+(?:of\s+)?" + _M + r",?\s+" + _Y + r"\b")),
    ("mdy", re.compile(r"\b" + _M + r"\s+" + _D + r",?\s+" + _Y + r"\b")),
    ("iso", re.compile(r"\b" + _Y + r"-(?P<mon>[01]\d)-(?P<day>[0-3]\d)\b")),
    ("my", re.compile(r"\b" + _M + r",?\s+" + _Y + r"\b")),
    ("dm", re.compile(r"\b" + _D + r"\s+(?:of\s+)?" + _M)),
    ("md", re.compile(r"\b" + _M + r"\s+" + _D + r"\b(?![.,]?\d)")),
    ("y", re.compile(r"(?<![\w$€£.,+/:-])" + _Y + r"(?![\w%]|[.,]\d|-\d)")),
)


_YEAR_CUES = frozenset(
    {
        "in",
        "since",
        "by",
        "from",
        "until",
        "till",
        "of",
        "year",
        "around",
        "circa",
        "c",
        "ca",
        "before",
        "after",
        "during",
        "between",
        "and",
        "to",
        "or",
        "early",
        "late",
        "mid",
        "spring",
        "summer",
        "autumn",
        "fall",
        "winter",
        "dated",
        "effective",
        "founded",
        "born",
        "died",
        "built",
    }
)


def _year_context(text: str, start: int) -> bool:
    """A bare four-digit number is a year only after a cue word ("in 1889", "since 2020",
    "founded 1874") or an opening bracket; otherwise it is a quantity ("costs 1299")."""
    before = text[max(0, start - 24) : start].rstrip()
    if before.endswith(("(", "[")):
        return True
    m = re.search(r"([A-Za-z]+)\.?$", before)
    return m is not None and m.group(1).lower() in _YEAR_CUES


@dataclass(frozen=True)
class DateMention:
    """A date in a text: its span, its fields (None when absent) and the spans of the
    month and year groups within the text (for rewriting them)."""

    start: int
    end: int
    format: str
    year: int | None
    month: int | None
    day: int | None
    month_span: tuple[int, int] | None = None
    year_span: tuple[int, int] | None = None

    def fields(self) -> dict[str, int | None]:
        return {"year": self.year, "month": self.month, "day": self.day}


def date_mentions(text: str, *, any_year: bool = False) -> list[DateMention]:
    """The dates in ``text``, in order; longer formats claim their span first. With
    ``any_year``, every bare four-digit number 1000–2099 counts as a year (for a claim value
    such as "1889", which has no context). Every date format holds a digit, so a text
    without one has none. Memoised by ``(text, any_year)``; each call returns a new list."""
    if not _DIGIT.search(text):
        return []
    return list(_date_mentions(text, any_year))


_DIGIT = re.compile(r"\d")


@lru_cache(maxsize=MENTIONS_MEMO_SIZE)
def _date_mentions(text: str, any_year: bool) -> tuple[DateMention, ...]:
    return tuple(_read_dates(text, any_year=any_year))


def _read_dates(text: str, *, any_year: bool) -> list[DateMention]:
    taken: list[tuple[int, int]] = []
    out: list[DateMention] = []
    for fmt, pattern in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            s, e = m.span()
            if any(s < te and ts < e for ts, te in taken):
                continue
            if fmt == "y" and not any_year and not _year_context(text, s):
                continue
            groups = m.groupdict()
            day = int(groups["day"]) if groups.get("day") else None
            if day is not None and not 1 <= day <= 31:
                continue
            if groups.get("mon"):
                mon = int(groups["mon"])
                if not 1 <= mon <= 12:
                    continue
                month: int | None = mon
                month_span: tuple[int, int] | None = m.span("mon")
            elif groups.get("month"):
                month = _MONTH_NUMBER[groups["month"]]
                month_span = m.span("month")
            else:
                month, month_span = None, None
            year = int(groups["year"]) if groups.get("year") else None
            out.append(
                DateMention(
                    s,
                    e,
                    fmt,
                    year,
                    month,
                    day,
                    month_span,
                    m.span("year") if year is not None else None,
                )
            )
            taken.append((s, e))
    out.sort(key=lambda d: d.start)
    return out


# -- negation -----------------------------------------------------------------------------
NEGATION_CUES = frozenset(
    {"not", "no", "never", "cannot", "none", "nobody", "nothing", "neither", "nor"}
)

_TOKEN = re.compile(r"\w+(?:[.,'’-]\w+)*", re.UNICODE)
"""Word tokens as ``probeguard.nlp.text.words`` reads them, with their spans."""
_NUMBER_SIGN = re.compile(r"\.\s?\d")
"""After "No": the abbreviation of "number" ("No. 1", "no. 5")."""
_AFTER_WORD = re.compile(r"[\w,]\s+$")


def is_negation(word: str) -> bool:
    return word in NEGATION_CUES or word.endswith(("n't", "n’t"))


def negation_cues(text: str) -> list[tuple[int, int]]:
    """Spans of the negation cues of ``text`` (module docstring), in order. Not cues: "No."
    before a number, the abbreviation of "number" ("World No. 1", "no. 5"), and a capitalised
    "No" after a word or a comma, which opens a name ("set by No Child Left Behind")."""
    out: list[tuple[int, int]] = []
    for m in _TOKEN.finditer(text):
        if not is_negation(m.group(0).lower()):
            continue
        if m.group(0).lower() == "no" and _NUMBER_SIGN.match(text, m.end()):
            continue
        if m.group(0) == "No" and _AFTER_WORD.search(text, max(0, m.start() - 8), m.start()):
            continue
        out.append(m.span())
    return out


def negation_parity(sentence: str) -> int:
    """Number of negation cues (``negation_cues``) in ``sentence``, modulo 2 (1: negative
    polarity)."""
    return len(negation_cues(sentence)) % 2
