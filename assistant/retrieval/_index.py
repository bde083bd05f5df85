"""Building a Lucene BM25 index (the engine of ``python -m assistant.index``).

The build streams: passages are read, turned into Lucene JSON and handed to
Anserini in batches of ``_BATCH``, so Python holds at most four batches whatever the
collection's size (Lucene buffers in its own bounded RAM buffer and flushes
segments to disk). Anserini's ``SimpleIndexer`` indexes each batch on
``threads`` threads of its own, while a Python thread reads and encodes the
next batches (at most two wait).

Duplicate ids are found without a Python set of every id. While reading,
each id's 64-bit hash goes into a flat array (8 bytes a passage, up to
:data:`_MAX_HASHES` passages); after the build the sorted array shows in
one NumPy pass whether any two ids may be equal. Only then (or past the
cap) does Lucene name the id: each passage's id is one term of the index's
``id`` field, so a segment whose term count is below its document count has
a repeated id, and across segments one sorted walk of the merged term
dictionary finds the first id in two documents (see
:func:`._lucene.duplicate_id`), exact but two Java calls a term. A
duplicate is reported when the build ends, not at the line where it occurs.

The index is written to a temporary folder next to ``DIR``, checked
(duplicates, then every file's checksum) and only then renamed into place,
so an interrupted or failed build never leaves a half index that a later
start would take for a good one.
"""

from __future__ import annotations

import json
import queue
from array import array
import shutil
import sys
import tempfile
import threading
from contextlib import closing
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np
from tqdm import tqdm

from ..kernel import ConfigError, DataFormatError, IndexNotFoundError, default_index_dir
from ._collection import collection_size, read_collection
from ._java import import_pyserini
from ._lucene import duplicate_id, java_exception, open_reader, verify_checksums

__all__ = ["build_index", "ensure_index", "verify_index"]

# Passages handed to Lucene per call: one JNI round trip each, so batching
# matters (~10x faster than one at a time), while memory stays small. Each
# indexing thread gets a share of the batch, so it grows with the threads.
_BATCH = 512

# Passages whose id hashes the duplicate check keeps (8 bytes each: 512 MB
# at the cap, QReCC's 54M passages fit under it); a larger collection is
# checked by Lucene's term walk alone, which holds nothing in Python.
_MAX_HASHES = 64_000_000


def _lucene_doc(passage: dict) -> dict:
    # Lucene ranks "contents"; the title goes in front of it so that a passage
    # from deep inside a document still matches its subject's name. The text
    # we show is kept apart in "text" (stored in the raw JSON).
    # "text" is stored only where it differs from "contents" (the retriever
    # shows "contents" when it is absent): the same words need not be
    # encoded, passed to Java, parsed and stored twice.
    title, text = passage["title"], passage["contents"]
    if not title or text.startswith(title):
        return {"id": passage["id"], "contents": text, "title": title, "url": passage["url"]}
    return {"id": passage["id"], "contents": f"{title}\n{text}", "text": text, "title": title, "url": passage["url"]}


