"""Judged rewrites: the labels file format (read by
:func:`assistant.kernel.read_labels`), and the label set built from the
shared data (``python -m eval.labels build --out FILE``).

Format (JSONL, one judged rewrite a line; what ``eval.rewrites validate``
reads and the app appends)::

    {"id": str, "history": [str, ...], "question": str, "rewrite": str,
     "reference": str, "label": 0 | 1}

``label`` 1 = the rewrite is a correct self-contained version of the question,
0 = incorrect. ``reference`` is a human rewrite of the same question, the text
the metrics compare ``rewrite`` with. Other keys are allowed and kept (the
built set adds ``kind`` and ``source``). Blank lines are skipped; any other
malformed line raises :class:`~assistant.kernel.DataFormatError` naming its
line number: nothing is dropped silently.

The built label set
-------------------
QReCC's 10k human correct/incorrect judgements (its Table 3) are not public,
so ``build`` assembles the most honest substitute the shared data allows.
Every line says which ``kind`` of label it is:

``second_worker`` (label 1; a real human judgement, 100 lines at most)
    CANARD ``multiple_refs.json`` holds 100 questions rewritten independently
    by two crowd workers. The second worker's rewrite is the candidate, the
    first's the reference: a rewrite a human wrote to be correct, judged
    against another human's. The file has no question or history, so those
    fields are ``""`` and ``[]``. 26 pairs are identical texts (30 have the
    same tokens), which every metric scores as a perfect match.
``original_dependent`` (label 0; a human judgement, by rule)
    The conversational question itself, taken as a "rewrite" of itself, with
    the human rewrite as reference, where humans said it depends on context:
    CAsT 2020 turns that the organisers annotated with a
    ``query_turn_dependence`` or ``result_turn_dependence`` (file
    ``automatic_evaluation_topics_annotated_v1.1.json``); for CANARD dev,
    QReCC (both shared files), CAsT 2021 and 2022, turns whose human rewrite
    adds a content word the question lacks (a token outside scikit-learn's
    English stop words whose Porter stem is not in the question). The
    annotators' edit is the human judgement; the "adds a content word" test
    is our rule for a *material* edit (it ignores e.g. "happen" -> "happened").
    Turns whose question and rewrite have the same tokens never qualify.
``previous_rewrite`` (label 0; constructed, not judged)
    The human rewrite of the *previous* turn of the same conversation offered
    as the rewrite of this turn: it asks another question, so it is wrong by
    construction (pairs with identical tokens are left out). It imitates the
    failure issue 3 describes (a rewriter repeating an earlier question) and,
    sharing the conversation's entities, is a hard case for lexical metrics.

Duplicate (rewrite, reference) pairs are kept once (CAsT 2022's flattened
branches repeat turns). By default all positives are kept and as many
negatives are sampled (seeded), half of each negative kind.

How this differs from the paper: QReCC's labels judge *system* rewrites,
mostly partial rewrites, with a 9:1-ish share of correct ones unknown to us;
here correct rewrites are human rewrites, incorrect ones are unrewritten
questions or another turn's rewrite, classes are balanced, and there are
hundreds of lines, not 10k. Pearson r with a binary label depends on the
class share; ROC AUC does not.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import warnings
from pathlib import Path

from assistant.kernel import (
    CommandParser,
    DataFormatError,
    InvalidInputError,
    LabelledRewrite,
    output_path,
    porter_stem,
    run_cli,
    sklearn_stopwords,
    tokens,
    write_labels,
)
from rewriting.data import data_dir, load_examples


__all__ = ["build_label_set", "main"]

# ---------------------------------------------------------------- building the set


def _tokens(text: str) -> list[str]:
    # rouge-score's tokenisation (lower case, alphanumeric runs), so "same
    # tokens" means "every metric here sees the same words".
    return tokens(text, "rouge")


def _content_stems(text: str) -> set[str]:
    return {porter_stem(w) for w in _tokens(text) if w not in sklearn_stopwords()}


def adds_content(question: str, rewrite: str) -> bool:
    """Whether the human ``rewrite`` adds a content word ``question`` lacks.

    >>> adds_content("When was he born?", "When was Ada Lovelace born?")
    True
    >>> adds_content("What happen in 2014?", "What happened in 2014?")
    False
    """
    return bool(_content_stems(rewrite) - _content_stems(question))


# Shared-data files whose questions can serve as `original_dependent` negatives.
_REWRITE_FILES = (
    "canard/dev.json",
    "qrecc/qrecc_test_sample.json",
    "qrecc/qrecc_train_sample_1500.json",
    "cast2020/2020_manual_evaluation_topics_v1.0.json",
    "cast2021/2021_manual_evaluation_topics_v1.0.json",
    "cast2022/2022_evaluation_topics_flattened_duplicated_v1.0.json",
)
_CAST2020_ANNOTATED = "cast2020/automatic_evaluation_topics_annotated_v1.1.json"
_MULTIPLE_REFS = "canard/multiple_refs.json"


def _cast2020_dependent(data: Path) -> dict[tuple[str, int], bool]:
    topics = json.loads((data / _CAST2020_ANNOTATED).read_text(encoding="utf-8"))
    return {
        (str(topic["number"]), int(turn["number"])): bool(
            turn.get("query_turn_dependence") or turn.get("result_turn_dependence")
        )
        for topic in topics
        for turn in topic["turn"]
    }


def _second_worker(data: Path) -> list[LabelledRewrite]:
    pairs = json.loads((data / _MULTIPLE_REFS).read_text(encoding="utf-8"))
    if not isinstance(pairs, list) or not all(isinstance(p, list) and len(p) == 2 for p in pairs):
        raise DataFormatError(f"{data / _MULTIPLE_REFS}: expected a list of [rewrite_a, rewrite_b] pairs")
    return [
        LabelledRewrite(
            id=f"canard-multiple-refs:{i}",
            history=(),
            question="",
            rewrite=second,
            reference=first,
            label=1,
            extra={"kind": "second_worker", "source": "canard"},
        )
        for i, (first, second) in enumerate(pairs)
    ]


def _negatives(data: Path) -> tuple[list[LabelledRewrite], list[LabelledRewrite]]:
    dependent_2020 = _cast2020_dependent(data)
    originals, previous = [], []
    for name in _REWRITE_FILES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # turns without a rewrite are simply not candidates
            examples = load_examples(data / name)
        by_turn = {(ex.conversation_id, ex.turn): ex for ex in examples}
        for ex in examples:
            same = _tokens(ex.question) == _tokens(ex.rewrite)
            if ex.source == "cast2020":
                dependent = dependent_2020.get((ex.conversation_id, ex.turn), False) and not same
            else:
                dependent = not same and adds_content(ex.question, ex.rewrite)
            common = {"history": tuple(ex.history), "question": ex.question, "reference": ex.rewrite, "label": 0}
            if dependent:
                originals.append(
                    LabelledRewrite(
                        id=f"{ex.id}:original",
                        rewrite=ex.question,
                        extra={"kind": "original_dependent", "source": ex.source},
                        **common,
                    )
                )
            before = by_turn.get((ex.conversation_id, ex.turn - 1))
            if before is not None and _tokens(before.rewrite) != _tokens(ex.rewrite):
                previous.append(
                    LabelledRewrite(
                        id=f"{ex.id}:previous",
                        rewrite=before.rewrite,
                        extra={"kind": "previous_rewrite", "source": ex.source},
                        **common,
                    )
                )
    return _unique(originals), _unique(previous)


def _unique(labels: list[LabelledRewrite]) -> list[LabelledRewrite]:
    seen: set[tuple[str, str]] = set()
    kept = []
    for item in labels:
        key = (item.rewrite, item.reference)
        if key not in seen:
            seen.add(key)
            kept.append(item)
    return kept


def build_label_set(data: str | os.PathLike, negatives: int | None = None, seed: int = 0) -> list[LabelledRewrite]:
    """The label set described in this module's docstring, from the shared
    data folder ``data``: every ``second_worker`` positive and ``negatives``
    negatives (None: as many as positives; -1: all; 0: none), half of them
    ``original_dependent`` and half ``previous_rewrite``, drawn with ``seed``.
    Positives first, then negatives, each in a fixed order."""
    _check_negatives(negatives)
    data = Path(data)
    positives = _second_worker(data)
    originals, previous = _negatives(data)
    total = len(originals) + len(previous)
    wanted = len(positives) if negatives is None else total if negatives == -1 else negatives
    wanted = min(wanted, total)
    rng = random.Random(seed)
    take_original = min(len(originals), max(wanted - len(previous), wanted // 2))
    take_previous = wanted - take_original
    chosen = rng.sample(originals, take_original) + rng.sample(previous, take_previous)
    return positives + chosen


def _check_negatives(negatives: int | None) -> None:
    if negatives is not None and negatives < -1:  # was taken as "all" without a word
        raise InvalidInputError(f"--negatives must be -1 (all), 0 (none) or a count, not {negatives}")


def _parser() -> argparse.ArgumentParser:
    # The docstring's first sentence runs over two lines: its first line alone read "... the label set built".
    parser = CommandParser(
        prog="python -m eval.labels",
        description="Build a label set of judged rewrites from the shared data, in the labels format that "
        "python -m eval.rewrites validate reads.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser("build", help="build the label set from the shared data (see the module docstring)")
    build.add_argument("--out", required=True, help="JSONL file to write")
    build.add_argument("--data", default=None, help="shared data folder (default: $CONVQA_DATA or ../shared/data)")
    build.add_argument(
        "--negatives", type=int, default=None, help="negatives to sample (default: as many as positives; -1: all; 0: none)"
    )
    build.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """The command line; bad input ends in one ``error:`` line and status 2."""
    return run_cli(_main, argv, interrupted="the label set was not finished")


def _main(argv: list[str] | None) -> int:
    args = _parser().parse_args(argv)
    # The inputs first: a refused command leaves no --out folder behind.
    _check_negatives(args.negatives)
    data = Path(args.data) if args.data else data_dir()
    if not (data / _MULTIPLE_REFS).is_file():
        raise InvalidInputError(f"{data} has no {_MULTIPLE_REFS}: give the shared data folder with --data")
    out = output_path(args.out, "--out")  # before the label set is built
    labels = build_label_set(data, negatives=args.negatives, seed=args.seed)
    count = write_labels(labels, out)
    kinds: dict[str, int] = {}
    for item in labels:
        key = f"{item.extra['kind']} ({item.extra['source']}, label {item.label})"
        kinds[key] = kinds.get(key, 0) + 1
    print(f"wrote {count} judged rewrites to {args.out}")
    for key, n in sorted(kinds.items()):
        print(f"  {n:5d}  {key}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
