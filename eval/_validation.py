"""Validating the rewrite metrics against human correct/incorrect labels.

:func:`validate` gives each metric's Pearson r with the 0/1 labels
(point-biserial), a percentile-bootstrap interval for r, ROC AUC and the mean
score per label; :func:`format_validation_table` ranks them by r like
QReCC's Table 3.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from assistant.kernel import LabelledRewrite

__all__ = ["DIFFERENCE_RESAMPLES", "latest_judgements", "bootstrap_ci", "difference_ci", "mean_difference", "conversation", "validate", "format_validation_table", "json_safe"]

# Draws of difference_ci's paired bootstrap (the tables that print its
# intervals say how many).
DIFFERENCE_RESAMPLES = 2000


def latest_judgements(labels: Sequence[LabelledRewrite]) -> tuple[list[LabelledRewrite], int]:
    """(the last judgement of each turn, the number of earlier ones it superseded).

    The app appends a line each time a turn is judged, so a turn judged
    again (a changed mind, a corrected reference) has several lines with
    the same ``id``: the last one wins, at its own place in the file.

    >>> from assistant.kernel import LabelledRewrite as L
    >>> kept, superseded = latest_judgements([L("a", (), "q", "r1", "ref", 0), L("b", (), "q", "r", "ref", 1),
    ...                                       L("a", (), "q", "r2", "ref", 1)])
    >>> [(x.id, x.rewrite, x.label) for x in kept], superseded
    ([('b', 'r', 1), ('a', 'r2', 1)], 1)
    """
    last = {item.id: i for i, item in enumerate(labels)}
    kept = [item for i, item in enumerate(labels) if last[item.id] == i]
    return kept, len(labels) - len(kept)


def _pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # Pearson r of each row pair; nan where a row is constant (r undefined).
    xc = x - x.mean(axis=-1, keepdims=True)
    yc = y - y.mean(axis=-1, keepdims=True)
    denom = np.sqrt((xc * xc).sum(-1) * (yc * yc).sum(-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, (xc * yc).sum(-1) / denom, np.nan)


def _resampled_rows(n: int, resamples: int, seed: int) -> np.ndarray:
    """``resamples`` rows of ``n`` indices drawn with replacement: the bootstrap's draws."""
    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def bootstrap_ci(scores: np.ndarray, labels: np.ndarray, resamples: int = 1000, seed: int = 0) -> tuple[float, float]:
    """95% percentile-bootstrap interval for Pearson r: lines are resampled
    with replacement; resamples where r is undefined are dropped."""
    rows = _resampled_rows(len(scores), resamples, seed)
    rs = _pearson_rows(scores[rows], labels[rows].astype(float))
    rs = rs[~np.isnan(rs)]
    if rs.size == 0:
        return (math.nan, math.nan)
    lo, hi = np.percentile(rs, [2.5, 97.5])
    return float(lo), float(hi)


