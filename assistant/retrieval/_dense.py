"""BM25's hits rescored by meaning: a sentence encoder's cosine between the
rewrite and each passage.

BM25 finds candidates by their words, and ranks them by those words alone.
A follow-up's rewrite often holds the topic but not the passage's own
wording ("How deadly is breast cancer?" against a passage on survival
rates), so a passage that a sentence encoder places close to the rewrite
is lifted among BM25's top ``depth`` hits. Each hit's score becomes

    (1 - weight) * minmax(BM25) + weight * cos(rewrite, title + passage)

with BM25's scores min-max scaled over the hits, so that both parts lie in
about the same range whatever the query's length. The encoder reads the
rewrite as the user sees it, not the expanded BM25 query
(:func:`~assistant.retrieval.expand_query`): repeated words and a list of
earlier words are a bag for BM25, not a sentence.

Where the rewriter was unsure and kept other candidates
(:attr:`~assistant.kernel.Rewrite.alternatives`), the query's vector is the
rewrite's plus ``alternatives_weight`` times the mean of theirs, made unit
again: as in BM25's query, a meaning the candidates share weighs most, and
one only the shown rewrite has still counts. The previous turn's rewrite
does not join it: it lifts the previous turn's own passages
(BENCHMARKS.md §10).

Passage vectors are computed once per index (:func:`passage_vectors`) and
kept in the index folder, so a search encodes only the rewrite. A rebuilt
index replaces its folder, and with it the vectors.
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import logging
import os
import sys
import tempfile
import threading
from pathlib import Path
from typing import Callable, Generator, Iterable, Protocol, Sequence, runtime_checkable

import numpy as np
from tqdm import tqdm

from ..kernel import NO_STOP, AssistantError, ConfigError, IndexDamagedError, Passage, StopSignal, counted, with_stop
from ._expansion import other_candidates

__all__ = ["Rescorer", "DenseRescorer", "DeferredRescorer", "passage_vectors", "stored_vectors", "VECTORS_FILE"]

# The vectors' file inside an index folder (ids and float16 rows, npz).
VECTORS_FILE = "passage-vectors.npz"

# Passages encoded per call while building vectors: a progress step, few
# enough that a stop loses little (the file is written only at the end), and
# the most a small upload waits for on the app's one encoding worker, which
# turns to the index with the fewest passages left between chunks
# (assistant.pipeline.BackgroundEncoding). Four of MiniLM's batches.
_CHUNK = 256


@runtime_checkable
class Rescorer(Protocol):
    """Reorders retrieved passages for a self-contained question; keeps ``k``.
    One may also take a ``stop`` (:class:`~assistant.kernel.StopSignal`), as
    :class:`DenseRescorer` does: the pipeline then hands it the turn's."""

    def rescore(
        self, question: str, passages: Sequence[Passage], k: int, alternatives: Sequence[str] = ()
    ) -> list[Passage]: ...


def _passage_text(passage: Passage) -> str:
    # The title names the subject a passage from deep inside an article
    # never repeats, as the BM25 index puts it in front of the contents.
    return f"{passage.title} {passage.text}" if passage.title else passage.text


def stored_vectors(retriever) -> tuple[list[str], np.ndarray] | None:
    """Ids and unit vectors kept in the index folder of ``retriever`` (a
    :class:`~assistant.retrieval.BM25Retriever`) when they match its index,
    else None (none kept, or another index's: a line on stderr says so).
    An unreadable file is an :class:`IndexDamagedError` saying to delete it."""
    path = Path(retriever.index_dir) / VECTORS_FILE
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as stored:
            ids, vectors = [str(i) for i in stored["ids"]], stored["vectors"]
    except (OSError, ValueError, KeyError) as error:
        raise IndexDamagedError(
            f"The passage vectors at {path} cannot be read ({error}). Delete that file and start "
            "again: they are encoded anew from the index."
        ) from None
    if len(ids) == retriever.size == len(vectors):
        return ids, vectors
    print(f"The passage vectors at {path} are of another index; encoding them again.", file=sys.stderr)
    return None


