"""Text utilities shared by chunkers, generators and scoring: sentence spans, word tokens
and SQuAD answer normalisation.

Sentences come from ``syntok`` (segtok v2), which handles abbreviations ("e.g.", "Dr.") that a
naive regex splits on; it needs no data download.
"""

from __future__ import annotations

import re
import string
from functools import lru_cache

_WORD = re.compile(r"\w+(?:[.,'’-]\w+)*", re.UNICODE)

CITATION_MARKER = re.compile(r"\s*\[\d{1,3}(?:\s*,\s*\d{1,3})*\]")
"""A ``[n]`` / ``[n, m]`` citation marker (with the whitespace before it)."""


def strip_citations(answer: str) -> str:
    """The answer without citation markers, whitespace collapsed."""
    return " ".join(CITATION_MARKER.sub("", answer).split())


SENTENCE_MEMO_SIZE = 4096
"""How many texts the sentence splitter remembers (least recently used forgotten first)."""
SENTENCE_MEMO_MAX_CHARS = 20_000
"""Texts longer than this are split afresh each time, so the memo holds at most
``SENTENCE_MEMO_SIZE * SENTENCE_MEMO_MAX_CHARS`` characters of keys."""


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans ``(start, end)`` of the sentences of ``text``, in order, trimmed of
    surrounding whitespace; ``text[start:end]`` is the exact sentence. Blank lines also end
    a sentence (headings and list items stand alone).

    Memoised by text: a scan splits the same chunks and documents again and again (generator,
    judges, probes, defences). Each call returns a new list, so a caller may change it."""
    return list(_spans(text))


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` (see ``sentence_spans``; memoised the same way)."""
    return [text[s:e] for s, e in _spans(text)]


def _spans(text: str) -> tuple[tuple[int, int], ...]:
    if len(text) > SENTENCE_MEMO_MAX_CHARS:
        return _segment(text)
    return _segment_memo(text)


# syntok (1.4.4, ``syntok._segmentation_states``) only ever ends a sentence at a token that is
# one of its terminals or an opening bracket. So a text with no line break whose characters
# before its last non-space one (which may be a plain terminal) hold none of those is one
# sentence, from its first to its last token: its first to its last character outside the
# tokenizer's whitespace (``Tokenizer._spaces``: Unicode White_Space and the zero-width space;
# not ``str.isspace``, which also takes U+001C..U+001F). Checked against syntok itself in
# tests/nlp/test_text.py.
_SYNTOK_SPACES = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u200b\u2028\u2029\u202f\u205f\u3000"
)
_SYNTOK_BREAKS = frozenset(
    ".!?;\u203c\u203d\u2047\u2048\u2049\u3002\ufe52\ufe57\uff01\uff0e\uff1f\uff61"  # terminals
    "([{\uff5f\uff5b\uff3b\uff08\ufe5d\ufe5b\ufe59\ufd3e\u301a\u3018\u2985\u2983\u2329"  # opening
    "\n\r"
)
_PLAIN_FINAL = frozenset(".!?")
_SYNTOK_BRACKETS = frozenset(
    "([{\uff5f\uff5b\uff3b\uff08\ufe5d\ufe5b\ufe59\ufd3e\u301a\u3018\u2985\u2983\u2329"
    ")]}\uff60\uff5d\uff3d\uff09\ufe5e\ufe5c\ufe5a\ufd3f\u301b\u3019\u2986\u2984\u232a"
)
_SHORT_PARENTHESIS = 45
"""At most this many characters inside a "(...)" the fast path reads: then the bracket spans
at most 47 characters and 47 tokens, under syntok's ``max_bracket_skipping_length`` (70)
and its 50-token look-ahead, so syntok skips it whatever it holds."""


def _skipped_parentheses(body: str) -> bool:
    """True when every "(" of ``body`` opens a bracket syntok's ``InnerToken`` state skips as
    part of the sentence (1.4.4, ``State._skip_bracketed_text``): at least two
    whitespace-separated words before the first "(" (so ``FirstToken`` never sees it), each
    "(" closed by a ")" within ``_SHORT_PARENTHESIS`` characters with no bracket of any kind
    in between, both brackets standalone tokens (whitespace before "(", a letter or digit
    right after it and right before ")", and after ")" whitespace, a comma or the end: syntok's
    tokenizer glues " )," into one token, which leaves the bracket open), and no "(" right
    after a ")" (after a skipped bracket syntok looks at the next token: a word or a final
    terminal is read as in a plain sentence)."""
    first = body.find("(")
    if len(_chunks(body[:first])) < 2:
        return False
    while first >= 0:
        close = body.find(")", first + 1)
        if close < 0 or close - first - 1 > _SHORT_PARENTHESIS:
            return False
        if not _SYNTOK_BRACKETS.isdisjoint(body[first + 1 : close]):
            return False
        if not _standalone(body, first, close):
            return False
        if body[close + 1 :].lstrip(_SYNTOK_SPACES).startswith("("):
            return False
        first = body.find("(", close + 1)
    return True


