"""Rewrite quality: score rewriters, and check which metric tracks human labels.

``python -m eval.rewrites score --data FILE [--rewriter NAME | --rewrites FILE.jsonl | --system KEY]``
``[--index DIR] [--metrics LIST] [--json]``
    Scores rewrites against the human rewrites of a QReCC, CANARD or CAsT file
    (read by :func:`rewriting.data.load_examples`): ROUGE-1 recall (human
    rewrite as target), BLEU, USE cosine and angular similarity, MiniLM cosine,
    and R@10, the overlap of the top-10 BM25 results of the rewrite with those
    of the human rewrite on a local index (a proxy for the paper's web
    search). Prints each metric's mean over all turns and over turns after
    the first. ``--json`` prints::

        {"n": N, "rouge1_recall": x, "bleu": b, "use": y, "use_angular": a,
         "minilm": m, "r_at_10": z, "after_first": {"n": M, "rouge1_recall": ...}}

    Scores are percentages (0-100) as in the papers' tables; a metric left
    out (``--metrics``, or ``r_at_10`` when no index was given and the
    default one is not built) is null. The keys are stable. Rewrites come
    from a rewriter (``rewriting.load_rewriter``; ``original`` = the question
    as asked; default ``trained``, the app's), a JSONL file of ``{"id",
    "rewrite"}`` (ids as ``load_examples`` gives them; only those turns are
    scored), or another system's outputs shipped in the data
    (``--system cast_automatic``).

``python -m eval.rewrites validate --labels FILE [--json] [--plot OUT.png]``
    For every metric: Pearson r with the 0/1 labels (point-biserial), a 95%
    percentile-bootstrap interval for r (1,000 resamples of the lines, seed
    0), ROC AUC, and the mean score per label (metric scale 0-1); a table
    ranked by r like QReCC's Table 3, and with ``--plot`` each metric's score
    distribution per label. ``--json`` prints ``{"n": N, "n_correct": c,
    "n_incorrect": i, "metrics": {"rouge1_recall": {"pearson": r, "auc": a,
    "ci": [lo, hi], "mean_correct": m1, "mean_incorrect": m0}, ...}}``. The
    labels format is in :mod:`eval.labels`.

``python -m eval.rewrites [--metrics LIST] [--json]``
    Validates the labels the app collected (``$CONVQA_LABELS``, default
    ``~/.cache/convqa/labels.jsonl``), or says how to get a labels file.

``python -m eval.rewrites export --split SPLIT --dir DIR``
``python -m eval.rewrites table --split SPLIT --dir DIR [--index DIR] [--metrics LIST]``
    The comparison of rewriters on the same turns: ``export`` writes the
    turns a training run held out (after the first) as ``DIR/<group>.jsonl``
    for ``python -m rewriting.rewrite`` (groups: qrecc, canard, cast); its
    outputs go to ``DIR/<group>.<rewriter>.jsonl``. ``table`` prints a
    Markdown table of every such rewriter and the original question per
    group, then each other system shipped in the data (CAsT automatic
    rewrites, QuReTeC) on its own turns next to every rewriter.

``python -m eval.rewrites bench [--index DIR] [--metrics LIST] [--repeat N]``
    Warm latency of each metric for one rewrite: median and p95 wall time,
    and median CPU time (which hardly moves with the machine's other load).

Bad input exits with status 2 and a one-line message.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Sequence

import numpy as np
from tqdm import tqdm

from assistant.kernel import (
    AssistantError,
    DataFormatError,
    LabelledRewrite,
    default_labels_path,
    percentile,
    read_labels,
)

from . import metrics as M
from ._table import (
    GROUPS,
    comparison_table,
    export_inputs,
    held_out_groups,
    other_systems,
    read_outputs,
    read_rewrites,
)

__all__ = ["METRICS", "Scorer", "score_examples", "validate", "main"]

# Metric names, in the order tables show them (stable: scripts read them).
METRICS = ("rouge1_recall", "bleu", "use", "use_angular", "minilm", "r_at_10")
# Pairs scored per step: one encoder call per batch, one progress-bar tick.
BATCH = 64
# R@k's k: QReCC's R@10.
K = 10
# The rewriter scored when no rewrites are given: the app's default.
DEFAULT_REWRITER = "trained"
# The comparison table's metrics: the three of QReCC's Table 4.
TABLE_METRICS = ("rouge1_recall", "use", "r_at_10")
# Turns per rewrite_batch call: padding waste grows with the batch, and 8
# keeps the progress bar moving on 2 cores.
REWRITE_BATCH = 8
# Torch threads for MiniLM in these commands (a process of their own). One:
# on the 2 cores shared with the chat, one MiniLM pair took 28 ms on one
# thread and 230 ms on two while other work ran (oversubscribed threads wait
# for each other); an idle machine gains little from the second on short texts.
TORCH_THREADS = 1


class Scorer:
    """Computes the rewrite metrics for batches of (reference, candidate) pairs.

    Encoders and the retriever are passed in ready (``from_defaults`` loads
    them); a metric whose model is missing cannot be asked for. Reference
    result ids for R@10 are cached, so a reference searched once (e.g. for
    another rewriter, or a repeated text) is not searched again.
    """

    def __init__(self, names: Sequence[str], *, use=None, minilm=None, retriever=None) -> None:
        unknown = [n for n in names if n not in METRICS]
        if unknown:
            raise ValueError(f"unknown metric(s) {', '.join(unknown)}; choose from {', '.join(METRICS)}")
        needs = {"use": use, "use_angular": use, "minilm": minilm, "r_at_10": retriever}
        missing = [n for n in names if n in needs and needs[n] is None]
        if missing:
            raise ValueError(f"metric(s) {', '.join(missing)} need a model or index that was not given")
        self.names = tuple(names)
        self.use, self.minilm, self.retriever = use, minilm, retriever
        self._reference_ids: dict[str, list[str]] = {}

    @classmethod
    def from_defaults(cls, names: Sequence[str], index: str | None = None, torch_threads: int = 0) -> "Scorer":
        """Loads what ``names`` need: USE, MiniLM, and the BM25 index at
        ``index`` (raises :class:`~assistant.errors.IndexNotFoundError`).
        ``torch_threads`` > 0 sets the process's torch threads when MiniLM is
        loaded (for the commands here, which run in a process of their own)."""
        from assistant.encoders import load_minilm, load_use

        use = load_use() if {"use", "use_angular"} & set(names) else None
        minilm = load_minilm() if "minilm" in names else None
        if minilm is not None and torch_threads > 0:
            import torch

            torch.set_num_threads(torch_threads)
        retriever = load_retriever(index) if "r_at_10" in names else None
        return cls(names, use=use, minilm=minilm, retriever=retriever)

    def score(self, references: Sequence[str], candidates: Sequence[str]) -> dict[str, np.ndarray]:
        """Each metric's score for each pair, in [0, 1], in input order."""
        out: dict[str, np.ndarray] = {}
        if "rouge1_recall" in self.names:
            out["rouge1_recall"] = np.array([M.rouge1_recall(r, c) for r, c in zip(references, candidates)])
        if "bleu" in self.names:
            out["bleu"] = np.array([M.bleu(r, c) for r, c in zip(references, candidates)])
        if {"use", "use_angular"} & set(self.names):
            # One encoding serves both: angular is a function of the cosine.
            cosines = M.embedding_similarities(self.use, references, candidates, batch_size=BATCH)
            if "use" in self.names:
                out["use"] = cosines
            if "use_angular" in self.names:
                out["use_angular"] = 1.0 - np.arccos(np.clip(cosines, -1.0, 1.0)) / np.pi
        if "minilm" in self.names:
            out["minilm"] = M.embedding_similarities(self.minilm, references, candidates, batch_size=BATCH)
        if "r_at_10" in self.names:
            out["r_at_10"] = np.array([self._r_at_10(r, c) for r, c in zip(references, candidates)])
        return {name: out[name] for name in self.names}

    def score_all(
        self, references: Sequence[str], candidates: Sequence[str], desc: str = "scoring"
    ) -> dict[str, np.ndarray]:
        """:meth:`score` in batches of :data:`BATCH`, with a progress bar on stderr."""
        parts: dict[str, list[np.ndarray]] = {name: [] for name in self.names}
        with tqdm(total=len(references), desc=desc, unit="pair", file=sys.stderr) as bar:
            for start in range(0, len(references), BATCH):
                batch = self.score(references[start : start + BATCH], candidates[start : start + BATCH])
                for name, values in batch.items():
                    parts[name].append(values)
                bar.update(len(references[start : start + BATCH]))
        return {name: np.concatenate(p) if p else np.zeros(0) for name, p in parts.items()}

    def _r_at_10(self, reference: str, candidate: str) -> float:
        if candidate.strip() == reference.strip():
            return 1.0
        ids = self._reference_ids.get(reference)
        if ids is None:
            ids = self._reference_ids[reference] = M.result_ids(self.retriever, reference, K)
        return M.r_at_k(self.retriever, reference, candidate, K, reference_ids=ids)


