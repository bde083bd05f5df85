"""Running the QA evaluation: answer every turn in a setting, then QReCC's metrics."""

from __future__ import annotations

import dataclasses
import statistics
import time
from dataclasses import dataclass
from typing import Callable, Sequence

from assistant.encoders import CachedEncoder, load_minilm
from assistant.kernel import (
    DataFormatError,
    InvalidInputError,
    Passage,
    ReaderConfig,
    RetrieverConfig,
    percentile,
)
from assistant.readers import GenerativeReader, SentenceReader, build_reader
from assistant.retrieval import ChunkRetriever, DenseRescorer

from ._qa_data import QATurn
from ._qa_metrics import closest_span, hit_at_k, relevant_ids
from .metrics import SEARCH_THREADS, exact_match, mrr, search_all, token_f1

__all__ = ["SETTINGS", "TurnResult", "check_turns", "check_gold_in_index", "missing_gold_note", "run_turns", "document_passages", "document_rescorer", "summarize", "turn_rows", "build_readers", "format_summaries"]

SETTINGS = ("end-to-end", "known-context", "human-rewrite")


@dataclass(frozen=True)
class TurnResult:
    query: str
    answers: tuple[str, ...]  # one per reader (mu)
    read_ms: tuple[float, ...]
    retrieved: tuple[str, ...] = ()  # ranked ids (end-to-end / human-rewrite)
    relevant: frozenset[str] = frozenset()
    upper_em: float | None = None
    upper_f1: float | None = None
    # Known-context: the turn's Truth_passages the index does not hold (it read the others).
    gold_missing: tuple[str, ...] = ()


def check_turns(turns: Sequence[QATurn], setting: str) -> None:
    """Refuse what ``setting`` cannot answer, before any model loads or
    question is rewritten: another setting's name, a known-context turn
    without a gold context (Truth_passages or MultiDoc2Dial documents), a
    human-rewrite turn without a gold Rewrite."""
    if setting not in SETTINGS:
        raise InvalidInputError(f"setting must be one of {', '.join(SETTINGS)}, not {setting!r}")
    if setting == "known-context":
        # Counted: a file whose turns have Truth_passages in part (InfoCQR's
        # sample: an empty list where no passage holds the answer) was
        # refused naming one turn, as if the file had none.
        lacking = [turn for turn in turns if not (turn.context or turn.gold_ids)]
        if lacking:
            first = lacking[0]
            raise DataFormatError(
                f"{len(lacking)} of the {len(turns)} turns have no gold context (e.g. turn {first.conversation}/"
                f"{first.turn}): known-context needs QReCC's Truth_passages (SCAI's files) with --index of their "
                "passages, or MultiDoc2Dial documents; give a file of the turns that have them"
            )
    for turn in turns:
        if setting == "human-rewrite" and not turn.rewrite:
            raise DataFormatError(
                f"turn {turn.conversation}/{turn.turn} has no human rewrite: the human-rewrite setting needs QReCC data"
            )


def _truth_passage_ids(turns: Sequence[QATurn], setting: str) -> list[str]:
    """The Truth_passages known-context looks up in the index, sorted (none in other settings)."""
    return sorted({i for t in turns if not t.context for i in t.gold_ids}) if setting == "known-context" else []


def _none_in_index(ids: Sequence[str]) -> DataFormatError:
    return DataFormatError(f"none of the turns' {len(ids)} Truth_passages (e.g. {ids[0]!r}) is in the "
                           "index: give --index of their passages (eval.qa --write-collection, then assistant.index)")


def check_gold_in_index(turns: Sequence[QATurn], setting: str, retriever) -> None:
    """Refuse, before any turn is read, a known-context run whose turns'
    Truth_passages ``retriever`` cannot look up, or whose index holds none
    of them: another collection's index read every turn with no passage,
    F1 0 without a word. An index holding some is :func:`missing_gold_note`'s."""
    ids = _truth_passage_ids(turns, setting)
    if not ids:
        return
    if not hasattr(retriever, "documents"):
        raise InvalidInputError("known-context turns with Truth_passages need a retriever with documents(ids), "
                                "e.g. a BM25Retriever on the index of their passages")
    if not retriever.documents(ids):
        raise _none_in_index(ids)