def _standalone(body: str, first: int, close: int) -> bool:
    """The "(" at ``first`` and the ")" at ``close`` are tokens of their own (see above)."""
    after = body[close + 1 : close + 2]
    return (
        first > 0
        and body[first - 1] in _SYNTOK_SPACES
        and body[first + 1].isalnum()
        and body[close - 1].isalnum()
        and (not after or after in _SYNTOK_SPACES or after == "," or close + 2 == len(body))
    )


_DIGITS = frozenset("0123456789")
_SPACE_RUN = re.compile(f"[{_SYNTOK_SPACES}]+")


def _chunks(text: str) -> list[str]:
    """``text`` cut at syntok's whitespace (each piece holds at least one of its tokens)."""
    return [c for c in _SPACE_RUN.split(text) if c]


def _digit_dots(body: str, end: int) -> bool:
    """True when every "." of ``body[:end]`` stands between two letters or digits, one of them
    an ASCII digit ("6.213", "1.2m", "v1.2"): syntok's tokenizer keeps such a dot inside its
    word (it splits a word only at a dot between a lower- and an upper-case letter), so it is
    no terminal token."""
    i = body.find(".", 0, end)
    while i >= 0:
        before, after = body[i - 1 : i], body[i + 1 : i + 2]
        if not (before.isalnum() and after.isalnum() and (before in _DIGITS or after in _DIGITS)):
            return False
        i = body.find(".", i + 1, end)
    return True


def _one_sentence(text: str) -> tuple[tuple[int, int], ...] | None:
    """The spans syntok gives ``text`` when it surely holds at most one sentence (see above:
    no break before its last character but dots inside numbers, ``_digit_dots``, and short
    parentheses syntok skips, ``_skipped_parentheses``); None when syntok must decide."""
    body = text.strip(_SYNTOK_SPACES)
    if not body:
        return () if "\n" not in text and "\r" not in text else None
    if "\n" in text or "\r" in text:
        return None
    inner = body[:-1] if body[-1] in _PLAIN_FINAL else body
    breaks = set(_SYNTOK_BREAKS.intersection(inner))
    if "." in breaks and _digit_dots(body, len(inner)):
        breaks.discard(".")
    if "(" in breaks and _skipped_parentheses(body):
        breaks.discard("(")
    if breaks:
        return None
    start = len(text) - len(text.lstrip(_SYNTOK_SPACES))
    return ((start, start + len(body)),)


# Where syntok surely ends a sentence: after "word." or "1990." (the whole space-separated
# word, two letters or more, capital first or not, or digits) when a space and a capital letter
# follow. Its decision there (``State._move_and_maybe_extract_terminal``, in ``InnerToken``:
# some word precedes) splits unless the word is one of its abbreviations ("etc", "Dr"), "no"
# (before a number), a number before a month abbreviation ("5. Jan"), a single letter or an
# upper-case roman numeral, or no space follows: those are left to syntok. After the split its
# state machine restarts (``Terminal`` -> ``FirstToken``) on the next token with nothing
# remembered, and the tokenizer reads each space-separated word alone, so the sentences are
# those of each piece read alone.
_PLAIN_END = re.compile(r"(?<= )([A-Za-z][a-z]+|[0-9]+)\. (?=[A-Z])")


@lru_cache(maxsize=1)
def _syntok_words() -> tuple[frozenset[str], frozenset[str]]:
    """syntok's abbreviations (with "no" in its three cases) and month abbreviations."""
    from syntok._segmentation_states import State

    return State.abbreviations | {"no", "No", "NO"}, State.months


def _plain_sentences(text: str) -> tuple[tuple[int, int], ...] | None:
    """The spans syntok gives ``text`` when it is plain sentences: cut at the sure ends above,
    each piece read by ``_one_sentence``; None when syntok must decide."""
    if "\n" in text or "\r" in text:
        return None
    abbreviations, months = _syntok_words()
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _PLAIN_END.finditer(text):
        word, end = m.group(1), m.end(1) + 1
        if word in abbreviations or not _chunks(text[start : m.start(1)]):
            return None
        if word.isdigit() and any(text.startswith(mo, m.end()) for mo in months):
            return None
        piece = _one_sentence(text[start:end])
        if piece is None:
            return None
        spans.extend((start + a, start + b) for a, b in piece)
        start = end
    rest = _one_sentence(text[start:])
    if rest is None:
        return None
    return tuple(spans + [(start + a, start + b) for a, b in rest])


