"""Building a Lucene BM25 index (the engine of ``python -m assistant.index``).

The index is written to a temporary folder next to ``DIR`` and renamed into
place when complete, so an interrupted build never leaves a half index that
a later start would take for a good one.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Iterable

from tqdm import tqdm

from ..kernel import DataFormatError, IndexNotFoundError, default_index_dir
from ._collection import read_collection
from ._java import import_pyserini

__all__ = ["build_index", "ensure_index"]

# Passages handed to Lucene per call: one JNI round trip each, so batching
# matters (~10x faster than one at a time), while memory stays small.
_BATCH = 512


def _lucene_doc(passage: dict) -> dict:
    # Lucene ranks "contents"; the title goes in front of it so that a passage
    # from deep inside a document still matches its subject's name. The text
    # we show is kept apart in "text" (stored in the raw JSON).
    title, text = passage["title"], passage["contents"]
    contents = text if not title or text.startswith(title) else f"{title}\n{text}"
    return {"id": passage["id"], "contents": contents, "text": text, "title": title, "url": passage["url"]}


def build_index(
    passages: Iterable[dict],
    index_dir: str | Path,
    *,
    total: int | None = None,
    progress: bool = True,
    description: str = "Indexing",
) -> int:
    """Index ``passages`` into ``index_dir`` (replacing it) and return their count."""
    index_dir = Path(index_dir)
    index_dir.parent.mkdir(parents=True, exist_ok=True)
    LuceneIndexer = import_pyserini("pyserini.index.lucene").LuceneIndexer
    staging = Path(tempfile.mkdtemp(prefix=index_dir.name + ".", dir=index_dir.parent))
    count = 0
    seen: set[str] = set()
    try:
        # One thread: the indexer's own threads fight the tokenizer for 2 cores.
        # -storeRaw keeps each passage's JSON for display; we add raw JSON strings
        # because add_batch_dict would keep only id and contents.
        indexer = LuceneIndexer(args=["-index", str(staging), "-storeRaw"], threads=1)
        batch: list[str] = []
        with tqdm(total=total, desc=description, unit=" passages", disable=not progress, file=sys.stderr) as bar:
            for passage in passages:
                if passage["id"] in seen:
                    raise DataFormatError(f"Duplicate passage id {passage['id']!r}: ids must be unique.")
                seen.add(passage["id"])
                batch.append(json.dumps(_lucene_doc(passage), ensure_ascii=False))
                if len(batch) == _BATCH:
                    indexer.add_batch_raw(batch)
                    bar.update(len(batch))
                    count += len(batch)
                    batch = []
            if batch:
                indexer.add_batch_raw(batch)
                bar.update(len(batch))
                count += len(batch)
        indexer.close()
        if count == 0:
            raise DataFormatError("The collection has no passages: nothing to index.")
        (staging / "convqa.json").write_text(json.dumps({"passages": count}))
        if index_dir.exists():
            shutil.rmtree(index_dir)
        staging.rename(index_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return count


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
    passages = list(read_collection())
    print(f"First start: indexing the default collection into {index_dir} (once).", file=sys.stderr)
    build_index(passages, index_dir, total=len(passages), description="Indexing Wikipedia summaries")
    return index_dir

