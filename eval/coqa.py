"""CoQA: the official evaluation, and predictions with our system.

Evaluation (``--pred``) follows the official ``evaluate-v1.0.py`` line by
line in its semantics: SQuAD normalisation; per turn, EM and F1 over the
main answer plus ``additional_answers`` with leave-one-out averaging (one
gold: the score against it); a missing prediction scores 0 but still counts
as a turn (and predictions that name no turn of the data, which the official
script ignores silently, are counted in one warning); scores per domain, then ``in_domain`` (children's stories,
literature, mid-high school, news, Wikipedia), ``out_domain`` (reddit,
science) and ``overall``, each ``{"em", "f1", "turns"}`` in percent rounded
to one decimal. ``--json`` prints exactly that dictionary, in the official
order. CoQA's "unknown" answers are plain gold texts ("unknown"), so a
system says "unknown" to get them right.

Prediction (``--predict OUT``) answers every turn with our pipeline, one
story at a time: the story is split into passages, retrieval runs inside
that story only (BM25, its hits rescored as the app rescores a pasted
document's), and the history the rewriter is given is the *gold*
history (earlier questions and their main gold answers, the last
``--history-turns`` of them), as the CoQA paper prescribes for evaluation;
the reader reads the rewritten question.
The file written is the official prediction format, a list of
``{"id", "turn_id", "answer"}``. Meanwhile each finished story is kept in
``OUT.partial``: Ctrl-C (or SIGTERM) leaves ``OUT`` as it was, exits with
status 130 (143), and the same command (same data file and settings) goes
on from the stories kept.

Usage::

    python -m eval.coqa --data coqa-dev-v1.0.json --pred PRED.json [--json]
    python -m eval.coqa --data coqa-dev-v1.0.json --predict PRED.json \\
        [--reader sentence|generative] [--rewriter original|MODEL]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

from assistant.kernel import (
    Answer,
    AssistantConfig,
    CommandParser,
    Conversation,
    DataFormatError,
    InvalidInputError,
    RetrieverConfig,
    Rewrite,
    Turn,
    check_at_least,
    PartialOutput,
    output_path,
    run_cli,
    utf8_text,
)
from assistant.pipeline import Assistant
from assistant.readers import READERS, build_reader
from assistant.retrieval import ChunkRetriever, split_passages
from eval._qa_run import document_rescorer
from eval.metrics import exact_match, leave_one_out, token_f1
from rewriting import REWRITERS, load_rewriter


__all__ = [
    "IN_DOMAIN",
    "OUT_DOMAIN",
    "Story",
    "load_stories",
    "load_gold",
    "load_predictions",
    "turn_scores",
    "evaluate",
    "format_table",
    "gold_conversation",
    "story_retriever",
    "predict",
]

# Official source names -> the domain names the official evaluator prints,
# in its order (in-domain first, then out-of-domain).
IN_DOMAIN = OrderedDict(
    [
        ("mctest", "children_stories"),
        ("gutenberg", "literature"),
        ("race", "mid-high_school"),
        ("cnn", "news"),
        ("wikipedia", "wikipedia"),
    ]
)
OUT_DOMAIN = OrderedDict([("reddit", "reddit"), ("science", "science")])

Key = tuple[str, int]


@dataclass(frozen=True)
class Story:
    """One CoQA story: its text, source, questions and every gold answer list."""

    id: str
    source: str
    text: str
    questions: tuple[str, ...]
    # golds[i] = the main answer of turn i + 1 followed by the additional ones.
    golds: tuple[tuple[str, ...], ...]


def load_stories(path: str | Path) -> list[Story]:
    """Read an official CoQA file (``{"data": [story, ...]}``).

    ``additional_answers`` is optional (the training file has none). Raises
    :class:`DataFormatError` when the layout is not CoQA's or a source is
    not one of the seven CoQA domains.
    """
    dataset = _read_json(path, "CoQA file")
    if not isinstance(dataset, dict) or not isinstance(dataset.get("data"), list):
        raise DataFormatError(f"{path} is not a CoQA file: expected {{'data': [stories]}}")
    if not dataset["data"]:  # every score would be 0.0 of 0 turns
        raise DataFormatError(f"{path}: no stories in its 'data' list")
    stories, seen = [], set()
    for number, story in enumerate(dataset["data"], start=1):
        try:
            source, story_id = story["source"], story["id"]
            additional = story.get("additional_answers", {})
            if not isinstance(additional, dict):  # CoQA's is {"0": [answers], "1": ...}
                raise DataFormatError(
                    f"{path}: story {story_id}: additional_answers must be an object of answer lists, "
                    f"not {type(additional).__name__}"
                )
            named = {"answers": story["answers"], **{f"additional_answers[{k!r}]": v for k, v in additional.items()}}
            answer_lists = list(named.values())
            questions = story["questions"]
            for name, answers in named.items():
                # A short list raised IndexError, refused without saying which.
                if not isinstance(answers, list) or len(answers) != len(questions):
                    count = f"{len(answers)} answers" if isinstance(answers, list) else "no list of answers"
                    raise DataFormatError(f"{path}: story {story_id}: {name} has {count} for {len(questions)} questions")
            if source not in IN_DOMAIN and source not in OUT_DOMAIN:
                raise DataFormatError(
                    f"{path}: story {story_id}: unknown source '{source}' "
                    f"(CoQA's are {', '.join([*IN_DOMAIN, *OUT_DOMAIN])})"
                )
            golds = []
            for i, question in enumerate(questions):
                if question["turn_id"] != i + 1:
                    raise DataFormatError(f"{path}: story {story_id}: turn_id {question['turn_id']} at position {i + 1}")
                turn_golds = []
                for answers in answer_lists:
                    if answers[i]["turn_id"] != question["turn_id"]:
                        raise DataFormatError(f"{path}: story {story_id}: answer turn_id does not match question {i + 1}")
                    turn_golds.append(answers[i]["input_text"])
                texts = [question["input_text"], *turn_golds]
                if not all(isinstance(text, str) for text in texts):  # a null one failed in the metrics
                    raise DataFormatError(f"{path}: story {story_id}: turn {i + 1}: every input_text (question and "
                                          f"answers) must be text, not {next(t for t in texts if not isinstance(t, str))!r}")
                golds.append(tuple(turn_golds))
            if story_id in seen:  # --predict answered it twice, and kept one of the two in OUT.partial
                raise DataFormatError(f"{path}: duplicate story {story_id}")
            seen.add(story_id)
            stories.append(
                Story(
                    id=story_id,
                    source=source,
                    text=story["story"],
                    questions=tuple(q["input_text"] for q in questions),
                    golds=tuple(golds),
                )
            )
        except (KeyError, IndexError, TypeError) as error:
            # The story's place in the file: a broken one may have no id.
            raise DataFormatError(f"{path}: story {number} is not in CoQA's format ({error!r})") from error
    return stories


def _read_json(path: str | Path, what: str):
    """The JSON of ``path``: a UTF-8 file, with or without a byte-order mark
    (Notepad writes one, and it was refused); another encoding is refused
    saying so (it ended in a traceback)."""
    try:
        raw = Path(path).read_bytes()
    except IsADirectoryError as error:  # as the other commands say it ("Is a directory" gave no advice)
        raise DataFormatError(f"{path} is a folder; give the {what} in it") from error
    except OSError as error:
        raise DataFormatError(f"cannot read {what} {path}: {error.strerror or error}") from error
    text = utf8_text(raw, str(path))
    if not text.strip():  # the decoder said "Expecting value: line 1 column 1 (char 0)"
        raise DataFormatError(f"{path} is empty; give the {what} ({_LAYOUTS[what]})")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise DataFormatError(f"{path} is not JSON ({error}); give the {what} ({_LAYOUTS[what]})") from error


# What each file _read_json reads holds, for its messages.
_LAYOUTS = {"CoQA file": 'coqa-dev-v1.0.json: {"data": [stories]}',
            "predictions": 'a JSON list of {"id", "turn_id", "answer"}'}


def load_gold(path: str | Path) -> tuple[dict[Key, tuple[str, ...]], dict[str, str]]:
    """The official evaluator's view of a data file: gold answers per
    ``(story id, turn id)`` and each story's source."""
    gold: dict[Key, tuple[str, ...]] = {}
    sources: dict[str, str] = {}
    for story in load_stories(path):
        sources[story.id] = story.source
        for turn_id, golds in enumerate(story.golds, start=1):
            gold[(story.id, turn_id)] = golds
    return gold, sources