def difference_ci(differences: np.ndarray, resamples: int = DIFFERENCE_RESAMPLES, seed: int = 0,
                  clusters: Sequence[str] | None = None) -> tuple[float, float]:
    """95% paired percentile-bootstrap interval for the mean of per-item
    differences (system B's score minus A's on the same turns): the turns are
    resampled with replacement, each keeping its pair. With ``clusters`` (a
    label per item: its :func:`conversation`), whole clusters are resampled
    instead, and each draw's mean is over the items it holds: a rewriter
    whose history holds its own earlier rewrites carries one change into a
    conversation's later turns, so those turns are not independent draws.

    >>> difference_ci(np.array([1.0, 1.0, 1.0]))
    (1.0, 1.0)
    >>> difference_ci(np.array([1.0, 1.0, 0.0]), clusters=["a", "a", "a"])  # one conversation: no spread
    (0.6666666666666666, 0.6666666666666666)
    """
    differences = np.asarray(differences, dtype=float)
    if differences.size == 0:
        return (math.nan, math.nan)
    if clusters is None:
        means = differences[_resampled_rows(len(differences), resamples, seed)].mean(axis=-1)
    else:
        if len(clusters) != len(differences):
            raise ValueError(f"{len(clusters)} cluster labels for {len(differences)} differences")
        labels, index = np.unique(np.asarray(clusters), return_inverse=True)
        sums = np.bincount(index, weights=differences, minlength=len(labels))
        counts = np.bincount(index, minlength=len(labels))
        draws = _resampled_rows(len(labels), resamples, seed)
        means = sums[draws].sum(axis=-1) / counts[draws].sum(axis=-1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def mean_difference(mine: Sequence[float], theirs: Sequence[float],
                    clusters: Sequence[str] | None = None) -> tuple[float, float, float]:
    """``(mean, low, high)`` of ``mine - theirs`` item by item: the mean
    difference on the same items and its :func:`difference_ci` (by
    ``clusters`` when given).

    >>> mean_difference([0.5, 1.0], [0.5, 0.0])
    (0.5, 0.0, 1.0)
    """
    differences = np.asarray(mine, dtype=float) - np.asarray(theirs, dtype=float)
    return (float(differences.mean()), *difference_ci(differences, clusters=clusters))


def conversation(turn_id: str) -> str:
    """The conversation a turn belongs to, for :func:`difference_ci`'s
    clusters: the ``<source>:<conversation>`` of its id
    (``[<file>#]<source>:<conversation>:<turn>``). A CAsT 2022 id's
    conversation is ``<topic>:<path>``; a topic's paths share their first
    turns, so the topic is the cluster.

    >>> conversation("qrecc_train_sample_1500.json#qrecc:364:6")
    'qrecc:364'
    >>> conversation("cast2022:138:1-11:1-11")
    'cast2022:138'
    """
    return ":".join(turn_id.rsplit("#", 1)[-1].split(":")[:2])


def validate(labels: Sequence[LabelledRewrite], scores: dict[str, np.ndarray]) -> dict:
    """The validation statistics of each metric's ``scores`` against the labels."""
    from scipy.stats import pearsonr
    from sklearn.metrics import roc_auc_score

    y = np.array([item.label for item in labels])
    table = {}
    for name, values in scores.items():
        # Six decimals: a float32 embedding gives a text and its copy 0.99999994
        # or 1.0000001, and that noise alone made a constant metric look
        # correlated (a high r and AUC where every score was 1).
        values = np.round(np.asarray(values, dtype=float), 6)
        constant = bool(np.all(values == values[0]))
        r = math.nan if constant else float(pearsonr(values, y).statistic)
        table[name] = {
            "pearson": r,
            "auc": float(roc_auc_score(y, values)),
            "ci": list(bootstrap_ci(values, y)),
            "mean_correct": float(values[y == 1].mean()),
            "mean_incorrect": float(values[y == 0].mean()),
        }
    return {"n": len(labels), "n_correct": int((y == 1).sum()), "n_incorrect": int((y == 0).sum()), "metrics": table}


def _ranked(result: dict) -> list[tuple[str, dict]]:
    return sorted(
        result["metrics"].items(), key=lambda kv: -kv[1]["pearson"] if not math.isnan(kv[1]["pearson"]) else math.inf
    )


def format_validation_table(result: dict) -> str:
    """:func:`validate`'s result as a text table, metrics by decreasing r."""
    lines = [
        f"{result['n']} judged rewrites: {result['n_correct']} correct, {result['n_incorrect']} incorrect",
        f"{'metric':<15}{'Pearson r':>10}{'95% CI':>18}{'ROC AUC':>9}{'mean|1':>8}{'mean|0':>8}",
    ]
    for name, row in _ranked(result):
        lo, hi = row["ci"]
        lines.append(
            f"{name:<15}{row['pearson']:>10.3f}{f'[{lo:.3f}, {hi:.3f}]':>18}{row['auc']:>9.3f}"
            f"{row['mean_correct']:>8.3f}{row['mean_incorrect']:>8.3f}"
        )
    return "\n".join(lines)


def json_safe(value):
    """``value`` with every NaN replaced by None: JSON has no NaN, and an
    undefined statistic (a constant metric's r) is null."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_safe(v) for v in value]
    return value
