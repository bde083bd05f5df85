"""The rewrite scorer: every rewrite metric for batches of (reference, candidate) pairs.

:class:`Scorer` holds the loaded models and index; :func:`score_examples`
gives the mean scores of ``python -m eval.rewrites score``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

import numpy as np
from tqdm import tqdm

import rewriting
from assistant.encoders import load_minilm, load_use
from assistant.kernel import AssistantConfig, ConfigError, DataFormatError, default_index_dir, tokens
from assistant.retrieval import BM25Retriever

from . import metrics
from ._table import read_split

__all__ = [
    "METRICS",
    "DEFAULT_REWRITER",
    "BATCH",
    "K",
    "Scorer",
    "load_retriever",
    "metric_names",
    "check_metric_names",
    "score_examples",
    "score_means",
    "rewrite_chunk",
    "note_departures",
    "rewrite_with",
    "held_out",
    "format_score_table",
]

# The rewriter scored when no rewrites are given: the app's own default.
DEFAULT_REWRITER = AssistantConfig().rewriter
# Metric names, in the order tables show them (stable: scripts read them).
METRICS = ("rouge1_recall", "bleu", "use", "use_angular", "minilm", "r_at_10")
# Pairs scored per step: one encoder call per batch, one progress-bar tick.
BATCH = 64
# R@k's k: QReCC's R@10.
K = 10
# Turns per rewrite_batch call: padding waste grows with the batch, and 8
# keeps the progress bar moving on 2 cores.
REWRITE_BATCH = 8


class Scorer:
    """Computes the rewrite metrics for batches of (reference, candidate) pairs.

    Encoders and the retriever are passed in ready (``from_defaults`` loads
    them); a metric whose model is missing cannot be asked for. R@10's
    searches of a batch are one multi-threaded batch search
    (``search_threads`` Lucene threads). Reference result ids are cached, so
    a reference searched once (e.g. for another rewriter, or a repeated
    text) is not searched again.
    """

    def __init__(self, names: Sequence[str], *, use=None, minilm=None, retriever=None,
                 search_threads: int = metrics.SEARCH_THREADS) -> None:
        check_metric_names(names)
        needs = {"use": use, "use_angular": use, "minilm": minilm, "r_at_10": retriever}
        missing = [n for n in names if n in needs and needs[n] is None]
        if missing:
            raise ConfigError(f"metric(s) {', '.join(missing)} need a model or index that was not given")
        self.names = tuple(names)
        self.use, self.minilm, self.retriever = use, minilm, retriever
        self.search_threads = search_threads
        self._reference_ids: dict[str, list[str]] = {}

    @classmethod
    def from_defaults(
        cls, names: Sequence[str], index: str | None = None, torch_threads: int = 0, search_threads: int = metrics.SEARCH_THREADS
    ) -> "Scorer":
        """Loads what ``names`` need: USE, MiniLM, and the BM25 index at
        ``index`` (raises :class:`~assistant.kernel.IndexNotFoundError`).
        ``torch_threads`` > 0 sets the process's torch threads when MiniLM is
        loaded (for the commands here, which run in a process of their own)."""

        use = load_use() if {"use", "use_angular"} & set(names) else None
        minilm = load_minilm() if "minilm" in names else None
        if minilm is not None and torch_threads > 0:
            import torch

            torch.set_num_threads(torch_threads)
        retriever = load_retriever(index) if "r_at_10" in names else None
        return cls(names, use=use, minilm=minilm, retriever=retriever, search_threads=search_threads)

    def score(self, references: Sequence[str], candidates: Sequence[str]) -> dict[str, np.ndarray]:
        """Each metric's score for each pair, in [0, 1], in input order."""
        out: dict[str, np.ndarray] = {}
        if "rouge1_recall" in self.names:
            out["rouge1_recall"] = np.array([metrics.rouge1_recall(r, c) for r, c in zip(references, candidates)])
        if "bleu" in self.names:
            out["bleu"] = np.array([metrics.bleu(r, c) for r, c in zip(references, candidates)])
        if {"use", "use_angular"} & set(self.names):
            # One encoding serves both; the angular similarity is metrics' own
            # (stable next to cos = 1, where arccos of the cosine is not).
            wanted = {"use": "cosine", "use_angular": "angular"}
            measures = [m for name, m in wanted.items() if name in self.names]
            table = metrics.embedding_similarity_table(self.use, references, candidates, measures, batch_size=BATCH)
            for name, measure in wanted.items():
                if name in self.names:
                    out[name] = table[measure]
        if "minilm" in self.names:
            out["minilm"] = metrics.embedding_similarities(self.minilm, references, candidates, batch_size=BATCH)
        if "r_at_10" in self.names:
            out["r_at_10"] = self._r_at_10(references, candidates)
        return {name: out[name] for name in self.names}

    def score_all(
        self, references: Sequence[str], candidates: Sequence[str], desc: str = "scoring"
    ) -> dict[str, np.ndarray]:
        """:meth:`score` in batches of :data:`BATCH`, with a progress bar on
        stderr, and a note there when references hold text rouge-score reads
        no word of (it keeps a-z and 0-9: Cyrillic, Greek, CJK ... are not
        words to it), which ROUGE-1 recall and BLEU then score 0 whatever
        the candidate, an identical one too."""
        lexical = [name for name in ("rouge1_recall", "bleu") if name in self.names]
        unread = sum(1 for text in references if text.strip() and not tokens(text, "rouge"))
        if lexical and unread:
            print(f"note: {unread} of {len(references)} references have no word rouge-score reads (only a-z and 0-9 "
                  f"are): {' and '.join(lexical)} score them 0, an identical rewrite too", file=sys.stderr)
        parts: dict[str, list[np.ndarray]] = {name: [] for name in self.names}
        with tqdm(total=len(references), desc=desc, unit="pair", file=sys.stderr) as bar:
            for start in range(0, len(references), BATCH):
                batch = self.score(references[start : start + BATCH], candidates[start : start + BATCH])
                for name, values in batch.items():
                    parts[name].append(values)
                bar.update(len(references[start : start + BATCH]))
        return {name: np.concatenate(p) if p else np.zeros(0) for name, p in parts.items()}

    def _r_at_10(self, references: Sequence[str], candidates: Sequence[str]) -> np.ndarray:
        # A candidate equal to its reference scores 1 unsearched (r_at_k); the
        # rest, and references not cached yet, are searched in one batch.
        pairs = list(zip(references, candidates))
        searched = [i for i, (r, c) in enumerate(pairs) if c.strip() != r.strip()]
        new = list(dict.fromkeys(references[i] for i in searched if references[i] not in self._reference_ids))
        found = metrics.batch_result_ids(self.retriever, [*new, *(candidates[i] for i in searched)], K, self.search_threads)
        self._reference_ids.update(zip(new, found))
        ids = dict(zip(searched, found[len(new) :]))
        return np.array([
            1.0 if i not in ids else metrics.r_at_k(self.retriever, r, c, K, reference_ids=self._reference_ids[r], candidate_ids=ids[i])
            for i, (r, c) in enumerate(pairs)
        ])


