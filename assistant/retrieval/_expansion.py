"""A turn's BM25 query: its rewrite, and the topic of the turn before it.

ConvGQR's idea (expand the query for retrieval while the rewrite shown stays
clean), without a second model: a follow-up usually stays on the topic of
the turn before, and that turn's rewrite names it. Its content words join
the query at a fraction of the rewrite's weight. Anserini's bag-of-words
query gives a term repeated n times n times the boost, so repeating the
rewrite is how the weights are set. When the rewriter picked its rewrite
among candidates, the candidates, each once, take the repeats' place.
"""

from __future__ import annotations

from typing import Sequence

from ..kernel import DRIFT_STOPWORDS, names_numeral_one, tokens

__all__ = ["expand_query", "other_candidates"]


def other_candidates(rewrite: str, alternatives: Sequence[str]) -> list[str]:
    """The distinct ``alternatives`` other than ``rewrite``, in order: each
    counts once in a query, and the rewrite is there already.

    >>> other_candidates("a", ["b", "a", "b", "c"])
    ['b', 'c']
    """
    return [text for text in dict.fromkeys(alternatives) if text != rewrite]


def expand_query(rewrite: str, previous: str, repeats: int, alternatives: Sequence[str] = ()) -> str:
    """The query for ``rewrite`` with ``previous`` (the previous turn's rewrite;
    empty on a first turn) as context: the rewrite ``repeats`` times, then
    each content word of ``previous`` once. With ``alternatives`` (the other
    candidate rewrites, :attr:`~assistant.kernel.Rewrite.alternatives`), the
    rewrite and each of them once instead of the repeats. ``repeats`` 0: the
    rewrite alone.

    >>> expand_query("When did it open?", "Who built the Eiffel Tower?", 3)
    'When did it open? When did it open? When did it open? built eiffel tower'
    >>> expand_query("When did it open?", "", 3)
    'When did it open?'
    >>> expand_query("When did it open?", "Who built the Eiffel Tower?", 3, ["When did the tower open?"])
    'When did it open? When did the tower open? built eiffel tower'
    >>> expand_query("Who won it?", "When did World War I begin?", 1)
    'Who won it? world war i begin'
    """
    if repeats == 0:
        return rewrite
    # Content words as the rewriter's drift guard counts them: a question's
    # pronouns, wh-words and function words say nothing of its topic.
    # A name's numeral "I" ("World War I") is no pronoun: it keeps the
    # topic apart from "World War II".
    numeral = names_numeral_one(previous)
    words = list(dict.fromkeys(w for w in tokens(previous, "word") if w not in DRIFT_STOPWORDS or (numeral and w == "i")))
    others = other_candidates(rewrite, alternatives)
    if others:
        # The candidates stand in for the repeats: a word they all hold counts
        # once per candidate, a word only some hold still counts a little.
        # Chosen over the repeats plus the others on training turns (BENCHMARKS.md §10).
        return " ".join([rewrite, *others] + words)
    if not words:
        return rewrite
    return " ".join([rewrite] * repeats + words)
