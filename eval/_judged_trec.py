"""TREC run files, and scoring them with the trec_eval that pyserini ships.

pyserini's ``pyserini.eval.trec_eval`` runs the jtreceval jar (NIST's C
trec_eval, bundled) with ``java`` from the PATH and prints its output; we run
the same jar with the Java runtime :func:`import_pyserini` chose (the PATH's
may be too old) and read the output ourselves, so that stdout stays ours.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Mapping, Sequence

from assistant.kernel import DataFormatError, Passage, utf8_text
from assistant.retrieval import import_pyserini

__all__ = ["MEASURES", "write_run", "read_run", "trec_eval"]

# trec_eval's measure names -> ours. MRR and recall as CAsT and QReCC report
# them; nDCG@3, CAsT 2021-22's main measure (the few passages a spoken or
# chat answer can use).
MEASURES = {"recip_rank": "mrr", "ndcg_cut_3": "ndcg_cut_3", "recall_10": "recall_10", "recall_100": "recall_100"}
_ARGS = ["-m", "recip_rank", "-m", "ndcg_cut.3", "-m", "recall.10,100"]


def write_run(results: Mapping[str, Sequence[Passage]], path: str | Path, tag: str) -> int:
    """A TREC run (``qid Q0 docid rank score tag``) of ``{qid: ranked passages}``; lines written."""
    tag = "".join(tag.split()) or "run"
    lines = [
        f"{qid} Q0 {p.id} {rank} {p.score:.6f} {tag}\n"
        for qid, passages in results.items()
        for rank, p in enumerate(passages, start=1)
    ]
    Path(path).write_text("".join(lines), encoding="utf-8")
    return len(lines)


def read_run(path: str | Path) -> list[tuple[str, str, str]]:
    r"""A TREC run of one's own, as ``(qid, docid, score)`` per line, checked
    as trec_eval reads it: ``qid Q0 docid rank score tag``, fields separated
    by any white space (tabs, several spaces, CRLF line ends, a UTF-8 BOM
    are all fine), blank lines skipped. A line of another shape, a score
    that is no number or a docid twice for one query is refused naming the
    line: trec_eval stops at the first with a message that names no line.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".trec", delete=False) as f:
    ...     _ = f.write("106_1\tQ0 p1 1 2.5 mine\r\n\n106_1  Q0 p2 2 1e0 mine\r\n")
    >>> read_run(f.name)
    [('106_1', 'p1', '2.5'), ('106_1', 'p2', '1e0')]
    """
    try:
        raw = Path(path).read_bytes()
    except IsADirectoryError:  # as the other inputs say it ("Is a directory" gave no advice)
        raise DataFormatError(f"{path} is a folder; give the run file in it") from None
    except OSError as error:
        raise DataFormatError(f"cannot read the run {path}: {error.strerror or error}") from None
    lines, seen = [], set()
    for number, line in enumerate(utf8_text(raw, str(path)).splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        where = f"{path}, line {number}"
        if len(fields) != 6:
            raise DataFormatError(f"{where}: a run line is 'qid Q0 docid rank score tag' (6 fields), not {len(fields)}")
        qid, _, docid, _, score, _ = fields
        try:
            float(score)
        except ValueError:
            raise DataFormatError(f"{where}: the score {score!r} is not a number") from None
        if (qid, docid) in seen:
            raise DataFormatError(f"{where}: {docid} is ranked twice for query {qid}")
        seen.add((qid, docid))
        lines.append((qid, docid, score))
    if not lines:
        raise DataFormatError(f"{path}: no run lines ('qid Q0 docid rank score tag')")
    return lines


def _jar() -> str:
    return import_pyserini("pyserini.eval.trec_eval").jar_path


def trec_eval(qrels: str | Path, run: str | Path) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """``(mean, {qid: scores})``, each scores ``{measure: value}`` in our
    names (:data:`MEASURES`' values), as trec_eval computes them: the mean is
    over every query of ``qrels``, and a judged query the run does not answer
    scores 0 (trec_eval's ``-c``); per query, only the answered ones.

    trec_eval ranks a query's passages by score, ties by descending docid,
    as it does for every CAsT participant. It prints four decimals.
    """
    mean = dict.fromkeys(MEASURES.values(), 0.0)
    per_query: dict[str, dict[str, float]] = {}
    if not Path(run).stat().st_size:
        return mean, per_query
    jar = _jar()  # imports pyserini, so JAVA_HOME is set from here on
    java = Path(os.environ["JAVA_HOME"]) / "bin" / "java"
    command = [str(java), "-cp", jar, "trec_eval", "-c", "-q", *_ARGS, str(qrels), str(run)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0 or not done.stdout.strip():
        message = (done.stderr.strip() or done.stdout.strip() or f"exit status {done.returncode}").splitlines()[0]
        # Our own files, written just now: a failure here is a bug, not bad input.
        raise RuntimeError(f"trec_eval failed on {run} against {qrels}: {message}")
    for line in done.stdout.splitlines():
        measure, qid, value = line.split()
        if measure in MEASURES:
            target = mean if qid == "all" else per_query.setdefault(qid, dict.fromkeys(MEASURES.values(), 0.0))
            target[MEASURES[measure]] = float(value)
    return mean, per_query