def check_metric_names(names: Sequence[str]) -> None:
    """:class:`ConfigError` naming any of ``names`` not in :data:`METRICS`."""
    unknown = [n for n in names if n not in METRICS]
    if unknown:
        raise ConfigError(f"unknown metric(s) {', '.join(unknown)}; choose from {', '.join(METRICS)}")


def load_retriever(index: str | None):
    """The BM25 retriever on ``index`` (None: the default collection's index)."""

    return BM25Retriever.from_index(str(index or default_index_dir()))


def _default_index_ready() -> bool:

    # What BM25Retriever.from_index accepts: a folder with a Lucene commit point.
    return any(Path(default_index_dir()).glob("segments_*"))


def metric_names(arg: str | None, index_given: bool) -> list[str]:
    """The metrics a ``--metrics`` value names; without one, all of
    :data:`METRICS`, less ``r_at_10`` (with a note on stderr) when no index
    was given and the default one is not built."""
    if arg:
        return [n.strip() for n in arg.split(",") if n.strip()]
    names = list(METRICS)
    if not index_given and not _default_index_ready():
        names.remove("r_at_10")
        print(
            "note: no index given and the default index is not built yet: r_at_10 is left out "
            "(build it with python -m assistant.index, or pass --index DIR)",
            file=sys.stderr,
        )
    return names


