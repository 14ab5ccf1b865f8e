"""Language helpers used from below by detectors, defences and probes.

- ``text``: words, stopwords, sentences (memoised by text), SQuAD answer normalisation.
- ``stemming``: ``stem``; ``support``: how well each sentence of some contexts supports a
  question (the extractive generator's scorer).
- ``mentions``: number, date and negation mentions.
- ``attack_phrases``: instruction-like phrases of prompt-injection text.
- ``obfuscation``: zero-width characters and homoglyphs, and ``fold``.
- ``paraphrase``: deterministic paraphrase rules; their word lists are package data in
  ``data/`` (sources and licences in its README), read once by ``wordlists``.
"""
