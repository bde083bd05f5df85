"""Retrieval, measured as the field reports it: MRR, nDCG@3 and recall by trec_eval.

``python -m eval.retrieval --data FILE... [--rewriter NAME | --rewrites R.jsonl]``
``[--split SPLIT] [--distractors SPEC...] [--expansion-repeats N] [--dense-weight W] [--index DIR]``
``[--run OUT.trec] [--qrels OUT]``
``[--against REWRITER|R.jsonl] [--json]``
``python -m eval.retrieval --data FILE... --write-collection OUT.jsonl [--qrels OUT] | --score-run RUN.trec [--json]``

Builds a judged collection (:mod:`eval._judged`: each CAsT 2021 turn's
canonical passage and each CAsT 2022 turn's response is relevant to it, among
distractors), indexes it with :func:`assistant.retrieval.build_index` (once:
the index is kept under the cache folder, named by a digest of the
collection; ``--index DIR`` puts it elsewhere), rewrites every turn, searches
the top 100 with BM25, writes the run (TREC format) and the qrels, and
scores the run with pyserini's trec_eval.

Rewrites: ``original`` (the question as asked), ``human`` (the manual
rewrite), ``automatic`` (the CAsT organisers' automatic rewrite; only the
turns that have one: CAsT 2021), any name or path ``rewriting.load_rewriter``
takes (``trained``, the default, ``prompted``, an adapter or a model), or a
JSONL of ``{"id", "rewrite"}`` (ids as ``rewriting.data.load_examples`` gives
them, or ``<file>#<id>`` as ``eval.rewrites export`` writes them; a turn the
file lacks is scored with its question when it is a first turn, which no
rewriter rewrites, and left out otherwise; a turn of the data with no judged
passage is not searched, and an id that is no turn of the data is refused). A rewriter sees the history as
:func:`rewriting.data.load_examples` reads it: earlier questions and answers
alternating, answers clipped.

``--split``: only the turns a training run (its ``split.json``) held out.
``--expansion-repeats N``: search as the app does
(:func:`assistant.retrieval.expand_query`, ``RetrieverConfig.expansion_repeats``):
each follow-up's query gains the content words of the previous turn's
rewrite, by the same rewriter (a previous turn that is no judged turn counts
with its question, or its human or automatic rewrite for those rewriters),
and where a ``--rewrites`` line has ``"alternatives"`` (the other candidates
of ``rewriting.rewrite --candidates``), the rewrite and each of them count
once in place of the N repeats; default 0, the rewrite alone, as the field
compares rewriters.
``--dense-weight W``: rescore BM25's top 100 as the app does
(:class:`assistant.retrieval.DenseRescorer`, ``RetrieverConfig.dense_weight``):
each hit's min-max scaled BM25 score mixed with weight W of the MiniLM cosine
between the rewrite (not its expanded query; with a ``--rewrites`` line's
``"alternatives"``, their mean vector joins the rewrite's) and the passage; the judged
index's passage vectors are encoded once and kept with it. Default 0: BM25
alone, as the field compares rewriters.
``--distractors``: ``default`` (the default collection), LEval JSONL files
(NQ Wikipedia pages, MultiDoc2Dial documents), collections as
``assistant.index`` reads them, or ``none``; default: the default collection
and the shared NQ and MultiDoc2Dial files.

A retriever of one's own: ``--write-collection OUT.jsonl [--qrels Q]``
writes the judged collection (``id``, ``contents``, ``title``, ``url``; with
``--distractors``) and its judgements, and exits; ``--score-run RUN.trec``
scores that retriever's TREC run (``qid Q0 docid rank score tag``, qids as
the qrels name the turns, e.g. ``106_2``; any white space between fields,
CRLF and a UTF-8 BOM are fine) against the judgements of ``--data`` (and
``--split``) instead of searching: the same measures by the same trec_eval,
a judged turn the run lacks scoring 0; a malformed line is refused naming
it, and queries that are no judged turn are counted in a note.

Prints a table (all turns, then each CAsT year) and a line saying what was
searched and how, beside the app's search; ``--json`` prints
``{"n", "mrr", "ndcg_cut_3", "recall_10", "recall_100"}``, fractions.
``--against`` scores a second rewriter the same way and adds each measure's
difference on the turns both scored, with a 95% paired bootstrap interval
that resamples conversations (a topic's turns are not independent)
(under ``"against"``: ``{"rewriter", "n", measure: [mean, low, high]}``):
on some eighty turns, whether a difference is more than noise.
Bad input exits with status 2 and a one-line message.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Sequence

from tqdm import tqdm

from assistant.encoders import load_minilm
from assistant.kernel import (
    CommandParser,
    ConfigError,
    DataFormatError,
    InvalidInputError,
    ModelNotFoundError,
    RetrieverConfig,
    cache_dir,
    counted,
    output_path,
    run_cli,
)
from assistant.retrieval import BM25Retriever, DenseRescorer, Rescorer, build_index, expand_query
from rewriting.data import data_dir, load_examples

from ._judged import (
    JudgedCollection,
    JudgedQuery,
    collection_key,
    default_distractors,
    judged_collection,
    write_collection,
    write_qrels,
)
from ._judged_trec import MEASURES, read_run, trec_eval, write_run
from ._scoring import DEFAULT_REWRITER, held_out, rewrite_with
from ._table import read_alternatives, read_rewrites
from ._validation import conversation, mean_difference

__all__ = ["DEPTH", "judged_index", "check_index_folder", "given_alternatives", "rewrite_queries", "previous_rewrites", "evaluate", "score_run",
           "paired_difference", "main"]

# Passages retrieved per turn: recall@100 needs 100, and CAsT runs are
# scored at depths of 100 and more.
DEPTH = 100
# Marks an index as this collection's (the digest of its passages).
_KEY_FILE = "judged.json"


def judged_index(collection: JudgedCollection, index_dir: str | Path | None = None) -> Path:
    """The index of ``collection``: reused when ``index_dir`` (default: the
    cache folder's ``indexes/judged-<digest>``) holds this collection's,
    built there otherwise."""
    key = collection_key(collection.passages)
    index_dir = Path(index_dir) if index_dir is not None else cache_dir() / "indexes" / f"judged-{key}"
    marker = index_dir / _KEY_FILE
    try:
        if json.loads(marker.read_text(encoding="utf-8")).get("key") == key and (index_dir / "convqa.json").is_file():
            return index_dir
    except (OSError, ValueError, AttributeError):
        pass
    build_index(collection.passages, index_dir, total=len(collection.passages), description="Indexing the judged collection")
    marker.write_text(json.dumps({"key": key, "passages": len(collection.passages)}), encoding="utf-8")
    return index_dir


def check_index_folder(index_dir: str | Path) -> Path:
    """Refuse, before any rewriting, an ``--index`` the judged index cannot
    be built in: a file, an unwritable folder, or a folder holding anything
    but an index this command built (the build replaces the whole folder, so
    another collection's index or one's own files would be lost). A file was
    refused by the build, after every turn had been rewritten."""
    folder = output_path(index_dir, "--index", folder=True)
    held = next(iter(sorted(folder.iterdir())), None) if folder.is_dir() else None
    if held is not None and not (folder / _KEY_FILE).is_file():
        raise ConfigError(
            f"cannot write --index {folder}: it holds {held.name!r} and no judged collection's index, and the judged "
            "index built there replaces the whole folder; give a new or empty folder, or one an earlier "
            "eval.retrieval --index filled"
        )
    return folder


def _given_rewrites(path: str, queries: Sequence[JudgedQuery], turns: set[str] = frozenset()) -> dict[str, str]:
    """The file's rewrites by qid. ``turns``: ids of every turn of the data,
    judged or not; a rewrite of a turn with no judged passage is not searched."""
    given = _by_turn(read_rewrites(path))
    if not given:
        # Scored anyway, it was the first turns' questions alone, shown as "the rewrites of" the file.
        raise DataFormatError(f'{path} holds no rewrites; give a JSONL of {{"id", "rewrite"}} lines for the turns of '
                              "the --data files (rewriting.rewrite writes one)")
    known = {i for q in queries for i in q.example_ids} | set(turns)
    stray = [i for i in given if i not in known]
    if stray:
        raise DataFormatError(
            f"{path}: {len(stray)} id(s) are no turn of the --data files, e.g. {stray[0]!r}; give rewrites of their "
            "turns only (a file written for other data, e.g. with CAsT 2020 turns, which no judged passage covers: "
            "drop those lines)"
        )
    found, from_file = {}, 0
    for q in queries:
        text = _of_query(given, q)
        from_file += text is not None
        if text is None and not q.example.history:
            text = q.example.question
        if text is not None:
            found[q.qid] = text
    if not from_file:
        # As an empty file: the first turns' questions alone would be scored as the file's rewrites.
        raise DataFormatError(f"{path} holds no rewrite of a judged turn of the --data files (with --split, of its "
                              "held-out turns): nothing of it to score")
    return found


def _by_turn(given: dict) -> dict:
    """A rewrites file's values by turn id: keys are ``<id>`` or ``<file>#<id>``."""
    return {key.split("#", 1)[-1]: value for key, value in given.items()}


def _of_query(given: dict, query: JudgedQuery):
    """The value ``given`` holds for one of ``query``'s turns, else None."""
    return next((given[i] for i in query.example_ids if i in given), None)


def given_alternatives(path: str, queries: Sequence[JudgedQuery]) -> dict[str, tuple[str, ...]]:
    """The other candidates the file's lines carry (``"alternatives"``), by
    qid, for the queries that have them."""
    given = _by_turn(read_alternatives(path))
    return {q.qid: others for q in queries if (others := _of_query(given, q))}


def rewrite_queries(
    queries: Sequence[JudgedQuery], rewriter: str | None, rewrites: str | None, turns: set[str] = frozenset()
) -> dict[str, str]:
    """``{qid: query text}``; turns a source has no rewrite for are left out.
    ``turns``: see :func:`_given_rewrites`."""
    if rewrites is not None:
        return _given_rewrites(rewrites, queries, turns)
    if rewriter == "original":
        return {q.qid: q.example.question for q in queries}
    if rewriter == "human":
        return {q.qid: q.example.rewrite for q in queries}
    if rewriter == "automatic":
        found = {q.qid: q.example.systems["cast_automatic"] for q in queries if "cast_automatic" in q.example.systems}
        if not found:
            raise DataFormatError(
                "no turn of the data has an automatic rewrite (CAsT 2021's topics have them, 2022's do not)"
            )
        return found
    try:
        texts = rewrite_with(rewriter, [q.example for q in queries])
    except ModelNotFoundError as error:  # its list of names lacks this command's own two
        raise ModelNotFoundError(
            f"{str(error).rstrip('.')}. eval.retrieval also takes --rewriter human and --rewriter automatic"
        ) from error
    return {q.qid: text for q, text in zip(queries, texts)}


def previous_rewrites(queries: Sequence[JudgedQuery], texts: dict[str, str], examples, rewriter: str | None) -> dict[str, str]:
    """``{qid: the previous turn's rewrite}`` ("" for a first turn) for every
    query in ``texts``: the same source's text when the previous turn is a
    query too, else its human or automatic rewrite for those rewriters, else
    its question."""
    # A CAsT 2022 flattened path is a conversation of its own and ``turn``
    # its position in that path, so ``turn - 1`` is the turn's parent in the
    # topic tree, not the record before it in the file (another branch's);
    # every path that holds a turn shares the path up to it, so the one
    # example a query keeps has the same previous turn as the others.
    by_turn = {(ex.source, ex.conversation_id, ex.turn): ex for ex in examples}
    qid_of = {i: q.qid for q in queries for i in q.example_ids}
    found = {}
    for q in queries:
        if q.qid not in texts:
            continue
        ex = q.example
        before = by_turn.get((ex.source, ex.conversation_id, ex.turn - 1)) if ex.history else None
        if before is None:
            found[q.qid] = ex.history[-2] if len(ex.history) >= 2 else ""
        elif qid_of.get(before.id) in texts:
            found[q.qid] = texts[qid_of[before.id]]
        elif rewriter == "human":
            found[q.qid] = before.rewrite
        elif rewriter == "automatic":
            found[q.qid] = before.systems.get("cast_automatic", before.question)
        else:
            found[q.qid] = before.question
    return found


def evaluate(
    queries: Sequence[JudgedQuery], texts: dict[str, str], retriever, run: Path, qrels: Path, tag: str,
    rescorer: Rescorer | None = None, questions: dict[str, str] | None = None,
    alternatives: dict[str, Sequence[str]] | None = None,
) -> dict:
    """Search each query's text, write the run and the qrels, score them.
    With ``rescorer``, the hits are reordered for ``questions[qid]`` (the
    rewrite, where ``texts`` holds its expanded query) and its
    ``alternatives[qid]`` (the other candidates, as the app passes them).

    Returns ``{"n", measures..., "by_source": {source: {"n", measures...}},
    "per_query": {qid: {measure: value}}}`` (a query trec_eval does not list scores 0).
    """
    scored = [q for q in queries if q.qid in texts]
    if not scored:
        raise InvalidInputError("no turn left to score (check --split and --rewrites)")
    results = {}
    for q in tqdm(scored, desc="searching", unit="turn", file=sys.stderr):
        text = texts[q.qid]
        # A query with no words finds nothing: it scores 0, as in trec_eval.
        results[q.qid] = retriever.search(text, DEPTH) if text.split() else []
        if rescorer is not None:
            others = (alternatives or {}).get(q.qid, ())
            results[q.qid] = rescorer.rescore((questions or texts)[q.qid], results[q.qid], DEPTH, others)
    write_run(results, run, tag)
    return score_run(scored, run, qrels)


def score_run(scored: Sequence[JudgedQuery], run: Path, qrels: Path) -> dict:
    """The TREC ``run`` scored by trec_eval against the judgements of
    ``scored`` (written to ``qrels``): :func:`evaluate`'s result. A query of
    ``scored`` the run does not answer scores 0."""
    write_qrels(scored, qrels)
    mean, per_query = trec_eval(qrels, run)
    zero = dict.fromkeys(MEASURES.values(), 0.0)
    summary = {"n": len(scored), **mean, "by_source": {}, "per_query": {q.qid: per_query.get(q.qid, zero) for q in scored}}
    for source in sorted({q.example.source for q in scored}):
        mine = [q for q in scored if q.example.source == source]
        summary["by_source"][source] = {"n": len(mine)} | {
            m: sum(summary["per_query"][q.qid][m] for q in mine) / len(mine) for m in MEASURES.values()
        }
    return summary


def paired_difference(mine: dict, theirs: dict) -> dict:
    """Each measure of ``mine`` minus ``theirs`` (two :func:`evaluate` results)
    on the turns both scored: ``{"n", measure: [mean, low, high]}``, the 95%
    paired bootstrap interval over those turns' conversations
    (:func:`mean_difference` by :func:`~eval._validation.conversation`)."""
    common = [qid for qid in mine["per_query"] if qid in theirs["per_query"]]
    if not common:
        raise InvalidInputError("the two rewriters scored no turn in common: nothing to compare")
    found: dict = {"n": len(common)}
    for m in MEASURES.values():
        found[m] = [round(v, 4) for v in mean_difference([mine["per_query"][q][m] for q in common], [theirs["per_query"][q][m] for q in common],
                                                         clusters=[conversation(q) for q in common])]
    return found


_NAMES = {"mrr": "MRR", "ndcg_cut_3": "nDCG@3", "recall_10": "R@10", "recall_100": "R@100"}


def _print_table(summary: dict, against: tuple[str, dict] | None = None) -> None:
    print(f"{'turns':<12}{'n':>6}" + "".join(f"{name:>9}" for name in _NAMES.values()))
    rows = [("all", summary)] + (list(summary["by_source"].items()) if len(summary["by_source"]) > 1 else [])
    for label, row in rows:
        print(f"{label:<12}{row['n']:>6}" + "".join(f"{row[m]:>9.4f}" for m in _NAMES))
    if against is not None:
        name, diff = against
        print(f"\nminus {name} on the {diff['n']} turns both scored, with 95% paired bootstrap intervals:")
        for m, label in _NAMES.items():
            mean, low, high = diff[m]
            print(f"  {label:<7}{mean:+.4f} [{low:+.4f}, {high:+.4f}]")


def _parser() -> argparse.ArgumentParser:
    parser = CommandParser(
        prog="python -m eval.retrieval",
        description="Retrieval on a judged collection built from CAsT 2021-22 (MRR, nDCG@3, R@10, R@100 by trec_eval).",
    )
    parser.add_argument("--data", nargs="+", required=True, help="CAsT 2021 / 2022 topic files (their turns and judged passages)")
    parser.add_argument(
        "--rewriter",
        help=f"original, human, automatic, or a rewriting.load_rewriter name/path (default: {DEFAULT_REWRITER})",
    )
    parser.add_argument("--rewrites", help='JSONL of {"id", "rewrite"} to search instead of running a rewriter')
    parser.add_argument("--split", help="a training run's split.json: only the turns it held out")
    parser.add_argument(
        "--distractors",
        nargs="+",
        help="default, LEval JSONL files, collections, or none (default: the default collection, NQ, MultiDoc2Dial)",
    )
    parser.add_argument(
        "--expansion-repeats", type=int, default=0,
        help="search as the app does: the rewrite N times plus the previous turn's rewrite's content words "
        "(a --rewrites line's alternatives: each candidate once instead) (the app's N: RetrieverConfig.expansion_repeats; "
        "default 0: the rewrite alone)",
    )
    parser.add_argument(
        "--dense-weight", type=float, default=0.0,
        help="rescore BM25's top 100 with weight W of the MiniLM cosine between the rewrite and each passage, "
        "as the app does (RetrieverConfig.dense_weight; default 0: BM25 alone)",
    )
    parser.add_argument("--index", metavar="DIR",
                        help="where the judged collection's index is built and kept: a new or empty folder, or one an "
                        "earlier run filled (default: cached under the cache folder by the collection's digest)")
    parser.add_argument("--run", help="write the TREC run here (default: a temporary file)")
    parser.add_argument("--qrels", help="write the qrels here (default: next to --run as .qrels, else temporary)")
    parser.add_argument(
        "--against", metavar="REWRITER|R.jsonl",
        help="also score this rewriter (a name as for --rewriter, or a rewrites JSONL) the same way, and give each "
        "measure's difference with a 95%% paired bootstrap interval over the turns both scored (resampling conversations)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    own = parser.add_mutually_exclusive_group()
    own.add_argument("--write-collection", metavar="OUT.jsonl",
                     help="write the judged collection (with --distractors) for a retriever of your own, and with "
                     "--qrels its judgements, then exit")
    own.add_argument("--score-run", metavar="RUN.trec",
                     help="score a TREC run of your own (qid Q0 docid rank score tag; qids as --qrels writes them, "
                     "e.g. 106_2) against the judgements of --data instead of searching")
    return parser


def _main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.rewriter is not None and args.rewrites is not None:
        raise InvalidInputError("give only one of --rewriter NAME and --rewrites FILE.jsonl")
    rewriter = args.rewriter or (None if args.rewrites else DEFAULT_REWRITER)
    distractors = args.distractors or default_distractors(data_dir())
    if distractors == ["none"]:
        distractors = []
    if args.expansion_repeats < 0:
        raise InvalidInputError("--expansion-repeats must be 0 (off) or more")
    if not 0 <= args.dense_weight <= 1:
        raise InvalidInputError(f"--dense-weight must be from 0 (off) to 1, not {args.dense_weight}")
    if args.write_collection is not None or args.score_run is not None:
        return _own_retriever(args, distractors)
    # The files written last are checked (their folders made) first, before minutes of searching.
    given_run = output_path(args.run, "--run", inputs=_inputs(args)) if args.run else None
    given_qrels = output_path(args.qrels, "--qrels", inputs=_inputs(args)) if args.qrels else None
    if given_run is not None and given_qrels is None:
        given_qrels = output_path(given_run.with_suffix(".qrels"), "the qrels next to --run", inputs=_inputs(args))
    if args.index is not None:
        check_index_folder(args.index)
    collection = judged_collection(args.data, distractors)
    examples = {path: load_examples(path) for path in args.data}
    queries = _held(collection.queries, examples, args.split)
    if not queries:
        # Refused by evaluate, after the rewriter had loaded and the index was built.
        raise InvalidInputError(f"--split {args.split} holds out no judged turn of the --data files: nothing to score "
                                "(give the split.json of a run trained with these files)")
    every_turn = [ex for turns in examples.values() for ex in turns]
    turn_ids = {ex.id for ex in every_turn}

    def searched(name: str | None, rewrites: str | None) -> tuple[dict[str, str], dict[str, str], dict[str, tuple[str, ...]]]:
        """(each turn's query, its rewrite, its other candidates)."""
        rewritten = rewrite_queries(queries, name, rewrites, turn_ids)
        others = given_alternatives(rewrites, queries) if rewrites is not None else {}
        texts = rewritten
        if args.expansion_repeats:
            previous = previous_rewrites(queries, texts, every_turn, name)
            texts = {qid: expand_query(text, previous[qid], args.expansion_repeats, others.get(qid, ())) for qid, text in texts.items()}
        return texts, rewritten, others

    other = None
    if args.against is not None:
        # A rewrites file by any name (a model is a folder or a hub name): one
        # named .json was loaded as a model and refused as one.
        is_file = args.against.endswith(".jsonl") or Path(args.against).is_file()
        other = (None, args.against) if is_file else (args.against, None)
    # A file's rewrites are read (and refused, when they are no turns of the
    # data) before a rewriter runs: a bad --against file was found only after
    # the whole rewriting by --rewriter.
    if other is not None and other[1] is not None:
        other_texts, other_rewritten, other_others = searched(*other)
    texts, rewritten, others = searched(rewriter, args.rewrites)
    if other is not None and other[1] is None:
        other_texts, other_rewritten, other_others = searched(*other)
    retriever = BM25Retriever.from_index(judged_index(collection, args.index))
    rescorer = None
    if args.dense_weight > 0:
        rescorer = DenseRescorer.from_retriever(retriever, load_minilm(), args.dense_weight)
    with tempfile.TemporaryDirectory(prefix="convqa-retrieval-") as scratch:
        run = given_run or Path(scratch) / "run.trec"
        qrels = given_qrels or Path(scratch) / "qrels"
        summary = evaluate(queries, texts, retriever, run, qrels, tag=Path(rewriter or args.rewrites).name,
                           rescorer=rescorer, questions=rewritten, alternatives=others)
        if other is not None:
            theirs = evaluate(queries, other_texts, retriever, Path(scratch) / "against.trec", Path(scratch) / "against.qrels",
                              tag="against", rescorer=rescorer, questions=other_rewritten, alternatives=other_others)
    against = (args.against, paired_difference(summary, theirs)) if other is not None else None
    _report(summary, against, args.json)
    if not args.json:
        print(_how_searched(rewriter, args.rewrites, args.expansion_repeats, args.dense_weight))
    return 0


def _how_searched(rewriter: str | None, rewrites: str | None, repeats: int, weight: float) -> str:
    """The table's last line: what was searched, and how against the app's
    search. The defaults (BM25 alone) score lower than the app's search: a
    table that did not say so was read as the app's figures."""
    app = RetrieverConfig()
    flags = f"--expansion-repeats {repeats} --dense-weight {weight:g}"
    if (repeats, weight) == (app.expansion_repeats, app.dense_weight):
        how = f"searched as the app searches ({flags})"
    elif not repeats and not weight:
        how = (f"searched by BM25 alone, as the field compares rewriters; the app's search: --expansion-repeats "
               f"{app.expansion_repeats} --dense-weight {app.dense_weight:g}")
    else:
        how = f"searched with {flags}; the app's: --expansion-repeats {app.expansion_repeats} --dense-weight {app.dense_weight:g}"
    names = {"original": "the questions as asked", "human": "the human rewrites", "automatic": "CAsT's automatic rewrites"}
    source = f"the rewrites of {rewrites}" if rewrites else names.get(rewriter, f"the {rewriter} rewriter's rewrites")
    return f"\n{source[0].upper()}{source[1:]}, {how}."


def _inputs(args) -> list[str | None]:
    """Every file the command reads: no output may be one of them."""
    return [*args.data, args.rewrites, args.against, args.split, args.score_run]


def _held(queries: Sequence[JudgedQuery], examples: dict, split: str | None) -> list[JudgedQuery]:
    """``queries``, only those a training run's ``split`` held out when given."""
    if split is None:
        return list(queries)
    held = {ex.id for path, turns in examples.items() for ex in held_out(turns, split, path)}
    return [q for q in queries if held.intersection(q.example_ids)]


def _report(summary: dict, against: tuple[str, dict] | None, as_json: bool) -> None:
    if as_json:
        record = {"n": summary["n"], **{m: summary[m] for m in MEASURES.values()}}
        print(json.dumps(record | ({"against": {"rewriter": against[0], **against[1]}} if against else {})))
    else:
        _print_table(summary, against)


def _own_retriever(args, distractors: list[str]) -> int:
    """``--write-collection`` (the judged collection, and with ``--qrels``
    its judgements, for a retriever of one's own) and ``--score-run`` (that
    retriever's TREC run, scored as ours are)."""
    ours = {"--rewriter": args.rewriter, "--rewrites": args.rewrites, "--against": args.against, "--index": args.index,
            "--run": args.run, "--expansion-repeats": args.expansion_repeats or None,
            "--dense-weight": args.dense_weight or None}
    given = [flag for flag, value in ours.items() if value is not None]
    flag = "--write-collection" if args.write_collection is not None else "--score-run"
    if given:
        raise InvalidInputError(f"{flag} does not search with a rewriter of ours; leave out {', '.join(given)}")
    # Flags that did nothing here, without a word.
    if args.write_collection is not None and args.json:
        raise InvalidInputError("--write-collection writes files and prints no scores; leave out --json")
    if args.write_collection is not None and args.split is not None and args.qrels is None:
        raise InvalidInputError("--split picks the turns whose judgements --qrels writes; give --qrels too, "
                                "or leave out --split (the collection holds every turn's passages)")
    qrels = output_path(args.qrels, "--qrels", inputs=_inputs(args)) if args.qrels else None
    examples = {path: load_examples(path) for path in args.data}
    if args.write_collection is not None:
        out = output_path(args.write_collection, "--write-collection", inputs=_inputs(args))
        collection = judged_collection(args.data, distractors)
        count = write_collection(collection.passages, out)
        judged = ""
        if qrels is not None:
            queries = _held(collection.queries, examples, args.split)
            write_qrels(queries, qrels)
            judged = f", and the judgements of its {counted(len(queries), 'turn')} to {qrels}"
        print(f"wrote {counted(count, 'passage')} to {out}{judged}", file=sys.stderr)
        return 0
    lines = read_run(args.score_run)
    # The judgements only: a passage's id does not depend on the distractors.
    queries = _held(judged_collection(args.data).queries, examples, args.split)
    asked = list(dict.fromkeys(qid for qid, _, _ in lines))
    judged = {q.qid for q in queries}
    stray = [qid for qid in asked if qid not in judged]
    if len(stray) == len(asked):
        raise DataFormatError(
            f"{args.score_run}: none of its {len(asked)} queries is a judged turn of --data (e.g. {stray[0]!r}); "
            f"qids are <topic>_<turn>, e.g. {queries[0].qid!r}, as --qrels writes them"
        )
    if stray:
        print(f"note: {args.score_run}: {len(stray)} of its {len(asked)} queries are no judged turn"
              f"{' held out by --split' if args.split else ''} and are not scored, e.g. {stray[0]!r}", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="convqa-retrieval-") as scratch:
        # Rewritten as trec_eval reads it best: one space between fields.
        run = Path(scratch) / "run.trec"
        run.write_text("".join(f"{qid} Q0 {docid} 0 {score} run\n" for qid, docid, score in lines), encoding="utf-8")
        summary = score_run(queries, run, qrels or Path(scratch) / "qrels")
    _report(summary, None, args.json)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run_cli(_main, argv, interrupted="nothing was scored or written")


if __name__ == "__main__":
    sys.exit(main())