def load_predictions(path: str | Path) -> dict[Key, str]:
    """Read the official prediction format: a list of ``{"id", "turn_id", "answer"}``."""
    rows = _read_json(path, "predictions")
    try:
        predictions = {(row["id"], int(row["turn_id"])): row["answer"] for row in rows}
    except (KeyError, TypeError, ValueError) as error:
        raise DataFormatError(
            f"{path}: predictions must be a list of {{'id', 'turn_id', 'answer'}} ({error!r})"
        ) from error
    # A null or numeric answer would otherwise fail deep in the metrics.
    for number, row in enumerate(rows, start=1):
        if not isinstance(row["answer"], str):
            raise DataFormatError(
                f"{path}: prediction {number} (id {row['id']}, turn_id {row['turn_id']}): "
                f"answer must be text, not {row['answer']!r}"
            )
    return predictions


def turn_scores(golds: Sequence[str], prediction: str) -> tuple[float, float]:
    """One turn's (EM, F1): leave-one-out over the golds (CoQA's rule).

    Worked example, golds ["white", "white", "gray", "a white cat"] and
    prediction "white": the four leave-one-out subsets all still hold a
    "white" (EM 1, F1 1), so EM = F1 = 1; prediction "gray" matches only when
    the left-out gold is not "gray": EM = 3/4, F1 = 3/4.

    >>> turn_scores(["white", "white", "gray", "a white cat"], "white")
    (1.0, 1.0)
    >>> turn_scores(["white", "white", "gray", "a white cat"], "gray")
    (0.75, 0.75)
    """
    return leave_one_out(exact_match, golds, prediction), leave_one_out(token_f1, golds, prediction)