def passage_vectors(
    retriever, encoder, *, progress: bool = True, report: Callable[[int], None] | None = None
) -> tuple[list[str], np.ndarray]:
    """Ids and unit vectors of every passage of ``retriever``'s index
    (a :class:`~assistant.retrieval.BM25Retriever`): :func:`stored_vectors`
    when they match the index, else encoded with ``encoder``
    (``encode(list[str]) -> unit rows``; its ``bulk()`` form when it has one,
    as :class:`~assistant.encoders.MiniLMEncoder` does) and saved there.
    ``report`` is told the passages encoded so far after each chunk.

    A folder that cannot be written (a read-only copy of an index) keeps
    nothing: the vectors are encoded again at the next start, and a line on
    stderr says so.
    """
    return _to_the_end(_vector_steps(retriever, encoder, progress), report)


def _vector_steps(retriever, encoder, progress: bool) -> Generator[int, None, tuple[list[str], np.ndarray]]:
    # passage_vectors a chunk at a time: yields the passages encoded so far
    # after each chunk, and returns the ids and vectors (none yielded when
    # they are kept), so that one worker can take turns between indexes.
    stored = stored_vectors(retriever)
    if stored is not None:
        return stored
    index_dir = Path(retriever.index_dir)
    print(f"Encoding the {counted(retriever.size, 'passage')} of {index_dir} for rescoring (once per index).", file=sys.stderr)
    encoder = encoder.bulk() if hasattr(encoder, "bulk") else encoder
    with tqdm(total=retriever.size, desc="Encoding passages", unit=" passages", disable=not progress,
              file=sys.stderr) as bar:
        ids, vectors = yield from _chunk_steps(retriever.passages(), encoder, bar.update)
    _save(index_dir / VECTORS_FILE, ids, vectors)
    return ids, vectors


def _chunk_steps(passages: Iterable[Passage], encoder, done: Callable[[int], object] = lambda n: None
                 ) -> Generator[int, None, tuple[list[str], np.ndarray]]:
    # Encodes passages a chunk at a time: yields the passages encoded so far
    # after each chunk (``done`` is told each chunk's size first), and
    # returns their ids and vectors.
    ids, rows = [], []
    passages = iter(passages)
    while chunk := list(itertools.islice(passages, _CHUNK)):
        rows.append(_encoded(encoder, chunk))
        ids += [p.id for p in chunk]
        done(len(chunk))
        yield len(ids)
    vectors = np.concatenate(rows) if rows else np.zeros((0, 0), dtype=np.float16)
    return ids, vectors


def _to_the_end(steps: Generator, report: Callable[[int], None] | None = None):
    # Runs steps to their end, telling report each yield (a report that
    # raises stops them: a cancelled job); their return value.
    try:
        while True:
            done = next(steps)
            if report is not None:
                report(done)
    except StopIteration as end:
        return end.value
    finally:
        steps.close()


def _encoded(encoder, passages: Sequence[Passage]) -> np.ndarray:
    # float16 halves the file and the memory, and moves a cosine far less
    # than the gaps that order the hits (BENCHMARKS.md §10).
    return np.asarray(encoder.encode([_passage_text(p) for p in passages]), dtype=np.float16)


def _save(path: Path, ids: list[str], vectors: np.ndarray) -> None:
    try:
        handle, staging = tempfile.mkstemp(prefix=".vectors.", suffix=".npz", dir=path.parent)
    except OSError as error:
        print(f"Could not keep the passage vectors in {path.parent} ({error.strerror}); "
              "they are encoded again at the next start.", file=sys.stderr)
        return
    try:
        with os.fdopen(handle, "wb") as out:
            np.savez(out, ids=np.array(ids, dtype=str), vectors=vectors)
        os.replace(staging, path)  # whole or absent: a stopped start never leaves half a file
    finally:
        if os.path.exists(staging):
            os.remove(staging)


