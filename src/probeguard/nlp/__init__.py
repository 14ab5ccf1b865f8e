"""Language helpers used from below by detectors, defences and probes: words, sentences,
stemming, paraphrase rules and their word lists, number/date/negation mentions."""