def _percent(total: float, count: int) -> float:
    return round(total / max(1, count) * 100, 1)


def evaluate(
    gold: Mapping[Key, Sequence[str]],
    sources: Mapping[str, str],
    predictions: Mapping[Key, str],
    *,
    warn: Callable[[str], None] = lambda message: print(message, file=sys.stderr),
) -> "OrderedDict[str, dict]":
    """The official evaluator's ``model_performance``: per-domain, in/out of
    domain and overall ``{"em", "f1", "turns"}``, percent, one decimal."""
    totals = {source: [0.0, 0.0, 0] for source in [*IN_DOMAIN, *OUT_DOMAIN]}
    for (story_id, turn_id), golds in gold.items():
        total = totals[sources[story_id]]
        total[2] += 1
        if (story_id, turn_id) not in predictions:
            warn(f"Missing prediction for {story_id} and turn_id: {turn_id}")
            continue
        em, f1 = turn_scores(golds, predictions[(story_id, turn_id)])
        total[0] += em
        total[1] += f1
    # The official script ignores these without a word; a file made for
    # other stories, or with 0-based turn_ids, then scored its misses only.
    stray = [key for key in predictions if key not in gold]
    if stray:
        story_id, turn_id = stray[0]
        warn(f"{len(stray)} prediction(s) name no turn of the data and are not scored, "
             f"e.g. {story_id} and turn_id: {turn_id} (turn_ids count from 1)")
    scores: OrderedDict[str, dict] = OrderedDict()
    groups = {"in_domain": [0.0, 0.0, 0], "out_domain": [0.0, 0.0, 0]}
    for group, domains in (("in_domain", IN_DOMAIN), ("out_domain", OUT_DOMAIN)):
        for source, domain in domains.items():
            em, f1, turns = totals[source]
            scores[domain] = {"em": _percent(em, turns), "f1": _percent(f1, turns), "turns": turns}
            groups[group] = [a + b for a, b in zip(groups[group], totals[source])]
    for group, (em, f1, turns) in groups.items():
        scores[group] = {"em": _percent(em, turns), "f1": _percent(f1, turns), "turns": turns}
    em, f1, turns = (a + b for a, b in zip(groups["in_domain"], groups["out_domain"]))
    scores["overall"] = {"em": _percent(em, turns), "f1": _percent(f1, turns), "turns": turns}
    return scores


