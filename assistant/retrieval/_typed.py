"""Query terms as people type them: a name without its accents.

The index has no accent folding (Anserini's English analyzer lower-cases,
drops stop words and stems, nothing more), so "Dvorak" is a term no passage
holds, and the article on Antonín Dvořák, whose term is "dvořák", was not
found at all. Folding the index would change every figure measured on it
and need an analyzer of our own on both sides; instead a query term gets
the index's accented terms whose accents taken off
(:func:`~assistant.kernel.folded_text`) give the typed term, where more
passages hold them than the typed term itself ("dvorak" → "dvořák", "pele"
→ "pelé"; "sao" → "são", though one passage writes "Sao"), added to the
query beside it. The accented terms are found by one scan of the terms
dictionary at the first query, for which Lucene's automaton walks only the
terms with a non-ASCII letter.

A term the index holds more often than any accented twin is searched as
it is: a question typed as the collection writes it, or in ASCII English,
is searched exactly as before. :meth:`TypedTerms.respelled` writes a
text's words as the index spells them ("who is pele" → "who is pelé"), for
what reads the question after BM25 (the rescorer, the reader).

Misspelt names ("Beethovan") are not corrected: Lucene's edit-distance
terms (``FuzzyTermsEnum``) found the right one for the names tried, but
they also "corrected" the judged CAsT rewrites' own spellings
("Mesosoic", "stigmatisation") and ranked their judged passages lower.
"""

from __future__ import annotations

import re

from ..kernel import TOKEN_PATTERNS, folded_text

__all__ = ["TypedTerms"]

# The field Anserini indexes a passage's words in.
_FIELD = "contents"
# Accented spellings added for one typed term, at most (the commonest first).
_MOST_SPELLINGS = 3
# Terms with a letter beyond ASCII: the only ones whose folded form can differ.
_NON_ASCII = ".*[\u0080-\uffff].*"


class TypedTerms:
    """Adds to a query the accented index terms its terms most likely meant.

    ``reader`` is the searcher's Lucene ``IndexReader``, ``analyzer`` the
    query's analyzer (pyserini's ``Analyzer``: what Anserini does to a
    query's text before it searches).
    """

    def __init__(self, reader, analyzer):
        from jnius import autoclass, cast

        self._analyzer = analyzer
        self._term = autoclass("org.apache.lucene.index.Term")
        self._terms = autoclass("org.apache.lucene.index.MultiTerms").getTerms(
            cast("org.apache.lucene.index.IndexReader", reader), _FIELD
        )
        self._reader = reader
        self._accented: dict[str, list[tuple[int, str]]] | None = None

    @classmethod
    def from_searcher(cls, searcher) -> "TypedTerms":
        """For a pyserini ``LuceneSearcher`` with Anserini's default English analyzer."""
        from ._java import import_pyserini

        analysis = import_pyserini("pyserini.analysis")
        return cls(searcher.object.reader, analysis.Analyzer(analysis.get_lucene_analyzer()))

    def repaired(self, query: str) -> str:
        """``query``, followed by the index's terms that its terms most
        likely meant; ``query`` itself when there are none."""
        if self._terms is None:  # an index without a single word
            return query
        added: list[str] = []
        for term in dict.fromkeys(self._analyzer.analyze(query)):
            added += self.meant(term)
        return f"{query} {' '.join(added)}" if added else query

    def respelled(self, text: str) -> str:
        """``text`` with each word whose term :meth:`meant` respells written
        as the index's term, with the ending the analyzer had cut and the case
        as typed ("Frederic" → "Frédéric", "KRAKOW" → "KRAKÓW"); the other
        words, and a word whose spelling cannot be written so, as typed."""
        if self._terms is None:
            return text

        def word(typed: re.Match) -> str:
            terms = self._analyzer.analyze(typed.group())
            meant = self.meant(terms[0]) if len(terms) == 1 else []
            if not meant:
                return typed.group()
            lowered = typed.group().lower()
            if folded_text(meant[0]) == lowered:
                spelled = meant[0]
            elif lowered.startswith(terms[0]):
                spelled = meant[0] + lowered[len(terms[0]):]
            else:
                return typed.group()
            # In the typed word's case: the reader takes capitalised words for names.
            if typed.group().isupper():
                return spelled.upper()
            return spelled[:1].upper() + spelled[1:] if typed.group()[:1].isupper() else spelled

        return TOKEN_PATTERNS["lucene"].sub(word, text)

    def meant(self, term: str) -> list[str]:
        """The index terms an analyzed ``term`` most likely meant (see the
        module's docstring), or none."""
        passages = self._reader.docFreq(self._term(_FIELD, term))
        return [spelling for held, spelling in self._accents().get(term, ()) if held > passages]

    def _accents(self) -> dict[str, list[tuple[int, str]]]:
        # Built on first use, not when the index is opened: a tool that opens
        # an index and never searches it does not pay for it.
        if self._accented is None:
            self._accented = self._build_accents()
        return self._accented

    def _build_accents(self) -> dict[str, list[tuple[int, str]]]:
        # {typed term: [(passages, accented term), ...], the commonest first}.
        from jnius import autoclass

        automaton = autoclass("org.apache.lucene.util.automaton.RegExp")(_NON_ASCII).toAutomaton()
        walk = self._terms.intersect(autoclass("org.apache.lucene.util.automaton.CompiledAutomaton")(automaton), None)
        spellings: dict[str, list[tuple[int, str]]] = {}
        while (found := walk.next()) is not None:
            term, passages = found.utf8ToString(), walk.docFreq()
            folded = folded_text(term)
            if folded == term or not folded.isascii():
                continue
            typed = self._analyzer.analyze(folded)
            # The term goes into the query text, which the analyzer reads
            # again: only a term it leaves as it is can be added.
            if len(typed) == 1 and self._analyzer.analyze(term) == [term]:
                spellings.setdefault(typed[0], []).append((passages, term))
        return {typed: sorted(found, reverse=True)[:_MOST_SPELLINGS] for typed, found in spellings.items()}
