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
terms with a non-ASCII letter; a document searched in memory
(:class:`~assistant.retrieval.ChunkRetriever`) gives its own counts.

A term the index holds more often than any accented twin is searched as
it is: a question typed as the collection writes it, or in ASCII English,
is searched exactly as before. :meth:`TypedTerms.respelled` writes a
text's words as the index spells them ("who is pele" → "who is pelé"), for
what reads the question after BM25 (the rescorer, the reader).

A misspelt name is corrected only where that cannot touch a word the
index knows: in an index of thousands of passages (the default
collection's, not a few uploads'), a term of at least seven letters that
no passage holds gets
the index's commonest term one edit away with the same first letter, where
one is plainly the commonest and held by two passages at least
("beethovan" → "beethoven", "michaelangelo" → "michelangelo"). Lucene's
edit-distance terms at two edits, or for shorter terms, also "corrected"
the judged CAsT rewrites' own spellings ("Mesosoic" → "mesozoic",
"stigmatisation", "wineries" → "winter") and ranked their judged passages
lower.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable, Iterator

from ..kernel import TOKEN_PATTERNS, folded_text

__all__ = ["TypedTerms"]

# The field Anserini indexes a passage's words in.
_FIELD = "contents"
# Accented spellings added for one typed term, at most (the commonest first).
_MOST_SPELLINGS = 3
# Terms with a letter beyond ASCII: the only ones whose folded form can differ.
_NON_ASCII = ".*[\u0080-\uffff].*"
# The shortest term that is corrected when no passage holds it: one edit
# in a shorter word is too often another word ("mesoso" → "mesozo").
_CORRECTED_LETTERS = 7
# The fewest passages that hold a correction.
_CORRECTION_PASSAGES = 2
# The fewest passages of an index whose terms are corrected: a few
# documents' words (a session's uploads) are too few to tell a misspelling
# from a word they do not use ("through" would read "though").
_CORRECTING_INDEX = 5000


