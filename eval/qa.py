"""QReCC-style question answering evaluation: end to end, human rewrite, known context.

``python -m eval.qa --data FILE --index DIR [--setting end-to-end|known-context|human-rewrite] [--json]``

Data (detected from the file):

* QReCC json, official keys (``Context``, ``Question``, ``Rewrite``,
  ``Answer``, ``Conversation_no``, ``Turn_no``) or the SCAI/sample layout
  (``Truth_rewrite``, ``Truth_answer``, ``Truth_passages``, ``NewContext``);
* LEval's MultiDoc2Dial subset (jsonl: ``input`` = the documents,
  ``instructions`` = the user turns, ``outputs`` = the agent answers, our
  gold). Its documents are split into passages (ids ``md2d{g}_p{i}``, one
  ``g`` per distinct document group).

``--write-collection OUT`` writes the passages of a MultiDoc2Dial file or
of SCAI's ``batch1-top1.csv`` as a JSONL collection (``id``, ``contents``,
``title``, ``url``) to index with ``python -m assistant.index``.

Settings, as in the QReCC paper:

* ``end-to-end``: our rewrite of the question, BM25 over the index, our reader;
* ``human-rewrite``: the gold ``Rewrite`` as the query (QReCC data only);
* ``known-context``: the reader is given the gold context instead of
  retrieving: the ``Truth_passages`` (looked up in the index) or, for
  MultiDoc2Dial, the passages of the conversation's own documents, ranked
  for the query by BM25 among themselves.

Metrics are QReCC's (``ml-qrecc/utils``): SQuAD-normalised F1 and EM of the
answer against the one gold answer (a reader that finds nothing answers "",
which matches QReCC's empty "no answer" golds); retrieval MRR, R@10 and
R@100 where a retrieved passage is relevant when the closest span of it to
the gold answer has F1 >= 0.8 (QReCC's span heuristic; questions without an
answer have no relevant passage and still count); and the extractive upper
bound: the best span F1 / EM over the retrieved passages. All in percent.
``--mu 0,0.1,...`` sweeps the reader's interpolation weight, retrieving and
embedding once (reader latency is then reported for the first mu only).
"""

from __future__ import annotations

import argparse
import ast
import csv
import dataclasses
import json
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path
from typing import Callable, Iterable, Sequence

from assistant.encoders import CachedEncoder
from assistant.kernel import (
    AssistantError,
    DataFormatError,
    InvalidInputError,
    Passage,
    percentile,
)
from assistant.retrieval import ChunkRetriever, split_passages
from eval.metrics import exact_match, mrr, normalize_answer, token_f1

__all__ = [
    "SETTINGS",
    "QATurn",
    "load_qrecc",
    "load_multidoc2dial",
    "multidoc2dial_passages",
    "scai_passages",
    "write_collection",
    "closest_span",
    "RELEVANCE_THRESHOLD",
    "relevant_ids",
    "hit_at_k",
    "TurnResult",
    "run_turns",
    "summarize",
]

SETTINGS = ("end-to-end", "known-context", "human-rewrite")
# QReCC's threshold: a passage is relevant when its closest span to the gold
# answer reaches this F1 (ml-qrecc utils/evaluate_retrieval.py).
RELEVANCE_THRESHOLD = 0.8
# Words per passage when we split documents: the collection reader's size.
PASSAGE_WORDS = 100


@dataclass(frozen=True)
class QATurn:
    """One evaluation turn, whatever file it came from."""

    conversation: str
    turn: int
    question: str
    history: tuple[str, ...]  # earlier turns' texts, question and answer alternating (QReCC's Context)
    answer: str  # the gold answer ("" = no answer)
    rewrite: str | None = None  # the human rewrite, when the data has one
    gold_ids: tuple[str, ...] = ()  # gold passage ids (QReCC's Truth_passages)
    context: tuple[Passage, ...] = ()  # gold context carried by the data itself (MultiDoc2Dial)


# ---------------------------------------------------------------- data