def format_table(scores: Mapping[str, Mapping]) -> str:
    """The scores as an aligned text table (one row per domain and group)."""
    lines = [f"{'domain':<18}{'EM':>7}{'F1':>7}{'turns':>8}"]
    for name, row in scores.items():
        lines.append(f"{name:<18}{row['em']:>7.1f}{row['f1']:>7.1f}{row['turns']:>8}")
    return "\n".join(lines)


# ---------------------------------------------------------------- prediction


def gold_conversation(story: Story, turn_index: int) -> Conversation:
    """The turns before ``turn_index`` (0-based) with their main gold answers:
    the gold history CoQA evaluates with (the assistant keeps the last n).

    >>> s = Story("s", "mctest", "", ("Q1", "Q2", "Q3"), (("A1", "a1"), ("A2",), ("A3",)))
    >>> gold_conversation(s, 2).history()
    ['Q1', 'A1', 'Q2', 'A2']
    """
    conversation = Conversation()
    for question, golds in zip(story.questions[:turn_index], story.golds[:turn_index]):
        conversation.add(Turn(question, Rewrite(question), Answer(golds[0], 1.0)))
    return conversation


def story_retriever(story: Story, passage_words: int = 100) -> ChunkRetriever:
    """BM25 over the passages of one story: retrieval runs inside it."""
    return ChunkRetriever(split_passages(story.text, doc_id=story.id, max_words=passage_words))


def predict(
    stories: Sequence[Story],
    make_assistant: Callable[[Story], object],
    *,
    progress: Callable = lambda iterable, **_: iterable,
    story_done: Callable[[Story, list[dict]], None] = lambda story, rows: None,
) -> list[dict]:
    """Answer every turn of every story; the official prediction rows.

    ``make_assistant(story)`` returns an object with the pipeline's
    ``ask(question, conversation) -> Turn`` whose retrieval runs inside that
    story. History is gold. An answer the reader did not find is "unknown".
    ``story_done(story, its rows)`` is called as each story is finished.
    """
    rows = []
    for story in progress(stories, desc="stories", unit="story"):
        assistant = make_assistant(story)
        answered = []
        for i, question in enumerate(story.questions):
            turn = assistant.ask(question, gold_conversation(story, i))
            text = turn.answer.text if turn.answer.found else "unknown"
            answered.append({"id": story.id, "turn_id": i + 1, "answer": text})
        story_done(story, answered)
        rows += answered
    return rows


def _assistant_config(args) -> AssistantConfig:
    """The pipeline's settings from the flags (checked as it is made: a reader it does not know is refused)."""
    return AssistantConfig(rewriter=args.rewriter, reader=args.reader, history_turns=args.history_turns)


def _assistant_factory(args) -> Callable[[Story], object]:
    """One rewriter, reader and rescorer for the run; a retriever per story.

    A story is read as the app reads a pasted document: BM25 inside it, its
    first ``rescore_depth`` hits rescored (:func:`~eval._qa_run.document_rescorer`,
    the app's one-document rescoring, which known-context evaluation
    shares), each passage encoded once."""

    config = _assistant_config(args)
    reader = build_reader(args.reader)
    rewriter = load_rewriter(args.rewriter)
    retrieval = RetrieverConfig(k=args.k)
    rescorer = document_rescorer(retrieval.dense_weight)

    def make_assistant(story: Story):
        return Assistant(rewriter, story_retriever(story, args.passage_words), reader, config, retrieval, rescorer)

    return make_assistant


# The flags of --predict and their values when not given. They default to
# None in the parser so that one given with --pred, where it did nothing
# (--limit 10 still scored every story), is refused.
PREDICT_DEFAULTS = {"reader": "sentence", "rewriter": "original", "history_turns": 2, "k": 3, "passage_words": 100}


