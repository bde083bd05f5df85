"""Readers for question-rewriting data: QReCC, CANARD and TREC CAsT 2020-2022.

Every reader returns :class:`RewriteExample` values whose ``history`` has the
QReCC ``Context`` layout the :class:`~rewriting._base.Rewriter` protocol takes:
earlier turns' texts, question and answer alternating, oldest first. A missing
answer is ``""`` so that position ``2k`` is always a question and ``2k + 1``
its answer.

Formats (``load_examples`` sniffs them; ``detect_format`` says which):

``qrecc``
    The official json (``Context, Question, Rewrite, Answer, Conversation_no,
    Turn_no``) and the InfoCQR sample variant (``Question, Truth_rewrite,
    Truth_answer, NewContext, ...``); the history is ``Context``, resp.
    ``NewContext``, as it is; ``Truth_passages`` (gold passage ids), where a
    record has it, becomes :attr:`RewriteExample.passages`. The two differ in what earlier questions they
    hold, the opposite of what the shared data's README says:

    - official ``Context`` holds earlier turns' *rewrites* (in
      ``qrecc_test_sample.json`` all 110 earlier questions whose raw text
      differs from the rewrite appear rewritten; apple/ml-qrecc#11 shows the
      same in ``qrecc_train.json``);
    - InfoCQR's "modified" ``NewContext`` holds the *raw* questions (in
      ``qrecc_train_sample_1500.json`` all 746 earlier questions whose own
      record is in the file, 496 of them different from their rewrite) and
      the answers (all equal their ``Truth_answer``).

    ``NewContext`` is used because it is the only history there is for turns
    whose earlier turns were not sampled, and raw questions are what a live
    chat's history holds (``Conversation.history()``). Both alternate
    question/answer exactly (length ``2 * (Turn_no - 1)`` in every record);
    missing answers are ``""`` in the data and stay so.
``canard``
    ``History, Question, Rewrite, QuAC_dialog_id, Question_no``.
    ``History[0:2]`` (article and section titles) go to ``title``, not to the
    history; :attr:`RewriteExample.context` puts the title before the history
    for the rewriter. A turn's ``answer`` is taken from the next turn's history when
    that turn is in the file (CANARD stores no answer with its own turn).
``cast``
    TREC CAsT topics: 2020 and 2021 manual evaluation topics, 2022 flattened
    topics. The year comes from the topic number. See :func:`_cast_examples`.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import json
import os
import random
import re
import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping

from assistant.kernel import DRIFT_STOPWORDS, DataFormatError, json_lines, sklearn_stopwords, utf8_text

__all__ = [
    "RewriteExample",
    "FORMATS",
    "data_dir",
    "detect_format",
    "load_examples",
    "load_quretec",
    "split_by_conversation",
    "HISTORIES",
    "with_histories",
    "with_rewritten_questions",
    "load_names",
    "resolved_name",
    "with_swapped_names",
    "with_repeats",
]

FORMATS = ("qrecc", "canard", "cast")

# CAsT canonical passages (2021) and responses (2022) have a median of 171 and
# 94 words, up to 244. In the history they keep only their first 100 words: a
# ten-turn 2021 topic would otherwise carry ~1,700 words of context, more than
# GPT-2's 1,024 tokens, while the QReCC answers rewriters are trained on have a
# median of 17-25 words and a maximum of 54. Entities to resolve sit mostly at
# the start of a passage. ``RewriteExample.answer`` keeps the full text.
CAST_HISTORY_WORDS = 100

# TREC CAsT topic numbers per year (inclusive): the year is read from them.
_CAST_YEARS = ((81, 105, "cast2020"), (106, 131, "cast2021"), (132, 149, "cast2022"))


@dataclass(frozen=True)
class RewriteExample:
    """One conversational question with its human rewrite."""

    id: str  # "<source>:<conversation_id>:<turn label>", unique within a file
    source: str  # "qrecc" | "canard" | "cast2020" | "cast2021" | "cast2022"
    conversation_id: str  # CAsT 2022: "<topic>:<last turn of the flattened path>"
    turn: int  # 1-based position in its conversation
    question: str  # the raw conversational question
    history: tuple[str, ...]  # earlier turns, question and answer alternating, oldest first
    rewrite: str  # the human (manual) rewrite: the training/eval target
    answer: str = ""  # this turn's gold answer when the data has one
    title: str = ""  # CANARD "article: section", else ""
    # Gold passage ids (QReCC's Truth_passages, where the file has them).
    passages: tuple[str, ...] = ()
    # Other systems' rewrites of this turn, e.g. {"cast_automatic": ...}.
    # Left out of the hash (a dict has none) but compared for equality.
    systems: Mapping[str, str] = field(default_factory=dict, hash=False)

    @property
    def context(self) -> tuple[str, ...]:
        """The history a rewriter is given: :attr:`history`, led by the title
        as a turn with no answer when there is one (CANARD).

        QuAC's askers knew the article and section they asked about, and
        CANARD's rewrites name them ("When did *Zappa* and the Mothers of
        Invention disband?") where no turn does; a rewriter trained without
        the title learns to invent names. A first turn keeps an empty
        context: it is never rewritten.

        >>> RewriteExample("canard:d:2", "canard", "d", 2, "When did they disband?",
        ...                ("What group disbanded?", "The Mothers"), "...", title="Frank Zappa: Disbandment").context
        ('Frank Zappa: Disbandment', '', 'What group disbanded?', 'The Mothers')
        """
        return (self.title, "", *self.history) if self.title and self.history else self.history


def data_dir() -> Path:
    """The shared data folder: ``$CONVQA_DATA``, else ``<repo>/../shared/data``."""
    default = Path(__file__).resolve().parents[2] / "shared" / "data"
    return Path(os.environ.get("CONVQA_DATA", default))


def detect_format(path: str | os.PathLike) -> str:
    """Which of :data:`FORMATS` the json file at ``path`` is in.

    Raises :class:`DataFormatError` naming the file and what is wrong.
    """
    return _sniff(_read_records(path), path)


def load_examples(path: str | os.PathLike, fmt: str | None = None) -> list[RewriteExample]:
    """Read every turn of a QReCC, CANARD or CAsT file (``fmt`` None: sniffed).

    Records without a question or a human rewrite cannot be examples: they are
    counted and reported in one warning (a CAsT turn skipped this way still
    appears in later turns' history). Anything malformed raises
    :class:`DataFormatError` naming the file, the record and the problem.
    """
    records = _read_records(path)
    if fmt is None:
        fmt = _sniff(records, path)
    elif fmt not in FORMATS:
        raise ValueError(f"fmt must be one of {FORMATS} or None, not {fmt!r}")
    else:
        _check_records(records, fmt, path)
    reader = {"qrecc": _qrecc_examples, "canard": _canard_examples, "cast": _cast_examples}[fmt]
    examples, skipped = reader(records, path)
    if skipped:
        warnings.warn(
            f"{path}: skipped {skipped} of {skipped + len(examples)} turns "
            "with an empty question or no human rewrite",
            stacklevel=2,
        )
    seen: dict[str, int] = {}
    for i, ex in enumerate(examples):
        if ex.id in seen:
            raise DataFormatError(
                f"{path}: turn {ex.id!r} occurs twice (examples {seen[ex.id]} and {i}): "
                "a file must hold each turn once"
            )
        seen[ex.id] = i
    return examples


def load_quretec(path: str | os.PathLike) -> dict[str, str]:
    """Map :attr:`RewriteExample.id` to the rewrite in a QuReTeC-style TSV.

    The TSVs (``conversation_id, turn_id, id, query, original``) have the CAsT
    topic and turn numbers; ``81, 2`` is ``"cast2020:81:2"``. Fields are
    CSV-quoted where needed (``Human.tsv`` quotes one query that has quotes).
    """
    expected = ["conversation_id", "turn_id", "id", "query", "original"]
    try:
        with open(path, encoding="utf-8", newline="") as f:
            rows = list(csv.reader(f, delimiter="\t"))
    except (OSError, UnicodeDecodeError) as e:
        raise DataFormatError(f"{path}: cannot read a QuReTeC TSV: {e}") from e
    if not rows or rows[0] != expected:
        found = rows[0] if rows else "an empty file"
        raise DataFormatError(f"{path}: expected a TSV header {expected}, found {found}")
    rewrites: dict[str, str] = {}
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(expected):
            raise DataFormatError(f"{path}: line {line}: {len(row)} fields, expected {len(expected)}")
        topic, turn, query = row[0], row[1], row[3]
        if not topic.isdigit():
            raise DataFormatError(f"{path}: line {line}: conversation_id {topic!r} is not a topic number")
        key = f"{_cast_source(int(topic), f'{path}: line {line}')}:{topic}:{turn}"
        if key in rewrites:
            raise DataFormatError(f"{path}: line {line}: turn {key!r} occurs twice")
        rewrites[key] = query
    if not rewrites:
        raise DataFormatError(f"{path}: no rows after the header")
    return rewrites


def split_by_conversation(
    examples: Iterable[RewriteExample], dev_fraction: float = 0.2, seed: int = 0
) -> tuple[list[RewriteExample], list[RewriteExample]]:
    """Split into (train, dev) with no conversation on both sides.

    Each conversation goes to dev when a SHA-256 of (seed, source,
    conversation) falls below ``dev_fraction``: the same on every run and
    machine (unlike ``hash()``), and a conversation's side does not change
    when others are added, so the dev share is about, not exactly,
    ``dev_fraction``. CAsT 2022's flattened paths of one topic tree share
    their first turns, so the whole tree is the unit there.
    """
    if not 0.0 <= dev_fraction <= 1.0:
        raise ValueError(f"dev_fraction must be within [0, 1], not {dev_fraction}")
    train: list[RewriteExample] = []
    dev: list[RewriteExample] = []
    for ex in examples:
        group = ex.conversation_id.split(":")[0] if ex.source == "cast2022" else ex.conversation_id
        digest = hashlib.sha256(f"{seed}\0{ex.source}\0{group}".encode()).digest()
        (dev if int.from_bytes(digest[:8], "big") / 2**64 < dev_fraction else train).append(ex)
    return train, dev


# How a training turn's earlier questions are shown: as the file has them,
# replaced by their human rewrites (what the app gives the rewriter:
# AssistantConfig.history_rewrites), or both, each turn twice.
HISTORIES = ("asked", "rewritten", "both")


def with_histories(examples: Iterable[RewriteExample], histories: str = "asked") -> list[RewriteExample]:
    """The examples with their histories as ``histories`` says (:data:`HISTORIES`).

    ``rewritten`` replaces each earlier question by that turn's human rewrite,
    looked up in ``examples`` by (source, conversation, turn); a turn not
    among them keeps its question (QReCC's sample files hold only some turns,
    and their histories are rewrites already). ``both`` keeps every example
    and adds its rewritten copy where that differs: the same targets, seen
    with either kind of history.

    >>> a = RewriteExample("q:c:1", "q", "c", 1, "Who wrote Hamlet?", (), "Who wrote Hamlet?")
    >>> b = RewriteExample("q:c:2", "q", "c", 2, "When?", ("Who wrote it?", "Shakespeare"), "When did Shakespeare write Hamlet?")
    >>> [e.history for e in with_histories([a, b], "rewritten")]
    [(), ('Who wrote Hamlet?', 'Shakespeare')]
    >>> len(with_histories([a, b], "both"))
    3
    """
    examples = list(examples)
    if histories not in HISTORIES:
        raise ValueError(f"histories must be one of {', '.join(HISTORIES)}, not {histories!r}")
    if histories == "asked":
        return examples
    rewrites = {(e.source, e.conversation_id, e.turn): e.rewrite for e in examples}
    rewritten = [with_rewritten_questions(e, rewrites) for e in examples]
    if histories == "rewritten":
        return rewritten
    return examples + [r for e, r in zip(examples, rewritten) if r.history != e.history]


def with_rewritten_questions(example: RewriteExample, rewrites: Mapping[tuple[str, str, int], str]) -> RewriteExample:
    """``example`` with each earlier question of its history replaced by
    ``rewrites[(source, conversation_id, turn)]`` of that turn; a turn not
    there keeps its question, and answers stay as they are."""
    history = list(example.history)
    for i in range(0, len(history), 2):
        history[i] = rewrites.get((example.source, example.conversation_id, i // 2 + 1), history[i])
    return dataclasses.replace(example, history=tuple(history))


# --- swapped names: the same turns about other subjects ---------------------

# Lower-case words that may sit inside a name ("Prince of Wales", "Leonardo da Vinci").
# "and" is left out: "Stevie Nicks and Sarah McLachlan" are two names.
_NAME_JOINERS = ("of", "the", "de", "von", "van", "da", "del", "la", "le", "du")
_CAPITALISED = r"[A-Z][\w'’.\-]*"
_NAME = re.compile(rf"{_CAPITALISED}(?:\s+(?:(?:{'|'.join(map(re.escape, _NAME_JOINERS))})\s+)*{_CAPITALISED})*")
_POSSESSIVE = re.compile(r"['’]s?$")
# A question about a person says so with its pronoun.
_PERSONAL = re.compile(r"\b(?:he|she|him|his|her|hers|himself|herself)\b", re.IGNORECASE)


@lru_cache(maxsize=1)
def _name_stopwords() -> frozenset[str]:
    # Built once: _names runs for every training turn.
    return sklearn_stopwords() | DRIFT_STOPWORDS


def _names(text: str) -> list[str]:
    """Runs of capitalised words in ``text``, less leading function words
    ("What", "Did", "The") and a possessive ending."""
    stop = _name_stopwords()
    found = []
    for match in _NAME.finditer(text):
        words = match.group().split()
        while words and words[0].lower() in stop:
            words = words[1:]
        if words:
            words[-1] = _POSSESSIVE.sub("", words[-1])
            found.append(" ".join(w for w in words if w))
    return [n for n in found if n.lower() not in stop]


def _occurs(phrase: str, text: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", text) is not None


def resolved_name(example: RewriteExample) -> str | None:
    """The name the rewrite brings in from the conversation: the longest run
    of capitalised words in ``example.rewrite`` that the question lacks and
    the context (title or history) has, whole or by its last word (a
    surname); ``None`` when there is none.

    >>> e = RewriteExample("q:c:2", "q", "c", 2, "Where was he born?", ("Who wrote Emma?", "Jane Austen wrote it."), "Where was Jane Austen born?")
    >>> resolved_name(e)
    'Jane Austen'
    >>> resolved_name(dataclasses.replace(e, rewrite="Where was he born?")) is None
    True
    """
    context = " ".join(example.context)
    candidates = [
        name for name in _names(example.rewrite)
        if _occurs(name, example.rewrite) and not _occurs(name, example.question)
        and (_occurs(name, context) or (" " in name and _occurs(name.split()[-1], context)))
    ]
    return max(candidates, key=len) if candidates else None


def load_names(path: str | os.PathLike) -> dict[str, bool]:
    """Names to swap in (:func:`with_swapped_names`), each with whether it
    names a person: a text file with one name per line (a tab and ``person``
    after the ones that do), or a collection JSON keyed by article title (the
    default collection's layout), where a person is an article whose summary
    says he or she at least twice (its leads give no life years). Only titles that read as names are kept: capitalised words,
    no digits or brackets."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise DataFormatError(f"{path}: cannot read the names file ({error.strerror}); give a text file with one name per line or a collection JSON") from error
    if path.suffix == ".json":
        try:
            records = json.loads(text)
        except json.JSONDecodeError as error:
            raise DataFormatError(f"{path}: not JSON ({error.msg}, line {error.lineno}); give a collection JSON keyed by title") from error
        if not isinstance(records, dict):
            raise DataFormatError(f"{path}: expected a JSON object keyed by article title, got {_json_kind(records)}")
        candidates = {title: isinstance(r, dict) and len(_PERSONAL.findall(str(r.get("extract", "")))) >= 2 for title, r in records.items()}
    else:
        rows = [line.split("\t") for line in text.splitlines()]
        candidates = {row[0]: len(row) > 1 and row[1].strip() == "person" for row in rows}
    names = {n.strip(): person for n, person in sorted(candidates.items()) if _NAME.fullmatch(n.strip()) and not re.search(r"\d", n)}
    if not names:
        raise DataFormatError(f"{path}: no names in it (capitalised words, no digits or brackets)")
    return names


def with_repeats(examples: Iterable[RewriteExample], repeats: Mapping[str, int]) -> list[RewriteExample]:
    """The examples, each one from a source in ``repeats`` (``{"qrecc": 2}``)
    that many times in all: more weight for a source. Applied after the split,
    it leaves the held-out turns where they were.

    >>> e = RewriteExample("qrecc:1:2", "qrecc", "1", 2, "And he?", ("Who?",), "And Alan?")
    >>> [x.source for x in with_repeats([e, dataclasses.replace(e, source="canard")], {"qrecc": 3})]
    ['qrecc', 'qrecc', 'qrecc', 'canard']
    """
    return [example for example in examples for _ in range(repeats.get(example.source, 1))]


def with_swapped_names(examples: Iterable[RewriteExample], names: Mapping[str, bool], seed: int = 0) -> list[RewriteExample]:
    """The examples, plus a copy of each that has a :func:`resolved_name` with
    that name replaced everywhere (title, history, question, rewrite, answer;
    its last word alone too, as a surname) by one of ``names``
    (:func:`load_names`): a person's where the question says he or she,
    another's otherwise, with as many words where there is one.

    The copies teach the rewriter to carry whatever subject the conversation
    names, not the subjects it has seen in training: held-out turns lose most
    where the rewrite names a wrong entity. The name is drawn by a generator
    seeded with ``seed`` and the example's id, so the copies are the same on
    every run.

    >>> e = RewriteExample("q:c:2", "q", "c", 2, "Where was he born?", ("Who wrote Emma?", "Jane Austen wrote it. Austen was English."), "Where was Jane Austen born?")
    >>> copy = with_swapped_names([e], {"Ada Lovelace": True, "Great Wall": False})[1]
    >>> copy.history[1], copy.rewrite, copy.id
    ('Ada Lovelace wrote it. Lovelace was English.', 'Where was Ada Lovelace born?', 'q:c:2~swap')
    """
    examples = list(examples)
    if not names:
        raise ValueError("with_swapped_names needs at least one name")
    pools: dict[tuple[bool, int], list[str]] = {}
    for name, person in names.items():
        pools.setdefault((person, len(name.split())), []).append(name)
    copies = []
    for example in examples:
        old = resolved_name(example)
        if old is None:
            continue
        person = bool(_PERSONAL.search(example.question))
        pool = (pools.get((person, len(old.split())))
                or [n for (p, _), group in pools.items() if p == person for n in group]
                or list(names))
        rng = random.Random(f"{seed}:{example.id}")
        new = rng.choice([n for n in pool if n != old] or pool)
        swaps = {old: new} | ({old.split()[-1]: new.split()[-1]} if " " in old else {})
        # One pass, the full name before the surname, so that a new name is
        # never swapped again ("Teena Marie" for "Marie Curie").
        pattern = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, swaps)) + r")(?!\w)")

        def swap(text: str) -> str:
            return pattern.sub(lambda match: swaps[match.group()], text)

        copies.append(dataclasses.replace(
            example, id=example.id + "~swap", title=swap(example.title), question=swap(example.question),
            history=tuple(swap(t) for t in example.history), rewrite=swap(example.rewrite), answer=swap(example.answer),
        ))
    return examples + copies