def _segment(text: str) -> tuple[tuple[int, int], ...]:
    """The sentence spans of ``text``, computed with syntok (no memo); a text that surely
    holds one sentence (``_one_sentence``: same spans, ~20x cheaper) or plain sentences
    (``_plain_sentences``) is read without it."""
    quick = _plain_sentences(text) if _PLAIN_END.search(text) else _one_sentence(text)
    return quick if quick is not None else _segment_syntok(text)


def _segment_syntok(text: str) -> tuple[tuple[int, int], ...]:
    """The sentence spans of ``text``, computed with syntok."""
    from syntok import segmenter

    spans: list[tuple[int, int]] = []
    for block in re.finditer(r"[^\n]+(?:\n(?!\s*\n)[^\n]*)*", text):
        base = block.start()
        block_text = block.group(0)
        for paragraph in segmenter.analyze(block_text):
            for sentence in paragraph:
                # syntok ends a text without final punctuation with an empty token placed
                # after the trailing whitespace: ignore empty tokens so spans stay trimmed.
                tokens = [t for t in sentence if t.value]
                if not tokens:
                    continue
                start = tokens[0].offset
                end = tokens[-1].offset + len(tokens[-1].value)
                spans.append((base + start, base + end))
    return tuple(_merge_overlaps(spans))


_segment_memo = lru_cache(maxsize=SENTENCE_MEMO_SIZE)(_segment)
"""``_segment`` memoised; it returns tuples, so no caller can change a remembered result."""


def _merge_overlaps(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start < out[-1][1]:
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return out


WORDS_MEMO_SIZE = 32768
"""How many texts ``words`` and ``content_words`` remember (least recently used forgotten
first)."""
WORDS_MEMO_MAX_CHARS = 1000
"""Texts longer than this are tokenised afresh each time, so each memo holds at most
``WORDS_MEMO_SIZE * WORDS_MEMO_MAX_CHARS`` characters of keys."""


def words(text: str) -> list[str]:
    """Lower-cased word tokens; numbers keep inner separators ("1,299.00", "2024-03-01") and
    abbreviations their inner dots ("D.C." is the one word "d.c").

    Memoised by text (up to ``WORDS_MEMO_MAX_CHARS``): judges and metrics tokenise the same
    claims, sentences and clauses again and again. Each call returns a new list."""
    if len(text) > WORDS_MEMO_MAX_CHARS:
        return [w.lower() for w in _WORD.findall(text)]
    return list(_words_memo(text))


@lru_cache(maxsize=WORDS_MEMO_SIZE)
def _words_memo(text: str) -> tuple[str, ...]:
    return tuple([w.lower() for w in _WORD.findall(text)])


def word_spans(text: str) -> list[tuple[str, int, int]]:
    """The tokens of ``words`` as written (case kept), each with its span in ``text``."""
    return [(m.group(0), m.start(), m.end()) for m in _WORD.finditer(text)]


STOPWORDS = frozenset(
    """a an the and or but if of to in on at by for with from as is are was were be
been being it its this that these those there here what which who whom whose when where why how
do does did done can could would should will shall may might must i you he she we they me him her
us them my your his our their not no yes so than then too very just about into over under after
before between through during any all each some such only own same other more most few both
""".split()
)


def content_words(text: str) -> list[str]:
    """``words`` without English stopwords (memoised like ``words``; a new list each call)."""
    if len(text) > WORDS_MEMO_MAX_CHARS:
        return [w for w in words(text) if w not in STOPWORDS]
    return list(_content_memo(text))


@lru_cache(maxsize=WORDS_MEMO_SIZE)
def _content_memo(text: str) -> tuple[str, ...]:
    return tuple([w for w in _words_memo(text) if w not in STOPWORDS])


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


@lru_cache(maxsize=65536)
def normalize_answer(text: str) -> str:
    """SQuAD v1.1 normalisation (Rajpurkar et al. 2016, official evaluate-v1.1.py): lower-case,
    strip punctuation, drop the articles a/an/the, collapse whitespace."""
    text = text.lower().translate(_PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def contains_answer(answer: str, gold: str) -> bool:
    """True when the normalised gold string appears in the normalised answer on word
    boundaries ("answer containment")."""
    g = normalize_answer(gold)
    if not g:
        return False
    return f" {g} " in f" {normalize_answer(answer)} "
