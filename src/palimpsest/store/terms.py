"""Turning a recall query into search terms, the same way for every store."""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.UNICODE)

# Words too common to say what a memory is about; dropped unless nothing else is left.
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your
    yours yourself yourselves
    """.split()
)


def query_terms(text: str) -> list[str]:
    """The distinct lowercase words of a query, stopwords dropped unless all are stopwords."""
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(text)))
    content = [w for w in words if w not in STOPWORDS]
    return content or words