# --- reading and sniffing ---------------------------------------------------

# Keys that identify each format's records (a record may have more).
_QRECC_KEYS = ("Context", "Question", "Rewrite", "Conversation_no", "Turn_no")
_QRECC_SAMPLE_KEYS = ("NewContext", "Question", "Truth_rewrite", "Conversation_no", "Turn_no")
_CANARD_KEYS = ("History", "Question", "Rewrite", "QuAC_dialog_id", "Question_no")
_CAST_KEYS = ("number", "turn")


def _read_records(path: str | os.PathLike) -> list[Any]:
    # The records of a JSON list, or of a JSON Lines file (one record a line:
    # what a script writes a turn at a time), which was refused with the
    # decoder's "Extra data: line 2 column 1".
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError as e:
        raise DataFormatError(f"{path}: no such file") from e
    except IsADirectoryError as e:
        raise DataFormatError(f"{path} is a folder; give a file in it") from e
    except OSError as e:  # the reason alone: the error's own text repeats the path
        raise DataFormatError(f"{path}: cannot read it ({e.strerror or e})") from e
    text = utf8_text(data, str(path))  # a byte order mark is no text
    if not text.strip():  # the decoder said "Expecting value: line 1 column 1 (char 0)"
        raise DataFormatError(f"{path} is empty; give a QReCC, CANARD or CAsT file (a JSON list, or JSON Lines)")
    try:
        records = json.loads(text)
    except json.JSONDecodeError as e:
        # JSON Lines only when the file says so: its name, or a first line
        # that is a record of its own. A pretty-printed list with a stray "]"
        # keeps the decoder's own line and column.
        if e.msg != "Extra data" or not (Path(path).suffix.lower() == ".jsonl" or _one_json_line(text)):
            raise DataFormatError(f"{path}: not a UTF-8 JSON file: {e}") from e
        records = [record for _, record in json_lines(path)]
    if isinstance(records, dict) and Path(path).suffix.lower() == ".jsonl":
        records = [records]  # JSON Lines of one line
    if not isinstance(records, list):
        raise DataFormatError(f"{path}: expected a JSON list of records, found {_json_kind(records)}")
    if not records:
        raise DataFormatError(f"{path}: the list of records is empty")
    return records