class TypedTerms:
    """Adds to a query the accented index terms its terms most likely meant.

    ``analyze`` is the query's analyzer (a text's terms, as the index's
    passages were analyzed), ``passages_with`` the number of passages that
    hold a term, and ``accented`` the index's terms with a letter beyond
    ASCII, with their passage counts (called once, at the first query):
    :meth:`from_searcher` reads them from a Lucene index, and the in-memory
    :class:`~assistant.retrieval.ChunkRetriever` from its own counts.
    ``near`` (optional) gives the index's terms one edit from a term, with
    the same first letter, and their passage counts: where it is given, a
    misspelt name is corrected (see the module's docstring).
    """

    def __init__(
        self,
        analyze: Callable[[str], list[str]],
        passages_with: Callable[[str], int],
        accented: Callable[[], Iterable[tuple[str, int]]],
        near: Callable[[str], Iterable[tuple[str, int]]] | None = None,
    ):
        self._analyze = analyze
        self._passages_with = passages_with
        self._accented_terms = accented
        self._near = near
        self._accented: dict[str, list[tuple[int, str]]] | None = None

    @classmethod
    def from_searcher(cls, searcher) -> "TypedTerms":
        """For a pyserini ``LuceneSearcher`` with Anserini's default English analyzer."""
        from jnius import autoclass, cast

        from ._java import import_pyserini

        analysis = import_pyserini("pyserini.analysis")
        analyzer = analysis.Analyzer(analysis.get_lucene_analyzer())
        reader = searcher.object.reader
        term = autoclass("org.apache.lucene.index.Term")
        terms = autoclass("org.apache.lucene.index.MultiTerms").getTerms(
            cast("org.apache.lucene.index.IndexReader", reader), _FIELD
        )

        def accented() -> Iterator[tuple[str, int]]:
            if terms is None:  # an index without a single word
                return
            # Lucene's automaton walks only the terms with a letter beyond ASCII.
            automaton = autoclass("org.apache.lucene.util.automaton.RegExp")(_NON_ASCII).toAutomaton()
            walk = terms.intersect(autoclass("org.apache.lucene.util.automaton.CompiledAutomaton")(automaton), None)
            while (found := walk.next()) is not None:
                yield found.utf8ToString(), walk.docFreq()

        def near(typed: str) -> Iterator[tuple[str, int]]:
            if terms is None:
                return
            # One edit (a transposition counts as one), the first letter kept.
            walk = autoclass("org.apache.lucene.search.FuzzyTermsEnum")(terms, term(_FIELD, typed), 1, 1, True)
            while (found := walk.next()) is not None:
                yield found.utf8ToString(), walk.docFreq()

        return cls(analyzer.analyze, lambda typed: reader.docFreq(term(_FIELD, typed)), accented,
                   near if searcher.num_docs >= _CORRECTING_INDEX else None)

    def repaired(self, query: str) -> str:
        """``query``, followed by the index's terms that its terms most
        likely meant; ``query`` itself when there are none."""
        added = self.added(self._analyze(query))
        return f"{query} {' '.join(added)}" if added else query

    def added(self, terms: Iterable[str]) -> list[str]:
        """The index's terms that the analyzed ``terms`` most likely meant,
        for each distinct term in turn: what :meth:`repaired` adds."""
        found: list[str] = []
        for term in dict.fromkeys(terms):
            found += self.meant(term)
        return found

    def respelled(self, text: str) -> str:
        """``text`` with each word whose term :meth:`meant` respells written
        as the index's term, with the ending the analyzer had cut and the case
        as typed ("Frederic" → "Frédéric", "KRAKOW" → "KRAKÓW"); the other
        words, and a word whose spelling cannot be written so, as typed."""
        # The words analyzed at once, a space between each: the analyzer's
        # tokenizer breaks at a space and its filters take one token at a
        # time, so these are the terms of each word analyzed alone. A text
        # none of whose terms has a spelling to add (nearly every question)
        # is then one call of the analyzer, not one a word.
        # Each term's spellings are looked up once: for a misspelt name that
        # is a walk of the index's terms dictionary.
        words = " ".join(TOKEN_PATTERNS["lucene"].findall(text))
        spellings = {term: self.meant(term) for term in dict.fromkeys(self._analyze(words))}
        if not any(spellings.values()):
            return text

        def word(typed: re.Match) -> str:
            terms = self._analyze(typed.group())
            meant = (spellings[terms[0]] if terms[0] in spellings else self.meant(terms[0])) if len(terms) == 1 else []
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
        spellings = self._accents().get(term)
        if spellings:
            passages = self._passages_with(term)
            return [spelling for held, spelling in spellings if held > passages]
        if self._near is None or len(term) < _CORRECTED_LETTERS or not (term.isascii() and term.isalpha()):
            return []  # most terms: no passage count to look up
        if self._passages_with(term):
            return []
        # Only a spelling plainly meant: held by more passages than any other
        # one edit away ("booster" is as near "boister" as "bolster", one
        # passage each), and by two at least (a term of one passage is as
        # often the collection's own slip or a rare word). And only a term
        # the analyzer leaves as it is, as for an accented one.
        near = sorted(((held, found) for found, held in self._near(term) if found != term), reverse=True)
        if not near or near[0][0] < _CORRECTION_PASSAGES or (len(near) > 1 and near[1][0] == near[0][0]):
            return []
        best = near[0][1]
        return [best] if self._analyze(best) == [best] else []

    def _accents(self) -> dict[str, list[tuple[int, str]]]:
        # Built on first use, not when the index is opened: a tool that opens
        # an index and never searches it does not pay for it.
        if self._accented is None:
            self._accented = self._build_accents()
        return self._accented

    def _build_accents(self) -> dict[str, list[tuple[int, str]]]:
        # {typed term: [(passages, accented term), ...], the commonest first}.
        spellings: dict[str, list[tuple[int, str]]] = {}
        for term, passages in self._accented_terms():
            folded = folded_text(term)
            if folded == term or not folded.isascii():
                continue
            typed = self._analyze(folded)
            # The term goes into the query text, which the analyzer reads
            # again: only a term it leaves as it is can be added.
            if len(typed) == 1 and self._analyze(term) == [term]:
                spellings.setdefault(typed[0], []).append((passages, term))
        return {typed: sorted(found, reverse=True)[:_MOST_SPELLINGS] for typed, found in spellings.items()}
