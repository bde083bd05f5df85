"""BM25 retrieval over a Lucene index (pyserini/Anserini), as in QReCC."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator, Protocol, Sequence, runtime_checkable

from ..kernel import Passage, RetrieverConfig
from ._inputs import search_k, search_query
from ._java import JAVA_LOCK, import_pyserini
from ._lucene import damaged, existing_index, java_exception, opened, verify_checksums
from ._typed import TypedTerms

__all__ = ["Retriever", "BM25Retriever"]

# Lucene refuses boolean queries of more than 1024 clauses; a query is one
# clause per distinct term, so we keep the first 512 words of very long input.
_MAX_QUERY_WORDS = 512


@runtime_checkable
class Retriever(Protocol):
    """Finds the ``k`` passages most relevant to a self-contained query."""

    def search(self, query: str, k: int) -> list[Passage]: ...


class BM25Retriever:
    """Lucene BM25 over an index built by :mod:`assistant.index`.

    Use :meth:`from_index`; ``__init__`` takes an open ``LuceneSearcher``.
    Any Lucene failure while searching (a file damaged after opening) is
    raised as :class:`~assistant.kernel.IndexDamagedError`. A name typed
    without its accents is searched with the index's accented spelling
    beside it (see :class:`._typed.TypedTerms`). :meth:`close` (or a
    ``with`` block) lets go of the index's files.
    """

    def __init__(self, searcher, index_dir: str = ""):
        self._searcher = searcher
        self.index_dir = index_dir
        self._java_error = java_exception()
        # Concurrent searches (the app's sessions) raised NullPointerException
        # reading the hits, and two searchers side by side (the default index
        # and a session's upload) crashed the JVM (SIGSEGV in Lucene's
        # Document.get) or said the index was damaged. The likely cause is
        # pyjnius, not pyserini or Lucene (see ._java.JAVA_LOCK): every
        # searcher takes the process's one Java lock, which builds and
        # opening an index take too.
        self._lock = JAVA_LOCK
        self._typed: TypedTerms | None = None
        self._closed = False

    @classmethod
    def from_index(
        cls, index_dir: str | Path, config: RetrieverConfig = RetrieverConfig(), *, verify: bool = True
    ) -> "BM25Retriever":
        """Open the index at ``index_dir``; with ``verify`` (the default) every
        file's checksum is checked first, so a damaged index is refused with
        :class:`~assistant.kernel.IndexDamagedError` at start, not mid-answer."""
        index_dir = existing_index(index_dir)
        lucene = import_pyserini()
        # Under the one Java lock: two indexes opened at once (two visitors'
        # uploads) crashed the JVM with SIGSEGV. Reading the files for their
        # checksums is Python's and holds it only to list them.
        if verify:
            verify_checksums(index_dir, JAVA_LOCK)
        searcher = opened(index_dir, JAVA_LOCK, lambda path: lucene.LuceneSearcher(str(path)))
        with JAVA_LOCK:
            searcher.set_bm25(config.bm25_k1, config.bm25_b)
        return cls(searcher, str(index_dir))

    @property
    def size(self) -> int:
        """Number of passages in the index."""
        with self._lock:  # a call into Java, as every other
            return self._searcher.num_docs

    def search(self, query: str, k: int = 10) -> list[Passage]:
        """The ``k`` best passages for ``query``, best first. A query that is
        not a string, or a ``k`` that is not an int, is a TypeError; an empty
        query or a ``k`` below 1 an :class:`~assistant.kernel.InvalidInputError`."""
        query, k = self._query(query), search_k(k)
        try:
            with self._lock:
                hits = self._open().search(self._repaired(query), k=self._capped(k))
                found = [(hit.docid, hit.score, hit.lucene_document.get("raw")) for hit in hits]
        except self._java_error as error:
            raise damaged(self.index_dir, error) from None
        return [self._passage(*hit) for hit in found]

    def respelled(self, text: str) -> str:
        """``text`` with each word typed without its accents written as this
        index spells it, as :meth:`search` searched it: "who is pele" → "who
        is pelé". What reads the question after the search (the rescorer,
        the reader) reads this, so that it sees the name the passages hold."""
        try:
            with self._lock:
                return self._typed_terms().respelled(search_query(text))
        except self._java_error as error:
            raise damaged(self.index_dir, error) from None

    def batch_search(self, queries: Sequence[str], k: int = 10, threads: int = 1) -> list[list[Passage]]:
        """:meth:`search` for each query, on ``threads`` Lucene threads; the
        results in query order, each as :meth:`search` would return it."""
        if isinstance(queries, str):
            # A string is a sequence too: each of its characters would be searched.
            raise TypeError("queries must be a list of str, not one str; for one query, call search")
        texts = [self._query(query) for query in queries]
        k, threads = search_k(k), search_k(threads, "threads")
        qids = [str(number) for number in range(len(texts))]
        try:
            with self._lock:
                texts = [self._repaired(text) for text in texts]
                results = self._open().batch_search(texts, qids, k=self._capped(k), threads=threads)
                return [
                    [self._passage(hit.docid, hit.score, hit.lucene_document.get("raw")) for hit in results[qid]]
                    for qid in qids
                ]
        except self._java_error as error:
            raise damaged(self.index_dir, error) from None

    def documents(self, ids: Sequence[str]) -> list[Passage]:
        """Passages by id (score 0), e.g. the gold passages of an evaluation."""
        passages = []
        try:
            with self._lock:
                for doc_id in ids:
                    doc = self._open().doc(doc_id)
                    if doc is not None:
                        passages.append(self._passage(doc_id, 0.0, doc.raw()))
        except self._java_error as error:
            raise damaged(self.index_dir, error) from None
        return passages

    def ids(self) -> list[str]:
        """Every passage's id, in Lucene's term order: read from the index's
        term dictionary of ids, one call a term, not from the stored
        passages, whose reading :meth:`passages` takes seconds for a
        collection of thousands."""
        from jnius import autoclass, cast

        try:
            with self._lock:
                terms = autoclass("org.apache.lucene.index.MultiTerms").getTerms(
                    cast("org.apache.lucene.index.IndexReader", self._open().object.reader), "id")
                if terms is None:
                    return []
                walk, found = terms.iterator(), []
                while (term := walk.next()) is not None:
                    found.append(term.utf8ToString())
                return found
        except self._java_error as error:
            raise damaged(self.index_dir, error) from None

    def passages(self) -> Iterator[Passage]:
        """Every passage of the index (score 0), in index order: what
        :func:`~assistant.retrieval.passage_vectors` encodes."""
        for number in range(self.size):
            try:
                with self._lock:
                    doc = self._open().doc(number)
                    found = None if doc is None else (doc.docid(), doc.raw())
            except self._java_error as error:
                raise damaged(self.index_dir, error) from None
            if found is not None:
                yield self._passage(found[0], 0.0, found[1])

    @staticmethod
    def _query(query: str) -> str:
        return " ".join(search_query(query).split()[:_MAX_QUERY_WORDS])

    def _repaired(self, query: str) -> str:
        return self._typed_terms().repaired(query)

    def _typed_terms(self) -> TypedTerms:
        # Under the lock: the terms' reader is the searcher's.
        if self._typed is None:
            self._typed = TypedTerms.from_searcher(self._open())
        return self._typed

    def close(self) -> None:
        """Let go of the index: Lucene's reader and the files it holds open
        (a session's uploads are removed when it ends, and a removed file
        still mapped keeps its disk space). A search after it is a
        RuntimeError; closing again does nothing. A search under way is
        finished first."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._typed = None  # it holds the reader too
            try:
                self._searcher.close()
                # pyserini's searcher opens a second reader of the index
                # (its index_reader) that its close() leaves open.
                second = getattr(getattr(self._searcher, "index_reader", None), "reader", None)
                if second is not None:
                    second.close()
            except self._java_error as error:
                raise damaged(self.index_dir, error) from None

    def __enter__(self) -> "BM25Retriever":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _open(self):
        # Under the lock: the searcher, unless closed (Lucene's own refusal,
        # AlreadyClosedException, would read as a damaged index).
        if self._closed:
            raise RuntimeError(f"this BM25Retriever is closed (index {self.index_dir or 'opened by the caller'})")
        return self._searcher

    def _capped(self, k: int) -> int:
        # Java takes k as an int, so 2**31 cannot reach Lucene; and more hits
        # than the index holds are every passage, whatever k says. So a large
        # k is capped at the passage count rather than refused: the caller
        # gets what it asked for, all the hits there are. (Under the lock,
        # as every other call of the searcher is.)
        return min(k, max(1, self._searcher.num_docs))

    @staticmethod
    def _passage(doc_id: str, score: float, raw: str | None) -> Passage:
        fields = json.loads(raw) if raw else {}
        return Passage(
            id=doc_id,
            text=fields.get("text") or fields.get("contents", ""),
            score=float(score),
            title=fields.get("title", ""),
            url=fields.get("url", ""),
            description=fields.get("description", ""),
        )