def _mean_block(scores: dict[str, np.ndarray], mask: np.ndarray) -> dict:
    block: dict = {"n": int(mask.sum())}
    for name in METRICS:
        if name in scores:
            block[name] = round(100.0 * float(scores[name][mask].mean()), 2) if mask.any() else None
        else:
            block[name] = None
    return block


def score_examples(examples, candidates: Sequence[str], scorer: Scorer) -> dict:
    """Mean scores (percent) of ``candidates`` against the examples' human
    rewrites, over all turns and (``after_first``) over turns after the first."""
    return score_means(examples, scorer.score_all([ex.rewrite for ex in examples], list(candidates)))


def score_means(examples, scores: dict[str, np.ndarray]) -> dict:
    """:func:`score_examples`' result from each turn's scores (in example order)."""
    everything = np.ones(len(examples), dtype=bool)
    result = _mean_block(scores, everything)
    result["after_first"] = _mean_block(scores, np.array([ex.turn > 1 for ex in examples], dtype=bool))
    return result


def rewrite_with(name: str, examples) -> list[str]:
    """Every example's question rewritten by the rewriter ``name``
    (``rewriting.load_rewriter``), with a progress bar on stderr."""

    rewriter = rewriting.load_rewriter(name)
    rewrites = []
    with tqdm(total=len(examples), desc=f"rewriting ({name})", unit="turn", file=sys.stderr) as bar:
        for start in range(0, len(examples), REWRITE_BATCH):
            chunk = examples[start : start + REWRITE_BATCH]
            rewrites += rewrite_chunk(rewriter, [(ex.question, list(ex.context)) for ex in chunk])
            bar.update(len(chunk))
    note_departures(sum(1 for r in rewrites if r.note), len(rewrites))
    return [r.text for r in rewrites]


def rewrite_chunk(rewriter, items: Sequence[tuple[str, list[str]]]) -> list:
    """One chunk of (question, history) pairs rewritten: causal-LM rewriters
    decode a padded batch at once (``rewrite_batch``), any other Rewriter
    goes one turn at a time."""
    batch_fn = getattr(rewriter, "rewrite_batch", None)
    if batch_fn is not None:
        return list(batch_fn(list(items)))
    return [rewriter.rewrite(question, history) for question, history in items]


def note_departures(noted: int, total: int) -> None:
    if noted:
        print(f"note: {noted} of {total} rewrites departed from the model's output", file=sys.stderr)


def held_out(examples, split_path: str, data_path: str) -> list:
    """Only the turns a training run held out: the "dev" ids that its
    ``split.json`` (written by ``rewriting.train``) lists for this file."""
    dev = read_split(split_path)["dev"]
    if not isinstance(dev.get(Path(data_path).name), list):
        raise DataFormatError(
            f"{split_path}: not a split.json written by rewriting.train with held-out ids for {Path(data_path).name} "
            "(its \"dev\" object lists them by file name)"
        )
    dev = set(dev[Path(data_path).name])
    return [ex for ex in examples if ex.id in dev]


def format_score_table(result: dict) -> str:
    """:func:`score_examples`' result as a text table (all turns, after the first)."""
    after = result["after_first"]
    lines = [f"{'metric (%)':<15}{'all turns':>12}{'after first':>13}", f"{'n':<15}{result['n']:>12}{after['n']:>13}"]
    for name in METRICS:
        if result[name] is not None:
            later = "-" if after[name] is None else f"{after[name]:.2f}"
            lines.append(f"{name:<15}{result[name]:>12.2f}{later:>13}")
    return "\n".join(lines)