class DenseRescorer:
    """Rescores BM25's hits with a sentence encoder (see the module docstring).

    Use :meth:`from_retriever`; ``__init__`` takes the vectors themselves.

    >>> import numpy as np
    >>> class Words:  # a toy encoder: one axis per word
    ...     axes = ["cat", "dog", "car"]
    ...     def encode(self, texts):
    ...         rows = np.array([[t.lower().count(w) for w in self.axes] for t in texts], dtype=float)
    ...         return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-9)
    >>> rescorer = DenseRescorer(Words(), ["a", "b"], Words().encode(["car car", "dog"]), weight=0.9)
    >>> hits = [Passage("a", "car car", 3.0), Passage("b", "dog", 1.0)]
    >>> [p.id for p in rescorer.rescore("my dog", hits, 2)]
    ['b', 'a']
    """

    def __init__(
        self, encoder, ids: Sequence[str], vectors: np.ndarray, weight: float, *, alternatives_weight: float = 3.0,
        keep_scores: bool = False,
    ) -> None:
        """``keep_scores``: each passage returned keeps the score it came
        with, not the mixed one (:meth:`for_document`)."""
        if not 0 <= weight <= 1:
            raise ConfigError(f"The rescoring weight must be from 0 to 1, got {weight!r}.")
        if alternatives_weight < 0:
            raise ConfigError(f"The alternatives' weight must be 0 (off) or more, got {alternatives_weight!r}.")
        if len(ids) != len(vectors):
            raise ValueError(f"{len(ids)} ids for {len(vectors)} vectors")
        self.encoder = encoder  # assistant.encoders.Encoder: unit rows
        self.weight = weight
        # 3: chosen on the training turns among 0.5-3 (BENCHMARKS.md §10). With
        # the second look's usual three alternatives, each candidate then
        # weighs the same as the shown rewrite.
        self.alternatives_weight = alternatives_weight
        self._row = {doc_id: row for row, doc_id in enumerate(ids)}
        self._vectors = vectors
        self.keep_scores = keep_scores

    @classmethod
    def from_retriever(cls, retriever, encoder, weight: float, *, progress: bool = True) -> "DenseRescorer":
        """For the index ``retriever`` searches; its passage vectors are read
        or encoded once (:func:`passage_vectors`)."""
        ids, vectors = passage_vectors(retriever, encoder, progress=progress)
        return cls(encoder, ids, vectors, weight)

    @classmethod
    def for_document(
        cls, encoder, weight: float, ids: Sequence[str] = (), vectors: np.ndarray | None = None
    ) -> "DenseRescorer":
        """The rescorer of one document's BM25 hits
        (:class:`~assistant.retrieval.ChunkRetriever`'s), which the app's
        one-document source and the evaluation's known context share: it
        chooses and orders them, each keeping its BM25 score. ``ids`` and
        ``vectors``: the document's passages' (:meth:`document_encoding`);
        without them each hit is encoded when it is rescored, so give an
        encoder that keeps its vectors (:class:`~assistant.encoders.CachedEncoder`)
        to encode a document asked about again only once."""
        # The reader weighs a passage's retrieval score against its own
        # measure of meaning (a sentence's similarity to the question): the
        # mixed score would count meaning twice in the passage the answer is
        # taken from.
        vectors = np.zeros((0, 0), dtype=np.float16) if vectors is None else vectors
        return cls(encoder, ids, vectors, weight, keep_scores=True)

    @classmethod
    def document_encoding(
        cls, passages: Sequence[Passage], encoder, weight: float, *, bulk=None
    ) -> Generator[int, None, "DenseRescorer"]:
        """:meth:`for_document` with ``passages`` (the document's) encoded a
        chunk at a time by ``bulk`` (default: ``encoder``, which encodes the
        questions), as :meth:`encoding` does an index's: a
        :class:`DeferredRescorer`'s ``make``."""
        ids, vectors = yield from _chunk_steps(passages, encoder if bulk is None else bulk)
        return cls.for_document(encoder, weight, ids, vectors)

    @classmethod
    def encoding(
        cls, retriever, encoder, weight: float, *, bulk=None, progress: bool = True
    ) -> Generator[int, None, "DenseRescorer"]:
        """:meth:`from_retriever` a chunk of passages at a time: a generator
        that yields the passages encoded so far after each chunk and returns
        the rescorer, which is what a :class:`DeferredRescorer`'s ``make``
        may return for a worker that takes turns between indexes. ``bulk``
        encodes the passages (default: ``encoder``, which encodes the
        questions)."""
        ids, vectors = yield from _vector_steps(retriever, encoder if bulk is None else bulk, progress)
        return cls(encoder, ids, vectors, weight)

    def rescore(
        self, question: str, passages: Sequence[Passage], k: int, alternatives: Sequence[str] = (),
        stop: StopSignal = NO_STOP,
    ) -> list[Passage]:
        """The ``k`` best of ``passages`` (BM25's hits, each with its score) by
        the mixed score, which each returned passage carries (its BM25 score
        with ``keep_scores``); ties keep
        BM25's order. ``alternatives``: the rewriter's other candidates for
        ``question``, which join its vector (see the module docstring).
        ``stop`` is handed to an encoder that takes one (the app's
        :class:`~assistant.encoders.BatchingEncoder`: a stopped turn's
        encoding leaves its queue at once, :class:`~assistant.kernel.Stopped`)."""
        passages = list(passages)
        if not passages or self.weight == 0:
            return passages[:k]
        bm25 = np.array([p.score for p in passages], dtype=np.float64)
        low, high = bm25.min(), bm25.max()
        scaled = (bm25 - low) / (high - low) if high > low else np.ones_like(bm25)
        encode = with_stop(self.encoder.encode, stop)
        query = self._query(question, alternatives, encode)
        mixed = (1 - self.weight) * scaled + self.weight * (self._vectors_of(passages, encode) @ query)
        order = np.argsort(-mixed, kind="stable")[:k]
        if self.keep_scores:
            return [passages[i] for i in order]
        return [dataclasses.replace(passages[i], score=float(mixed[i])) for i in order]

    def _query(self, question: str, alternatives: Sequence[str], encode: Callable) -> np.ndarray:
        others = other_candidates(question, alternatives) if self.alternatives_weight else []
        rows = np.asarray(encode([question, *others]), dtype=np.float32)  # one call
        if not others:
            return rows[0]
        query = rows[0] + self.alternatives_weight * rows[1:].mean(axis=0)
        norm = np.linalg.norm(query)
        return query / norm if norm > 0 else rows[0]

    def _vectors_of(self, passages: Sequence[Passage], encode: Callable) -> np.ndarray:
        rows = [self._row.get(p.id) for p in passages]
        missing = [_passage_text(p) for p, row in zip(passages, rows) if row is None]
        # Hits the vectors do not hold (from another index) are encoded now,
        # in one call, so they are neither favoured nor lost.
        fresh = iter(np.asarray(encode(missing), dtype=np.float32) if missing else ())
        return np.stack([self._vectors[row].astype(np.float32) if row is not None else next(fresh) for row in rows])