def load_qrecc(path: str | Path) -> list[QATurn]:
    """QReCC json: a list of turns with the official or the SCAI-style keys."""
    try:
        rows = json.loads(Path(path).read_text(encoding="utf-8"))
        turns = []
        for row in rows:
            answer = row["Answer"] if "Answer" in row else row["Truth_answer"]
            rewrite = row.get("Rewrite", row.get("Truth_rewrite"))
            history = row["Context"] if "Context" in row else row.get("NewContext", [])
            turns.append(
                QATurn(
                    conversation=str(row["Conversation_no"]),
                    turn=int(row["Turn_no"]),
                    question=row["Question"],
                    history=tuple(history),
                    answer=answer or "",
                    rewrite=rewrite or None,
                    gold_ids=tuple(row.get("Truth_passages") or ()),
                )
            )
        return turns
    except OSError as error:
        raise DataFormatError(f"cannot read {path}: {error}") from error
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
        raise DataFormatError(f"{path} is not QReCC json (a list of turns with QReCC's keys): {error!r}") from error


def _multidoc2dial_rows(path: str | Path) -> list[dict]:
    try:
        with open(path, encoding="utf-8") as handle:
            rows = [json.loads(line) for line in handle if line.strip()]
        for row in rows:
            if not (isinstance(row["input"], str) and len(row["instructions"]) == len(row["outputs"])):
                raise ValueError("instructions and outputs differ in length")
        return rows
    except OSError as error:
        raise DataFormatError(f"cannot read {path}: {error}") from error
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
        raise DataFormatError(f"{path} is not LEval's MultiDoc2Dial jsonl (input, instructions, outputs): {error!r}") from error


def _document_groups(rows: Sequence[dict]) -> dict[str, str]:
    """Each distinct ``input`` -> its group id ``md2d{g}`` (first-seen order):
    LEval repeats some document groups across lines."""
    groups: dict[str, str] = {}
    for row in rows:
        groups.setdefault(row["input"], f"md2d{len(groups)}")
    return groups


def multidoc2dial_passages(path: str | Path) -> list[Passage]:
    """The passages of every distinct document group, as indexed."""
    rows = _multidoc2dial_rows(path)
    return [
        passage
        for text, group in _document_groups(rows).items()
        for passage in split_passages(text, doc_id=group, max_words=PASSAGE_WORDS)
    ]


def load_multidoc2dial(path: str | Path) -> list[QATurn]:
    """One conversation per line: user turns as questions, agent answers as gold,
    the line's own documents as the known context."""
    rows = _multidoc2dial_rows(path)
    groups = _document_groups(rows)
    turns = []
    for line, row in enumerate(rows):
        context = tuple(split_passages(row["input"], doc_id=groups[row["input"]], max_words=PASSAGE_WORDS))
        history: list[str] = []
        for number, (question, answer) in enumerate(zip(row["instructions"], row["outputs"]), start=1):
            answer = " ".join(answer.split())
            turns.append(QATurn(f"md2d-line{line}", number, question.strip(), tuple(history), answer, context=context))
            history += [question.strip(), answer]
    return turns


def scai_passages(path: str | Path) -> list[Passage]:
    """The distinct passages of SCAI-QReCC-21's ``batch1-top1.csv``."""
    passages: dict[str, Passage] = {}
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                ids = ast.literal_eval(row["passage_ids"])
                texts = ast.literal_eval(row["passages"])
                for pid, text in zip(ids, texts):
                    url = pid.rsplit("_p", 1)[0]
                    passages.setdefault(pid, Passage(pid, " ".join(text.split()), 0.0, url=url))
    except OSError as error:
        raise DataFormatError(f"cannot read {path}: {error}") from error
    except (KeyError, ValueError, SyntaxError, csv.Error) as error:
        raise DataFormatError(f"{path} is not SCAI's batch csv (passage_ids, passages): {error!r}") from error
    return list(passages.values())


def load_turns(path: str | Path) -> list[QATurn]:
    """QReCC json or MultiDoc2Dial jsonl, told apart by the suffix."""
    return load_multidoc2dial(path) if str(path).endswith(".jsonl") else load_qrecc(path)


def collection_passages(path: str | Path) -> list[Passage]:
    """The passages of a MultiDoc2Dial jsonl or a SCAI csv."""
    if str(path).endswith(".csv"):
        return scai_passages(path)
    return multidoc2dial_passages(path)


