"""Stop words, embedded (English only; no download): the function words dropped before the
sentence vectors are built, and the 50 most frequent English words whose sequences are the
stop-word n-grams of Stamatatos (2011)."""

from __future__ import annotations

__all__ = ["CONTENT_STOPWORDS", "NGRAM_STOPWORDS"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Stamatatos, "Plagiarism detection using stopword n-grams" (JASIST 2011), Table 1: the 50
#: most frequent words of the British National Corpus (``'s`` and ``n't`` are not words here)
NGRAM_STOPWORDS = _words(
    """the of and a in to is was it for with he be on i that by at you are not his this
    from but had which she they or an were we their been has have will would her there can
    all as if who what said s t one"""
)

#: English function words (pronouns, determiners, auxiliaries, prepositions, conjunctions,
#: common adverbs): not content words
CONTENT_STOPWORDS = NGRAM_STOPWORDS | _words(
    """about above after again against am any because before being below between both
    could did do does doing down during each few further here hers herself him himself how
    into its itself just me more most my myself no nor now of off once only other our ours
    ourselves out over own same shall should so some such than then theirs them
    themselves these those through too under until up very when where whether while whom
    why you your yours yourself yourselves also may might must upon us however thus
    therefore although though yet since either neither every many much whose within without
    among onto via per don doesn didn isn wasn aren weren won wouldn couldn
    shouldn hasn haven hadn ll re ve d m o y"""
)