class DeferredRescorer:
    """A :class:`DenseRescorer` made in the background, so that a server
    answers at once from an index whose passages are not encoded yet (about
    two minutes for the default collection on 2 cores, BENCHMARKS.md §10).
    Until it is ready, :meth:`rescore` keeps BM25's order, and
    :attr:`notice` says so; if making it fails as it may (the encoder or
    the index missing or damaged, the disk full, memory short) the search
    stays BM25's and the notice gives the reason. Any other failure is a
    bug: it is raised by :meth:`rescore`, in the caller's thread, rather
    than hidden behind BM25's order.

    ``make(report)`` returns the rescorer and may call ``report(done)`` with
    the passages encoded so far, out of ``total``; or it returns a generator
    that yields ``done`` after each chunk and returns the rescorer
    (:meth:`DenseRescorer.encoding`). ``what`` names the passages in the
    notice. ``start(job)`` runs the job; by default a thread of its own.
    ``job()`` runs it to its end; a worker shared between jobs may instead
    call ``job.step()`` (the next chunk, or all of a ``make`` that returns
    no generator; True once the job is over), take the job with the
    fewest ``job.left`` passages, and tell each job waiting how many others
    go first (``job.behind(n)``), which the notice says.
    :meth:`cancel` stops it at its next report (the source it serves is gone).

    >>> deferred = DeferredRescorer(lambda report: DenseRescorer(None, [], np.zeros((0, 0)), 0.0), total=0)
    >>> deferred.wait(5)
    True
    >>> deferred.notice
    ''
    """

    def __init__(
        self,
        make: Callable[[Callable[[int], None]], DenseRescorer | Generator[int, None, DenseRescorer]],
        total: int,
        *,
        what: str = "the collection's passages",
        start: Callable[[Callable[[], None]], object] | None = None,
    ) -> None:
        self.total = total
        self.what = what
        self._done = 0
        self._started = False
        self._behind = 0  # jobs a shared worker runs before this one's next chunk
        self._rescorer: DenseRescorer | None = None
        self._error = ""
        self._bug: BaseException | None = None
        self._bug_traceback = None
        self._cancelled = False
        self._finished = threading.Event()
        job = _Job(self, make)
        if start is None:
            threading.Thread(target=job, name="encode-passages", daemon=True).start()
        else:
            start(job)

    def _report(self, done: int) -> None:
        if self._cancelled:
            raise _Cancelled
        self._done = done

    def cancel(self) -> None:
        """Stop making the rescorer (at the next chunk); the hits keep BM25's order."""
        self._cancelled = True

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the rescorer is made, has failed or was cancelled; False on timeout."""
        return self._finished.wait(timeout)

    @property
    def notice(self) -> str:
        """"" once rescoring runs; else why the hits keep BM25's order."""
        if self._rescorer is not None:
            return ""
        if self._error:
            return f"Search by BM25 alone: the passage vectors could not be made ({self._error})."
        behind = self._behind
        others = "1 other source's passages" if behind == 1 else f"{behind} other sources' passages"
        if behind and not self._started:
            return (f"Search by BM25 alone while {self.what} wait their turn to be encoded for the rescoring "
                    f"(queued behind {others}); it starts by itself.")
        details = [f"{self._done / self.total:.0%}"] if self.total else []
        if behind:
            details.append(f"paused behind {others}")
        share = f" ({', '.join(details)})" if details else ""
        return f"Search by BM25 alone while {self.what} are encoded for the rescoring{share}; it starts by itself."

    def rescore(
        self, question: str, passages: Sequence[Passage], k: int, alternatives: Sequence[str] = (),
        stop: StopSignal = NO_STOP,
    ) -> list[Passage]:
        if self._bug is not None:
            # Its own traceback each time, not one that grows at every raise.
            raise self._bug.with_traceback(self._bug_traceback)
        rescorer = self._rescorer
        if rescorer is None:
            return list(passages)[:k]
        return with_stop(rescorer.rescore, stop)(question, passages, k, alternatives)