def write_collection(passages: Iterable[Passage], out: str | Path) -> int:
    """Write passages as the JSONL collection ``assistant.index`` reads."""
    count = 0
    with open(out, "w", encoding="utf-8") as handle:
        for p in passages:
            handle.write(json.dumps({"id": p.id, "contents": p.text, "title": p.title, "url": p.url}, ensure_ascii=False) + "\n")
            count += 1
    return count


# ---------------------------------------------------------------- QReCC's relevance heuristic


def _approximate_window(context: str, target: str) -> str:
    # QReCC: the word n-gram of the (normalised) passage most similar to the
    # (normalised) answer by difflib's quick_ratio, n = answer length + 5%.
    if target in context:
        return target
    size = len(target.split()) + int(0.05 * len(target.split()))
    words = context.split()
    matcher = SequenceMatcher()
    matcher.set_seq2(target)
    best, best_ratio = "", 0.0
    for start in range(len(words) - size + 1):
        candidate = " ".join(words[start : start + size])
        matcher.set_seq1(candidate)
        ratio = matcher.quick_ratio()
        if ratio > best_ratio:
            best, best_ratio = candidate, ratio
            if ratio == 1.0:
                break
    return best


def closest_span(passage: str, answer: str) -> tuple[str, float]:
    """QReCC's span heuristic: the span of ``passage`` closest to ``answer``
    and its F1 (``find_closest_span_match`` in ml-qrecc).

    >>> closest_span("The tower was built in 1889 for the World's Fair.", "in 1889")
    ('in 1889', 1.0)
    >>> span, f1 = closest_span("It opened to the public in May 1889.", "built in 1889")
    >>> span, round(f1, 3)
    ('in', 0.5)
    """
    window = _approximate_window(normalize_answer(passage), normalize_answer(answer)).split()
    gold = Counter(normalize_answer(answer).split())
    n_gold = sum(gold.values())
    best, best_score = (0, 0), 0.0
    if n_gold:
        for i in range(len(window)):
            seen: Counter = Counter()
            shared = 0
            for j in range(i, len(window)):
                word = window[j]
                seen[word] += 1
                if seen[word] <= gold[word]:
                    shared += 1
                if shared:
                    precision, recall = shared / (j - i + 1), shared / n_gold
                    score = 2 * precision * recall / (precision + recall)
                    if score > best_score:
                        best, best_score = (i, j + 1), score
    span = " ".join(window[best[0] : best[1]])
    return span, token_f1(answer, span)


def relevant_ids(passages: Sequence[Passage], answer: str, threshold: float = RELEVANCE_THRESHOLD) -> set[str]:
    """Ids of the passages QReCC counts as relevant to ``answer`` (none when
    the answer is empty)."""
    if not answer.strip():
        return set()
    return {p.id for p in passages if closest_span(p.text, answer)[1] >= threshold}


def hit_at_k(ranked_ids: Sequence[str], relevant: set[str], k: int) -> float:
    """QReCC's recall@k: 1.0 when any of the first ``k`` results is relevant.

    (Not :func:`eval.metrics.recall_at_k`, the share of the relevant set
    found: QReCC's relevant set is only known among the retrieved passages.)

    >>> hit_at_k(["a", "b", "c"], {"c"}, 2), hit_at_k(["a", "b", "c"], {"c"}, 3)
    (0.0, 1.0)
    """
    return float(any(doc in relevant for doc in ranked_ids[:k]))


# ---------------------------------------------------------------- running


@dataclass(frozen=True)
class TurnResult:
    query: str
    answers: tuple[str, ...]  # one per reader (mu)
    read_ms: tuple[float, ...]
    retrieved: tuple[str, ...] = ()  # ranked ids (end-to-end / human-rewrite)
    relevant: frozenset[str] = frozenset()
    upper_em: float | None = None
    upper_f1: float | None = None


