"""Ctrl-C (or SIGTERM) in an evaluation command: one line saying what was
left, and status 130 (143), not a traceback from whatever was running."""

from __future__ import annotations

import json

import pytest

from assistant.kernel import Terminated
from eval import qa, quality, retrieval, rewrites


def _stop(stop):
    def raising(*args, **kwargs):
        raise stop
    return raising


@pytest.mark.parametrize("stop, status", [(KeyboardInterrupt, 130), (Terminated, 143)])
def test_quality_interrupted_says_nothing_was_scored(tmp_path, monkeypatch, capsys, stop, status):
    line = {"article_id": "1", "article": "<p>Mary baked a cake.</p>",
            "questions": [{"question": "What did Mary bake?", "options": ["a cake", "b", "c", "d"], "gold_label": 1}]}
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(line) + "\n")
    monkeypatch.setattr(quality.MultipleChoiceReader, "load", _stop(stop))
    assert quality.main(["--data", str(path)]) == status
    assert capsys.readouterr().err == "interrupted: nothing was scored\n"


def test_rewrites_score_interrupted_says_how_to_keep_rewrites(tmp_path, monkeypatch, capsys):
    records = [{"History": ["Ada Lovelace", "Life"], "QuAC_dialog_id": "A", "Question": "Who was she?",
                "Question_no": 1, "Rewrite": "Who was Ada Lovelace?"}]
    data = tmp_path / "canard.json"
    data.write_text(json.dumps(records))
    monkeypatch.setattr(rewrites, "rewrite_with", _stop(KeyboardInterrupt))
    assert rewrites.main(["score", "--data", str(data), "--rewriter", "original", "--metrics", "bleu"]) == 130
    assert capsys.readouterr().err == ("interrupted: nothing was scored or written (rewrites made by python -m "
                                       "rewriting.rewrite, which goes on after an interruption, are scored with "
                                       "--rewrites)\n")


def test_qa_and_retrieval_interrupted_say_nothing_was_written(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(qa, "load_turns", _stop(KeyboardInterrupt))
    assert qa.main(["--data", str(tmp_path / "x.json"), "--setting", "known-context"]) == 130
    assert capsys.readouterr().err == "interrupted: nothing was scored or written\n"
    monkeypatch.setattr(retrieval, "judged_collection", _stop(KeyboardInterrupt))
    assert retrieval.main(["--data", str(tmp_path / "x.json"), "--distractors", "none", "--rewriter", "human"]) == 130
    assert capsys.readouterr().err == "interrupted: nothing was scored or written\n"


def test_labels_build_interrupted_says_the_set_was_not_finished(tmp_path, monkeypatch, capsys):
    from eval import labels

    data = tmp_path / "data"
    (data / "canard").mkdir(parents=True)
    (data / "canard" / "multiple_refs.json").write_text("[]")
    monkeypatch.setattr(labels, "build_label_set", _stop(KeyboardInterrupt))
    assert labels.main(["build", "--data", str(data), "--out", str(tmp_path / "l.jsonl")]) == 130
    assert capsys.readouterr().err == "interrupted: the label set was not finished\n"