class _Job:
    """The making of a :class:`DeferredRescorer`'s rescorer, run whole
    (``job()``) or a step at a time by a worker that takes turns between
    jobs (see the class docstring). Its steps run on one thread at a time."""

    def __init__(self, owner: DeferredRescorer, make) -> None:
        self._owner = owner
        self._make = make
        self._steps: Generator | None = None

    @property
    def left(self) -> int:
        """Passages left to encode: 0 once over or cancelled (a worker then
        ends it at once instead of leaving it queued)."""
        owner = self._owner
        if owner._finished.is_set() or owner._cancelled:
            return 0
        return max(owner.total - owner._done, 0)

    def behind(self, jobs: int) -> None:
        """The worker runs ``jobs`` other jobs first (the notice says so)."""
        self._owner._behind = jobs

    def __call__(self) -> None:
        while not self.step():
            pass

    def step(self) -> bool:
        """The next chunk; True once the job is over (made, failed or cancelled)."""
        owner = self._owner
        if owner._finished.is_set():
            return True
        owner._started = True
        try:
            if owner._cancelled:
                raise _Cancelled
            if self._steps is None:
                made = self._make(owner._report)
                if not inspect.isgenerator(made):
                    owner._rescorer = made
                    return self._over()
                self._steps = made
            owner._report(next(self._steps))  # raises _Cancelled once cancelled
            return False
        except StopIteration as end:
            owner._rescorer = end.value
        except _Cancelled:
            pass
        except _EXPECTED as error:  # the server goes on with BM25's order, and says why
            logging.getLogger(__name__).exception("Rescoring is off: the passage vectors could not be made")
            owner._error = str(error) or type(error).__name__
        except Exception as error:
            # Not raised here: the job runs on a thread that may serve other
            # indexes' jobs (the pipeline's one encoding worker), which a
            # raise would end. Kept for rescore to raise where it is called.
            logging.getLogger(__name__).exception("A bug while making the passage vectors")
            owner._error = str(error) or type(error).__name__
            owner._bug, owner._bug_traceback = error, error.__traceback__
        return self._over()

    def _over(self) -> bool:
        try:
            if self._steps is not None:
                self._steps.close()  # a cancelled job's progress bar
        except Exception:  # not raised: the worker that runs this job runs others
            logging.getLogger(__name__).exception("Could not close the passages' encoding")
        self._owner._finished.set()
        return True


# What making the vectors may meet that is no bug: the encoder cannot load
# (ModelNotFoundError), the index is damaged (IndexDamagedError), a file
# cannot be read or written (OSError: a full disk), or memory runs out.
_EXPECTED = (AssistantError, OSError, MemoryError)


class _Cancelled(Exception):
    """Raised inside a cancelled job, at its next report, to end it."""