def _one_json_line(text: str) -> bool:
    """Whether the first non-blank line of ``text`` is JSON on its own."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        json.loads(first)
    except json.JSONDecodeError:
        return False
    return True


def _json_kind(value: Any) -> str:
    """What ``value`` is in JSON's words, with its article: the messages said
    Python's ("record 0 is a int", "found a dict") to people who wrote JSON."""
    if value is None:
        return "null"
    for kind, name in ((bool, "a boolean"), (dict, "an object"), (list, "a list"), (str, "a string"),
                       ((int, float), "a number")):
        if isinstance(value, kind):
            return name
    return f"a {type(value).__name__}"


def _sniff(records: list[Any], path: str | os.PathLike) -> str:
    first = records[0]
    if isinstance(first, list) and all(isinstance(s, str) for s in first):
        raise DataFormatError(
            f"{path}: record 0 is a list of {len(first)} strings, not a turn: this looks like "
            "CANARD's multiple_refs.json (pairs of rewrites of one question), which has no "
            "questions or histories to read"
        )
    if not isinstance(first, dict):
        raise DataFormatError(f"{path}: record 0 is {_json_kind(first)}, expected an object")
    for fmt, keys in (
        ("qrecc", _QRECC_KEYS),
        ("qrecc", _QRECC_SAMPLE_KEYS),
        ("canard", _CANARD_KEYS),
        ("cast", _CAST_KEYS),
    ):
        if all(k in first for k in keys):
            return fmt
    raise DataFormatError(
        f"{path}: record 0 has keys {sorted(first)}, which match no known format: expected "
        f"QReCC {list(_QRECC_KEYS)} or {list(_QRECC_SAMPLE_KEYS)}, CANARD {list(_CANARD_KEYS)} "
        f"or CAsT topics {list(_CAST_KEYS)}"
    )


