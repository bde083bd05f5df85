"""The labels file: one judged rewrite a JSON line.

The app appends the users' 👍/👎 judgements in this format and
``python -m eval.rewrites validate`` reads it (``python -m eval.labels build``
writes one from the shared human annotations)::

    {"id", "history", "question", "rewrite", "reference", "label": 0 | 1, ...}

Keys beyond these are kept as read (``extra``).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ._config import cache_dir
from ._errors import DataFormatError
from ._jsonl import json_lines

__all__ = ["LabelledRewrite", "read_labels", "write_labels", "default_labels_path"]

_REQUIRED = ("id", "history", "question", "rewrite", "reference", "label")


@dataclass(frozen=True)
class LabelledRewrite:
    """One judged rewrite (a line of a labels file)."""

    id: str
    history: tuple[str, ...]  # earlier turns, question and answer alternating, oldest first
    question: str  # the conversational question ("" when the source has none)
    rewrite: str  # the candidate rewrite that was judged
    reference: str  # a human rewrite of the same question
    label: int  # 1 correct, 0 incorrect
    extra: dict[str, Any] = field(default_factory=dict, compare=False)  # other keys, kept as read

    def to_json(self) -> str:
        record = {k: v for k, v in asdict(self).items() if k != "extra"}
        record["history"] = list(self.history)
        return json.dumps({**record, **self.extra}, ensure_ascii=False)


def default_labels_path() -> Path:
    """Where the app collects labels: ``$CONVQA_LABELS``, else
    ``<cache_dir>/labels.jsonl`` (``~/.cache/convqa/labels.jsonl``)."""
    if os.environ.get("CONVQA_LABELS"):
        return Path(os.environ["CONVQA_LABELS"])
    return cache_dir() / "labels.jsonl"


def _parse_record(record: Any, where: str) -> LabelledRewrite:
    if not isinstance(record, dict):
        raise DataFormatError(f"{where}: expected a JSON object, got {type(record).__name__}")
    missing = [key for key in _REQUIRED if key not in record]
    if missing:
        raise DataFormatError(
            f"{where}: missing key(s) {', '.join(missing)}; each line needs {', '.join(_REQUIRED)}"
        )
    for key in ("id", "question", "rewrite", "reference"):
        if not isinstance(record[key], str):
            raise DataFormatError(f"{where}: {key!r} must be a string, got {type(record[key]).__name__}")
    history = record["history"]
    if not isinstance(history, list) or not all(isinstance(t, str) for t in history):
        raise DataFormatError(f"{where}: 'history' must be a list of strings")
    label = record["label"]
    # bool is an int subclass: true/false would pass as 1/0, but a writer that
    # emits booleans meant something else; insist on the documented values.
    if isinstance(label, bool) or label not in (0, 1):
        raise DataFormatError(f"{where}: 'label' must be 0 (incorrect) or 1 (correct), got {label!r}")
    if not record["reference"].strip():
        raise DataFormatError(f"{where}: 'reference' is empty: a judged rewrite needs a human reference")
    extra = {k: v for k, v in record.items() if k not in _REQUIRED}
    return LabelledRewrite(
        id=record["id"],
        history=tuple(history),
        question=record["question"],
        rewrite=record["rewrite"],
        reference=record["reference"],
        label=int(label),
        extra=extra,
    )


def read_labels(path: str | os.PathLike) -> list[LabelledRewrite]:
    """Every judged rewrite in the JSONL file at ``path``, in file order.

    Raises :class:`DataFormatError` at the first malformed line, naming the
    file and line number, and when the file holds no judged rewrite at all.
    """
    labels = [_parse_record(record, where) for where, record in json_lines(path)]
    if not labels:
        raise DataFormatError(f"{path}: no judged rewrites in the file")
    return labels


def write_labels(labels: Iterable[LabelledRewrite], path: str | os.PathLike) -> int:
    """Write ``labels`` as JSONL to ``path``; returns the number of lines."""
    count = 0
    with open(path, "w", encoding="utf-8") as out:
        for item in labels:
            out.write(item.to_json() + "\n")
            count += 1
    return count