def run_turns(
    turns: Sequence[QATurn],
    setting: str,
    readers: Sequence,
    *,
    rewriter=None,
    retriever=None,
    depth: int = 100,
    read_k: int = 5,
    progress: Callable = lambda iterable, **_: iterable,
) -> list[TurnResult]:
    """Answer every turn in ``setting`` with each reader (e.g. one per mu).

    Retrieval (``depth`` passages, for MRR/R@100 and the upper bound) and the
    rewrite are done once per turn; each reader reads the first ``read_k``.
    """
    if setting not in SETTINGS:
        raise InvalidInputError(f"setting must be one of {', '.join(SETTINGS)}, not {setting!r}")
    results = []
    for turn in progress(turns, desc=setting, unit="turn"):
        if setting == "human-rewrite":
            if not turn.rewrite:
                raise DataFormatError(
                    f"turn {turn.conversation}/{turn.turn} has no human rewrite: "
                    "the human-rewrite setting needs QReCC data"
                )
            query = turn.rewrite
        else:
            query = rewriter.rewrite(turn.question, list(turn.history)).text if rewriter else turn.question
        upper = (None, None)
        retrieved: list[Passage] = []
        relevant: set[str] = set()
        if setting == "known-context":
            if turn.context:
                passages = ChunkRetriever(turn.context).search(query, read_k) or list(turn.context[:read_k])
            elif turn.gold_ids and retriever is not None and hasattr(retriever, "documents"):
                passages = retriever.documents(list(turn.gold_ids))
            else:
                raise DataFormatError(
                    f"turn {turn.conversation}/{turn.turn} has no gold context: known-context needs "
                    "Truth_passages found in the index, or MultiDoc2Dial documents"
                )
        else:
            retrieved = retriever.search(query, depth) if query.split() else []
            passages = retrieved[:read_k]
            relevant = relevant_ids(retrieved, turn.answer)
            if retrieved:
                spans = [closest_span(p.text, turn.answer)[0] for p in retrieved] if turn.answer.strip() else [""]
                upper = (
                    max(exact_match(turn.answer, s) for s in spans),
                    max(token_f1(turn.answer, s) for s in spans),
                )
        answers, timings = [], []
        for reader in readers:
            start = time.perf_counter()
            answer = reader.read(query, passages)
            timings.append((time.perf_counter() - start) * 1000)
            answers.append(answer.text if answer.found else "")
        results.append(
            TurnResult(query, tuple(answers), tuple(timings), tuple(p.id for p in retrieved),
                       frozenset(relevant), *upper)
        )
    return results


def _mean_percent(values: Sequence[float]) -> float | None:
    return round(100 * sum(values) / len(values), 2) if values else None


def summarize(turns: Sequence[QATurn], results: Sequence[TurnResult], setting: str, reader_index: int = 0) -> dict:
    """The setting's metrics for one reader, in percent (None where undefined)."""
    golds = [t.answer for t in turns]
    predictions = [r.answers[reader_index] for r in results]
    timings = sorted(r.read_ms[reader_index] for r in results)
    summary = {
        "setting": setting,
        "n": len(turns),
        "f1": _mean_percent([token_f1(g, p) for g, p in zip(golds, predictions)]),
        "em": _mean_percent([exact_match(g, p) for g, p in zip(golds, predictions)]),
        "mrr": None,
        "r@10": None,
        "r@100": None,
        "upper_bound_f1": None,
        "upper_bound_em": None,
        "read_ms_median": round(statistics.median(timings), 1) if timings else None,
        "read_ms_p95": round(percentile(timings, 0.95), 1) if timings else None,
    }
    if setting != "known-context":
        summary["mrr"] = _mean_percent([mrr(r.retrieved, r.relevant) for r in results])
        summary["r@10"] = _mean_percent([hit_at_k(r.retrieved, r.relevant, 10) for r in results])
        summary["r@100"] = _mean_percent([hit_at_k(r.retrieved, r.relevant, 100) for r in results])
        summary["upper_bound_f1"] = _mean_percent([r.upper_f1 or 0.0 for r in results])
        summary["upper_bound_em"] = _mean_percent([r.upper_em or 0.0 for r in results])
    return summary


# ---------------------------------------------------------------- command line


