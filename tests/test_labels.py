"""The app's labels file: exact format, concurrent appends, torn-tail repair."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from assistant.kernel import InvalidInputError, read_labels
from assistant.session import LabelStore

REPO = Path(__file__).resolve().parents[1]


def _judge(store: LabelStore, n: int, label: int = 0) -> str:
    return store.append(
        id=f"app:s:1:{n}",
        history=["Who was Ada Lovelace?", "An English mathematician."],
        question="What did she write?",
        rewrite="What did she write?",
        reference="What did Ada Lovelace write?",
        label=label,
        reference_kind="correction",
    )


def test_line_is_in_the_format_eval_reads(tmp_path):
    store = LabelStore(tmp_path / "sub" / "labels.jsonl")
    line = _judge(store, 1)
    record = json.loads(line)
    assert {k: record[k] for k in ("id", "history", "question", "rewrite", "reference", "label")} == {
        "id": "app:s:1:1",
        "history": ["Who was Ada Lovelace?", "An English mathematician."],
        "question": "What did she write?",
        "rewrite": "What did she write?",
        "reference": "What did Ada Lovelace write?",
        "label": 0,
    }
    assert record["source"] == "app" and record["reference_kind"] == "correction"
    assert (tmp_path / "sub" / "labels.jsonl").read_text() == line + "\n"
    [item] = read_labels(store.path)
    assert (item.label, item.reference, item.history) == (
        0, "What did Ada Lovelace write?", ("Who was Ada Lovelace?", "An English mathematician.")
    )


def test_env_var_sets_the_path(tmp_path, monkeypatch):
    monkeypatch.setenv("CONVQA_LABELS", str(tmp_path / "mine.jsonl"))
    assert LabelStore().path == tmp_path / "mine.jsonl"


def test_refuses_lines_validate_would_reject(tmp_path):
    store = LabelStore(tmp_path / "labels.jsonl")
    with pytest.raises(InvalidInputError, match="reference"):
        store.append(id="x", history=[], question="q", rewrite="r", reference="  ", label=1, reference_kind="")
    with pytest.raises(InvalidInputError, match="1 \\(correct\\) or 0"):
        store.append(id="x", history=[], question="q", rewrite="r", reference="q r", label=2, reference_kind="")
    with pytest.raises(InvalidInputError):
        store.append(id="x", history=[], question="q", rewrite="r", reference="q r", label=True, reference_kind="")
    assert not store.path.exists()


def test_newlines_inside_texts_stay_on_one_line(tmp_path):
    store = LabelStore(tmp_path / "labels.jsonl")
    store.append(id="x", history=["a\nb", "c"], question="q\nq", rewrite="r\n", reference="ref\r\n",
                 label=1, reference_kind="replay")
    assert len(store.path.read_text().splitlines()) == 1
    assert read_labels(store.path)[0].question == "q\nq"


def test_a_torn_last_line_does_not_swallow_the_next(tmp_path):
    store = LabelStore(tmp_path / "labels.jsonl")
    _judge(store, 1)
    with open(store.path, "a") as f:  # a writer killed mid-line
        f.write('{"id": "torn", "hist')
    _judge(store, 2)
    lines = store.path.read_text().splitlines()
    assert lines[1] == '{"id": "torn", "hist'
    assert json.loads(lines[2])["id"] == "app:s:1:2"


_WRITER = """
import sys
from assistant.session import LabelStore
store = LabelStore(sys.argv[1])
for n in range(int(sys.argv[3])):
    store.append(id=f"{sys.argv[2]}:{n}", history=["h" * 2000, "a" * 3000], question="q" * 500,
                 rewrite="r" * 500, reference="x" * 500, label=n % 2, reference_kind="replay")
"""


def test_concurrent_processes_and_threads_never_corrupt_the_file(tmp_path):
    # Lines of ~7 kB: larger than a pipe buffer and than stdio's, so that
    # unlocked buffered writes would interleave; ours must not.
    path = tmp_path / "labels.jsonl"
    per_writer = 40
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(path), f"proc{i}", str(per_writer)], cwd=REPO)
        for i in range(4)
    ]
    store = LabelStore(path)

    def write(name):
        for n in range(per_writer):
            store.append(id=f"{name}:{n}", history=["h" * 2000, "a" * 3000], question="q" * 500,
                         rewrite="r" * 500, reference="x" * 500, label=n % 2, reference_kind="replay")

    threads = [threading.Thread(target=write, args=(f"thread{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(p.wait(timeout=120) == 0 for p in procs)
    labels = read_labels(path)  # raises at any malformed line
    assert len(labels) == 8 * per_writer
    assert len({item.id for item in labels}) == 8 * per_writer
    assert {item.id.split(":")[0] for item in labels} == {f"proc{i}" for i in range(4)} | {f"thread{i}" for i in range(4)}
