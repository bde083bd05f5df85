"""``--ray`` of ``eval.rewrites score`` and ``eval.qa``: the same loops, on a Ray cluster.

Both run through :func:`rewriting.map_on_ray` (one owner of "start or
connect to Ray, an actor pool, rows back in order"). Each actor builds its
worker once (rewriter, scorer with its encoders and index; or rewriter,
index and readers) and is given the chunks the single-process run works in,
so the per-turn scores and answers are the ones it computes: the driver
puts them together exactly as the single-process command does.

Every worker opens the index itself: at a path every node can read (a
shared folder) or a copy on each node at the same path. A worker that
cannot says so, naming its node.

Only ``--ray`` imports this module.
"""

from __future__ import annotations

import contextlib
import dataclasses
from pathlib import Path
from typing import Sequence

import numpy as np

from assistant.kernel import IndexChangedError, IndexDamagedError, IndexNotFoundError, Passage

from ._qa_data import QATurn
from ._qa_run import TurnResult, check_gold_in_index
from ._scoring import BATCH, REWRITE_BATCH, note_departures, rewrite_chunk

__all__ = ["score_on_ray", "qa_on_ray"]

# The eval packages travel to the workers with assistant and rewriting.
_PACKAGES = ("eval",)
# Turns an eval.qa chunk holds: a batch search each, and a progress tick.
QA_CHUNK = 16

# A score chunk (BATCH pairs) must hold whole rewrite chunks, so that the
# rewriter decodes the single-process run's batches.
assert BATCH % REWRITE_BATCH == 0


@contextlib.contextmanager
def _index_hint():
    # Each error's own advice for a node: where it sees no index, that the
    # nodes share the path; where it sees a damaged one, that a node's own
    # copy is rebuilt too. An index rebuilt while it was opened says "try
    # again" as it is: the node sees it, and no copy or share is amiss.
    # Only the index's open goes inside: the passage vectors' unreadable
    # file is an IndexDamagedError too ("Delete that file"), which the
    # rebuild hint would contradict (DenseRescorer.from_retriever stays out).
    try:
        yield
    except IndexChangedError:
        raise
    except IndexDamagedError as error:
        raise type(error)(f"{error}. A node that holds a copy of its own needs the rebuilt one.") from error
    except IndexNotFoundError as error:
        raise type(error)(f"{error} Every Ray node opens the index at this path: put it on a shared folder or copy it to each node.") from error


class ScoreWorker:
    """``eval.rewrites score``'s work for one chunk of turns: rewrite (when a
    rewriter is named), then every metric, as :meth:`Scorer.score` does."""

    def __init__(self, settings: dict):
        from rewriting import load_rewriter

        from ._scoring import Scorer

        with _index_hint():
            self.scorer = Scorer.from_defaults(settings["names"], settings["index"], settings["torch_threads"], settings["search_threads"])
        self.rewriter = load_rewriter(settings["rewriter"]) if settings["rewriter"] else None

    def __call__(self, chunk: list) -> list:
        notes = [False] * len(chunk)
        if self.rewriter is not None:
            candidates = []
            for start in range(0, len(chunk), REWRITE_BATCH):
                part = chunk[start : start + REWRITE_BATCH]
                rewrites = rewrite_chunk(self.rewriter, [(item["question"], item["context"]) for item in part])
                candidates += [r.text for r in rewrites]
                notes[start : start + len(part)] = [bool(r.note) for r in rewrites]
        else:
            candidates = [item["candidate"] for item in chunk]
        scores = self.scorer.score([item["reference"] for item in chunk], candidates)
        return [
            {"candidate": candidate, "note": note, "scores": {name: float(values[i]) for name, values in scores.items()}}
            for i, (candidate, note) in enumerate(zip(candidates, notes))
        ]


def score_on_ray(examples, candidates: Sequence[str] | None, settings: dict, address: str | None, actors: int):
    """Each turn's scores (and, with ``settings["rewriter"]``, its rewrite),
    in example order: ``(scores by metric, candidates)``, as
    :meth:`Scorer.score_all` over :func:`rewrite_with`'s rewrites gives them.
    ``settings``: names, index, torch_threads, search_threads, rewriter."""
    from rewriting import map_on_ray

    if settings["rewriter"]:
        items = [{"reference": ex.rewrite, "question": ex.question, "context": list(ex.context)} for ex in examples]
    else:
        items = [{"reference": ex.rewrite, "candidate": c} for ex, c in zip(examples, candidates, strict=True)]
    results = map_on_ray(items, ScoreWorker, settings, chunk=BATCH, address=address, actors=actors, packages=_PACKAGES, desc="scoring",
                         unit="pair", paths=("index", "rewriter"))
    if settings["rewriter"]:
        note_departures(sum(r["note"] for r in results), len(results))
    scores = {name: np.array([r["scores"][name] for r in results], dtype=float) for name in settings["names"]}
    return scores, [r["candidate"] for r in results]


