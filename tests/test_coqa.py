"""CoQA's official evaluation on small official-format files, numbers by hand."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.kernel import Answer, Rewrite, Turn
from eval import coqa

ROOT = Path(__file__).resolve().parents[1]


def _story(source, story_id, questions, answer_lists, text="Cotton was a white kitten."):
    """An official CoQA story; answer_lists[0] is the main answer list."""

    def answers(texts):
        return [
            {"span_start": 0, "span_end": 1, "span_text": t, "input_text": t, "turn_id": i + 1}
            for i, t in enumerate(texts)
        ]

    story = {
        "source": source,
        "id": story_id,
        "filename": f"{story_id}.txt",
        "story": text,
        "questions": [{"input_text": q, "turn_id": i + 1} for i, q in enumerate(questions)],
        "answers": answers(answer_lists[0]),
    }
    if len(answer_lists) > 1:
        story["additional_answers"] = {str(i): answers(a) for i, a in enumerate(answer_lists[1:])}
    return story


GOLD = {
    "version": "1.0",
    "data": [
        # children_stories, 4 golds per turn (main + 3 additional)
        _story(
            "mctest",
            "s1",
            ["What color was Cotton?", "Where did she live?"],
            [["white", "in a barn"], ["white", "barn"], ["gray", "the barn"], ["a white cat", "above the barn"]],
        ),
        # news, one gold per turn (no additional_answers, as in the train file)
        _story("cnn", "s2", ["Is it known?", "Where?", "Was it?"], [["unknown", "Paris, France", "yes"]]),
        # reddit, 4 golds
        _story("reddit", "s3", ["How many?"], [["three"], ["3"], ["three"], ["three cats"]]),
    ],
}
PREDICTIONS = [
    {"id": "s1", "turn_id": 1, "answer": "white"},
    {"id": "s1", "turn_id": 2, "answer": "the barn above"},
    {"id": "s2", "turn_id": 1, "answer": "unknown"},
    {"id": "s2", "turn_id": 2, "answer": "paris"},
    # s2 turn 3 is missing: it scores 0 and still counts as a turn
    {"id": "s3", "turn_id": 1, "answer": "3"},
]

# By hand.
# s1 t1: every leave-one-out subset holds "white": EM 1, F1 1.
# s1 t2: "barn above" vs golds "in barn", "barn", "barn", "above barn":
#   F1 = 1/2, 2/3, 2/3, 1; EM all 0. Leave-one-out maxima: 1, 1, 1, 2/3 -> F1 11/12.
# s2 t1: 1, 1.  s2 t2: EM 0, F1 2/3 ("paris" vs "paris france").  s2 t3: missing, 0.
# s3 t1: "3" matches only gold 2; leaving it out gives 0 -> EM = F1 = 3/4.
# children_stories: EM 1/2, F1 (1 + 11/12)/2 = 23/24 -> 50.0, 95.8
# news: EM 1/3, F1 (1 + 2/3)/3 = 5/9 -> 33.3, 55.6
# in_domain: EM 2/5, F1 (23/12 + 5/3)/5 = 43/60 -> 40.0, 71.7
# overall: EM 2.75/6 -> 45.8, F1 (43/12 + 3/4)/6 = 13/18 -> 72.2
EXPECTED = {
    "children_stories": {"em": 50.0, "f1": 95.8, "turns": 2},
    "literature": {"em": 0.0, "f1": 0.0, "turns": 0},
    "mid-high_school": {"em": 0.0, "f1": 0.0, "turns": 0},
    "news": {"em": 33.3, "f1": 55.6, "turns": 3},
    "wikipedia": {"em": 0.0, "f1": 0.0, "turns": 0},
    "reddit": {"em": 75.0, "f1": 75.0, "turns": 1},
    "science": {"em": 0.0, "f1": 0.0, "turns": 0},
    "in_domain": {"em": 40.0, "f1": 71.7, "turns": 5},
    "out_domain": {"em": 75.0, "f1": 75.0, "turns": 1},
    "overall": {"em": 45.8, "f1": 72.2, "turns": 6},
}


@pytest.fixture
def files(tmp_path):
    data, pred = tmp_path / "coqa.json", tmp_path / "pred.json"
    data.write_text(json.dumps(GOLD))
    pred.write_text(json.dumps(PREDICTIONS))
    return data, pred


def test_leave_one_out_with_four_golds_and_one_gold():
    four = ["in a barn", "barn", "the barn", "above the barn"]
    em, f1 = coqa.turn_scores(four, "the barn above")
    assert em == 0.0 and f1 == pytest.approx(11 / 12)
    assert coqa.turn_scores(["three", "3", "three", "three cats"], "3") == (0.75, 0.75)
    # One gold: the score against it, nothing left out.
    assert coqa.turn_scores(["Paris, France"], "paris") == (0.0, pytest.approx(2 / 3))
    assert coqa.turn_scores(["unknown"], "Unknown.") == (1.0, 1.0)


def test_evaluate_matches_hand_computed_official_layout(files):
    data, pred = files
    gold, sources = coqa.load_gold(data)
    assert gold[("s1", 2)] == ("in a barn", "barn", "the barn", "above the barn")
    assert gold[("s2", 2)] == ("Paris, France",)
    warnings = []
    scores = coqa.evaluate(gold, sources, coqa.load_predictions(pred), warn=warnings.append)
    assert scores == EXPECTED
    assert list(scores) == list(EXPECTED)  # the official order
    assert warnings == ["Missing prediction for s2 and turn_id: 3"]


def test_cli_json_prints_the_official_dictionary(files):
    data, pred = files
    out = subprocess.run(
        [sys.executable, "-m", "eval.coqa", "--data", str(data), "--pred", str(pred), "--json"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )
    assert json.loads(out.stdout) == EXPECTED
    table = subprocess.run(
        [sys.executable, "-m", "eval.coqa", "--data", str(data), "--pred", str(pred)],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout
    assert "overall" in table and "72.2" in table and "45.8" in table


def test_cli_bad_input_exits_2_with_one_line(tmp_path, files):
    data, pred = files
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"data": [{"source": "blogs", "id": "x", "story": "", "questions": [], "answers": []}]}))
    out = subprocess.run(
        [sys.executable, "-m", "eval.coqa", "--data", str(bad), "--pred", str(pred)],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert out.returncode == 2 and "unknown source 'blogs'" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    not_predictions = tmp_path / "p.json"
    not_predictions.write_text(json.dumps({"s1": "white"}))
    out = subprocess.run(
        [sys.executable, "-m", "eval.coqa", "--data", str(data), "--pred", str(not_predictions)],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert out.returncode == 2 and "id" in out.stderr


class GoldEcho:
    """A stand-in assistant: records the history it gets, answers from a table."""

    def __init__(self, answers):
        self.answers, self.histories = answers, []

    def ask(self, question, conversation):
        self.histories.append(conversation.history())
        text = self.answers.get(question)
        answer = Answer(text, 1.0) if text else Answer("not found", 0.0, found=False)
        return Turn(question, Rewrite(question), answer)


def test_predict_uses_gold_history_and_says_unknown(files):
    data, _ = files
    stories = coqa.load_stories(data)
    echo = GoldEcho({"What color was Cotton?": "white"})
    rows = coqa.predict(stories[:1], lambda story: echo)
    assert rows == [
        {"id": "s1", "turn_id": 1, "answer": "white"},
        {"id": "s1", "turn_id": 2, "answer": "unknown"},
    ]
    # Turn 2 sees turn 1's *gold* main answer, not the system's.
    assert echo.histories == [[], ["What color was Cotton?", "white"]]


def test_predict_with_the_real_pipeline_inside_one_story(minilm, tmp_path):
    from assistant.kernel import RetrieverConfig
    from assistant.pipeline import Assistant
    from assistant.readers import SentenceReader
    from rewriting import OriginalRewriter

    text = (
        "Cotton was a little white kitten who lived in a barn near a farm house.\n\n"
        "She shared her hay bed with her mother and five sisters, who were all orange.\n\n"
        "One day Cotton found a can of orange paint and painted herself."
    )
    data = tmp_path / "one.json"
    data.write_text(json.dumps({"data": [_story(
        "gutenberg", "k1", ["Who did Cotton share her bed with?", "What did she find one day?"],
        [["her mother and five sisters", "a can of orange paint"]], text=text,
    )]}))
    stories = coqa.load_stories(data)
    reader = SentenceReader(minilm)
    rows = coqa.predict(
        stories,
        lambda story: Assistant(OriginalRewriter(), coqa.story_retriever(story, 20), reader, retriever_config=RetrieverConfig(k=3)),
    )
    assert [r["answer"] for r in rows] == [
        "She shared her hay bed with her mother and five sisters, who were all orange.",
        "One day Cotton found a can of orange paint and painted herself.",
    ]
    pred = tmp_path / "pred.json"
    pred.write_text(json.dumps(rows))
    gold, sources = coqa.load_gold(data)
    scores = coqa.evaluate(gold, sources, coqa.load_predictions(pred))
    assert scores["literature"]["turns"] == 2 and scores["overall"]["turns"] == 2
    assert 0 < scores["overall"]["f1"] < 100 and scores["overall"]["em"] == 0.0


def test_cli_predict_then_evaluate(files, tmp_path):
    data, _ = files
    pred = tmp_path / "ours.json"
    subprocess.run(
        [sys.executable, "-m", "eval.coqa", "--data", str(data), "--predict", str(pred), "--reader", "sentence",
         "--rewriter", "original", "--passage-words", "20"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )
    rows = json.loads(pred.read_text())
    assert [(r["id"], r["turn_id"]) for r in rows] == [("s1", 1), ("s1", 2), ("s2", 1), ("s2", 2), ("s2", 3), ("s3", 1)]
    assert all(isinstance(r["answer"], str) and r["answer"] for r in rows)
    out = subprocess.run(
        [sys.executable, "-m", "eval.coqa", "--data", str(data), "--pred", str(pred), "--json"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )
    assert json.loads(out.stdout)["overall"]["turns"] == 6


def test_cli_predict_refuses_an_unwritable_output_before_answering(files, tmp_path, capsys):
    # Checked before the model loads and the stories are answered, not after.
    data, _ = files
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    assert coqa.main(["--data", str(data), "--predict", str(blocker / "ours.json")]) == 2
    err = capsys.readouterr().err
    assert err == f"error: cannot write --predict {blocker / 'ours.json'}: {blocker} is not a folder; give a path in a writable folder\n"


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err


def test_bad_records_are_one_line_naming_the_file_and_record(files, tmp_path, capsys):
    data, pred = files
    listed = json.loads(data.read_text())
    listed["data"][0]["additional_answers"] = list(listed["data"][0]["additional_answers"].values())
    bad_data = tmp_path / "listed.json"
    bad_data.write_text(json.dumps(listed))
    assert coqa.main(["--data", str(bad_data), "--pred", str(pred)]) == 2
    assert f"{bad_data}: story s1: additional_answers must be an object" in _one_error_line(capsys)
    null = tmp_path / "null.json"
    null.write_text(json.dumps([*PREDICTIONS[:2], {"id": "s2", "turn_id": 1, "answer": None}]))
    assert coqa.main(["--data", str(data), "--pred", str(null)]) == 2
    assert f"{null}: prediction 3 (id s2, turn_id 1): answer must be text" in _one_error_line(capsys)


@pytest.fixture
def no_models(monkeypatch):
    """eval.coqa's models, failing the test if loaded: the input is refused
    before they load."""
    def no_models(args):
        raise AssertionError("the models were loaded for input the command should have refused first")

    monkeypatch.setattr(coqa, "_assistant_factory", no_models)


@pytest.mark.parametrize("flag, value, least", [
    ("--passage-words", "0", 1), ("--k", "0", 1), ("--history-turns", "-1", 0), ("--limit", "-1", 1),
])
def test_predict_flags_are_checked_before_the_models_load(files, tmp_path, capsys, no_models, flag, value, least):
    data, _ = files
    assert coqa.main(["--data", str(data), "--predict", str(tmp_path / "ours.json"), flag, value]) == 2
    assert _one_error_line(capsys) == f"error: {flag} must be at least {least}, not {value}\n"


def test_every_bad_story_message_names_the_file_and_the_story(files, tmp_path, capsys):
    data, pred = files
    broken = json.loads(data.read_text())
    del broken["data"][1]["questions"]
    broken["data"][2]["source"] = "blogs"
    for name, stories, named in (("no-questions.json", broken["data"][:2], "story 2 is not in CoQA's format"),
                                 ("blogs.json", broken["data"][2:], "story s3: unknown source 'blogs'")):
        path = tmp_path / name
        path.write_text(json.dumps({"data": stories}))
        assert coqa.main(["--data", str(path), "--pred", str(pred)]) == 2
        assert f"error: {path}: {named}" in _one_error_line(capsys)


def test_predictions_for_no_turn_of_the_data_are_named(files):
    # 0-based turn_ids: each answer was scored against the next turn's golds, without a word.
    data, _ = files
    gold, sources = coqa.load_gold(data)
    shifted = {("s3", 0): "3", ("s3", 1): "three", ("s9", 1): "x"}
    warnings = []
    scores = coqa.evaluate(gold, sources, shifted, warn=warnings.append)
    assert scores["reddit"] == {"em": 100.0, "f1": 100.0, "turns": 1}
    assert warnings[-1] == ("2 prediction(s) name no turn of the data and are not scored, "
                            "e.g. s3 and turn_id: 0 (turn_ids count from 1)")
    assert len(warnings) == 6  # the five missing turns, then the strays once


def test_a_file_without_stories_is_refused(tmp_path, files, capsys):
    _, pred = files
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"version": "1.0", "data": []}))
    assert coqa.main(["--data", str(empty), "--pred", str(pred)]) == 2
    assert _one_error_line(capsys) == f"error: {empty}: no stories in its 'data' list\n"


def _stopping_once(monkeypatch, story_id: str) -> list[str]:
    """eval.coqa's models replaced by gold echoes; Ctrl-C the first time
    ``story_id`` starts. Returns the story ids started, in order."""
    made, stop_at = [], [story_id]

    def factory(args):
        def make_assistant(story):
            made.append(story.id)
            if stop_at and story.id == stop_at[0]:
                stop_at.clear()
                raise KeyboardInterrupt
            return GoldEcho({})
        return make_assistant

    monkeypatch.setattr(coqa, "_assistant_factory", factory)
    return made


def test_an_interrupted_predict_keeps_its_stories_and_the_same_command_goes_on(files, tmp_path, capsys, monkeypatch):
    # Ctrl-C ended in a traceback and every answered story was lost.
    data, _ = files
    out = tmp_path / "ours.json"
    out.write_text("[]\n")  # an earlier run's file: left as it was
    made = _stopping_once(monkeypatch, "s2")  # Ctrl-C once, as story s2 starts
    command = ["--data", str(data), "--predict", str(out)]
    assert coqa.main(command) == 130
    assert out.read_text() == "[]\n"
    assert capsys.readouterr().err.endswith(
        f"interrupted: {out} is as it was; 1 of 3 stories are kept in {out}.partial, and the same command goes on from them\n"
    )
    assert coqa.main(command) == 0
    assert made == ["s1", "s2", "s2", "s3"]  # s1 was not answered again
    assert "resuming: 1 of 3 stories were answered by an interrupted run (ours.json.partial)" in capsys.readouterr().err
    rows = json.loads(out.read_text())
    assert [(r["id"], r["turn_id"], r["answer"]) for r in rows] == [
        ("s1", 1, "unknown"), ("s1", 2, "unknown"), ("s2", 1, "unknown"), ("s2", 2, "unknown"), ("s2", 3, "unknown"),
        ("s3", 1, "unknown")]
    assert not Path(f"{out}.partial").exists()
    # Another run's (other data or settings) is not resumed.
    Path(f"{out}.partial").write_text(json.dumps({"partial": {"other": 1}}) + "\n" + json.dumps({"id": "s1", "rows": []}) + "\n")
    made.clear()
    assert coqa.main(command) == 0
    assert made == ["s1", "s2", "s3"]


def test_a_limited_run_keeps_the_stories_an_interrupted_full_run_answered_past_its_limit(files, tmp_path, capsys,
                                                                                         monkeypatch):
    # A full run stopped after two stories, then a --limit 1 run: it used
    # story s1 and deleted the partial file, so s2's answers were lost.
    data, _ = files
    out = tmp_path / "ours.json"
    made = _stopping_once(monkeypatch, "s3")
    command = ["--data", str(data), "--predict", str(out)]
    assert coqa.main(command) == 130
    assert coqa.main([*command, "--limit", "1"]) == 0
    assert [row["id"] for row in json.loads(out.read_text())] == ["s1", "s1"]
    assert f"kept {out}.partial: it holds 1 stories past --limit 1" in capsys.readouterr().err
    assert coqa.main(command) == 0
    assert made == ["s1", "s2", "s3", "s3"]  # s1 and s2 were each answered once


def test_predict_refuses_to_write_over_the_data_file(files, tmp_path, capsys, no_models):
    # --predict naming the --data file replaced the CoQA file with the predictions.
    data, _ = files
    before = data.read_text()
    same = tmp_path / "." / data.name
    assert coqa.main(["--data", str(data), "--predict", str(same)]) == 2
    assert _one_error_line(capsys) == (f"error: --predict {same} is an input of this command too; writing it would "
                                       "replace it: give another path\n")
    assert data.read_text() == before


@pytest.mark.parametrize("change, message", [
    # A null answer text ended in a traceback from the metrics; a short answer list was
    # refused as "story 1 is not in CoQA's format (IndexError('list index out of range'))".
    (lambda s: s["additional_answers"]["1"][1].update(input_text=None),
     "story s1: turn 2: every input_text (question and answers) must be text, not None"),
    (lambda s: s["answers"].pop(), "story s1: answers has 1 answers for 2 questions"),
    (lambda s: s["additional_answers"]["0"].pop(), "story s1: additional_answers['0'] has 1 answers for 2 questions"),
])
def test_a_malformed_answer_is_refused_naming_the_story_and_turn(files, tmp_path, capsys, change, message):
    data, pred = files
    broken = json.loads(data.read_text())
    change(broken["data"][0])
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(broken))
    assert coqa.main(["--data", str(path), "--pred", str(pred)]) == 2
    assert _one_error_line(capsys) == f"error: {path}: {message}\n"


def test_files_saved_with_a_byte_order_mark_are_read(files, tmp_path):
    # "Unexpected UTF-8 BOM": a data or predictions file saved by Notepad was refused.
    data, pred = files
    marked_data, marked_pred = tmp_path / "bom.json", tmp_path / "bom-pred.json"
    marked_data.write_bytes(b"\xef\xbb\xbf" + data.read_bytes())
    marked_pred.write_bytes(b"\xef\xbb\xbf" + pred.read_bytes())
    gold, sources = coqa.load_gold(marked_data)
    assert coqa.evaluate(gold, sources, coqa.load_predictions(marked_pred), warn=lambda _: None) == EXPECTED


def test_a_file_in_another_encoding_is_refused_saying_so(files, tmp_path, capsys):
    # Latin-1 data ended in a UnicodeDecodeError traceback; latin-1 predictions were
    # refused as "predictions must be a list of {'id', 'turn_id', 'answer'}".
    data, pred = files
    latin_data, latin_pred = tmp_path / "latin.json", tmp_path / "latin-pred.json"
    latin_data.write_bytes(data.read_text().replace("barn", "bärn").encode("latin-1"))
    latin_pred.write_bytes(pred.read_text().replace("white", "whité").encode("latin-1"))
    for arguments, named in (([latin_data, pred], latin_data), ([data, latin_pred], latin_pred)):
        assert coqa.main(["--data", str(arguments[0]), "--pred", str(arguments[1])]) == 2
        assert _one_error_line(capsys) == f"error: {named} is not UTF-8 text; save it as UTF-8 and try again.\n"


def test_predict_refuses_a_story_twice_before_answering(files, tmp_path, capsys, no_models):
    # --pred refused it, --predict answered it twice (and resumed with one of the two).
    data, _ = files
    twice = json.loads(data.read_text())
    twice["data"].append(twice["data"][0])
    path = tmp_path / "twice.json"
    path.write_text(json.dumps(twice))
    assert coqa.main(["--data", str(path), "--predict", str(tmp_path / "ours.json")]) == 2
    assert _one_error_line(capsys) == f"error: {path}: duplicate story s1\n"


def test_predict_refuses_an_unknown_reader_before_reading_the_data_or_writing(files, tmp_path, capsys):
    # It was refused only when the models loaded, after the data was read, and
    # left an empty ours.json.partial behind.
    data, _ = files
    assert coqa.main(["--data", str(data), "--predict", str(tmp_path / "ours.json"), "--reader", "nope"]) == 2
    assert _one_error_line(capsys).startswith("error: reader must be one of sentence, generative, got 'nope'")
    assert not (tmp_path / "ours.json.partial").exists() and not (tmp_path / "ours.json").exists()


def test_pred_refuses_the_flags_of_predict_that_would_do_nothing(files, capsys):
    # --limit 1 with --pred still scored every story, without a word.
    data, pred = files
    assert coqa.main(["--data", str(data), "--pred", str(pred), "--limit", "1", "--reader", "generative"]) == 2
    assert _one_error_line(capsys) == "error: --pred scores the given predictions as they are: leave out --reader, --limit (for --predict)\n"
    assert coqa.main(["--data", str(data), "--pred", str(pred), "--json"]) == 0


def test_predict_rescores_a_storys_hits_as_the_app_reads_a_document(monkeypatch, minilm):
    # eval.coqa read its stories by BM25 alone while the app's document
    # mode (and eval.qa's known context) rescore a document's hits.
    import argparse

    from assistant.kernel import RetrieverConfig
    from assistant.retrieval import DenseRescorer
    from rewriting import OriginalRewriter

    monkeypatch.setattr(coqa, "build_reader", lambda name: object())
    monkeypatch.setattr(coqa, "load_rewriter", lambda name: OriginalRewriter())
    args = argparse.Namespace(**coqa.PREDICT_DEFAULTS, limit=None)
    story = coqa.Story("s1", "mctest", "Cotton was a white kitten. She lived in a barn.", ("Q",), (("A",),))
    assistant = coqa._assistant_factory(args)(story)
    assert isinstance(assistant.rescorer, DenseRescorer)
    assert assistant.retriever_config.k == 3 and assistant.retriever_config.dense_weight == RetrieverConfig().dense_weight
    assert [p.id for p in assistant.rescorer.rescore("Where did the kitten live?", assistant.retriever.search("kitten barn", 100), 1)]