def load_retriever(index: str | None):
    """The BM25 retriever on ``index`` (None: the default collection's index)."""
    from assistant.kernel import default_index_dir
    from assistant.retrieval import BM25Retriever

    return BM25Retriever.from_index(str(index or default_index_dir()))


def _default_index_ready() -> bool:
    from assistant.kernel import default_index_dir

    # What BM25Retriever.from_index accepts: a folder with a Lucene commit point.
    return any(Path(default_index_dir()).glob("segments_*"))


def _metric_names(arg: str | None, index_given: bool) -> list[str]:
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


# ---------------------------------------------------------------- score


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
    scores = scorer.score_all([ex.rewrite for ex in examples], list(candidates))
    everything = np.ones(len(examples), dtype=bool)
    result = _mean_block(scores, everything)
    result["after_first"] = _mean_block(scores, np.array([ex.turn > 1 for ex in examples], dtype=bool))
    return result


def _rewrite_with(name: str, examples) -> list[str]:
    from rewriting import load_rewriter

    rewriter = load_rewriter(name)
    # Causal-LM rewriters decode a padded batch at once (rewrite_batch); any
    # other Rewriter goes one turn at a time.
    batch_fn = getattr(rewriter, "rewrite_batch", None)
    size = REWRITE_BATCH if batch_fn is not None else 1
    rewrites = []
    with tqdm(total=len(examples), desc=f"rewriting ({name})", unit="turn", file=sys.stderr) as bar:
        for start in range(0, len(examples), size):
            chunk = examples[start : start + size]
            if batch_fn is not None:
                rewrites += batch_fn([(ex.question, list(ex.context)) for ex in chunk])
            else:
                rewrites += [rewriter.rewrite(ex.question, list(ex.context)) for ex in chunk]
            bar.update(len(chunk))
    noted = sum(1 for r in rewrites if r.note)
    if noted:
        print(f"note: {noted} of {len(rewrites)} rewrites departed from the model's output", file=sys.stderr)
    return [r.text for r in rewrites]


