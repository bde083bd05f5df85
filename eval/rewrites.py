"""Rewrite quality: score rewriters, and check which metric tracks human labels.

``python -m eval.rewrites score --data FILE [--rewriter NAME | --rewrites FILE.jsonl | --system KEY] [--split SPLIT]``
``[--index DIR] [--metrics LIST] [--json] [--search-threads N] [--torch-threads N] [--ray [ADDRESS] [--actors N]]``
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
    "rewrite"}`` (ids as ``load_examples`` gives them, or ``<file>#<id>`` as
    ``export`` writes them, ``<file>`` the ``--data`` file's name; only those
    turns are scored), or another system's outputs shipped in the data
    (``--system cast_automatic``); ``--split`` keeps the turns a training
    run held out (its ``split.json``). R@10's searches are batch searches on
    ``--search-threads`` Lucene threads. ``--ray`` does the rewriting and
    scoring on a Ray cluster (ADDRESS; none: ``RAY_ADDRESS`` or a new local
    instance) in ``--actors`` workers, each loading the rewriter, encoders
    and index once (the index must be at ``--index`` on every node), and
    prints what the single-process run prints; without it ray is never
    imported.

``python -m eval.rewrites validate --labels FILE [--json] [--plot OUT.png] [--index DIR] [--metrics LIST] [--torch-threads N]``
    For every metric: Pearson r with the 0/1 labels (point-biserial), a 95%
    percentile-bootstrap interval for r (1,000 resamples of the lines, seed
    0), ROC AUC, and the mean score per label (metric scale 0-1), counting
    each turn once: of several lines with the same ``id`` (a turn judged
    again in the app) only the last counts, and a note on stderr says how
    many earlier lines were skipped; a table
    ranked by r like QReCC's Table 3, and with ``--plot`` each metric's score
    distribution per label. ``--json`` prints ``{"n": N, "n_correct": c,
    "n_incorrect": i, "metrics": {"rouge1_recall": {"pearson": r, "auc": a,
    "ci": [lo, hi], "mean_correct": m1, "mean_incorrect": m0}, ...}}``. The
    labels format is :func:`assistant.kernel.read_labels`'s (described in :mod:`eval.labels`).

``python -m eval.rewrites [--metrics LIST] [--json]``
    Validates the labels the app collected (``$CONVQA_LABELS``, default
    ``~/.cache/convqa/labels.jsonl``), or says how to get a labels file.

``python -m eval.rewrites export --split SPLIT --dir DIR [--trained-on] [--turns N]``
``python -m eval.rewrites table --split SPLIT --dir DIR [--trained-on] [--turns N] [--index DIR] [--metrics LIST] [--against REWRITER] [--torch-threads N]``
    The comparison of rewriters on the same turns: ``export`` writes the
    turns a training run held out (after the first) as ``DIR/<group>.jsonl``
    for ``python -m rewriting.rewrite`` (groups: qrecc, canard, cast); its
    outputs go to ``DIR/<group>.<rewriter>.jsonl``. ``table`` prints a
    Markdown table of every such rewriter and the original question per
    group, then each other system shipped in the data (CAsT automatic
    rewrites, QuReTeC) on its own turns next to every rewriter. ``--against
    R`` adds every row minus R on the same turns, with 95% paired bootstrap
    intervals that resample conversations (a rewriter given its own earlier
    rewrites carries one change into a conversation's later turns): whether
    a difference is beyond the noise. Settings are chosen on the turns
    training saw (``--trained-on`` on both commands), so that the held-out
    ones are run once; ``--turns N`` keeps about N turns of each source
    there, in whole conversations (the same N on both commands gives the
    same turns).

``python -m eval.rewrites bench [--index DIR] [--metrics LIST] [--repeat N] [--torch-threads N]``
    Warm latency of each metric for one rewrite: median and p95 wall time,
    and median CPU time (which hardly moves with the machine's other load).

``--metrics`` and ``--json`` work before the subcommand as after it; before
one that does not take them they are refused. ``--torch-threads N``: MiniLM's
torch threads (default 1; 0: torch's choice). Bad input exits with status 2
and a one-line message.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from assistant.kernel import (
    CommandParser,
    ConfigError,
    DataFormatError,
    InvalidInputError,
    check_at_least,
    counted,
    default_labels_path,
    output_path,
    read_labels,
    run_cli,
)
from rewriting import add_ray_arguments, check_ray_arguments
from rewriting.data import data_dir, load_examples

from ._bench import bench_metrics
from ._plots import check_plot_format, plot_distributions
from ._scoring import (
    DEFAULT_REWRITER,
    METRICS,
    Scorer,
    check_metric_names,
    format_score_table,
    held_out,
    load_retriever,
    metric_names,
    rewrite_with,
    score_examples,
    score_means,
)
from ._table import (
    GROUPS,
    comparison_table,
    export_inputs,
    held_out_groups,
    other_systems,
    read_outputs,
    read_rewrites,
)
from ._validation import (
    bootstrap_ci,
    difference_ci,
    format_validation_table,
    json_safe,
    latest_judgements,
    validate,
)
from .metrics import SEARCH_THREADS

__all__ = [
    "METRICS",
    "Scorer",
    "load_retriever",
    "score_examples",
    "validate",
    "bootstrap_ci",
    "difference_ci",
    "plot_distributions",
    "comparison_table",
    "main",
]

# The comparison table's metrics: the three of QReCC's Table 4.
TABLE_METRICS = ("rouge1_recall", "use", "r_at_10")
# Torch threads for MiniLM in these commands (a process of their own). One:
# on the 2 cores shared with the chat, oversubscribed threads wait for each
# other while other work runs; an idle machine gains little from the second
# on short texts.
TORCH_THREADS = 1


def _scorer(metrics: str | None, index: str | None, torch_threads: int, search_threads: int = SEARCH_THREADS) -> Scorer:
    return Scorer.from_defaults(metric_names(metrics, index is not None), index, torch_threads, search_threads)


def _score_on_ray(args, examples, candidates) -> dict:
    from ._on_ray import score_on_ray  # ray is imported only here

    names = metric_names(args.metrics, args.index is not None)
    settings = {"names": names, "index": args.index, "torch_threads": args.torch_threads,
                "search_threads": args.search_threads, "rewriter": args.rewriter}
    scores, _ = score_on_ray(examples, candidates, settings, args.ray or None, args.actors)
    return score_means(examples, scores)


def _cmd_score(args) -> int:

    sources = [args.rewriter is not None, args.rewrites is not None, args.system is not None]
    if sum(sources) > 1:
        raise InvalidInputError("give only one of --rewriter NAME, --rewrites FILE.jsonl, --system KEY")
    if not any(sources):
        args.rewriter = DEFAULT_REWRITER
    examples = load_examples(args.data)
    if args.split is not None:
        examples = held_out(examples, args.split, args.data)
    if args.rewrites is not None:
        # Keys as load_examples gives them, or as export writes them
        # ("<file>#<id>"): only this file's, as ids repeat across files.
        written = read_rewrites(args.rewrites)
        given = {key.removeprefix(f"{Path(args.data).name}#"): text for key, text in written.items()}
        if len(given) < len(written):
            twice = next(key for key in written if "#" in key and key.split("#", 1)[1] in written)
            raise DataFormatError(f"{args.rewrites}: {twice!r} is the same turn as {twice.split('#', 1)[1]!r}; give it once")
        known = {ex.id for ex in examples}
        stray = [i for i in given if i not in known]
        if stray:
            raise DataFormatError(f"{args.rewrites}: {len(stray)} id(s) not in {args.data}, e.g. {stray[0]!r}")
        examples = [ex for ex in examples if ex.id in given]
        candidates = [given[ex.id] for ex in examples]
    elif args.system is not None:
        examples = [ex for ex in examples if args.system in ex.systems]
        candidates = [ex.systems[args.system] for ex in examples]
    if not examples:
        shipped = sorted({key for ex in load_examples(args.data) for key in ex.systems})
        raise DataFormatError(f"no turns to score in {args.data} with the rewrites given (systems in it: {shipped or 'none'})")
    if args.ray is not None:
        result = _score_on_ray(args, examples, None if args.rewriter is not None else candidates)
    else:
        # The models and the index load before the rewriting: a missing --index was found after all of it.
        scorer = _scorer(args.metrics, args.index, args.torch_threads, args.search_threads)
        if args.rewriter is not None:
            candidates = rewrite_with(args.rewriter, examples)
        result = score_examples(examples, candidates, scorer)
    print(json.dumps(result) if args.json else format_score_table(result))
    return 0


def _validate_file(
    path: str | os.PathLike,
    as_json: bool,
    plot: str | None,
    metric_arg: str | None,
    index: str | None,
    torch_threads: int = TORCH_THREADS,
) -> int:
    if plot:
        # Both before the scoring, not after it; the format first, so that a
        # name refused for it leaves no folder made for it behind.
        check_plot_format(plot)
        plot = output_path(plot, "--plot", inputs=[path])
    labels, superseded = latest_judgements(read_labels(path))
    if superseded:
        print(
            f"note: {path}: skipped {counted(superseded, 'superseded line')}: a turn judged more than once "
            "counts only with its last judgement",
            file=sys.stderr,
        )
    if len({item.label for item in labels}) < 2:
        raise DataFormatError(f"{path}: all {len(labels)} rewrites have the same label; validation needs both labels")
    scorer = _scorer(metric_arg, index, torch_threads)
    scores = scorer.score_all([x.reference for x in labels], [x.rewrite for x in labels], desc="scoring labels")
    result = validate(labels, scores)
    if plot:
        plot_distributions(labels, scores, plot)
        print(f"wrote {plot}", file=sys.stderr)
    print(json.dumps(json_safe(result)) if as_json else format_validation_table(result))
    return 0


def _cmd_default(args) -> int:
    path = default_labels_path()
    if path.is_dir():
        # It said "No labels collected yet": the app cannot append a judgement to a folder either.
        raise ConfigError(f"the labels file {path} is a folder; set CONVQA_LABELS to a file path (the app appends "
                          "each judgement to it)")
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


def _cmd_bench(args) -> int:
    names = metric_names(args.metrics, args.index is not None)
    print(bench_metrics(Scorer.from_defaults(names, args.index, args.torch_threads), names, args.repeat))
    return 0


def _cmd_export(args) -> int:
    directory = output_path(args.dir, "--dir", folder=True)
    for group, count in export_inputs(held_out_groups(args.split, args.trained_on, args.turns), directory).items():
        print(f"{args.dir / group}.jsonl: {counted(count, 'turn')}")
    return 0


def _cmd_table(args) -> int:

    # A mistyped folder gave a table of the original question alone, without a word.
    if not args.dir.is_dir():
        raise InvalidInputError(f"--dir {args.dir}: no such folder; give the one export wrote and rewriting.rewrite filled")
    groups = held_out_groups(args.split, args.trained_on, args.turns)
    rewriters = {group: read_outputs(args.dir, group) for group in GROUPS}
    if not any(rewriters.values()):
        print(f"note: {args.dir} holds no <group>.<rewriter>.jsonl: the table has the original question only", file=sys.stderr)
    for group in GROUPS:
        keys = [key for key, _ in groups.get(group, [])]
        for system, outputs in rewriters[group].items():
            missing = sum(key not in outputs for key in keys)
            if missing:  # the table leaves its cells empty, which said nothing of why
                print(f"note: {args.dir / f'{group}.{system}.jsonl'} lacks {missing} of the {len(keys)} turns "
                      f"(written for another --split, --turns or --trained-on?): {system}'s {group} cells are empty",
                      file=sys.stderr)
    others = {group: other_systems(groups.get(group, []), data_dir()) for group in GROUPS}
    scorer = _scorer(args.metrics or ",".join(TABLE_METRICS), args.index, args.torch_threads)
    print(comparison_table(groups, rewriters, others, scorer, args.against, turns_seen=args.trained_on))
    return 0


def _parser() -> argparse.ArgumentParser:

    parser = CommandParser(
        prog="python -m eval.rewrites",
        description="Score rewriters against human rewrites, and validate the metrics against human labels.",
    )
    metric_help = f"comma-separated metrics (default: all of {','.join(METRICS)}; r_at_10 only with an index)"
    # --metrics and --json may come before the subcommand or after it. The
    # subcommands' copies default to SUPPRESS: a default of theirs would
    # overwrite the value given before the subcommand (argparse sets a
    # subparser's defaults over its parent's namespace). _main refuses either
    # flag before a subcommand that does not take it.
    parser.add_argument("--metrics", help=f"{metric_help}; also for score, validate, table and bench")
    parser.add_argument("--json", action="store_true", help="print one JSON object; also for score and validate")
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
    score.add_argument("--metrics", default=argparse.SUPPRESS, help=metric_help)
    score.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print one JSON object")
    score.add_argument("--search-threads", type=int, default=SEARCH_THREADS,
                       help=f"Lucene threads for R@10's batch searches (default {SEARCH_THREADS})")
    add_ray_arguments(score)

    check = commands.add_parser("validate", help="correlate each metric with human correct/incorrect labels")
    check.add_argument("--labels", required=True, help="labels JSONL (format: see eval.labels)")
    check.add_argument("--plot", help="write each metric's score distribution per label to this PNG")
    check.add_argument("--index", help="BM25 index for R@10 (default: the default collection's index)")
    check.add_argument("--metrics", default=argparse.SUPPRESS, help=metric_help)
    check.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print one JSON object")

    export = commands.add_parser("export", help="write a split's held-out turns as rewriting.rewrite inputs, one file a source")
    export.add_argument("--split", required=True, help="a training run's split.json")
    export.add_argument("--dir", required=True, type=Path, help="folder for <group>.jsonl")
    table = commands.add_parser("table", help="every rewriter and other system on the same held-out turns (markdown)")
    for command in (export, table):
        command.add_argument("--trained-on", action="store_true",
                             help="the turns training saw instead of the held-out ones (to choose settings on)")
        command.add_argument("--turns", type=int, metavar="N",
                             help="about N turns of each source: its first N, then the rest of the last one's conversation")
    table.add_argument("--split", required=True, help="a training run's split.json")
    table.add_argument("--dir", required=True, type=Path, help="folder with <group>.<rewriter>.jsonl outputs of rewriting.rewrite")
    table.add_argument("--index", help="BM25 index for R@10 (default: the default collection's index)")
    table.add_argument("--metrics", default=argparse.SUPPRESS, help=f"comma-separated metrics (default {','.join(TABLE_METRICS)})")
    table.add_argument("--against", metavar="REWRITER", help="add every row minus this one, with 95%% paired bootstrap intervals")

    bench = commands.add_parser("bench", help="warm latency of each metric for one rewrite")
    bench.add_argument("--index", help="BM25 index for R@10 (default: the default collection's index)")
    bench.add_argument("--metrics", default=argparse.SUPPRESS, help=metric_help)
    bench.add_argument("--repeat", type=int, default=50, help="timed runs (default 50)")
    for command in (score, check, bench, table):
        command.add_argument(
            "--torch-threads",
            type=int,
            default=TORCH_THREADS,
            help=f"torch threads for MiniLM (default {TORCH_THREADS}; 0: torch's choice)",
        )
    return parser


def main(argv: list[str] | None = None) -> int:
    """The command line; bad input ends in one ``error:`` line and status 2."""
    return run_cli(_main, argv, interrupted="nothing was scored or written (rewrites made by python -m rewriting.rewrite, "
                             "which goes on after an interruption, are scored with --rewrites)")


# The subcommands (None: none) that take --json and --metrics.
_TAKES_JSON = (None, "score", "validate")
_TAKES_METRICS = (None, "score", "validate", "table", "bench")


def _main(argv: list[str] | None) -> int:
    args = _parser().parse_args(argv)
    if args.json and args.command not in _TAKES_JSON:
        raise InvalidInputError(f"--json is for score and validate (or no subcommand), not {args.command}")
    if args.metrics is not None and args.command not in _TAKES_METRICS:
        raise InvalidInputError(f"--metrics is for score, validate, table and bench, not {args.command}")
    # Counts before any model loads: bench --repeat 0 loaded them all, then
    # ended in a traceback (a percentile of no runs).
    check_at_least(**{name: (getattr(args, name, None), least) for name, least in
                      (("repeat", 1), ("turns", 1), ("search_threads", 1), ("torch_threads", 0))})
    if args.metrics:
        # Every command checks the names it is given here, before any
        # rewriting, reading or loading (and once, not once per Ray worker):
        # a typo used to be found only after the whole rewriting.
        check_metric_names(metric_names(args.metrics, True))
    if args.command == "score":
        check_ray_arguments(args)
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


if __name__ == "__main__":
    sys.exit(main())
