"""A judged passage collection from the CAsT topics we have, and its qrels.

The CAsT qrels point at MS MARCO / KILT / Washington Post passages, which we
do not have. What we do have is the passage the organisers chose as each
turn's answer: the canonical ``passage`` of CAsT 2021 and the ``response`` of
CAsT 2022. So each turn is judged against its own passage (relevance 1), and
a text that several turns have (the same passage judged for two turns, or
repeated across the flattened 2022 branches) is one passage, relevant to
every turn that has it. Distractors make the search hard: the default
collection's Wikipedia summaries, the NQ Wikipedia pages and the MultiDoc2Dial
documents, cut into passages. CAsT 2019 has neither answers nor a licence we
use; it is never read.

Query ids follow the CAsT run files, ``<topic>_<turn>``; CAsT 2022's flattened
file repeats a branch's shared first turns in every path, and each turn id is
one query, as in the official evaluation (the first path it occurs in gives
its history).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from assistant.kernel import DataFormatError, json_lines
from assistant.retrieval import html_to_text, read_collection, split_passages
from rewriting.data import RewriteExample, load_examples

__all__ = [
    "JudgedQuery",
    "JudgedCollection",
    "DISTRACTOR_WORDS",
    "default_distractors",
    "judged_collection",
    "collection_key",
    "write_collection",
    "write_qrels",
]

# Distractor documents are cut into passages of at most this many words: about
# the median length of the judged passages (CAsT 2021 and 2022 together), so
# that BM25's length normalisation favours neither side.
DISTRACTOR_WORDS = 160
# Raised whenever the collection's layout changes, so that cached indexes
# built by an older layout are not reused.
_LAYOUT_VERSION = 1
# The shared data's distractor files, relative to the data folder.
_SHARED_DISTRACTORS = ("nq_wiki/natural_question.jsonl", "multidoc2dial/multidoc_qa.jsonl")


@dataclass(frozen=True)
class JudgedQuery:
    """One turn to search for: its id, the example it comes from (question,
    history, human and other rewrites), the ids of its relevant passages, and
    the ids of every example that is this turn (CAsT 2022 repeats turns)."""

    qid: str
    example: RewriteExample
    relevant: tuple[str, ...]
    example_ids: tuple[str, ...]


@dataclass(frozen=True)
class JudgedCollection:
    passages: tuple[dict, ...]  # {"id", "contents", "title", "url"}: what build_index takes
    queries: tuple[JudgedQuery, ...]


def _same_text(text: str) -> str:
    # "Identical" ignores how whitespace is laid out, nothing else.
    return " ".join(text.split())


def _topic_and_turn(example: RewriteExample) -> tuple[str, str]:
    # Ids are "<source>:<conversation>:<turn label>"; a 2022 conversation is
    # "<topic>:<last turn of its path>".
    topic = example.conversation_id.split(":")[0]
    return topic, example.id.rsplit(":", 1)[1]


def _judged_turns(paths: Sequence[str | Path]) -> list[tuple[str, RewriteExample, list[str], list[str]]]:
    """``(qid, example, answer texts, example ids)`` per distinct turn of the CAsT files."""
    turns: dict[str, tuple[RewriteExample, list[str], list[str]]] = {}
    for path in paths:
        examples = load_examples(path)
        sources = {ex.source for ex in examples}
        if not sources <= {"cast2021", "cast2022"}:
            raise DataFormatError(
                f"{path}: judged retrieval needs CAsT 2021 or 2022 topics (their passages and "
                f"responses are the judgements); this file holds {', '.join(sorted(sources))}"
            )
        for ex in examples:
            topic, turn = _topic_and_turn(ex)
            qid = f"{topic}_{turn}"
            example, answers, ids = turns.setdefault(qid, (ex, [], []))
            ids.append(ex.id)
            text = _same_text(ex.answer)
            if text and text not in answers:
                answers.append(text)
    return [(qid, ex, answers, ids) for qid, (ex, answers, ids) in turns.items()]


def default_distractors(data: Path) -> list[str]:
    """The default collection ("default") and the shared NQ and MultiDoc2Dial files."""
    return ["default", *(str(data / name) for name in _SHARED_DISTRACTORS)]


def _leval_documents(path: Path) -> Iterator[tuple[str, str]]:
    """``(title, text)`` of each distinct ``input`` of an LEval JSONL (NQ
    pages are tokenised HTML, MultiDoc2Dial documents plain text)."""
    seen: set[str] = set()
    for where, record in json_lines(path):
        if not isinstance(record, dict) or not isinstance(record.get("input"), str):
            raise DataFormatError(f'{where}: expected an object with an "input" text')
        document = record["input"]
        if document in seen:
            continue
        seen.add(document)
        head, sep, _ = document.partition(" - wikipedia ")
        if sep and "<" in document:
            yield head.strip(), html_to_text(document[len(head) + len(sep):])
        else:
            yield "", document


def _is_leval(path: Path) -> bool:
    if path.suffix != ".jsonl":
        return False
    for _, record in json_lines(path):
        return isinstance(record, dict) and "input" in record and "contents" not in record
    return False


def _distractor_passages(spec: str, tag: str) -> Iterator[dict]:
    """Passages of one distractor source: "default" (the default collection,
    kept as it is: one summary a passage), an LEval JSONL, or anything
    :func:`read_collection` reads (cut to :data:`DISTRACTOR_WORDS`)."""
    if spec == "default":
        for n, record in enumerate(read_collection()):
            yield {**record, "id": f"{tag}{n}"}
        return
    path = Path(spec)
    if _is_leval(path):
        for g, (title, text) in enumerate(_leval_documents(path)):
            for p in split_passages(text, f"{tag}{g}", max_words=DISTRACTOR_WORDS, title=title):
                yield {"id": p.id, "contents": p.text, "title": p.title, "url": ""}
        return
    for n, record in enumerate(read_collection(path)):
        for p in split_passages(record["contents"], f"{tag}{n}", max_words=DISTRACTOR_WORDS):
            yield {"id": p.id, "contents": p.text, "title": record["title"], "url": record["url"]}


def judged_collection(data: Sequence[str | Path], distractors: Iterable[str] = ()) -> JudgedCollection:
    """The judged passages of the CAsT files ``data``, then the distractors
    (whose texts equal to a judged one are left out: that text is judged)."""
    by_text: dict[str, str] = {}
    passages: list[dict] = []
    queries: list[JudgedQuery] = []
    for qid, example, answers, ids in _judged_turns(data):
        relevant = []
        for n, text in enumerate(answers):
            if text not in by_text:
                pid = f"{example.source}_{qid}" + (f"_{n}" if n else "")
                by_text[text] = pid
                passages.append({"id": pid, "contents": text, "title": "", "url": ""})
            relevant.append(by_text[text])
        if relevant:
            queries.append(JudgedQuery(qid, example, tuple(relevant), tuple(ids)))
    for j, spec in enumerate(distractors):
        # Ids must hold no whitespace (TREC files are whitespace-separated).
        tag = "wiki" if spec == "default" else "".join(Path(spec).stem.split()) + f"{j}-"
        for passage in _distractor_passages(spec, tag):
            text = _same_text(passage["contents"])
            if text and text not in by_text:
                by_text[text] = passage["id"]
                passages.append({**passage, "contents": text})
    if not queries:
        raise DataFormatError("no turn in the data has a passage or response to judge it by")
    return JudgedCollection(tuple(passages), tuple(queries))


def collection_key(passages: Sequence[dict]) -> str:
    """A digest of the collection (layout version, every passage): the name
    its cached index is kept under."""
    digest = hashlib.sha256(f"judged-v{_LAYOUT_VERSION}\n".encode())
    for p in passages:
        digest.update(json.dumps(p, sort_keys=True, ensure_ascii=False).encode() + b"\n")
    return digest.hexdigest()[:20]


def write_collection(passages: Iterable[dict], path: str | Path) -> int:
    """The collection as ``assistant.index`` JSONL (for a look, or another tool)."""
    count = 0
    with open(path, "w", encoding="utf-8") as out:
        for p in passages:
            out.write(json.dumps(p, ensure_ascii=False) + "\n")
            count += 1
    return count


def write_qrels(queries: Iterable[JudgedQuery], path: str | Path) -> int:
    """TREC qrels (``qid 0 docid 1``) of ``queries``; the number of lines."""
    lines = [f"{q.qid} 0 {pid} 1\n" for q in queries for pid in q.relevant]
    Path(path).write_text("".join(lines), encoding="utf-8")
    return len(lines)