def _check_records(records: list[Any], fmt: str, path: str | os.PathLike) -> None:
    """With an explicit ``fmt``, still say clearly when record 0 is not in it."""
    found = _sniff(records, path)
    if found != fmt:
        raise DataFormatError(f"{path}: read as {fmt!r} but record 0 is in the {found!r} format")


def _field(rec: Any, key: str, kind: type, where: str) -> Any:
    """``rec[key]`` checked to be a ``kind``; ``where`` names file and record."""
    if not isinstance(rec, dict):
        raise DataFormatError(f"{where}: expected an object, found {_json_kind(rec)}")
    if key not in rec:
        raise DataFormatError(f"{where}: missing key {key!r} (keys: {sorted(rec)})")
    value = rec[key]
    # bool is an int subclass: a true/false turn number is still wrong.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise DataFormatError(f"{where}: {key!r} should be a {kind.__name__}, found {value!r:.80}")
    return value


def _texts(rec: dict, key: str, where: str) -> tuple[str, ...]:
    texts = _field(rec, key, list, where)
    if not all(isinstance(t, str) for t in texts):
        raise DataFormatError(f"{where}: {key!r} should be a list of strings")
    if len(texts) % 2:
        raise DataFormatError(
            f"{where}: {key!r} has {len(texts)} texts; question/answer pairs need an even number"
        )
    return tuple(texts)


