"""QReCC-style question answering evaluation: end to end, human rewrite, known context.

``python -m eval.qa --data FILE --index DIR [--setting end-to-end|known-context|human-rewrite] [--json]``
``[--rewriter NAME] [--reader NAME] [--mu MU[,MU...]] [--read-k N] [--limit N] [--turns OUT.jsonl]``
``[--search-threads N] [--ray [ADDRESS] [--actors N]]``

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
  for the query by BM25 among themselves and rescored as the index's hits
  are (``CONVQA_DENSE_WEIGHT``, ``CONVQA_RESCORE_DEPTH``).

Metrics are QReCC's (``ml-qrecc/utils``): SQuAD-normalised F1 and EM of the
answer against the one gold answer (a reader that finds nothing answers "",
which matches QReCC's empty "no answer" golds); retrieval MRR, R@10 and
R@100 where a retrieved passage is relevant when the closest span of it to
the gold answer has F1 >= 0.8 (QReCC's span heuristic; questions without an
answer have no relevant passage and still count); and the extractive upper
bound: the best span F1 / EM over the retrieved passages. All in percent.
``--mu 0,0.1,...`` sweeps the reader's interpolation weight, retrieving and
embedding once (reader latency is then reported for the first mu only).
The reader's other settings are the app's: its defaults, then ``CONVQA_*``
(e.g. ``CONVQA_SHORT_ANSWERS=true``, ``CONVQA_DEFINITIONS=false``), and so
is the rescoring of the hits (``CONVQA_DENSE_WEIGHT``; 0: BM25's order).

The retrieval of all turns is one batch search on ``--search-threads``
Lucene threads. ``--ray`` answers the turns on a Ray cluster (ADDRESS;
none: ``RAY_ADDRESS`` or a new local instance) in ``--actors`` workers,
each loading the rewriter, index and readers once (the index must be at
``--index`` on every node); the metrics are the single-process run's (the
timings are the workers'). Without it ray is never imported.

``--json`` prints one shape whatever the number of runs: a list with one
object per mu (one for a single ``--mu``), in ``--mu`` order::

    [{"setting", "n", "f1", "em", "mrr", "r@10", "r@100", "upper_bound_f1",
      "upper_bound_em", "read_ms_median", "read_ms_p95", "mu", "reader",
      "rewriter", "turns_per_s"}, ...]

in percent, null where a metric does not apply to the setting.
``--turns OUT.jsonl`` also writes one line a turn (``conversation``,
``turn``, ``question``, ``query``, ``gold``, ``answers``: each mu's answer
with its ``f1`` and ``em`` in percent, ``retrieved``: the top 10 ids,
``relevant``), whose means are the summary's F1 and EM.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Sequence

from assistant.encoders import load_minilm
from assistant.kernel import (
    CommandParser,
    DataFormatError,
    InvalidInputError,
    ReaderConfig,
    check_at_least,
    counted,
    load_configs,
    output_path,
    run_cli,
)
from assistant.readers import READERS
from assistant.retrieval import BM25Retriever, DenseRescorer, passage_vectors
from rewriting import REWRITERS, add_ray_arguments, check_ray_arguments, load_rewriter

from ._flags import mu_list
from ._qa_data import (
    QATurn,
    collection_passages,
    load_multidoc2dial,
    load_qrecc,
    load_turns,
    multidoc2dial_passages,
    scai_passages,
    write_collection,
)
from ._qa_metrics import RELEVANCE_THRESHOLD, closest_span, hit_at_k, relevant_ids
from ._qa_run import (
    SETTINGS,
    TurnResult,
    build_readers,
    check_turns,
    document_rescorer,
    format_summaries,
    missing_gold_note,
    run_turns,
    summarize,
    turn_rows,
)
from .metrics import SEARCH_THREADS

__all__ = [
    "SETTINGS",
    "QATurn",
    "load_qrecc",
    "load_multidoc2dial",
    "load_turns",
    "multidoc2dial_passages",
    "scai_passages",
    "write_collection",
    "closest_span",
    "RELEVANCE_THRESHOLD",
    "relevant_ids",
    "hit_at_k",
    "TurnResult",
    "run_turns",
    "document_rescorer",
    "missing_gold_note",
    "summarize",
    "main",
]


def _parser() -> argparse.ArgumentParser:

    parser = CommandParser(prog="python -m eval.qa", description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="QReCC json, MultiDoc2Dial jsonl (or SCAI csv with --write-collection)")
    parser.add_argument("--index", help="Lucene index of the passages (python -m assistant.index)")
    parser.add_argument("--setting", default="end-to-end", choices=SETTINGS,
                        help="what the reader is given: our rewrite's retrieval (default), the gold Rewrite's, or the "
                        "gold context")
    parser.add_argument("--json", action="store_true", help="print the metrics as JSON: a list, one object per mu")
    parser.add_argument("--write-collection", metavar="OUT", help="write the data's passages as a JSONL collection and exit")
    parser.add_argument("--turns", metavar="OUT", help="also write each turn's query, answers, gold, F1/EM and top 10 "
                        "passage ids as JSONL, to check the figures turn by turn")
    parser.add_argument("--rewriter", default="original", help=f"{' | '.join(REWRITERS)} | a model path (default: original)")
    parser.add_argument("--reader", default="sentence", help=f"{' | '.join(READERS)} (default: sentence)")
    mu = ReaderConfig().mu  # the reader's own default, not a copy of it
    parser.add_argument("--mu", default=str(mu), help=f"reader weight vs retrieval (default {mu}); a comma-separated list sweeps it")
    parser.add_argument("--read-k", type=int, default=5,
                        help="passages given to the reader (default 5; the reader's read_k caps it too)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N turns (default: all)")
    parser.add_argument("--search-threads", type=int, default=SEARCH_THREADS,
                        help=f"Lucene threads for the batch search of all turns (default {SEARCH_THREADS})")
    add_ray_arguments(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; bad input ends in one ``error:`` line and status 2."""
    return run_cli(_main, argv, interrupted="nothing was scored or written")


