"""Retrieval: BM25 over a Lucene index (pyserini) or over one document in memory.

``Retriever.search(query, k) -> list[Passage]`` is the stage's protocol;
:class:`BM25Retriever` serves an index built by :func:`build_index`,
:class:`ChunkRetriever` the passages of one document (CoQA, QuALITY, the
app's single-document mode). Collections are read by :func:`read_collection`
(their passages' short descriptions by :func:`described_titles`).
``Rescorer.rescore(question, passages, k, alternatives=())`` reorders BM25's hits
(one may also take ``stop``, the turn's :class:`~assistant.kernel.StopSignal`, as both below do):
:class:`DenseRescorer` mixes in a sentence encoder's cosine (a
:class:`DeferredRescorer` while its passage vectors are encoded).
"""

from ._bm25 import BM25Retriever, Retriever
from ._chunks import ChunkRetriever, analyze, split_passages
from ._collection import (
    DOCUMENT_SUFFIXES,
    MAX_FIELD_CHARS,
    MAX_ID_BYTES,
    READ_SUFFIXES,
    chunk_text,
    collection_size,
    default_collection_path,
    described_titles,
    html_to_text,
    read_collection,
    read_document,
    read_pdf,
    skipped_files,
    titled_text,
)
from ._collection import _markdown_text as markdown_text
from ._dense import VECTORS_FILE, DeferredRescorer, DenseRescorer, Rescorer, passage_vectors, stored_vectors
from ._expansion import expand_query
from ._index import build_index, ensure_index, index_collection, verify_index
from ._java import SERVING_JAVA_OPTIONS, find_java_home, import_pyserini, java_version, use_serving_java

__all__ = [
    "Retriever",
    "BM25Retriever",
    "ChunkRetriever",
    "Rescorer",
    "DenseRescorer",
    "DeferredRescorer",
    "passage_vectors",
    "stored_vectors",
    "VECTORS_FILE",
    "expand_query",
    "analyze",
    "split_passages",
    "chunk_text",
    "DOCUMENT_SUFFIXES",
    "READ_SUFFIXES",
    "default_collection_path",
    "html_to_text",
    "read_collection",
    "described_titles",
    "read_document",
    "read_pdf",
    "skipped_files",
    "titled_text",
    "MAX_FIELD_CHARS",
    "MAX_ID_BYTES",
    "markdown_text",
    "collection_size",
    "build_index",
    "index_collection",
    "ensure_index",
    "verify_index",
    "import_pyserini",
    "find_java_home",
    "use_serving_java",
    "SERVING_JAVA_OPTIONS",
    "java_version",
]