def _readers(kind: str, mus: Sequence[float]):
    from assistant.kernel import ReaderConfig
    from assistant.readers import SentenceReader

    base = SentenceReader.from_pretrained()
    # The readers of a mu sweep embed the same question and sentences; only
    # their interpolation differs, so each text is encoded once.
    encoder = CachedEncoder(base.encoder) if len(mus) > 1 else base.encoder
    selectors = [SentenceReader(encoder, dataclasses.replace(ReaderConfig(), mu=mu)) for mu in mus]
    if kind == "sentence":
        return selectors
    if kind == "generative":
        from assistant.readers import GenerativeReader

        generative = GenerativeReader.from_pretrained()
        return [GenerativeReader(s, generative.model, generative.tokenizer, generative.config) for s in selectors]
    raise InvalidInputError(f"--reader must be 'sentence' or 'generative', not {kind!r}")


def _format(summaries: Sequence[dict], mus: Sequence[float]) -> str:
    def cell(value):
        return "-" if value is None else f"{value:.2f}"

    columns = ["f1", "em", "mrr", "r@10", "r@100", "upper_bound_f1", "read_ms_median", "read_ms_p95"]
    lines = [f"{'setting':<15}{'mu':>5}{'n':>5}" + "".join(f"{c:>16}" for c in columns)]
    for mu, s in zip(mus, summaries):
        lines.append(f"{s['setting']:<15}{mu:>5.2f}{s['n']:>5}" + "".join(f"{cell(s[c]):>16}" for c in columns))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.qa", description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="QReCC json, MultiDoc2Dial jsonl (or SCAI csv with --write-collection)")
    parser.add_argument("--index", help="Lucene index of the passages (python -m assistant.index)")
    parser.add_argument("--setting", default="end-to-end", choices=SETTINGS)
    parser.add_argument("--json", action="store_true", help="print the metrics as JSON")
    parser.add_argument("--write-collection", metavar="OUT", help="write the data's passages as a JSONL collection and exit")
    parser.add_argument("--rewriter", default="original", help="original | prompted | trained | a model path")
    parser.add_argument("--reader", default="sentence", help="sentence | generative")
    parser.add_argument("--mu", default="0.7", help="reader weight vs retrieval; a comma-separated list sweeps it")
    parser.add_argument("--read-k", type=int, default=5, help="passages given to the reader (the reader's read_k caps it too)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N turns")
    args = parser.parse_args(argv)
    try:
        if args.write_collection:
            count = write_collection(collection_passages(args.data), args.write_collection)
            print(f"wrote {count} passages to {args.write_collection}", file=sys.stderr)
            return 0
        try:
            mus = [float(x) for x in args.mu.split(",")]
        except ValueError:
            raise InvalidInputError(f"--mu must be a number or a comma-separated list, not {args.mu!r}") from None
        turns = load_turns(args.data)[: args.limit]
        retriever = None
        if args.setting != "known-context" or any(t.gold_ids and not t.context for t in turns):
            if not args.index:
                raise InvalidInputError(f"--index is needed for the {args.setting} setting")
            from assistant.retrieval import BM25Retriever

            retriever = BM25Retriever.from_index(args.index)
        rewriter = None
        if args.setting != "human-rewrite":
            from rewriting import load_rewriter

            rewriter = load_rewriter(args.rewriter)
        from tqdm import tqdm

        readers = _readers(args.reader, mus)
        start = time.perf_counter()
        results = run_turns(
            turns, args.setting, readers, rewriter=rewriter, retriever=retriever, read_k=args.read_k,
            progress=lambda it, **kw: tqdm(it, file=sys.stderr, **kw),
        )
        elapsed = time.perf_counter() - start
        summaries = [summarize(turns, results, args.setting, i) for i in range(len(mus))]
        for i, (mu, s) in enumerate(zip(mus, summaries)):
            s.update(mu=mu, reader=args.reader, rewriter=args.rewriter if rewriter else None,
                     turns_per_s=round(len(turns) / elapsed, 2) if elapsed else None)
            if i:  # later readers of a sweep reuse the first one's vectors: their times mean nothing
                s.update(read_ms_median=None, read_ms_p95=None)
    except AssistantError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(summaries[0] if len(mus) == 1 else summaries))
    else:
        print(_format(summaries, mus))
        print(f"{len(turns)} turns in {elapsed:.1f} s ({len(turns) / elapsed:.2f} turns/s, all readers)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