def _warn_turn_mismatch(count: int, key: str, path: str | os.PathLike) -> None:
    if count:
        warnings.warn(
            f"{path}: in {count} records the history holds a different number of turns "
            f"than {key!r} implies; the history was kept as it is",
            stacklevel=3,
        )


# --- the formats --------------------------------------------------------------


def _qrecc_examples(records: list[Any], path) -> tuple[list[RewriteExample], int]:
    examples, skipped, mismatched = [], 0, 0
    for i, rec in enumerate(records):
        where = f"{path}: record {i}"
        sample = isinstance(rec, dict) and "NewContext" in rec and "Context" not in rec
        history = _texts(rec, "NewContext" if sample else "Context", where)
        question = _field(rec, "Question", str, where)
        rewrite = _field(rec, "Truth_rewrite" if sample else "Rewrite", str, where)
        conversation = _field(rec, "Conversation_no", int, where)
        turn = _field(rec, "Turn_no", int, where)
        answer_key = "Truth_answer" if sample else "Answer"
        answer = _field(rec, answer_key, str, where) if answer_key in rec else ""
        passages = _truth_passages(rec, where)
        mismatched += len(history) != 2 * (turn - 1)
        if not question.strip() or not rewrite.strip():
            skipped += 1
            continue
        examples.append(
            RewriteExample(
                id=f"qrecc:{conversation}:{turn}",
                source="qrecc",
                conversation_id=str(conversation),
                turn=turn,
                question=question,
                history=history,
                rewrite=rewrite,
                answer=answer,
                passages=passages,
            )
        )
    _warn_turn_mismatch(mismatched, "Turn_no", path)
    return examples, skipped


