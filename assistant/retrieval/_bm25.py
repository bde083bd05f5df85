"""BM25 retrieval over a Lucene index (pyserini/Anserini), as in QReCC."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Protocol, Sequence, runtime_checkable

from ..kernel import IndexNotFoundError, InvalidInputError, Passage, RetrieverConfig
from ._java import import_pyserini

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
    """

    def __init__(self, searcher, index_dir: str = ""):
        self._searcher = searcher
        self.index_dir = index_dir
        # pyserini's searcher is not safe to share: concurrent searches (the
        # app's sessions) raised NullPointerException reading the hits.
        self._lock = threading.Lock()

    @classmethod
    def from_index(cls, index_dir: str | Path, config: RetrieverConfig = RetrieverConfig()) -> "BM25Retriever":
        index_dir = Path(index_dir)
        if not (index_dir.is_dir() and any(index_dir.glob("segments_*"))):
            raise IndexNotFoundError(
                f"No Lucene index at {index_dir}. Build one with "
                f"`python -m assistant.index --input COLLECTION --index {index_dir}`."
            )
        lucene = import_pyserini()
        try:
            searcher = lucene.LuceneSearcher(str(index_dir))
        except Exception as error:  # jnius raises JavaException for any Lucene failure
            raise IndexNotFoundError(
                f"The index at {index_dir} cannot be opened ({str(error).splitlines()[0]}). "
                f"Rebuild it with `python -m assistant.index --index {index_dir}`."
            ) from None
        searcher.set_bm25(config.bm25_k1, config.bm25_b)
        return cls(searcher, str(index_dir))

    @property
    def size(self) -> int:
        """Number of passages in the index."""
        return self._searcher.num_docs

    def search(self, query: str, k: int = 10) -> list[Passage]:
        words = query.split()
        if not words:
            raise InvalidInputError("The query is empty.")
        with self._lock:
            hits = self._searcher.search(" ".join(words[:_MAX_QUERY_WORDS]), k=k)
            found = [(hit.docid, hit.score, hit.lucene_document.get("raw")) for hit in hits]
        return [self._passage(*hit) for hit in found]

    def documents(self, ids: Sequence[str]) -> list[Passage]:
        """Passages by id (score 0), e.g. the gold passages of an evaluation."""
        passages = []
        for doc_id in ids:
            with self._lock:
                doc = self._searcher.doc(doc_id)
                raw = None if doc is None else doc.raw()
            if doc is not None:
                passages.append(self._passage(doc_id, 0.0, raw))
        return passages

    @staticmethod
    def _passage(doc_id: str, score: float, raw: str | None) -> Passage:
        fields = json.loads(raw) if raw else {}
        return Passage(
            id=doc_id,
            text=fields.get("text") or fields.get("contents", ""),
            score=float(score),
            title=fields.get("title", ""),
            url=fields.get("url", ""),
        )
