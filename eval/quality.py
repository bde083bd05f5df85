"""QuALITY: multiple-choice questions over long articles.

``python -m eval.quality --data FILE [--json]`` reads either

* the official QuALITY jsonl (one line per question set: ``article`` as HTML,
  ``questions[]`` with ``question``, four ``options``, ``gold_label``
  1-based, ``difficult`` 0/1), or
* LEval's QuALITY subset (``input`` = the article as text, ``instructions`` =
  questions with the options inside the text as ``(A) ... (D)``, ``outputs``
  = the gold option). LEval added 18 questions of its own (sentence counts,
  named entities ...); they are the ones laid out as ``\\n(A)`` (no space
  after the newline) and are dropped: they are not QuALITY questions.

Each article is split into passages of ``passage_words`` words. As in the
paper's extract-then-answer baselines, the ``k`` passages most relevant to
the *question* (BM25) are extracted first; then each option is scored
against that evidence as

    max over evidence passages p of
        mu * cos(MiniLM(question + " " + option), MiniLM(p))
        + (1 - mu) * BM25(option, p) / (the largest such BM25 value)

and the best-scoring option is the answer. ``mu`` plays QReCC's role of
interpolating a dense and a lexical score. ``--scoring partial`` removes the
question's direction from both vectors before the cosine (see
``assistant.readers.CHOICE_SCORINGS``). The defaults are the best point of a
sweep on the LEval subset itself (no held-out QuALITY data is here), so their
accuracy there flatters them.

``--cross-validate`` gives the honest figure for such a choice: nested
leave-one-article-out over the grid ``--k`` x ``--mu`` (each may be a
comma-separated list). For each article the setting with the most right
answers on the *other* articles' questions is chosen (ties: the first in
grid order, ``--k`` outer, ``--mu`` inner, each in the order given) and that
article's questions are scored with it; the pooled held-out answers give the
accuracy. ``--json`` then prints one object,
``{"reader", "scoring", "grid": {"k", "mu"}, "n", "accuracy", "n_hard",
"hard_accuracy", "chosen_on_all": {"k", "mu", "accuracy"}, "folds": [{"article",
"n", "k", "mu", "correct"}, ...]}``, ``chosen_on_all`` being the setting
chosen on every article with its (optimistic) accuracy there.

``--reader likelihood [--model NAME_OR_PATH]`` scores the options instead
by a causal LM's mean log-likelihood of each option after the same
extracted passages and the question (:class:`LikelihoodChoiceReader`; the
default model is the bundled SmolLM2-135M); ``--mu`` does not apply to it.

Accuracy is reported on all questions and on the HARD subset
(``difficult == 1``) when the file has the flag. ``--json`` prints one
shape whatever the reader and the number of runs: a list with one object
per mu (one for a single ``--mu``, and one, ``mu`` null, for the likelihood
reader), in ``--mu`` order,
``[{"reader", "model", "scoring", "mu", "n", "accuracy", "n_hard", "hard_accuracy"}, ...]``,
``model`` null for the embedding reader (MiniLM), ``scoring`` null for the
likelihood reader, accuracies as fractions
with ``null`` where a split is absent; the table without ``--json`` gives
them in percent (``acc %``). Chance is 25%.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from assistant.kernel import CommandParser, ConfigError, DataFormatError, check_at_least, json_lines, run_cli
from assistant.readers import (
    CHOICE_SCORINGS,
    LikelihoodChoiceReader,
    LikelihoodConfig,
    MultipleChoiceReader,
    QualityConfig,
)
from assistant.retrieval import html_to_text

from ._flags import mu_list, number_list


__all__ = [
    "MCQuestion",
    "Article",
    "parse_leval_question",
    "load_quality",
    "evaluate",
    "evaluate_sweep",
    "nested_choices",
    "cross_validate",
]

LETTERS = "ABCD"
# ``--reader``: the embedding reader (MultipleChoiceReader) first, the default.
READERS = ("embedding", "likelihood")


@dataclass(frozen=True)
class MCQuestion:
    question: str
    options: tuple[str, ...]
    gold: int | None  # 0-based index of the gold option; None when unlabelled
    hard: bool | None = None  # QuALITY's `difficult`; None when the file lacks it


@dataclass(frozen=True)
class Article:
    id: str
    text: str
    questions: tuple[MCQuestion, ...]
    title: str = ""


# ---------------------------------------------------------------- reading

_OPTION = re.compile(r"\n[ \t]*\(([A-D])\)[ \t]*")


def parse_leval_question(text: str) -> tuple[str, tuple[str, ...]] | None:
    """Split an LEval instruction into (question, four options).

    Returns None for LEval's own added questions, recognisable by the
    ``\\n(A)`` layout (QuALITY's have ``\\n (A)``).

    >>> parse_leval_question("Who?\\n\\n (A) Ann \\n (B) Bo\\n (C) Cy \\n (D) Di ")
    ('Who?', ('Ann', 'Bo', 'Cy', 'Di'))
    >>> parse_leval_question("How many sentences?\\n\\n(A) 256\\n(B) 450\\n(C) 344\\n(D) 406") is None
    True
    """
    if "\n(A)" in text:
        return None
    parts = _OPTION.split(text)
    # parts = [question, "A", optA, "B", optB, ...]
    letters = parts[1::2]
    if letters != list(LETTERS):
        raise DataFormatError(f"expected options (A)-(D) in question: {text[:80]!r}")
    return parts[0].strip(), tuple(" ".join(o.split()) for o in parts[2::2])


def _gold_letter(output: str) -> int:
    match = re.match(r"\s*\(([A-D])\)", output)
    if not match:
        raise DataFormatError(f"gold output does not start with (A)-(D): {output[:60]!r}")
    return LETTERS.index(match.group(1))


def _official_article(row: dict, line: int, where: str) -> Article:
    article = row["article"]
    html = "".join(article) if isinstance(article, list) else article
    if not isinstance(html, str):
        raise DataFormatError(f"{where}: article must be the article's HTML, a text or a list of texts")
    if not isinstance(row["questions"], list):
        raise DataFormatError(f"{where}: questions must be a list of question objects")
    questions = []
    for number, q in enumerate(row["questions"], start=1):
        at = f"{where}, question {number}"
        if not isinstance(q, dict) or not isinstance(q.get("question"), str) or not isinstance(q.get("options"), list):
            raise DataFormatError(f"{at}: needs a question (a text) and its options (a list)")
        if not all(isinstance(o, str) for o in q["options"]):
            raise DataFormatError(f"{at}: options must be texts")
        options = tuple(" ".join(o.split()) for o in q["options"])
        if len(options) != 4:
            raise DataFormatError(f"{at}: {len(options)} options, not 4")
        gold = q.get("gold_label")
        # QuALITY's labels are 1-based; a 0-based file's 0 (or a 5) would
        # match no option and score every question wrong without a word.
        if gold is not None and _whole(gold) not in range(1, len(options) + 1):
            raise DataFormatError(f"{at}: gold_label {gold!r} is not 1 to {len(options)} (QuALITY's labels are 1-based)")
        difficult = q.get("difficult")
        if difficult is not None and _whole(difficult) not in (0, 1):
            raise DataFormatError(f"{at}: difficult {difficult!r} is not 0 or 1")
        questions.append(
            MCQuestion(
                question=" ".join(q["question"].split()),
                options=options,
                gold=_whole(gold) - 1 if gold is not None else None,
                hard=bool(_whole(difficult)) if difficult is not None else None,
            )
        )
    article_id = str(row.get("set_unique_id") or row.get("article_id") or f"line{line}")
    return Article(article_id, html_to_text(html), tuple(questions), title=row.get("title", ""))


def _whole(value) -> int | None:
    """A label as a whole number (QuALITY writes 1, some copies "1"), else None."""
    try:
        return int(value) if not isinstance(value, (bool, float)) or value == int(value) else None
    except (TypeError, ValueError):
        return None


def _leval_article(row: dict, line: int) -> Article:
    if len(row["instructions"]) != len(row["outputs"]):
        raise DataFormatError(f"line {line}: {len(row['instructions'])} questions but {len(row['outputs'])} outputs")
    questions = []
    for instruction, output in zip(row["instructions"], row["outputs"]):
        parsed = parse_leval_question(instruction)
        if parsed is None:
            continue  # added by LEval, not a QuALITY question
        question, options = parsed
        questions.append(MCQuestion(question, options, _gold_letter(output)))
    return Article(f"leval{line}", row["input"], tuple(questions))


def load_quality(path: str | Path) -> list[Article]:
    """Read official QuALITY jsonl or LEval's subset (detected per line)."""
    articles = []
    try:
        for line, (where, row) in enumerate(json_lines(path), start=1):  # DataFormatError: unreadable
            if not isinstance(row, dict):
                raise DataFormatError(f"{where}: a line must be a JSON object, not {type(row).__name__}")
            if "questions" in row and "article" in row:
                articles.append(_official_article(row, line, where))
            elif "instructions" in row and "input" in row:
                articles.append(_leval_article(row, line))
            elif "question1" in row and "article" in row:
                # QuALITY's repository example (quality_example.jsonl) is laid out so: no
                # difficult flag, and questions the release's validation may have dropped.
                raise DataFormatError(
                    f"{where}: QuALITY's flat example layout (question1, question1option1, ...), not its release's; "
                    "give a QuALITY.v1.0.1 train or dev file (a questions list a line) or LEval's subset"
                )
            else:
                raise DataFormatError(f"{where}: neither QuALITY (article, questions) nor LEval (input, instructions, outputs)")
    except KeyError as error:  # a key the line's own layout needs
        raise DataFormatError(f"{where}: not QuALITY jsonl: no {error.args[0]!r}") from error
    except (TypeError, ValueError) as error:
        raise DataFormatError(f"{where}: not QuALITY jsonl ({error})") from error
    return articles


# ---------------------------------------------------------------- answering


def _summary(correct: Sequence[bool], hard: Sequence[bool], has_flag: bool) -> dict:
    return {
        "n": len(correct),
        "accuracy": sum(correct) / len(correct) if correct else None,
        "n_hard": len(hard) if has_flag else None,
        "hard_accuracy": (sum(hard) / len(hard) if hard else None) if has_flag else None,
    }


def _right_answers(articles: Sequence[Article], runs: int, choose, progress, finish):
    """``finish(articles, right, hard)`` over every article: ``right`` holds,
    per article, one row a labelled question: whether each of ``runs`` runs
    chose its gold option (``choose(article, question)`` gives each run's
    chosen index; a bool array, one column a run), and ``hard`` whether the
    question is HARD.

    Interrupted (Ctrl-C, SIGTERM) after some articles, the interruption
    carries ``partial``: (the number of articles finished, ``finish`` over
    those), so that a command can still say what the finished ones scored;
    an interrupted long run said "nothing was scored" and lost them."""
    right: list[np.ndarray] = []
    hard: list[list[bool]] = []
    try:
        for article in progress(articles, desc="articles", unit="article"):
            rows, flags = [], []
            for q in article.questions:
                if q.gold is None:
                    continue
                rows.append([index == q.gold for index in choose(article, q)])
                flags.append(bool(q.hard))
            right.append(np.array(rows, dtype=bool).reshape(len(rows), runs))
            hard.append(flags)
    except KeyboardInterrupt as stop:
        if right:
            stop.partial = (len(right), finish(articles[: len(right)], right, hard))
        raise
    return finish(articles, right, hard)


def _pooled(articles, right: Sequence[np.ndarray], hard: Sequence[Sequence[bool]], columns: Sequence[int]) -> dict:
    """:func:`_summary` of every article's answers under its own run
    (``columns[i]`` for article i), pooled."""
    chosen = [r[:, c] for r, c in zip(right, columns)]
    correct = [bool(x) for r in chosen for x in r]
    hard_correct = [bool(x) for r, h in zip(chosen, hard) for x, f in zip(r, h) if f]
    return _summary(correct, hard_correct, any(q.hard is not None for a in articles for q in a.questions))


def _accuracies(articles: Sequence[Article], runs: int, choose, progress) -> list[dict]:
    """:func:`_summary` of each of ``runs`` runs; ``choose(article, question)``
    gives each run's chosen option index for one labelled question."""
    return _right_answers(articles, runs, choose, progress, lambda done, right, hard: [
        _pooled(done, right, hard, [i] * len(right)) for i in range(runs)])


def evaluate_sweep(
    articles: Sequence[Article], reader: MultipleChoiceReader, mus: Sequence[float], *, progress=lambda it, **_: it
) -> list[dict]:
    """:func:`evaluate` at each ``mu``, computing every question's features once."""

    def choose(article: Article, q: MCQuestion) -> list[int]:
        features = reader.features(article.text, q.question, q.options, article.id)
        return [reader.choose(features, mu).index for mu in mus]

    return _accuracies(articles, len(mus), choose, progress)


def nested_choices(correct: Sequence[Sequence[int]]) -> list[int]:
    """Leave one out: for each row (an article's right answers under each
    setting, one column a setting), the column with the most right answers
    on all the *other* rows; ties go to the first such column.

    The third article is scored with column 0, chosen on the first two, and
    gets nothing right, though column 1 suits it:

    >>> nested_choices([[2, 0], [2, 0], [0, 3]])
    [1, 1, 0]
    """
    rows = np.asarray(correct, dtype=np.int64).reshape(len(correct), -1)
    others = rows.sum(axis=0) - rows  # (articles, settings)
    return [int(np.argmax(row)) for row in others]  # argmax takes the first of ties


def cross_validate(
    articles: Sequence[Article],
    reader: MultipleChoiceReader,
    ks: Sequence[int],
    mus: Sequence[float],
    *,
    progress=lambda it, **_: it,
) -> dict:
    """Nested leave-one-article-out accuracy of choosing (k, mu) from the
    grid ``ks`` x ``mus`` (see the module's docstring for the shape). Each
    question's features are computed once, at the largest k."""
    grid = [(k, mu) for k in ks for mu in mus]

    def choose(article: Article, q: MCQuestion) -> list[int]:
        features = reader.features(article.text, q.question, q.options, article.id, k=max(ks))
        return [reader.choose(features.first(k), mu).index for k, mu in grid]

    return _right_answers(articles, len(grid), choose, progress,
                          lambda done, right, hard: _cross_validated(done, ks, mus, right, hard))


def _cross_validated(articles: Sequence[Article], ks, mus, right: Sequence[np.ndarray], hard) -> dict:
    grid = [(k, mu) for k in ks for mu in mus]
    per_article = [r.sum(axis=0) for r in right]
    chosen = nested_choices(per_article)
    summary = _pooled(articles, right, hard, chosen)
    totals = sum(per_article)
    best = int(np.argmax(totals))
    best_accuracy = float(totals[best]) / summary["n"] if summary["n"] else None
    return {
        "grid": {"k": list(ks), "mu": list(mus)},
        **summary,
        "chosen_on_all": {"k": grid[best][0], "mu": grid[best][1], "accuracy": best_accuracy},
        "folds": [
            {"article": a.id, "n": len(r), "k": grid[c][0], "mu": grid[c][1], "correct": int(r[:, c].sum())}
            for a, r, c in zip(articles, right, chosen)
        ],
    }


def evaluate(articles: Sequence[Article], reader, *, progress=lambda it, **_: it) -> dict:
    """Accuracy on all labelled questions and on the HARD ones:
    ``{"n", "accuracy", "n_hard", "hard_accuracy"}`` (None where a split is absent).

    ``reader`` needs only ``answer(document, question, options, doc_id) -> Choice``.
    """
    return _right_answers(articles, 1, lambda article, q: [reader.answer(article.text, q.question, q.options,
                                                                           article.id).index], progress,
                          lambda done, right, hard: _pooled(done, right, hard, [0] * len(right)))


def _fmt(value) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _parser() -> argparse.ArgumentParser:
    parser = CommandParser(prog="python -m eval.quality", description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="QuALITY jsonl (official or LEval's subset)")
    parser.add_argument(
        "--json", action="store_true",
        help='print [{"reader", "model", "scoring", "mu", "n", "accuracy", "n_hard", "hard_accuracy"}, ...], one object '
        "per mu (with --cross-validate: one object, its folds listed)",
    )
    defaults = QualityConfig()
    parser.add_argument(
        "--reader", choices=READERS, default=READERS[0],
        help="embedding: MiniLM cosine and BM25 (default); likelihood: a causal LM's log-likelihood of each option",
    )
    parser.add_argument(
        "--model", default=None, help="the likelihood reader's causal LM, a name or path (default: smollm2)"
    )
    parser.add_argument(
        "--mu", default=None,
        help=f"embedding weight (1 - mu: BM25), default {defaults.mu}; a comma-separated list runs a sweep",
    )
    parser.add_argument(
        "--k", default=None,
        help=f"passages extracted per question, default {defaults.k}; a comma-separated list with --cross-validate",
    )
    parser.add_argument(
        "--scoring", choices=CHOICE_SCORINGS, default=None,
        help=f"how the embedding reader matches an option to a passage (default {defaults.scoring}); "
        "partial: with the question's own direction removed",
    )
    parser.add_argument(
        "--cross-validate", action="store_true",
        help="nested leave-one-article-out accuracy of choosing (k, mu) from the --k x --mu grid",
    )
    parser.add_argument("--passage-words", type=int, default=defaults.passage_words,
                        help=f"words per passage (default {defaults.passage_words})")
    return parser


def _print_cross_validation(result: dict, as_json: bool) -> int:
    if as_json:
        print(json.dumps(result))
        return 0
    print(f"{'article':>12} {'n':>4} {'k':>3} {'mu':>5} {'right':>6}")
    for fold in result["folds"]:
        print(f"{fold['article']:>12} {fold['n']:>4} {fold['k']:>3} {fold['mu']:>5.2f} {fold['correct']:>6}")
    chosen = result["chosen_on_all"]
    print(f"cross-validated accuracy: {_fmt(result['accuracy'])}% of {result['n']} "
          f"(HARD: {_fmt(result['hard_accuracy'])}%), scoring {result['scoring']}")
    print(f"chosen on all articles: k {chosen['k']}, mu {chosen['mu']:.2f}, "
          f"{_fmt(chosen['accuracy'])}% there (chosen and scored on the same questions)")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; bad input ends in one ``error:`` line and status 2."""
    return run_cli(_main, argv, interrupted="nothing was scored")


def _main(argv: Sequence[str] | None) -> int:
    args = _parser().parse_args(argv)
    if args.reader == "likelihood" and args.mu is not None:
        raise ConfigError("--mu weighs the embedding reader's scores; the likelihood reader takes none")
    if args.reader == "embedding" and args.model is not None:
        raise ConfigError("--model names the likelihood reader's language model; add --reader likelihood")
    if args.reader == "likelihood" and (args.scoring is not None or args.cross_validate):
        raise ConfigError("--scoring and --cross-validate are the embedding reader's; the likelihood reader takes neither")
    defaults = QualityConfig()
    ks = number_list(args.k, "--k", int) if args.k is not None else [defaults.k]
    # Each flag named with its value: one line for all three ("need 0 <= --mu
    # <= 1 ..., --k >= 1, --passage-words >= 1") left the user to find which.
    check_at_least(k=(min(ks), 1), passage_words=(args.passage_words, 1))
    if len(ks) > 1 and not args.cross_validate:
        raise ConfigError("several --k values are a grid for --cross-validate; give one --k, or add --cross-validate")
    mus = mu_list(args.mu) if args.mu is not None else [defaults.mu]
    scoring = args.scoring or defaults.scoring
    from tqdm import tqdm

    articles = load_quality(args.data)
    if not any(article.questions for article in articles):  # before a model loads; n 0 is no result
        raise DataFormatError(f"{args.data}: no questions; give a QuALITY or LEval jsonl file")
    if not any(q.gold is not None for article in articles for q in article.questions):
        raise DataFormatError(f"{args.data}: no question has a gold_label (QuALITY's test split has none); "
                              "give a labelled file (train or dev)")
    progress = lambda it, **kw: tqdm(it, file=sys.stderr, **kw)  # noqa: E731
    if args.reader == "likelihood":
        model = args.model or "smollm2"
        reader = LikelihoodChoiceReader.from_pretrained(model, LikelihoodConfig(passage_words=args.passage_words, k=ks[0]))
        score = lambda: evaluate(articles, reader, progress=progress)  # noqa: E731
        shown = lambda result: [{"reader": "likelihood", "model": model, "scoring": None, "mu": None, **result}]  # noqa: E731
    else:
        reader = MultipleChoiceReader.load(QualityConfig(args.passage_words, max(ks), mus[0], scoring))
        if args.cross_validate:
            score = lambda: cross_validate(articles, reader, ks, mus, progress=progress)  # noqa: E731
            shown = lambda result: {"reader": "embedding", "scoring": scoring, **result}  # noqa: E731
        else:
            score = lambda: evaluate_sweep(articles, reader, mus, progress=progress)  # noqa: E731
            shown = lambda sweep: [{"reader": "embedding", "model": None, "scoring": scoring, "mu": mu, **result}  # noqa: E731
                                   for mu, result in zip(mus, sweep)]
    try:
        result = score()
    except KeyboardInterrupt as stop:  # Ctrl-C or SIGTERM (main's run_cli takes both)
        if not hasattr(stop, "partial"):
            raise  # no article finished: "nothing was scored"
        done, result = stop.partial
        labelled = sum(q.gold is not None for article in articles for q in article.questions)
        partial = {"articles": done, "of_articles": len(articles), "of_n": labelled}
        _print_results(shown(result), args.json, partial)
        raise type(stop)(f"the accuracy printed is partial: {done} of {len(articles)} articles were scored "
                         f"({_scored_questions(shown(result))} of {labelled} questions)") from None
    return _print_results(shown(result), args.json)


def _scored_questions(results: dict | list[dict]) -> int:
    return (results if isinstance(results, dict) else results[0])["n"]


def _print_results(results: dict | list[dict], as_json: bool, partial: dict | None = None) -> int:
    """Print a run's results (a cross-validation's one object, or a list, one
    object a run); ``partial``: an interrupted run's, over the first
    ``partial["articles"]`` of ``partial["of_articles"]`` articles, labelled so."""
    if partial is not None:
        if as_json:  # every object says it, as each may be read alone
            for result in results if isinstance(results, list) else [results]:
                result["partial"] = partial
        else:
            print(f"partial: interrupted after {partial['articles']} of {partial['of_articles']} articles; "
                  f"{_scored_questions(results)} of {partial['of_n']} questions scored")
    if isinstance(results, dict):
        return _print_cross_validation(results, as_json)
    if as_json:
        print(json.dumps(results))
        return 0
    # Percent here, for reading; --json keeps fractions, as its consumers
    # (BENCHMARKS.md's recorded runs) expect.
    print(f"{'reader':>10} {'mu':>5}  {'n':>5}{'acc %':>10}{'n_hard':>8}{'HARD %':>10}")
    for result in results:
        n_hard = "-" if result["n_hard"] is None else result["n_hard"]
        mu = "-" if result["mu"] is None else f"{result['mu']:.2f}"
        print(
            f"{result['reader']:>10} {mu:>5}  {result['n']:>5}{_fmt(result['accuracy']):>10}"
            f"{n_hard:>8}{_fmt(result['hard_accuracy']):>10}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