def _truth_passages(rec: dict, where: str) -> tuple[str, ...]:
    """QReCC's ``Truth_passages`` (the SCAI layout's gold passage ids): a list
    of strings when present; absent or null, none."""
    ids = rec.get("Truth_passages")
    if ids is None:
        return ()
    if not isinstance(ids, list) or not all(isinstance(pid, str) for pid in ids):
        raise DataFormatError(f"{where}: 'Truth_passages' should be a list of passage ids (strings), found {ids!r:.80}")
    return tuple(ids)


def _canard_examples(records: list[Any], path) -> tuple[list[RewriteExample], int]:
    examples, skipped, mismatched = [], 0, 0
    for i, rec in enumerate(records):
        where = f"{path}: record {i}"
        history = _field(rec, "History", list, where)
        if len(history) < 2:
            raise DataFormatError(f"{where}: 'History' must start with the article and section titles")
        article, section = history[0], history[1]
        turns = _texts({"History": history[2:]}, "History", where)
        question = _field(rec, "Question", str, where)
        rewrite = _field(rec, "Rewrite", str, where)
        dialog = _field(rec, "QuAC_dialog_id", str, where)
        number = _field(rec, "Question_no", int, where)
        mismatched += len(turns) != 2 * (number - 1)
        if not question.strip() or not rewrite.strip():
            skipped += 1
            continue
        examples.append(
            RewriteExample(
                id=f"canard:{dialog}:{number}",
                source="canard",
                conversation_id=dialog,
                turn=number,
                question=question,
                history=turns,
                rewrite=rewrite,
                title=": ".join(t for t in (article, section) if t),
            )
        )
    _warn_turn_mismatch(mismatched, "Question_no", path)
    # A turn's answer is the last text of the next turn's history.
    by_turn = {(ex.conversation_id, ex.turn): ex for ex in examples}
    for i, ex in enumerate(examples):
        after = by_turn.get((ex.conversation_id, ex.turn + 1))
        if after is not None and len(after.history) == 2 * ex.turn:
            examples[i] = dataclasses.replace(ex, answer=after.history[-1])
    return examples, skipped