class QAWorker:
    """``eval.qa``'s :func:`run_turns` for one chunk of turns, with the
    rewriter, index and readers loaded once."""

    def __init__(self, settings: dict):
        from assistant.kernel import ReaderConfig

        from ._qa_run import build_readers

        self.settings = settings
        self.retriever = None
        if settings["index"]:
            from assistant.kernel import RetrieverConfig
            from assistant.retrieval import BM25Retriever

            k1, b = settings["bm25"]
            with _index_hint():
                self.retriever = BM25Retriever.from_index(settings["index"], RetrieverConfig(bm25_k1=k1, bm25_b=b))
        self.rescorer = None
        if settings["setting"] == "known-context":
            from ._qa_run import document_rescorer

            self.rescorer = document_rescorer(settings["dense_weight"])
        elif self.retriever is not None and settings["dense_weight"] > 0:
            from assistant.encoders import load_minilm
            from assistant.retrieval import DenseRescorer

            # Read from the index folder, where the driver has kept them (in
            # a read-only folder none are kept: then each worker encodes them).
            self.rescorer = DenseRescorer.from_retriever(self.retriever, load_minilm(), settings["dense_weight"], progress=False)
        self.rewriter = None
        if settings["rewriter"]:
            from rewriting import load_rewriter

            self.rewriter = load_rewriter(settings["rewriter"])
        self.readers = build_readers(settings["reader"], settings["mus"], ReaderConfig(**settings["reader_config"]))

    def __call__(self, chunk: list) -> list:
        from ._qa_run import run_turns

        s = self.settings
        results = run_turns(
            [turn_from_json(t) for t in chunk], s["setting"], self.readers, rewriter=self.rewriter,
            retriever=self.retriever, rescorer=self.rescorer, rescore_depth=s["rescore_depth"], read_k=s["read_k"],
            search_threads=s["search_threads"],
            check_index=False,  # qa_on_ray checks every turn's Truth_passages, not a chunk's
        )
        return [result_to_json(r) for r in results]


def qa_on_ray(turns: Sequence[QATurn], settings: dict, address: str | None, actors: int) -> list[TurnResult]:
    """:func:`run_turns` of every turn on the cluster, in turn order.
    ``settings``: setting, index, rewriter, reader, mus, reader_config,
    read_k, search_threads, dense_weight, bm25 (k1, b): what ``eval.qa`` passes."""
    from rewriting import map_on_ray

    if settings["setting"] == "known-context" and settings["index"] and Path(settings["index"]).is_dir():
        # The single-process run's check of the turns' Truth_passages, made
        # here, before any turn is rewritten. A worker checks only its chunk:
        # one whose passages were all missing stopped the run. (An index
        # only the workers' nodes have: missing_gold_note refuses from the results.)
        from assistant.retrieval import BM25Retriever

        with BM25Retriever.from_index(settings["index"]) as retriever:
            check_gold_in_index(turns, settings["setting"], retriever)
    items = [turn_to_json(t) for t in turns]
    results = map_on_ray(items, QAWorker, settings, chunk=QA_CHUNK, address=address, actors=actors, packages=_PACKAGES,
                         desc=settings["setting"], unit="turn", paths=("index", "rewriter"))
    return [result_from_json(r) for r in results]


def turn_to_json(turn: QATurn) -> dict:
    return dataclasses.asdict(turn)


def turn_from_json(data: dict) -> QATurn:
    return QATurn(**{
        **data,
        "history": tuple(data["history"]),
        "gold_ids": tuple(data["gold_ids"]),
        "context": tuple(Passage(**p) for p in data["context"]),
    })


def result_to_json(result: TurnResult) -> dict:
    return {**dataclasses.asdict(result), "relevant": sorted(result.relevant)}


def result_from_json(data: dict) -> TurnResult:
    return TurnResult(**{
        **data,
        "answers": tuple(data["answers"]),
        "read_ms": tuple(data["read_ms"]),
        "retrieved": tuple(data["retrieved"]),
        "relevant": frozenset(data["relevant"]),
        "gold_missing": tuple(data["gold_missing"]),
    })