def build_index(
    passages: Iterable[dict],
    index_dir: str | Path,
    *,
    total: int | None = None,
    progress: bool = True,
    description: str = "Indexing",
    threads: int = 1,
) -> int:
    """Index ``passages`` into ``index_dir`` (replacing it) and return their count.

    ``passages`` may be any iterable, read once. ``total`` (when known) gives
    the progress bar its ETA; otherwise it shows the rate. ``threads`` are
    Anserini's indexing threads: one keeps documents in input order, so an
    index is the same at every build (BM25 breaks score ties by that order);
    more index faster where there are cores to spare, but the order, and so
    the order of tied hits, then varies between builds.
    """
    if threads < 1:
        raise ConfigError(f"threads must be at least 1, not {threads}.")
    index_dir = Path(index_dir)
    index_dir.parent.mkdir(parents=True, exist_ok=True)
    LuceneIndexer = import_pyserini("pyserini.index.lucene").LuceneIndexer
    JavaException = java_exception()
    staging = Path(tempfile.mkdtemp(prefix=index_dir.name + ".", dir=index_dir.parent))
    batch_size = _BATCH * threads
    count = 0
    try:
        # -storeRaw keeps each passage's JSON for display; we add raw JSON strings
        # because add_batch_dict would keep only id and contents.
        indexer = LuceneIndexer(args=["-index", str(staging), "-storeRaw"], threads=threads)
        try:
            with tqdm(total=total, desc=description, unit=" passages", disable=not progress,
                      file=sys.stderr, smoothing=0.1) as bar:
                hashes = array("q")
                with closing(_prefetched(_batches(passages, batch_size, hashes))) as batches:
                    for batch in batches:
                        count += _add(indexer, batch, count)
                        bar.update(len(batch))
        finally:
            indexer.close()
        if count == 0:
            raise DataFormatError("The collection has no passages: nothing to index.")
        _check_ids(staging, count, hashes, JavaException)
        verify_checksums(staging)
        (staging / "convqa.json").write_text(json.dumps({"passages": count}))
        if index_dir.exists():
            shutil.rmtree(index_dir)
        staging.rename(index_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return count


def _batches(passages: Iterable[dict], size: int, hashes: array) -> Iterator[list[str]]:
    """Lucene JSON strings, ``size`` a batch; each id's hash appended to ``hashes``."""
    batch: list[str] = []
    for passage in passages:
        if len(hashes) < _MAX_HASHES:
            hashes.append(hash(passage["id"]))
        # ASCII-escaped JSON: Java reads the escapes back to the same text,
        # and escaping is cheaper than encoding raw UTF-8 here.
        batch.append(json.dumps(_lucene_doc(passage)))
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


_DONE = object()


def _prefetched(batches: Iterator[list[str]], depth: int = 2) -> Iterator[list[str]]:
    """``batches``, read and encoded on a thread of their own while Lucene
    indexes the previous one (pyjnius releases the GIL during Java calls).
    At most ``depth`` batches wait, so memory stays bounded; an error while
    reading (a bad line) is raised here, in the caller's thread."""
    waiting: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item) -> bool:
        while not stop.is_set():
            try:
                waiting.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce():
        try:
            for batch in batches:
                if not put(batch):
                    return
            put(_DONE)
        except BaseException as error:  # handed to the consumer, which re-raises it
            put(error)

    reader = threading.Thread(target=produce, name="index-reader", daemon=True)
    reader.start()
    try:
        while True:
            item = waiting.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        reader.join()


def _add(indexer, batch: list[str], before: int) -> int:
    # The Java call itself, because pyserini's add_batch_raw drops the count
    # of documents indexed that it returns.
    added = indexer.object.addRawDocuments(batch)
    if added != len(batch):
        # SimpleIndexer logs and skips a document it cannot parse or index.
        raise DataFormatError(
            f"Lucene refused {len(batch) - added} of passages {before + 1}-{before + len(batch)}; "
            "see the log above."
        )
    return added


def _may_repeat(hashes: array, count: int) -> bool:
    """Whether two ids may be equal: two equal hashes, or ids past the cap."""
    if len(hashes) < count:
        return True
    ordered = np.sort(np.frombuffer(hashes, dtype=np.int64))
    return bool((ordered[1:] == ordered[:-1]).any())


def _check_ids(staging: Path, count: int, hashes: array, JavaException) -> None:
    reader = open_reader(staging)
    try:
        if reader.numDocs() != count:
            raise DataFormatError(f"Lucene holds {reader.numDocs()} passages of the {count} given.")
        # Distinct hashes mean distinct ids; equal ones may be a collision, so Lucene decides.
        repeated = duplicate_id(reader) if _may_repeat(hashes, count) else None
    except JavaException as error:
        raise DataFormatError(f"Cannot read back the new index ({str(error).splitlines()[0]}).") from None
    finally:
        reader.close()
    if repeated is not None:
        raise DataFormatError(f"Duplicate passage id {repeated!r}: ids must be unique.")


def verify_index(index_dir: str | Path) -> int:
    """Verify the checksums of every file of the index at ``index_dir``.

    Returns its passage count; raises :class:`~assistant.kernel.IndexDamagedError`
    (one line naming the rebuild command) when a file is damaged.
    """
    return verify_checksums(index_dir)


def ensure_index(index_dir: str | Path) -> Path:
    """The index at ``index_dir``; the default collection's is built on first use.

    Any other missing index is an error: we cannot guess its collection.
    """
    index_dir = Path(index_dir)
    if (index_dir / "convqa.json").exists():
        return index_dir
    if index_dir.resolve() != default_index_dir().resolve():
        raise IndexNotFoundError(
            f"No index at {index_dir}. Build it with "
            f"`python -m assistant.index --input COLLECTION --index {index_dir}`."
        )
    print(f"First start: indexing the default collection into {index_dir} (once).", file=sys.stderr)
    # One thread: documents in collection order, so every first start builds
    # the same index and the same ranking of tied hits.
    build_index(read_collection(), index_dir, total=collection_size(), description="Indexing Wikipedia summaries")
    return index_dir