def _cast_source(topic: int, where: str) -> str:
    for low, high, source in _CAST_YEARS:
        if low <= topic <= high:
            return source
    raise DataFormatError(
        f"{where}: topic number {topic} is not a TREC CAsT 2020-2022 topic "
        f"({_CAST_YEARS[0][0]}-{_CAST_YEARS[-1][1]})"
    )


def _clip_words(text: str, words: int) -> str:
    tokens = text.split()
    return text if len(tokens) <= words else " ".join(tokens[:words])


def _cast_examples(records: list[Any], path) -> tuple[list[RewriteExample], int]:
    """CAsT topics: one record per topic (2022 flattened: per path), ``turn`` a list.

    - question: ``raw_utterance`` (2022: ``utterance``); rewrite:
      ``manual_rewritten_utterance``; ``automatic_rewritten_utterance`` goes
      to ``systems["cast_automatic"]``.
    - answer: 2021's canonical ``passage``, 2022's ``response``; 2020 has no
      answer text (only passage ids), so its history answers are ``""``.
      History answers are clipped to :data:`CAST_HISTORY_WORDS` words.
    - 2022's flattened file repeats a tree's shared first turns in every
      path, sometimes with a different response (a clarifying question in
      one branch). Each path is its own conversation,
      ``"<topic>:<its last turn>"``, so ids stay unique and do not depend on
      the order of the file.
    """
    examples, skipped, rewritten = [], 0, 0
    for i, topic in enumerate(records):
        where = f"{path}: topic record {i}"
        number = _field(topic, "number", int, where)
        turns = _field(topic, "turn", list, where)
        if not turns:
            raise DataFormatError(f"{where}: topic {number} has no turns")
        source = _cast_source(number, where)
        conversation = str(number)
        if source == "cast2022":
            last = turns[-1]
            conversation += ":" + str(last.get("number", "") if isinstance(last, dict) else "")
        history: list[str] = []
        for j, turn in enumerate(turns):
            at = f"{where}, turn {j}"
            label = turn.get("number") if isinstance(turn, dict) else None
            if not isinstance(label, (int, str)) or isinstance(label, bool) or label == "":
                raise DataFormatError(f"{at}: missing or bad turn 'number' {label!r}")
            question = _field(turn, "utterance" if "utterance" in turn else "raw_utterance", str, at)
            answer = ""
            for key in ("response", "passage"):
                if key in turn:
                    answer = _field(turn, key, str, at)
            rewrite = turn.get("manual_rewritten_utterance")
            if rewrite is not None and not isinstance(rewrite, str):
                raise DataFormatError(f"{at}: 'manual_rewritten_utterance' should be a string")
            rewritten += rewrite is not None
            if question.strip() and rewrite and rewrite.strip():
                automatic = turn.get("automatic_rewritten_utterance")
                examples.append(
                    RewriteExample(
                        id=f"{source}:{conversation}:{label}",
                        source=source,
                        conversation_id=conversation,
                        turn=j + 1,
                        question=question,
                        history=tuple(history),
                        rewrite=rewrite,
                        answer=answer,
                        systems={"cast_automatic": automatic} if isinstance(automatic, str) else {},
                    )
                )
            else:
                skipped += 1
            history += [question, _clip_words(answer, CAST_HISTORY_WORDS)]
    if not rewritten:
        raise DataFormatError(
            f"{path}: no turn has a 'manual_rewritten_utterance': this looks like an automatic "
            "topics file; read the manual evaluation topics instead"
        )
    return examples, skipped



if __name__ == "__main__":
    # ``python -m rewriting.data --help`` printed nothing and exited 0, as if it had run.
    import sys

    from assistant.kernel import InvalidInputError, run_cli

    def _not_a_command(argv) -> int:
        raise InvalidInputError("rewriting.data reads the rewriting datasets for other code, not a command; "
                                "train with python -m rewriting.train, export turns with python -m eval.rewrites export")

    sys.exit(run_cli(_not_a_command, sys.argv[1:]))