def run_turns(
    turns: Sequence[QATurn],
    setting: str,
    readers: Sequence,
    *,
    rewriter=None,
    retriever=None,
    rescorer=None,
    depth: int = 100,
    rescore_depth: int = RetrieverConfig.rescore_depth,
    read_k: int = 5,
    search_threads: int = SEARCH_THREADS,
    progress: Callable = lambda iterable, **_: iterable,
    check_index: bool = True,
) -> list[TurnResult]:
    """Answer every turn in ``setting`` with each reader (e.g. one per mu).

    The rewrite is done once per turn; the retrieval (``depth`` passages, for
    MRR/R@100 and the upper bound) of all turns is one multi-threaded batch
    search (``search_threads`` Lucene threads), each query's results as its
    own search gives them; with ``rescorer`` (an
    :class:`assistant.retrieval.Rescorer`, as the app's ``dense_weight``
    builds), each turn's hits are reordered for its query as the app does:
    BM25's first ``max(read_k, rescore_depth)`` (the app's ``rescore_depth``,
    ``CONVQA_RESCORE_DEPTH``; a known-context turn's document's hits too),
    ahead of the rest in BM25's order; each reader reads the first ``read_k``.

    ``check_index=False``: ``turns`` are a chunk of a larger run (on Ray),
    which :func:`check_gold_in_index` checks whole, so a chunk whose
    Truth_passages the index lacks reads nothing, as in one run, and is
    counted by :func:`missing_gold_note`, instead of stopping the run.
    """
    check_turns(turns, setting)
    if check_index:
        check_gold_in_index(turns, setting, retriever)
    queries = [_query(turn, setting, rewriter) for turn in progress(turns, desc=f"{setting}: queries", unit="turn")]
    pool = max(read_k, rescore_depth)  # Assistant.answer's max(k, rescore_depth)
    searched = max(depth, pool) if rescorer is not None else depth
    found = search_all(retriever, queries, searched, search_threads) if setting != "known-context" else [[] for _ in turns]
    if rescorer is not None and setting != "known-context":
        found = [(rescorer.rescore(query, hits[:pool], pool) + hits[pool:])[:depth] for query, hits in zip(queries, found)]
    results = []
    for turn, query, retrieved in progress(zip(turns, queries, found), total=len(turns), desc=setting, unit="turn"):
        upper = (None, None)
        relevant: set[str] = set()
        missing: tuple[str, ...] = ()
        if setting == "known-context":
            if turn.context:
                # An empty query (retrievers refuse it) reads the context's first passages.
                passages = document_passages(turn.context, query, read_k, rescorer, rescore_depth) or list(turn.context[:read_k])
            else:  # Truth_passages (check_turns)
                passages = retriever.documents(list(turn.gold_ids))
                held = {p.id for p in passages}
                missing = tuple(i for i in turn.gold_ids if i not in held)
        else:
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
                       frozenset(relevant), *upper, gold_missing=missing)
        )
    return results


def document_passages(context: Sequence[Passage], query: str, read_k: int, rescorer=None,
                      depth: int = RetrieverConfig.rescore_depth) -> list[Passage]:
    """The ``read_k`` passages of one document (a known-context turn's) the
    reader gets for ``query``: BM25's hits inside it
    (:class:`~assistant.retrieval.ChunkRetriever`), its first ``depth`` (at
    least ``read_k``) rescored by ``rescorer`` when given (:func:`document_rescorer`: the app's
    one-document rescoring, which chooses and orders them, each keeping its
    BM25 score); none for an empty query. A question often words what it asks for as the page does not
    ("who plays count olaf" against an infobox's "Starring Neil Patrick
    Harris"), and BM25 alone ranks such a passage below the many others of
    a long page that repeat the question's words."""
    if not query.strip():
        return []
    retriever = ChunkRetriever(context)
    if rescorer is None:
        return retriever.search(query, read_k)
    # As deep as the app rescores a source's hits (Assistant.answer:
    # max(k, rescore_depth); ``depth`` is the rescore_depth), so that this
    # setting measures what a pasted document gets.
    return rescorer.rescore(query, retriever.search(query, max(read_k, depth)), read_k)


def document_rescorer(weight: float, encoder=None):
    """The rescorer of known-context's documents for the app's
    ``dense_weight`` (None when it is 0): the app's one-document source's
    (:meth:`DenseRescorer.for_document <assistant.retrieval.DenseRescorer.for_document>`),
    each page's passages encoded once however many turns ask about it.
    ``encoder``: MiniLM's (:func:`~assistant.encoders.load_minilm`) by
    default."""
    if weight <= 0:
        return None
    return DenseRescorer.for_document(CachedEncoder(encoder or load_minilm()), weight)


def _query(turn: QATurn, setting: str, rewriter) -> str:
    if setting != "human-rewrite":
        return rewriter.rewrite(turn.question, list(turn.history)).text if rewriter else turn.question
    return turn.rewrite  # there is one (check_turns)


