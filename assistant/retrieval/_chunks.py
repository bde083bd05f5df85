"""One document as passages, and BM25 over those passages in memory.

CoQA converses about one story, QuALITY asks about one long article, and
the app's single-document mode about one upload: each needs retrieval
*inside* one document. Building a Lucene index per document would start
the JVM and write files for a few dozen passages, so this module ranks them
in pure Python with the same model as our Anserini index: BM25 with
Anserini's defaults (k1 = 0.9, b = 0.4) and Lucene's English analysis
(lower case, possessive 's dropped, Lucene's 33 English stop words, the
original Porter stemmer), with Lucene's scoring formula. A name typed
without its accents searches the document's accented spelling too, as it
does in the index (:class:`._typed.TypedTerms`: "dvorak" finds "Dvořák").
A misspelt name is not corrected here as it is in the index: one
document's words are too few to tell a misspelling from a word it does
not use (a story without "through" had it read "though").

:class:`ChunkRetriever` follows the ``Retriever`` protocol
(``search(query, k) -> list[Passage]``), so the readers take its passages
exactly as they take the index's.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter
from typing import Sequence

from ..kernel import LUCENE_STOPWORDS, Passage, RetrieverConfig, porter_stem, tokens
from ._collection import chunk_text
from ._inputs import search_k, search_query
from ._typed import TypedTerms

__all__ = ["split_passages", "without_citations", "analyze", "ChunkRetriever"]

# A reference entry's mark: "Retrieved May 22 , 2017" (a page copied from
# Wikipedia, or NQ's), "Retrieved 22 May 2017", "Retrieved 2017-05-22" (NQ:
# "2017 - 05 - 22"),
# "Archived from the original". Capitalised "Retrieved" followed by a date:
# prose says "was retrieved on" mid-sentence.
_MONTH = "January|February|March|April|May|June|July|August|September|October|November|December"
_CITATION = re.compile(
    rf"\bRetrieved (?:on )?(?:(?:\d{{1,2}} )?(?:{_MONTH})\b|\d{{4}} ?- ?\d\d ?- ?\d\d)|\bArchived from the original\b"
)
# A Wikipedia note's link back to where it is cited ("Jump up ^", "^ Jump
# up to : a b") opens a reference entry without a date ("TV Review : Lemony
# Snicket 's …" answered "who plays lemony snicket") and an explanatory
# note alike ("McCartney later said , `` … . ''", "The band reformed ( 1994
# ) . They toured …"): the entry is a reference only when what follows the
# link opens as one, with its author ("Lowry , Brian ( 2017 )", "Smith ,
# J. .", "Lennon ( 1980 ) .", "Smith , J. ; Jones , K.") or its quoted title
# ("`` Pilot '' ."). A place reads like an author but brackets no year and
# goes on as prose: "Paris , France ( metropolitan area ) had …", "Lennon (
# 1980 ) said …".
_NOTE_LINK_OPENS = re.compile(r"\s*(?:<[Ll][Ii]>\s*)?(?:\^\s*)?Jump up (?:\^|to :)")
_REFERENCE_OPENS = re.compile(
    _NOTE_LINK_OPENS.pattern + r"(?:\s+[a-z]\b)*\s+"
    r"(?:[A-Z][\w'’-]*\s*(?:,\s*(?:[A-Z][\w'’.-]*\s+){1,3}?(?:\((?=[^()]*\d{4})[^()]*\)|\.|;\s*[A-Z][\w'’-]*\s*,)"
    r"|\(\s*\d{4}[a-z]?\s*\)\s*[.,:;])|``[^`]*?''\s*\.)")
# A table cell's note is part of the row.
_CELL_OPEN = re.compile(r"<Td\b", re.IGNORECASE)
_CELL_CLOSE = re.compile(r"</Td>", re.IGNORECASE)
# One list item of markup (NQ's pages: <Li> … </Li>), never across items.
_LIST_ITEM = re.compile(r"<Li>(?:(?!</Li>).)*?</Li>", re.IGNORECASE | re.DOTALL)
# A reference is one entry of a list, a few dozen words; a longer line that
# holds the mark is prose quoting one, or a whole page without line breaks,
# and is kept.
CITATION_MAX_WORDS = 80


def split_passages(
    text: str, doc_id: str = "doc", *, max_words: int = 100, title: str = "", url: str = ""
) -> list[Passage]:
    """One document as :class:`Passage` values, cut as the collection reader
    cuts documents (:func:`chunk_text`: paragraphs
    packed up to ``max_words`` words, long ones cut at sentence ends), its
    reference entries left out (:func:`without_citations`). Ids are
    ``{doc_id}_p{i}``, QReCC's passage-id layout; scores are 0.

    >>> [(p.id, p.text) for p in split_passages("One two.\\n\\nThree four.\\n\\nFive six seven.", "d", max_words=4)]
    [('d_p0', 'One two. Three four.'), ('d_p1', 'Five six seven.')]
    """
    if max_words < 1:
        raise ValueError(f"max_words must be >= 1, got {max_words}")
    return [
        Passage(id=f"{doc_id}_p{i}", text=chunk, score=0.0, title=title, url=url)
        for i, chunk in enumerate(chunk_text(without_citations(text), max_words=max_words))
    ]


def without_citations(text: str) -> str:
    """``text`` without its reference entries: a markup list item or a line
    (of at most :data:`CITATION_MAX_WORDS` words) that holds a reference's
    mark ("Retrieved May 22 , 2017", "Archived from the original"). A
    Wikipedia page's references name its subject in title after title, so
    BM25 handed the reader citations over the sentences that answer, and
    the reader answered with one: "Retrieved June 29 , 2016 ." to NQ's
    "what season of the game of thrones is it".

    >>> without_citations("<P> It aired in 2017 . </P> <Ol> <Li> Smith . Retrieved May 22 , 2017 . </Li> <Li> A note </Li> </Ol>")
    '<P> It aired in 2017 . </P> <Ol>   <Li> A note </Li> </Ol>'
    >>> without_citations("It aired in 2017.\\n^ Smith (2017). Retrieved 22 May 2017.\\nThe body was retrieved May 22.")
    'It aired in 2017.\\nThe body was retrieved May 22.'
    >>> without_citations("<Ol> <Li> Jump up ^ Lowry ( 2017 ) . `` TV Review '' . </Li> <Li> Jump up ^ The finale drew 12 million . </Li> </Ol>")
    '<Ol>   <Li> Jump up ^ The finale drew 12 million . </Li> </Ol>'
    """
    text = _LIST_ITEM.sub(lambda item: " " if _is_reference_item(text, item) else item.group(), text)
    return "\n".join(
        line for line in text.split("\n")
        if not (len(line.split()) <= CITATION_MAX_WORDS and (
            _CITATION.search(line) or _REFERENCE_OPENS.match(line)))
    )


def _is_reference_item(text: str, item: re.Match) -> bool:
    """Whether a list item of ``text`` is a reference entry (see :func:`without_citations`)."""
    entry = item.group()
    if _CITATION.search(entry):
        return True
    if not _REFERENCE_OPENS.match(entry):
        return False
    before = text[: item.start()]
    return max((m.start() for m in _CELL_OPEN.finditer(before)), default=-1) <= max(
        (m.start() for m in _CELL_CLOSE.finditer(before)), default=-1)


def analyze(text: str) -> list[str]:
    """Lucene-English-style terms: lower case, possessives and stop words
    dropped, Porter-stemmed.

    >>> analyze("The Driver's licences are renewed")
    ['driver', 'licenc', 'renew']
    """
    terms = []
    for token in tokens(text, "lucene"):
        token = re.sub(r"['’]s$", "", token)
        if token and token not in LUCENE_STOPWORDS:
            terms.append(porter_stem(token))
    return terms


class ChunkRetriever:
    """BM25 over a fixed list of passages, in memory.

    >>> r = ChunkRetriever([Passage("a", "The cat sat.", 0.0), Passage("b", "A dog ran far.", 0.0)])
    >>> [p.id for p in r.search("cats", 2)]
    ['a']
    """

    def __init__(self, passages: Sequence[Passage], config: RetrieverConfig = RetrieverConfig()) -> None:
        """``config``: its ``bm25_k1`` and ``bm25_b``, the index's own settings."""
        self.passages = list(passages)
        for number, passage in enumerate(self.passages):
            if not isinstance(passage, Passage):
                raise TypeError(f"passage {number} must be a Passage, not {type(passage).__name__}")
        self.config = config
        self._terms = [Counter(analyze(f"{p.title} {p.text}" if p.title else p.text)) for p in self.passages]
        self._lengths = [sum(t.values()) for t in self._terms]
        self._avg_length = sum(self._lengths) / max(1, len(self._lengths)) or 1.0
        df: Counter = Counter()
        for terms in self._terms:
            df.update(terms.keys())
        n = len(self.passages)
        # Lucene's BM25 idf: log(1 + (N - df + 0.5) / (df + 0.5)), always > 0.
        self._idf = {term: math.log(1 + (n - f + 0.5) / (f + 0.5)) for term, f in df.items()}
        self._typed = TypedTerms(analyze, lambda term: df.get(term, 0),
                                 lambda: [(term, f) for term, f in df.items() if not term.isascii()])

    def respelled(self, text: str) -> str:
        """``text`` with each word typed without its accents written as the
        passages spell it, as :meth:`search` searched it ("who was antonin
        dvorak" → "who was antonín dvořák"): what reads the question after
        the search reads this, as for the index
        (:meth:`BM25Retriever.respelled <assistant.retrieval.BM25Retriever.respelled>`)."""
        return self._typed.respelled(search_query(text))

    def scores(self, query: str) -> list[float]:
        """The BM25 score of every passage for ``query``, in passage order
        (a term typed without its accents also scores the passages'
        accented spelling, as :meth:`search` does)."""
        k1, b = self.config.bm25_k1, self.config.bm25_b
        typed = analyze(query)
        query_terms = Counter(typed + self._typed.added(typed))
        out = []
        for terms, length in zip(self._terms, self._lengths):
            norm = k1 * (1 - b + b * length / self._avg_length)
            score = 0.0
            for term, count in query_terms.items():
                tf = terms.get(term, 0)
                if tf:
                    score += count * self._idf[term] * tf / (tf + norm)
            out.append(score)
        return out

    def search(self, query: str, k: int) -> list[Passage]:
        """The ``k`` best passages with a positive score, best first (ties:
        document order), each carrying its BM25 score. Bad input is refused
        as :meth:`BM25Retriever.search <assistant.retrieval.BM25Retriever.search>`
        refuses it."""
        query, k = search_query(query), search_k(k)
        scored = [(s, i) for i, s in enumerate(self.scores(query)) if s > 0]
        scored.sort(key=lambda pair: (-pair[0], pair[1]))
        return [
            dataclasses.replace(p, score=s)
            for s, p in ((s, self.passages[i]) for s, i in scored[:k])
        ]