def _parser() -> argparse.ArgumentParser:
    parser = CommandParser(prog="python -m eval.coqa", description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="official CoQA file, e.g. coqa-dev-v1.0.json")
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--pred", help="predictions to score (official format)")
    action.add_argument("--predict", metavar="OUT", help="write our system's predictions here")
    parser.add_argument("--json", action="store_true", help="print the official evaluator's JSON")
    d = PREDICT_DEFAULTS
    parser.add_argument("--reader", help=f"{' | '.join(READERS)} (with --predict; default: {d['reader']})")
    parser.add_argument("--rewriter", help=f"{' | '.join(REWRITERS)} | a model path (with --predict; default: {d['rewriter']})")
    parser.add_argument("--history-turns", type=int,
                        help=f"gold turns of history given to the system (with --predict; default: {d['history_turns']})")
    parser.add_argument("--k", type=int, help=f"passages of the story given to the reader (with --predict; default: {d['k']})")
    parser.add_argument("--passage-words", type=int,
                        help=f"words per passage when splitting a story (with --predict; default: {d['passage_words']})")
    parser.add_argument("--limit", type=int, default=None, help="only the first N stories (with --predict)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; bad input ends in one ``error:`` line and status 2."""
    return run_cli(_main, argv, interrupted="nothing was scored or written")


def _main(argv: Sequence[str] | None) -> int:
    args = _parser().parse_args(argv)
    given = [f"--{name.replace('_', '-')}" for name in [*PREDICT_DEFAULTS, "limit"] if getattr(args, name) is not None]
    if args.pred and given:
        raise InvalidInputError(f"--pred scores the given predictions as they are: leave out {', '.join(given)} (for --predict)")
    for name, value in PREDICT_DEFAULTS.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    # Before the stories are read and the models load (a negative --limit
    # would also slice turns off the end instead of taking the first N).
    check_at_least(k=(args.k, 1), history_turns=(args.history_turns, 0), passage_words=(args.passage_words, 1),
                   limit=(args.limit, 1))
    if args.pred:
        gold, sources = load_gold(args.data)
        scores = evaluate(gold, sources, load_predictions(args.pred))
        print(json.dumps(scores, indent=2) if args.json else format_table(scores))
        return 0
    from tqdm import tqdm

    # A reader it does not know was refused only when the models loaded, after
    # the data was read and an empty OUT.partial made, which was left behind.
    _assistant_config(args)
    out = output_path(args.predict, "--predict", inputs=[args.data])  # before the stories are answered, not after
    stories = load_stories(args.data)[: args.limit]
    # What made the predictions: the same command (any --limit) goes on from
    # an interrupted run's; other data or settings start afresh.
    key = {"data": hashlib.sha256(Path(args.data).read_bytes()).hexdigest(), "reader": args.reader,
           "rewriter": args.rewriter, "history_turns": args.history_turns, "k": args.k,
           "passage_words": args.passage_words,
           "environment": {name: value for name, value in sorted(os.environ.items()) if name.startswith("CONVQA_")}}
    saved = PartialOutput(out, key)
    done = {story_id: line["rows"] for story_id, line in saved.done().items()}
    todo = [story for story in stories if story.id not in done]
    if len(todo) < len(stories):
        print(f"resuming: {len(stories) - len(todo)} of {len(stories)} stories were answered by an interrupted run "
              f"({saved.path.name})", file=sys.stderr)

    def keep(story: Story, rows: list[dict]) -> None:
        saved.add([{"id": story.id, "rows": rows}])
        done[story.id] = rows

    saved.start({"id": story_id, "rows": rows} for story_id, rows in done.items())
    try:
        # No story left (all resumed): no model is loaded.
        predict(todo, _assistant_factory(args) if todo else None,
                progress=lambda it, **kw: tqdm(it, file=sys.stderr, **kw), story_done=keep)
    except KeyboardInterrupt as stop:  # Ctrl-C or SIGTERM (main's run_cli takes both): said with what was kept
        kept = sum(story.id in done for story in stories)
        raise type(stop)(f"{args.predict} is as it was; {kept} of {len(stories)} stories are kept in "
                         f"{saved.path}, and the same command goes on from them") from None
    finally:
        saved.close()
    rows = [row for story in stories for row in done[story.id]]
    out.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(rows)} predictions to {args.predict}", file=sys.stderr)
    beyond = len(done.keys() - {story.id for story in stories})
    if beyond:  # answered by a run without --limit (or a larger one): kept for it
        print(f"kept {saved.path}: it holds {beyond} stories past --limit {args.limit}", file=sys.stderr)
    else:
        saved.path.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