def _cmd_score(args) -> int:
    from rewriting.data import load_examples

    sources = [args.rewriter is not None, args.rewrites is not None, args.system is not None]
    if sum(sources) > 1:
        return _fail("give only one of --rewriter NAME, --rewrites FILE.jsonl, --system KEY")
    if not any(sources):
        args.rewriter = DEFAULT_REWRITER
    examples = load_examples(args.data)
    if args.split is not None:
        examples = _held_out(examples, args.split, args.data)
    if args.rewrites is not None:
        given = read_rewrites(args.rewrites)
        known = {ex.id for ex in examples}
        stray = [i for i in given if i not in known]
        if stray:
            return _fail(f"{args.rewrites}: {len(stray)} id(s) not in {args.data}, e.g. {stray[0]!r}")
        examples = [ex for ex in examples if ex.id in given]
        candidates = [given[ex.id] for ex in examples]
    elif args.system is not None:
        examples = [ex for ex in examples if args.system in ex.systems]
        candidates = [ex.systems[args.system] for ex in examples]
    if not examples:
        shipped = sorted({key for ex in load_examples(args.data) for key in ex.systems})
        return _fail(f"no turns to score in {args.data} with the rewrites given (systems in it: {shipped or 'none'})")
    if args.rewriter is not None:
        candidates = _rewrite_with(args.rewriter, examples)
    scorer = Scorer.from_defaults(_metric_names(args.metrics, args.index is not None), args.index, args.torch_threads)
    result = score_examples(examples, candidates, scorer)
    if args.json:
        print(json.dumps(result))
    else:
        _print_score_table(result)
    return 0


