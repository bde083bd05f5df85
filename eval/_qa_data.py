"""Reading the QA evaluation data: QReCC json, LEval's MultiDoc2Dial, SCAI's passages.

Every reader gives :class:`QATurn` values; ``write_collection`` writes
passages as the JSONL collection ``python -m assistant.index`` reads.
"""

from __future__ import annotations

import ast
import csv
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from assistant.kernel import DataFormatError, Passage, json_lines
from assistant.retrieval import split_passages
from rewriting.data import load_examples

from ._judged import write_collection as write_records

__all__ = [
    "QATurn",
    "load_qrecc",
    "load_multidoc2dial",
    "multidoc2dial_passages",
    "scai_passages",
    "load_turns",
    "collection_passages",
    "write_collection",
]


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


def load_qrecc(path: str | Path) -> list[QATurn]:
    """QReCC json, official or SCAI/InfoCQR sample keys, read by the one
    QReCC reader, :func:`rewriting.data.load_examples` (strict: a malformed
    record, e.g. a ``Truth_passages`` that is not a list of ids, raises
    :class:`DataFormatError` naming it; turns without a question or a human
    rewrite are skipped with a warning)."""

    return [
        QATurn(
            conversation=ex.conversation_id,
            turn=ex.turn,
            question=ex.question,
            history=ex.history,
            answer=ex.answer,
            rewrite=ex.rewrite or None,
            gold_ids=ex.passages,
        )
        for ex in load_examples(path, fmt="qrecc")
    ]


def _multidoc2dial_rows(path: str | Path) -> list[dict]:
    """The lines of LEval's MultiDoc2Dial jsonl, each checked; a refusal
    names the line and what it lacks (a Python exception's repr said
    neither)."""
    rows = []
    for where, row in json_lines(path):  # DataFormatError for an unreadable file or line
        if isinstance(row, dict) and "Question" in row:
            raise DataFormatError(f"{where}: a QReCC record; eval.qa reads QReCC as one JSON list in a .json file "
                                  "(a .jsonl file is LEval's MultiDoc2Dial)")
        missing = [key for key in ("input", "instructions", "outputs") if not isinstance(row, dict) or key not in row]
        if missing:
            raise DataFormatError(f"{where}: not LEval's MultiDoc2Dial jsonl: no {', '.join(missing)} "
                                  "(each line needs input, instructions and outputs)")
        texts = isinstance(row["input"], str) and all(
            isinstance(row[key], list) and all(isinstance(text, str) for text in row[key]) for key in ("instructions", "outputs"))
        if not texts:
            raise DataFormatError(f"{where}: input must be a text, instructions and outputs lists of texts")
        if len(row["instructions"]) != len(row["outputs"]):
            raise DataFormatError(f"{where}: {len(row['instructions'])} instructions but {len(row['outputs'])} outputs")
        rows.append(row)
    return rows


# A Natural Questions page as LEval keeps it opens with its title twice:
# "Beauty and the Beast ( 2017 film ) - wikipedia <H1> Beauty and the Beast ( 2017 film ) </H1> …".
_PAGE_TITLE = re.compile(r"^[^<]*<H1>\s*(?P<title>[^<]+?)\s*</H1>", re.IGNORECASE)


def page_title(text: str) -> str:
    """The title a document's own heading gives it (its first ``<H1>``, before
    any other markup), or "". Each passage of the page carries it, as a
    collection article's passages carry theirs: the reader counts and embeds
    a sentence with its page's subject ("who played maurice in beauty and the
    beast 2017" matched a news item naming the film over the cast list's
    "Kevin Kline as Maurice …", which names it only in the title).

    >>> page_title("Beauty and the Beast ( 2017 film ) - wikipedia <H1> Beauty and the Beast ( 2017 film ) </H1> <P> It")
    'Beauty and the Beast ( 2017 film )'
    >>> page_title("Replace license or permit. <P> x </P> <H1> Later </H1>")
    ''
    """
    match = _PAGE_TITLE.match(text)
    return match.group("title") if match else ""


def _document_groups(rows: Sequence[dict]) -> dict[str, str]:
    """Each distinct ``input`` -> its group id ``md2d{g}`` (first-seen order):
    LEval repeats some document groups across lines."""
    groups: dict[str, str] = {}
    for row in rows:
        groups.setdefault(row["input"], f"md2d{len(groups)}")
    return groups


def multidoc2dial_passages(path: str | Path) -> list[Passage]:
    """The passages of every distinct document group, as indexed: cut by
    :func:`~assistant.retrieval.split_passages` at its own size, as the
    collection reader cuts a document."""
    rows = _multidoc2dial_rows(path)
    return [
        passage
        for text, group in _document_groups(rows).items()
        for passage in split_passages(text, doc_id=group, title=page_title(text))
    ]


def load_multidoc2dial(path: str | Path) -> list[QATurn]:
    """One conversation per line: user turns as questions, agent answers as gold,
    the line's own documents as the known context."""
    rows = _multidoc2dial_rows(path)
    groups = _document_groups(rows)
    turns = []
    for line, row in enumerate(rows):
        context = tuple(split_passages(row["input"], doc_id=groups[row["input"]], title=page_title(row["input"])))
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
    except KeyError as error:
        raise DataFormatError(f"{path} is not SCAI's batch csv: it has no {error.args[0]!r} column "
                              "(SCAI-QReCC-21's batch1-top1.csv has passage_ids and passages)") from error
    except (ValueError, SyntaxError, csv.Error) as error:
        raise DataFormatError(f"{path} is not SCAI's batch csv (passage_ids, passages): {error!r}") from error
    return list(passages.values())


def load_turns(path: str | Path) -> list[QATurn]:
    """QReCC json or MultiDoc2Dial jsonl, told apart by the suffix."""
    return load_multidoc2dial(path) if str(path).endswith(".jsonl") else load_qrecc(path)


def collection_passages(path: str | Path) -> list[Passage]:
    """The passages of a MultiDoc2Dial jsonl or a SCAI csv, told apart by the
    suffix; another file, or one with no passage, is refused."""
    if str(path).endswith(".csv"):
        passages = scai_passages(path)
    elif str(path).endswith(".jsonl"):
        passages = multidoc2dial_passages(path)
    else:
        # A QReCC .json was read as MultiDoc2Dial jsonl: "line 1: not valid JSON".
        raise DataFormatError(f"{path}: --write-collection takes LEval's MultiDoc2Dial .jsonl or SCAI's batch .csv, "
                              "whose passages it writes (a QReCC .json holds no passages; index its collection "
                              "with python -m assistant.index)")
    if not passages:  # a header-only csv wrote an empty collection, exit 0
        raise DataFormatError(f"{path}: no passages to write")
    return passages


def write_collection(passages: Iterable[Passage], out: str | Path) -> int:
    """Write passages as the JSONL collection ``assistant.index`` reads
    (by :func:`eval._judged.write_collection`, the one writer of it); the count."""
    return write_records(({"id": p.id, "contents": p.text, "title": p.title, "url": p.url} for p in passages), out)
