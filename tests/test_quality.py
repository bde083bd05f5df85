"""QuALITY: reading both formats, accuracy and HARD accuracy by hand, the reader."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.kernel import DataFormatError, Terminated
from assistant.readers import (
    Choice,
    MultipleChoiceReader,
    QualityConfig,
    answer_multiple_choice,
)
from eval import quality

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("CONVQA_DATA", ROOT.parent / "shared" / "data"))

ARTICLE_HTML = (
    "<html><head><title>The Party</title></head><body><h1>THE PARTY</h1>"
    "<p>Mary baked a chocolate cake for the party.<br/>Everyone\nloved it.</p>"
    "<p>Tom repaired his old bicycle in the garage all afternoon.</p>"
    "<p>At night the guests watched the stars from the roof &amp; sang songs.</p></body></html>"
)


def _official_line(questions):
    return {"article_id": "20001", "set_unique_id": "20001_X", "title": "The Party", "article": ARTICLE_HTML,
            "questions": questions}


def _q(question, options, gold, difficult):
    return {"question": question, "options": options, "gold_label": gold, "difficult": difficult,
            "writer_label": gold, "validation": [], "speed_validation": []}


OFFICIAL_QUESTIONS = [
    _q("What did Mary bake?", ["a pie", "a chocolate cake", "bread", "cookies"], 2, 0),
    _q("What did Tom repair?", ["his car", "the roof", "his old bicycle", "a clock"], 3, 1),
    _q("What did the guests do at night?", ["watched the stars and sang", "slept", "swam", "left early"], 1, 1),
    _q("Where did Tom work on his bicycle?", ["in the kitchen", "in the garage", "on the roof", "at school"], 2, 0),
]


@pytest.fixture
def official_file(tmp_path):
    path = tmp_path / "quality.jsonl"
    path.write_text(json.dumps(_official_line(OFFICIAL_QUESTIONS)) + "\n")
    return path


def test_official_format_strips_html_and_keeps_labels(official_file):
    [article] = quality.load_quality(official_file)
    assert article.id == "20001_X" and article.title == "The Party"
    assert "<p>" not in article.text and "&amp;" not in article.text
    assert "roof & sang" in article.text and "Everyone loved it." in article.text
    assert "The Party" not in article.text  # <head> is dropped
    q = article.questions[1]
    assert q.options == ("his car", "the roof", "his old bicycle", "a clock")
    assert q.gold == 2 and q.hard is True  # gold_label is 1-based
    assert [x.hard for x in article.questions] == [False, True, True, False]


LEVAL_LINE = {
    "instructions": [
        "What did Mary bake?\n\n (A) a pie \n (B) a chocolate cake \n (C) bread\n (D) cookies ",
        "How many sentences does this story have approximately?\n\n(A) 256\n(B) 450\n(C) 344\n(D) 406",
        "Who repaired a bicycle?\n\n (A) Mary\n (B) the guests \n (C) nobody \n (D) Tom",
        "Extract the named entities.\n(A) Mary\n(B) Tom\n(C) Mary, Tom\n(D) none",
    ],
    "outputs": ["(B) a chocolate cake", "(D) 406", "(D) Tom", "(C) Mary, Tom\n"],
    "input": "Mary baked a chocolate cake.\n\nTom repaired his old bicycle.",
    "source": "quality_raw",
    "evaluation": "exam",
}


def test_leval_format_drops_the_questions_leval_added(tmp_path):
    path = tmp_path / "leval.jsonl"
    path.write_text(json.dumps(LEVAL_LINE) + "\n")
    [article] = quality.load_quality(path)
    assert [q.question for q in article.questions] == ["What did Mary bake?", "Who repaired a bicycle?"]
    assert article.questions[0].options == ("a pie", "a chocolate cake", "bread", "cookies")
    assert [q.gold for q in article.questions] == [1, 3]
    assert all(q.hard is None for q in article.questions)


def test_malformed_files_raise_data_format_error(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps({"text": "no"}) + "\n")
    with pytest.raises(DataFormatError):
        quality.load_quality(path)
    bad = dict(LEVAL_LINE, instructions=["Q?\n\n (A) a\n (B) b"], outputs=["(A) a"])
    path.write_text(json.dumps(bad) + "\n")
    with pytest.raises(DataFormatError, match=r"\(A\)-\(D\)"):
        quality.load_quality(path)
    # Read by the kernel's one JSONL reader: the line named, for any problem.
    path.write_text("\n" + json.dumps([1, 2]) + "\n")
    with pytest.raises(DataFormatError, match=r"x.jsonl, line 2: a line must be a JSON object, not list"):
        quality.load_quality(path)
    path.write_bytes(b'{"article": "caf\xe9"}\n')
    with pytest.raises(DataFormatError, match=r"x.jsonl, line 1 is not UTF-8 text; save it as UTF-8 and try again"):
        quality.load_quality(path)


class AlwaysIndex:
    """A stand-in reader that always picks one option."""

    def __init__(self, index):
        self.index = index

    def answer(self, document, question, options, doc_id="doc"):
        return Choice(self.index, tuple(float(i == self.index) for i in range(len(options))))


def test_accuracy_and_hard_accuracy_by_hand(official_file):
    articles = quality.load_quality(official_file)
    # Always option 2 (0-based 1): right on questions 1 and 4 (both not hard).
    assert quality.evaluate(articles, AlwaysIndex(1)) == {"n": 4, "accuracy": 0.5, "n_hard": 2, "hard_accuracy": 0.0}
    # Always option 3: right only on question 2, which is hard.
    assert quality.evaluate(articles, AlwaysIndex(2)) == {"n": 4, "accuracy": 0.25, "n_hard": 2, "hard_accuracy": 0.5}


def test_hard_split_is_null_without_the_flag(tmp_path):
    path = tmp_path / "leval.jsonl"
    path.write_text(json.dumps(LEVAL_LINE) + "\n")
    result = quality.evaluate(quality.load_quality(path), AlwaysIndex(3))
    assert result == {"n": 2, "accuracy": 0.5, "n_hard": None, "hard_accuracy": None}


def test_reader_picks_the_supported_option_and_returns_evidence(minilm, official_file):
    [article] = quality.load_quality(official_file)
    reader = MultipleChoiceReader(minilm, QualityConfig(passage_words=12, k=2, mu=0.7))
    for q in article.questions:
        choice = reader.answer(article.text, q.question, q.options, article.id)
        assert choice.index == q.gold, q.question
        assert len(choice.scores) == 4 and len(choice.evidence) == 4
    choice = answer_multiple_choice(article.text, "What did Tom repair?", OFFICIAL_QUESTIONS[1]["options"], reader)
    assert "bicycle" in choice.evidence[choice.index].text


def test_a_document_is_prepared_once_and_shared_between_threads(minilm, official_file):
    from concurrent.futures import ThreadPoolExecutor

    [article] = quality.load_quality(official_file)
    calls = []

    class Counting:
        def encode(self, texts):
            calls.append(len(texts))
            return minilm.encode(texts)

    reader = MultipleChoiceReader(Counting(), QualityConfig(passage_words=12, k=2))
    other = article.text + " One more sentence."
    with ThreadPoolExecutor(8) as pool:
        prepared = list(pool.map(lambda text: reader.document(text, article.id), [article.text, other] * 16))
    assert len({id(d) for d in prepared[0::2]}) == 1 and len({id(d) for d in prepared[1::2]}) == 1
    assert prepared[0] is not prepared[1]
    # Later questions on the same text reuse it: no more encoding.
    before = len(calls)
    assert reader.document(article.text, article.id) is prepared[0] and len(calls) == before


def test_cli_json(official_file):
    out = subprocess.run(
        [sys.executable, "-m", "eval.quality", "--data", str(official_file), "--json", "--passage-words", "12", "--k", "2"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )
    # One shape for one run and a sweep: a list, one object per mu.
    assert json.loads(out.stdout) == [
        {"reader": "embedding", "model": None, "scoring": "statement", "mu": 1.0, "n": 4, "accuracy": 1.0, "n_hard": 2,
         "hard_accuracy": 1.0}
    ]


def test_cli_likelihood_reader_scores_with_the_named_model(tiny_gpt2, official_file, tmp_path):
    from assistant.readers import LikelihoodChoiceReader, LikelihoodConfig

    model, tokenizer = tiny_gpt2
    model.save_pretrained(tmp_path / "lm")
    tokenizer.save_pretrained(tmp_path / "lm")
    articles = quality.load_quality(official_file)
    config = LikelihoodConfig(passage_words=12, k=2)
    expected = quality.evaluate(articles, LikelihoodChoiceReader(model, tokenizer, config))
    # By hand: a question is right when its gold option has the highest likelihood.
    reader = LikelihoodChoiceReader(model, tokenizer, config)
    right = [
        max(range(4), key=lambda i, s=reader.answer(articles[0].text, q.question, q.options).scores: s[i]) == q.gold
        for q in articles[0].questions
    ]
    assert expected["n"] == 4 and expected["accuracy"] == pytest.approx(sum(right) / 4)
    out = subprocess.run(
        [sys.executable, "-m", "eval.quality", "--data", str(official_file), "--json", "--passage-words", "12", "--k", "2",
         "--reader", "likelihood", "--model", str(tmp_path / "lm")],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )
    assert json.loads(out.stdout) == [{"reader": "likelihood", "model": str(tmp_path / "lm"), "scoring": None, "mu": None,
                                       **expected}]


@pytest.mark.parametrize("flags", [["--reader", "likelihood", "--mu", "0.5"], ["--model", "smollm2"]])
def test_cli_refuses_flags_of_the_other_reader(official_file, flags):
    out = subprocess.run(
        [sys.executable, "-m", "eval.quality", "--data", str(official_file), *flags],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert out.returncode == 2 and out.stderr.startswith("error:") and len(out.stderr.strip().splitlines()) == 1


def test_cli_bad_input_exits_2(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text("not json\n")
    out = subprocess.run([sys.executable, "-m", "eval.quality", "--data", str(path)], cwd=ROOT, capture_output=True, text=True, check=False)
    assert out.returncode == 2 and out.stderr.startswith("error:")


@pytest.mark.skipif(not (DATA / "quality" / "quality_leval_subset.jsonl").is_file(), reason="missing prerequisite: shared data (quality subset)")
def test_shared_leval_subset_has_184_quality_questions():
    articles = quality.load_quality(DATA / "quality" / "quality_leval_subset.jsonl")
    assert len(articles) == 15
    assert sum(len(a.questions) for a in articles) == 184
    assert all(len(q.options) == 4 and q.gold in range(4) for a in articles for q in a.questions)


def test_sweep_equals_separate_runs(minilm, official_file):
    articles = quality.load_quality(official_file)
    reader = MultipleChoiceReader(minilm, QualityConfig(passage_words=12, k=2, mu=0.0))
    sweep = quality.evaluate_sweep(articles, reader, [0.0, 1.0])
    assert sweep[0] == quality.evaluate(articles, reader)
    reader.config = QualityConfig(passage_words=12, k=2, mu=1.0)
    assert sweep[1] == quality.evaluate(articles, reader)


@pytest.fixture
def no_model(monkeypatch):
    """The embedding reader's model, failing the test if loaded: the input is
    refused before it loads."""
    def no_model(*args, **kwargs):
        raise AssertionError("a model was loaded for input the command should have refused first")

    monkeypatch.setattr(quality.MultipleChoiceReader, "load", no_model)


def test_cli_refuses_a_file_without_questions_before_a_model_loads(tmp_path, capsys, no_model):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    assert quality.main(["--data", str(empty)]) == 2
    assert capsys.readouterr().err == f"error: {empty}: no questions; give a QuALITY or LEval jsonl file\n"


def test_cli_says_an_adapter_is_not_a_likelihood_model(official_file, tmp_path, capsys):
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text("{}")
    assert quality.main(["--data", str(official_file), "--reader", "likelihood", "--model", str(adapter)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {adapter} is a LoRA adapter, not a whole causal LM:") and err.count("\n") == 1


def test_cli_table_labels_its_accuracies_as_percent(monkeypatch, official_file, capsys):
    # --json gives fractions (its consumers expect them); the table says it gives percent.
    monkeypatch.setattr(quality.MultipleChoiceReader, "load", lambda config: AlwaysIndex(1))
    monkeypatch.setattr(quality, "evaluate_sweep", lambda articles, reader, mus, progress: [
        quality.evaluate(articles, reader) for _ in mus])
    assert quality.main(["--data", str(official_file)]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert "acc %" in header and "HARD %" in header and row.split()[-3:] == ["50.0", "2", "0.0"]


@pytest.mark.parametrize("gold", [0, 5])
def test_a_gold_label_outside_one_to_four_is_refused(tmp_path, gold):
    # A 0-based file's 0 matched no option: every such question scored wrong, without a word.
    path = tmp_path / "zero.jsonl"
    path.write_text(json.dumps(_official_line([_q("What did Mary bake?", ["a", "b", "c", "d"], gold, 0)])) + "\n")
    with pytest.raises(DataFormatError, match=rf"zero.jsonl, line 1, question 1: gold_label {gold} is not 1 to 4 \(QuALITY's labels are 1-based\)"):
        quality.load_quality(path)


def test_cli_refuses_a_file_without_gold_labels_before_a_model_loads(tmp_path, capsys, no_model):
    # QuALITY's test split has no gold_label: a model loaded and the table said n 0.
    unlabelled = [{k: v for k, v in q.items() if k not in ("gold_label", "difficult")} for q in OFFICIAL_QUESTIONS]
    path = tmp_path / "test.jsonl"
    path.write_text(json.dumps(_official_line(unlabelled)) + "\n")
    assert quality.main(["--data", str(path)]) == 2
    assert capsys.readouterr().err == (f"error: {path}: no question has a gold_label (QuALITY's test split has none); "
                                       "give a labelled file (train or dev)\n")


@pytest.mark.parametrize("change, message", [
    # Each was refused as "FILE is not QuALITY jsonl (KeyError('options'))", naming no line; a number
    # among the options ended in a traceback.
    (lambda q: q.pop("options"), "line 2, question 2: needs a question (a text) and its options (a list)"),
    (lambda q: q.update(options=[1, 2, 3, 4]), "line 2, question 2: options must be texts"),
    (lambda q: q.update(gold_label="B"), "line 2, question 2: gold_label 'B' is not 1 to 4 (QuALITY's labels are 1-based)"),
    (lambda q: q.update(difficult="hard"), "line 2, question 2: difficult 'hard' is not 0 or 1"),
])
def test_a_malformed_question_is_refused_naming_its_line_and_place(tmp_path, change, message):
    questions = [dict(q) for q in OFFICIAL_QUESTIONS]
    change(questions[1])
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(_official_line(OFFICIAL_QUESTIONS)) + "\n" + json.dumps(_official_line(questions)) + "\n")
    with pytest.raises(DataFormatError) as refused:
        quality.load_quality(path)
    assert str(refused.value) == f"{path}, {message}"


def test_labels_written_as_text_or_whole_floats_are_read(tmp_path):
    path = tmp_path / "text.jsonl"
    path.write_text(json.dumps(_official_line([_q("Q?", ["a", "b", "c", "d"], "2", "1"), _q("R?", ["a", "b", "c", "d"], 3.0, 0)])) + "\n")
    assert [(q.gold, q.hard) for q in quality.load_quality(path)[0].questions] == [(1, True), (2, False)]
    path.write_text(json.dumps(_official_line([_q("Q?", ["a", "b", "c", "d"], 2.5, 0)])) + "\n")
    with pytest.raises(DataFormatError, match="gold_label 2.5 is not 1 to 4"):
        quality.load_quality(path)


def test_the_flat_example_layout_is_refused_naming_the_release_files(tmp_path):
    # QuALITY's repository example (question1, question1option1, ...) was refused as
    # "neither QuALITY (article, questions) nor LEval", though it is QuALITY's.
    path = tmp_path / "quality_example.jsonl"
    path.write_text(json.dumps({"article_id": 1, "article": ARTICLE_HTML, "question1": "What did Mary bake?",
                                "question1option1": "a pie", "question1_gold_label": 2}) + "\n")
    with pytest.raises(DataFormatError, match=r"line 1: QuALITY's flat example layout .* give a QuALITY.v1.0.1 train or dev file"):
        quality.load_quality(path)


@pytest.mark.parametrize("flags, message", [
    # One line for all three ("need 0 <= --mu <= 1 (or a list of such), --k >= 1, --passage-words >= 1")
    # left the user to find which flag was wrong, and never showed the value.
    (["--mu", "x"], "--mu must be a number or a comma-separated list, not 'x'"),
    (["--mu", "0.5,1.5"], "--mu must be from 0 to 1 (each, in a list), not '0.5,1.5'"),
    (["--k", "0"], "--k must be at least 1, not 0"),
    (["--passage-words", "-3"], "--passage-words must be at least 1, not -3"),
    (["--k", "2,x"], "--k must be a whole number or a comma-separated list, not '2,x'"),
    (["--k", "2,0", "--cross-validate"], "--k must be at least 1, not 0"),
    (["--k", "2,4"], "several --k values are a grid for --cross-validate; give one --k, or add --cross-validate"),
    (["--reader", "likelihood", "--cross-validate"],
     "--scoring and --cross-validate are the embedding reader's; the likelihood reader takes neither"),
    (["--reader", "likelihood", "--scoring", "partial"],
     "--scoring and --cross-validate are the embedding reader's; the likelihood reader takes neither"),
])
def test_cli_names_the_one_bad_flag_before_the_data_is_read(tmp_path, capsys, flags, message):
    # The data file does not exist: the flag, not the file, must be what is refused.
    assert quality.main(["--data", str(tmp_path / "missing.jsonl"), *flags]) == 2
    assert capsys.readouterr().err == f"error: {message}\n"


# ---------------------------------------------------------------- cross-validation


class KnownSetting:
    """A stand-in for MultipleChoiceReader's features/choose: a question is
    answered right exactly at the (k, mu) settings listed for it, so the
    setting each fold should choose is known by hand."""

    def __init__(self, right):
        self.right = right  # question text -> the (k, mu) settings that answer it right
        self.extracted = []

    def features(self, document, question, options, doc_id="doc", k=None):
        self.extracted.append(k)
        return _Known(question, k, self.right)

    @staticmethod
    def choose(features, mu):
        return Choice(0 if (features.k, mu) in features.right[features.question] else 1, (0.0, 0.0, 0.0, 0.0))


class _Known:
    def __init__(self, question, k, right):
        self.question, self.k, self.right = question, k, right

    def first(self, k):
        return _Known(self.question, k, self.right)


def _articles_file(tmp_path, sizes):
    """One official-format article per entry of ``sizes``, each with that many
    questions "a<i>q<j>?", gold always the first option."""
    path = tmp_path / "cv.jsonl"
    lines = []
    for i, size in enumerate(sizes):
        questions = [_q(f"a{i}q{j}?", ["w", "x", "y", "z"], 1, j % 2) for j in range(size)]
        lines.append(json.dumps(dict(_official_line(questions), set_unique_id=f"art{i}")))
    path.write_text("\n".join(lines) + "\n")
    return path


# Articles 0, 1 and 3 are answered right at (k 2, mu 0.0) only; article 2's three
# questions only at (k 1, mu 1.0), which no other article supports.
CV_RIGHT = {
    **{f"a{i}q{j}?": {(2, 0.0)} for i in (0, 1, 3) for j in range(2)},
    **{f"a2q{j}?": {(1, 1.0)} for j in range(3)},
}


def test_cross_validation_chooses_each_fold_on_the_other_articles(tmp_path):
    articles = quality.load_quality(_articles_file(tmp_path, [2, 2, 3, 2]))
    reader = KnownSetting(CV_RIGHT)
    result = quality.cross_validate(articles, reader, [1, 2], [0.0, 1.0])
    assert [(f["article"], f["k"], f["mu"], f["correct"]) for f in result["folds"]] == [
        ("art0", 2, 0.0, 2), ("art1", 2, 0.0, 2), ("art2", 2, 0.0, 0), ("art3", 2, 0.0, 2),
    ]
    # Article 2 is scored with the others' choice, never its own best: 6 of 9 held out.
    assert result["n"] == 9 and result["accuracy"] == pytest.approx(6 / 9)
    assert result["chosen_on_all"] == {"k": 2, "mu": 0.0, "accuracy": pytest.approx(6 / 9)}
    # Hard questions (odd j): a0q1, a1q1, a2q1, a3q1; a2q1 is wrong.
    assert result["n_hard"] == 4 and result["hard_accuracy"] == pytest.approx(3 / 4)
    # Each question's features are computed once, at the largest k.
    assert reader.extracted == [2] * 9


def test_cross_validation_is_not_the_in_sample_best(tmp_path):
    # Two articles favour (2, 0.0), one (1, 1.0) more strongly: in-sample (2, 0.0) gets 4 of 7,
    # but each article is scored with the setting the other two favour, and gets nothing right.
    right = {**{f"a{i}q{j}?": {(2, 0.0)} for i in (0, 1) for j in range(2)}, **{f"a2q{j}?": {(1, 1.0)} for j in range(3)}}
    articles = quality.load_quality(_articles_file(tmp_path, [2, 2, 3]))
    result = quality.cross_validate(articles, KnownSetting(right), [1, 2], [0.0, 1.0])
    assert [(f["k"], f["mu"]) for f in result["folds"]] == [(1, 1.0), (1, 1.0), (2, 0.0)]
    assert result["accuracy"] == 0.0
    assert result["chosen_on_all"] == {"k": 2, "mu": 0.0, "accuracy": pytest.approx(4 / 7)}


def test_nested_choices_break_ties_to_the_first_setting():
    # Article 0 is left out: settings 1 and 2 tie on the others (2 each) -> setting 1.
    assert quality.nested_choices([[5, 0, 0], [0, 1, 1], [0, 1, 1]]) == [1, 0, 0]


def test_cli_cross_validate_json_lists_the_folds(monkeypatch, tmp_path, capsys):
    path = _articles_file(tmp_path, [2, 2, 3, 2])
    monkeypatch.setattr(quality.MultipleChoiceReader, "load", lambda config: KnownSetting(CV_RIGHT))
    assert quality.main(["--data", str(path), "--cross-validate", "--k", "1,2", "--mu", "0,1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["reader"] == "embedding" and result["scoring"] == "statement"
    assert result["grid"] == {"k": [1, 2], "mu": [0.0, 1.0]}
    assert result["n"] == 9 and result["accuracy"] == pytest.approx(6 / 9)
    assert [f["article"] for f in result["folds"]] == ["art0", "art1", "art2", "art3"]
    assert quality.main(["--data", str(path), "--cross-validate", "--k", "1,2", "--mu", "0,1"]) == 0
    table = capsys.readouterr().out
    assert "cross-validated accuracy: 66.7% of 9" in table and "chosen on all articles: k 2, mu 0.00" in table


@pytest.mark.parametrize("scoring", ["statement", "partial"])
def test_features_of_the_first_k_passages_equal_extracting_k(minilm, official_file, scoring):
    # A k sweep reads the largest k's features cut down; it must match extracting k itself.
    [article] = quality.load_quality(official_file)
    wide = MultipleChoiceReader(minilm, QualityConfig(passage_words=12, k=3, scoring=scoring))
    for k in (1, 2, 3):
        narrow = MultipleChoiceReader(minilm, QualityConfig(passage_words=12, k=k, scoring=scoring))
        for q in article.questions:
            cut = wide.features(article.text, q.question, q.options).first(k)
            direct = narrow.features(article.text, q.question, q.options)
            for mu in (0.0, 0.5, 1.0):
                a, b = MultipleChoiceReader.choose(cut, mu), MultipleChoiceReader.choose(direct, mu)
                assert a.index == b.index and a.scores == pytest.approx(b.scores, abs=1e-5)
    # An option's best BM25 in a passage beyond the first k must not set the scale of the first k's.
    text = "The cat sat on the red mat. Green door, green door, green door here."  # two passages of 7 words
    question, options = "Where did the cat sit?", ["the red mat", "the green door"]
    cut = MultipleChoiceReader(minilm, QualityConfig(passage_words=7, k=2, scoring=scoring)).features(text, question, options)
    direct = MultipleChoiceReader(minilm, QualityConfig(passage_words=7, k=1, scoring=scoring)).features(text, question, options)
    assert "cat" in direct.passages[0].text and len(cut.passages) == 2
    assert MultipleChoiceReader.choose(cut.first(1), 0.0).scores == pytest.approx((1.0, 0.0))
    assert MultipleChoiceReader.choose(cut.first(1), 0.5).scores == pytest.approx(MultipleChoiceReader.choose(direct, 0.5).scores, abs=1e-5)


FESTIVAL = (
    "The Zorblat Festival is held every year in the town of Quenville. It was founded in 1872 by Miriam Hale, "
    "a local baker.\nThe festival lasts nine days and features a parade of giant bread sculptures. Miriam Hale "
    "also wrote a cookbook called Crumbs of Quenville.\nShe died in 1921, and the festival has been organised "
    "by her descendants ever since."
)


@pytest.mark.parametrize("empty", ["Nobody", "None of the above"])
def test_partial_scoring_does_not_reward_an_option_that_adds_nothing(minilm, empty):
    # "Who founded the festival? Nobody" is nearly the question itself, and the
    # evidence was extracted for the question: the statement cosine ranked it
    # first. With the question's direction removed, the named founder wins.
    reader = MultipleChoiceReader(minilm, QualityConfig(scoring="partial"))
    choice = reader.answer(FESTIVAL, "Who founded the festival?", ["Miriam Hale", "A mayor", "The king", empty])
    assert choice.index == 0 and choice.scores[0] > choice.scores[3] + 0.1


def test_an_unknown_scoring_is_refused():
    from assistant.kernel import ConfigError

    with pytest.raises(ConfigError, match="scoring must be one of statement, partial, not 'cosine'"):
        QualityConfig(scoring="cosine")


class StopAt:
    """A stand-in embedding reader: right on questions "a<i>q<j>?" with j even
    (gold is the first option), and Ctrl-C (``stop``) on article ``article``'s
    first question, as a user pressing it in a long run."""

    def __init__(self, article, stop=KeyboardInterrupt):
        self.article, self.stop = article, stop

    def features(self, document, question, options, doc_id="doc", k=None):
        if question.startswith(f"a{self.article}q"):
            raise self.stop
        return question

    @staticmethod
    def choose(question, mu):
        return Choice(0 if int(question.rstrip("?").split("q")[1]) % 2 == 0 else 1, (0.0, 0.0, 0.0, 0.0))


@pytest.mark.parametrize("stop, status", [(KeyboardInterrupt, 130), (Terminated, 143)])
def test_an_interrupted_run_prints_the_finished_articles_accuracy_as_partial(monkeypatch, tmp_path, capsys, stop,
                                                                             status):
    # Five articles (2, 2, 3, 2, 2 questions); stopped in the third: the first two's 4 questions are scored,
    # 2 right (q0 of each), both HARD ones (q1) wrong. They said "nothing was scored" and were lost.
    path = _articles_file(tmp_path, [2, 2, 3, 2, 2])
    monkeypatch.setattr(quality.MultipleChoiceReader, "load", lambda config: StopAt(2, stop))
    assert quality.main(["--data", str(path)]) == status
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0] == "partial: interrupted after 2 of 5 articles; 4 of 11 questions scored"
    assert lines[2].split()[-4:] == ["4", "50.0", "2", "0.0"]
    assert err.splitlines()[-1] == "interrupted: the accuracy printed is partial: 2 of 5 articles were scored (4 of 11 questions)"
    assert quality.main(["--data", str(path), "--json", "--mu", "0,1"]) == status
    results = json.loads(capsys.readouterr().out)
    assert [(r["mu"], r["n"], r["accuracy"], r["partial"]) for r in results] == [
        (mu, 4, pytest.approx(0.5), {"articles": 2, "of_articles": 5, "of_n": 11}) for mu in (0.0, 1.0)]


def test_an_interrupted_cross_validation_folds_the_finished_articles(monkeypatch, tmp_path, capsys):
    path = _articles_file(tmp_path, [2, 2, 3, 2])

    class StopAtFourth(KnownSetting):
        def features(self, document, question, options, doc_id="doc", k=None):
            if question.startswith("a3q"):
                raise KeyboardInterrupt
            return super().features(document, question, options, doc_id, k)

    monkeypatch.setattr(quality.MultipleChoiceReader, "load", lambda config: StopAtFourth(CV_RIGHT))
    assert quality.main(["--data", str(path), "--cross-validate", "--k", "1,2", "--mu", "0,1", "--json"]) == 130
    result = json.loads(capsys.readouterr().out)
    # The first three articles, folded among themselves (as test_cross_validation_is_not_the_in_sample_best).
    assert [f["article"] for f in result["folds"]] == ["art0", "art1", "art2"] and result["n"] == 7
    assert result["partial"] == {"articles": 3, "of_articles": 4, "of_n": 9}


def test_the_likelihood_reader_interrupted_keeps_its_finished_articles(monkeypatch, tmp_path, capsys):
    path = _articles_file(tmp_path, [2, 1, 2])

    class StopAtThird(AlwaysIndex):
        def answer(self, document, question, options, doc_id="doc"):
            if question.startswith("a2q"):
                raise KeyboardInterrupt
            return super().answer(document, question, options, doc_id)

    monkeypatch.setattr(quality.LikelihoodChoiceReader, "from_pretrained", lambda model, config: StopAtThird(0))
    assert quality.main(["--data", str(path), "--reader", "likelihood", "--json"]) == 130
    [result] = json.loads(capsys.readouterr().out)
    assert (result["reader"], result["n"], result["accuracy"]) == ("likelihood", 3, pytest.approx(1.0))
    assert result["partial"] == {"articles": 2, "of_articles": 3, "of_n": 5}