def _held_out(examples, split_path: str, data_path: str) -> list:
    """Only the turns a training run held out: the "dev" ids that its
    ``split.json`` (written by ``rewriting.train``) lists for this file."""
    try:
        split = json.loads(Path(split_path).read_text(encoding="utf-8"))
        dev = set(split["dev"][Path(data_path).name])
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise DataFormatError(
            f"{split_path}: not a split.json with held-out ids for {Path(data_path).name} ({err!r})"
        ) from err
    return [ex for ex in examples if ex.id in dev]


def _print_score_table(result: dict) -> None:
    after = result["after_first"]
    print(f"{'metric (%)':<15}{'all turns':>12}{'after first':>13}")
    print(f"{'n':<15}{result['n']:>12}{after['n']:>13}")
    for name in METRICS:
        if result[name] is not None:
            later = "-" if after[name] is None else f"{after[name]:.2f}"
            print(f"{name:<15}{result[name]:>12.2f}{later:>13}")


# ---------------------------------------------------------------- validate


def _pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # Pearson r of each row pair; nan where a row is constant (r undefined).
    xc = x - x.mean(axis=-1, keepdims=True)
    yc = y - y.mean(axis=-1, keepdims=True)
    denom = np.sqrt((xc * xc).sum(-1) * (yc * yc).sum(-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, (xc * yc).sum(-1) / denom, np.nan)


def bootstrap_ci(scores: np.ndarray, labels: np.ndarray, resamples: int = 1000, seed: int = 0) -> tuple[float, float]:
    """95% percentile-bootstrap interval for Pearson r: lines are resampled
    with replacement; resamples where r is undefined are dropped."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, len(scores), size=(resamples, len(scores)))
    rs = _pearson_rows(scores[rows], labels[rows].astype(float))
    rs = rs[~np.isnan(rs)]
    if rs.size == 0:
        return (math.nan, math.nan)
    lo, hi = np.percentile(rs, [2.5, 97.5])
    return float(lo), float(hi)


def validate(labels: Sequence[LabelledRewrite], scores: dict[str, np.ndarray]) -> dict:
    """The validation statistics of each metric's ``scores`` against the labels."""
    from scipy.stats import pearsonr
    from sklearn.metrics import roc_auc_score

    y = np.array([item.label for item in labels])
    table = {}
    for name, values in scores.items():
        values = np.asarray(values, dtype=float)
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


def _print_validation_table(result: dict) -> None:
    print(f"{result['n']} judged rewrites: {result['n_correct']} correct, {result['n_incorrect']} incorrect")
    print(f"{'metric':<15}{'Pearson r':>10}{'95% CI':>18}{'ROC AUC':>9}{'mean|1':>8}{'mean|0':>8}")
    for name, row in _ranked(result):
        lo, hi = row["ci"]
        print(
            f"{name:<15}{row['pearson']:>10.3f}{f'[{lo:.3f}, {hi:.3f}]':>18}{row['auc']:>9.3f}"
            f"{row['mean_correct']:>8.3f}{row['mean_incorrect']:>8.3f}"
        )


def plot_distributions(labels: Sequence[LabelledRewrite], scores: dict[str, np.ndarray], out: str) -> None:
    """One histogram panel per metric: its scores for correct vs incorrect rewrites."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on servers or in CI
    import matplotlib.pyplot as plt

    y = np.array([item.label for item in labels])
    cols = min(3, len(scores))
    rows = math.ceil(len(scores) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3 * rows), squeeze=False)
    bins = np.linspace(0.0, 1.0, 21)
    for ax, (name, values) in zip(axes.flat, scores.items()):
        values = np.clip(np.asarray(values, dtype=float), 0.0, 1.0)
        ax.hist(values[y == 1], bins=bins, alpha=0.6, label=f"correct ({(y == 1).sum()})", color="tab:green")
        ax.hist(values[y == 0], bins=bins, alpha=0.6, label=f"incorrect ({(y == 0).sum()})", color="tab:red")
        ax.set_title(name)
        ax.set_xlabel("score")
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(scores) :]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def _validate_file(
    path: str | os.PathLike,
    as_json: bool,
    plot: str | None,
    metric_arg: str | None,
    index: str | None,
    torch_threads: int = TORCH_THREADS,
) -> int:
    labels = read_labels(path)
    if len({item.label for item in labels}) < 2:
        return _fail(f"{path}: all {len(labels)} rewrites have the same label; validation needs both labels")
    scorer = Scorer.from_defaults(_metric_names(metric_arg, index is not None), index, torch_threads)
    scores = scorer.score_all([x.reference for x in labels], [x.rewrite for x in labels], desc="scoring labels")
    result = validate(labels, scores)
    if plot:
        plot_distributions(labels, scores, plot)
        print(f"wrote {plot}", file=sys.stderr)
    if as_json:
        print(json.dumps(_json_safe(result)))
    else:
        _print_validation_table(result)
    return 0


def _json_safe(value):
    # JSON has no NaN: an undefined statistic (constant metric) is null.
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value


def _cmd_default(args) -> int:
    path = default_labels_path()
    if path.is_file() and path.stat().st_size > 0:
        print(f"validating the labels collected by the app: {path}", file=sys.stderr)
        return _validate_file(path, args.json, None, args.metrics, None)
    print(
        f"No labels collected yet (looked for {path}; set CONVQA_LABELS to use another file).\n"
        "To get a labels file, either\n"
        "  - judge rewrites in the app: each judgement is appended to that file, or\n"
        "  - build one from the human annotations in the shared data:\n"
        "      python -m eval.labels build --out labels.jsonl\n"
        "Then run: python -m eval.rewrites validate --labels labels.jsonl [--plot labels.png]\n"
        'Format: one JSON object a line, {"id", "history": [...], "question", "rewrite", "reference", "label": 0|1}.'
    )
    return 0


# ---------------------------------------------------------------- bench


def _cmd_bench(args) -> int:
    names = _metric_names(args.metrics, args.index is not None)
    scorer = Scorer.from_defaults(names, args.index, args.torch_threads)
    reference = "When was Ada Lovelace born and who were her parents?"
    # wall and CPU (process) seconds per run; CPU time also counts the JVM's
    # search threads, and unlike wall time it hardly moves with other load.
    timings: dict[str, list[tuple[float, float]]] = {name: [] for name in [*names, "all"]}
    load_before = os.getloadavg()[0]
    for i in range(args.repeat + 5):
        # Fresh texts each run, so neither the R@10 cache nor an encoder's hides any work.
        ref, candidate = f"{reference} {i}", f"When was she born {i} and who were her parents?"
        for name in [*names, "all"]:
            single = Scorer(
                names if name == "all" else (name,), use=scorer.use, minilm=scorer.minilm, retriever=scorer.retriever
            )
            wall, cpu = time.perf_counter(), time.process_time()
            single.score([ref], [candidate])
            timings[name].append((time.perf_counter() - wall, time.process_time() - cpu))
    print(
        f"one rewrite, warm, {args.repeat} runs; load average {load_before:.1f} -> {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} cores"
    )
    print(f"{'metric':<15}{'median ms':>10}{'p95 ms':>10}{'CPU ms':>10}")
    for name, runs in timings.items():
        walls = sorted(w for w, _ in runs[5:])  # the first runs warm caches up
        p95 = percentile(walls, 0.95)
        cpu = statistics.median(c for _, c in runs[5:])
        print(f"{name:<15}{1000 * statistics.median(walls):>10.1f}{1000 * p95:>10.1f}{1000 * cpu:>10.1f}")
    return 0


# ---------------------------------------------------------------- CLI


def _cmd_export(args) -> int:
    for group, count in export_inputs(held_out_groups(args.split), args.dir).items():
        print(f"{args.dir / group}.jsonl: {count} turns")
    return 0


def _cmd_table(args) -> int:
    from rewriting.data import data_dir

    groups = held_out_groups(args.split)
    rewriters = {group: read_outputs(args.dir, group) for group in GROUPS}
    others = {group: other_systems(groups.get(group, []), data_dir()) for group in GROUPS}
    scorer = Scorer.from_defaults(_metric_names(args.metrics, args.index is not None), args.index, args.torch_threads)
    print(comparison_table(groups, rewriters, others, scorer))
    return 0


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m eval.rewrites",
        description="Score rewriters against human rewrites, and validate the metrics against human labels.",
    )
    metric_help = f"comma-separated metrics (default: all of {','.join(METRICS)}; r_at_10 only with an index)"
    # Without a subcommand: validate the app's collected labels with these.
    parser.add_argument("--metrics", help=metric_help)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    commands = parser.add_subparsers(dest="command")

    score = commands.add_parser("score", help="mean metric scores of rewrites against human rewrites")
    score.add_argument("--data", required=True, help="QReCC, CANARD or CAsT json file")
    score.add_argument(
        "--rewriter",
        help=f'rewriter for rewriting.load_rewriter ("original": no rewrite; default: {DEFAULT_REWRITER})',
    )
    score.add_argument("--rewrites", help='JSONL of {"id", "rewrite"} to score instead of running a rewriter')
    score.add_argument("--system", help="score another system's outputs shipped in the data, e.g. cast_automatic")
    score.add_argument("--split", help="a training run's split.json: score only the turns it held out")
    score.add_argument("--index", help="BM25 index for R@10 (default: the default collection's index)")
    score.add_argument("--metrics", help=metric_help)
    score.add_argument("--json", action="store_true", help="print one JSON object")

    check = commands.add_parser("validate", help="correlate each metric with human correct/incorrect labels")
    check.add_argument("--labels", required=True, help="labels JSONL (format: see eval.labels)")
    check.add_argument("--plot", help="write each metric's score distribution per label to this PNG")
    check.add_argument("--index", help="BM25 index for R@10 (default: the default collection's index)")
    check.add_argument("--metrics", help=metric_help)
    check.add_argument("--json", action="store_true", help="print one JSON object")

    export = commands.add_parser("export", help="write a split's held-out turns as rewriting.rewrite inputs, one file a source")
    export.add_argument("--split", required=True, help="a training run's split.json")
    export.add_argument("--dir", required=True, type=Path, help="folder for <group>.jsonl")
    table = commands.add_parser("table", help="every rewriter and other system on the same held-out turns (markdown)")
    table.add_argument("--split", required=True, help="a training run's split.json")
    table.add_argument("--dir", required=True, type=Path, help="folder with <group>.<rewriter>.jsonl outputs of rewriting.rewrite")
    table.add_argument("--index", help="BM25 index for R@10 (default: the default collection's index)")
    table.add_argument("--metrics", default=",".join(TABLE_METRICS), help=f"comma-separated metrics (default {','.join(TABLE_METRICS)})")

    bench = commands.add_parser("bench", help="warm latency of each metric for one rewrite")
    bench.add_argument("--index", help="BM25 index for R@10 (default: the default collection's index)")
    bench.add_argument("--metrics", help=metric_help)
    bench.add_argument("--repeat", type=int, default=50, help="timed runs")
    for command in (score, check, bench, table):
        command.add_argument(
            "--torch-threads",
            type=int,
            default=TORCH_THREADS,
            help=f"torch threads for MiniLM (default {TORCH_THREADS}; 0: torch's choice)",
        )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "score":
            return _cmd_score(args)
        if args.command == "validate":
            return _validate_file(args.labels, args.json, args.plot, args.metrics, args.index, args.torch_threads)
        if args.command == "bench":
            return _cmd_bench(args)
        if args.command == "export":
            return _cmd_export(args)
        if args.command == "table":
            return _cmd_table(args)
        return _cmd_default(args)
    except (AssistantError, ValueError, ImportError) as err:
        return _fail(str(err).splitlines()[0] if str(err) else type(err).__name__)


if __name__ == "__main__":
    sys.exit(main())