def _main(argv: Sequence[str] | None) -> int:
    args = _parser().parse_args(argv)
    check_ray_arguments(args)
    if args.write_collection:
        out = output_path(args.write_collection, "--write-collection", inputs=[args.data])
        count = write_collection(collection_passages(args.data), out)
        print(f"wrote {counted(count, 'passage')} to {args.write_collection}", file=sys.stderr)
        return 0
    # Every flag before the data is read and the models load: a negative
    # --limit sliced turns off the end, --read-k 0 scored F1 0, and a --mu
    # out of range was refused only by the reader's config, after loading,
    # as CONVQA_MU.
    check_at_least(read_k=(args.read_k, 1), limit=(args.limit, 1), search_threads=(args.search_threads, 1))
    mus = mu_list(args.mu)
    # The reader's other settings, BM25's and the rescoring weight as the app
    # reads them (defaults, then CONVQA_*); --reader is checked here too, not
    # after the index and the rewriter have loaded.
    _, retrieval, reading = load_configs(reader=args.reader)
    per_turn = output_path(args.turns, "--turns", inputs=[args.data]) if args.turns else None  # before the work
    turns = load_turns(args.data)
    if not turns:
        raise DataFormatError(f"{args.data}: no turns to answer")
    # A QReCC file without "Answer" (a rewriting file) reads as all
    # unanswerable: every "not found" then scored F1 100, without a word.
    if not any(turn.answer.strip() for turn in turns):
        raise DataFormatError(f"{args.data}: no turn has a gold answer (QReCC's Answer, MultiDoc2Dial's outputs); "
                              "give a file with answers")
    turns = turns[: args.limit]
    check_turns(turns, args.setting)  # before the rewriter rewrites every turn
    needs_index = args.setting != "known-context" or any(t.gold_ids and not t.context for t in turns)
    if needs_index and not args.index:
        # Said what to give: the message named the flag alone.
        raise InvalidInputError(f"--index is needed for the {args.setting} setting: give the Lucene index of the "
                                "passages to search (python -m assistant.index --input COLLECTION --index DIR)")
    uses_rewriter = args.setting != "human-rewrite"
    if args.ray is not None:
        from ._on_ray import qa_on_ray  # ray is imported only here

        settings = {"setting": args.setting, "index": args.index if needs_index else None,
                    "rewriter": args.rewriter if uses_rewriter else None, "reader": args.reader, "mus": mus,
                    "reader_config": dataclasses.asdict(reading),
                    "read_k": args.read_k, "search_threads": args.search_threads,
                    "dense_weight": retrieval.dense_weight, "rescore_depth": retrieval.rescore_depth,
                    "bm25": (retrieval.bm25_k1, retrieval.bm25_b)}
        if needs_index and retrieval.dense_weight > 0 and args.setting != "known-context" and Path(args.index).is_dir():
            # Encoded here once, with progress, and kept with the index: each
            # worker then reads them instead of encoding them all itself. (An
            # index only the workers' nodes have is theirs to read or encode.)
            passage_vectors(BM25Retriever.from_index(args.index), load_minilm())
        start = time.perf_counter()  # with --ray, the workers' loads count too
        results = qa_on_ray(turns, settings, args.ray or None, args.actors)
    else:
        retriever = rescorer = None
        if needs_index:
            retriever = BM25Retriever.from_index(args.index, retrieval)  # the app's BM25 k1 and b
            if retrieval.dense_weight > 0 and args.setting != "known-context":
                rescorer = DenseRescorer.from_retriever(retriever, load_minilm(), retrieval.dense_weight)
        if args.setting == "known-context":
            # Known-context searches only inside each turn's own document
            # (its Truth_passages from the index are read as they are).
            rescorer = document_rescorer(retrieval.dense_weight)
        rewriter = None
        if uses_rewriter:
            rewriter = load_rewriter(args.rewriter)
        from tqdm import tqdm

        readers = build_readers(args.reader, mus, reading)
        start = time.perf_counter()
        results = run_turns(
            turns, args.setting, readers, rewriter=rewriter, retriever=retriever, rescorer=rescorer,
            rescore_depth=retrieval.rescore_depth, read_k=args.read_k,
            search_threads=args.search_threads, progress=lambda it, **kw: tqdm(it, file=sys.stderr, **kw),
        )
    elapsed = time.perf_counter() - start
    note = missing_gold_note(turns, results)
    if note is not None:
        print(note, file=sys.stderr)
    summaries = [summarize(turns, results, args.setting, i) for i in range(len(mus))]
    for i, (mu, s) in enumerate(zip(mus, summaries)):
        s.update(mu=mu, reader=args.reader, rewriter=args.rewriter if uses_rewriter else None,
                 turns_per_s=round(len(turns) / elapsed, 2) if elapsed else None)
        if i:  # later readers of a sweep reuse the first one's vectors: their times mean nothing
            s.update(read_ms_median=None, read_ms_p95=None)
    if per_turn is not None:
        with per_turn.open("w", encoding="utf-8") as out:
            for row in turn_rows(turns, results, mus):
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"wrote {counted(len(turns), 'turn')} to {args.turns}", file=sys.stderr)
    if args.json:
        print(json.dumps(summaries))
    else:
        print(format_summaries(summaries, mus))
        print(f"{counted(len(turns), 'turn')} in {elapsed:.1f} s ({len(turns) / elapsed:.2f} turns/s, all readers)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