def _mean_percent(values: Sequence[float]) -> float | None:
    return round(100 * sum(values) / len(values), 2) if values else None


def missing_gold_note(turns: Sequence[QATurn], results: Sequence[TurnResult]) -> str | None:
    """A ``note:`` line when some turns' Truth_passages were not in the index
    (they read the rest, or nothing and scored as answering nothing), else
    None. An index holding none of them is refused (:func:`check_gold_in_index`),
    here too: a run in chunks whose driver could not open the index (on Ray)
    learns it only from the results."""
    short = [(turn, result) for turn, result in zip(turns, results, strict=True) if result.gold_missing]
    if not short:
        return None
    wanted = _truth_passage_ids(turns, "known-context")  # the only setting with gold_missing
    if {i for _, result in short for i in result.gold_missing} >= set(wanted):
        raise _none_in_index(wanted)
    ids = sum(len(result.gold_missing) for _, result in short)
    total = sum(len(turn.gold_ids) for turn in turns)
    none = sum(len(result.gold_missing) == len(turn.gold_ids) for turn, result in short)
    turn, result = short[0]
    return (f"note: {ids} of the turns' {total} Truth_passages are not in the index (e.g. {result.gold_missing[0]!r} "
            f"of turn {turn.conversation}/{turn.turn}): {none} of {len(turns)} turns read none of theirs, "
            f"{len(short) - none} only some")


def turn_rows(turns: Sequence[QATurn], results: Sequence[TurnResult], mus: Sequence[float]) -> list[dict]:
    """One row a turn, to check :func:`summarize`'s means turn by turn: the
    query, the gold answer, each reader's (mu's) answer with its F1 and EM
    in percent, and the top 10 retrieved and the relevant passage ids."""
    rows = []
    for turn, result in zip(turns, results, strict=True):
        rows.append({
            "conversation": turn.conversation, "turn": turn.turn, "question": turn.question, "query": result.query,
            "gold": turn.answer,
            "answers": [{"mu": mu, "answer": answer, "f1": round(100 * token_f1(turn.answer, answer), 2),
                         "em": round(100 * exact_match(turn.answer, answer), 2)}
                        for mu, answer in zip(mus, result.answers, strict=True)],
            "retrieved": list(result.retrieved[:10]), "relevant": sorted(result.relevant),
        })
    return rows


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


def build_readers(kind: str, mus: Sequence[float], config: ReaderConfig = ReaderConfig()) -> list:
    """One reader of kind ``kind`` (:data:`assistant.readers.READERS`) per
    ``mu``, loaded once by :func:`assistant.readers.build_reader`: the models
    are shared, only the interpolation weight differs. ``config``: every other
    reader setting (``eval.qa`` passes the app's: defaults, then ``CONVQA_*``)."""

    first = build_reader(kind, dataclasses.replace(config, mu=mus[0]))
    base = first.selector if isinstance(first, GenerativeReader) else first
    if not isinstance(base, SentenceReader):
        # A reader of one's own (ARCHITECTURE.md, "Adding a reader") has no
        # interpolation weight of the sentence reader's to sweep.
        if len(mus) > 1:
            raise InvalidInputError(f"--mu sweeps the sentence reader's weight; the {kind} reader takes one --mu, not {len(mus)}")
        return [first]
    # The readers of a mu sweep embed the same question and sentences; only
    # their interpolation differs, so each text is encoded once.
    encoder = CachedEncoder(base.encoder) if len(mus) > 1 else base.encoder
    selectors = [SentenceReader(encoder, dataclasses.replace(config, mu=mu)) for mu in mus]
    if not isinstance(first, GenerativeReader):
        return selectors
    return [GenerativeReader(s, first.model, first.tokenizer, first.config) for s in selectors]


def format_summaries(summaries: Sequence[dict], mus: Sequence[float]) -> str:
    def cell(value):
        return "-" if value is None else f"{value:.2f}"

    columns = ["f1", "em", "mrr", "r@10", "r@100", "upper_bound_f1", "read_ms_median", "read_ms_p95"]
    lines = [f"{'setting':<15}{'mu':>5}{'n':>5}" + "".join(f"{c:>16}" for c in columns)]
    for mu, s in zip(mus, summaries):
        lines.append(f"{s['setting']:<15}{mu:>5.2f}{s['n']:>5}" + "".join(f"{cell(s[c]):>16}" for c in columns))
    return "\n".join(lines)
