"""eval.retrieval: a judged collection from CAsT topics, BM25 runs, trec_eval scores.

The tiny collection below is built so that BM25's ranking can be followed by
hand (one rare word per subject, repeated where a passage must win), and the
expected metric values are computed from those ranks in the comments.
"""

from __future__ import annotations

import json
import math

import pytest

from eval.retrieval import main

QUOKKA = "The quokka is a small marsupial; the quokka lives on Rottnest Island near Perth."
GRAZE = "Quokkas eat grasses and leaves at night."
ROTTNEST = "Rottnest Island lies off Western Australia; Rottnest Island is a short ferry ride from Fremantle."
NUMBAT = "The numbat is a marsupial of Western Australia; a numbat eats termites, a numbat has stripes."
ASK = "Which numbat fact would you like to hear?"
WOODLAND = "Numbats live in eucalypt woodland in the south west."
STRIPES = "The numbat's stripes: white stripes across the numbat's back hide it among fallen logs."


def _turn(number, raw, manual, passage, automatic=None):
    turn = {"number": number, "raw_utterance": raw, "manual_rewritten_utterance": manual, "passage": passage}
    if automatic is not None:
        turn["automatic_rewritten_utterance"] = automatic
    return turn


@pytest.fixture
def cast2021(tmp_path):
    topics = [
        {"number": 106, "turn": [
            _turn(1, "What is a quokka?", "What is a quokka?", QUOKKA, "What is a quokka?"),
            _turn(2, "What does it eat?", "What does the quokka eat?", GRAZE, "What does it eat?"),
        ]},
        {"number": 107, "turn": [
            _turn(1, "Where is Rottnest Island?", "Where is Rottnest Island?", ROTTNEST, "Where is Rottnest Island?"),
            # The same passage as 106's first turn, laid out differently: one passage, judged for both.
            _turn(2, "Tell me about the quokka there.", "Tell me about the quokka on Rottnest Island.",
                  QUOKKA.replace(" ", "\n", 2), "Tell me about the quokka on Rottnest Island."),
        ]},
    ]
    path = tmp_path / "2021_manual_evaluation_topics_v1.0.json"
    path.write_text(json.dumps(topics))
    return path


@pytest.fixture
def cast2022(tmp_path):
    def turn(number, utterance, manual, response):
        return {"number": number, "utterance": utterance, "manual_rewritten_utterance": manual, "response": response}

    first = ("1-1", "What is a numbat?", "What is a numbat?")
    topics = [
        {"number": 132, "turn": [turn(*first, NUMBAT), turn("1-3", "Where does it live?", "Where does the numbat live?", WOODLAND)]},
        # The other branch answers the same first turn with a clarifying question: both responses are judged for it.
        {"number": 132, "turn": [turn(*first, ASK), turn("2-1", "Why the stripes?", "Why does the numbat have stripes?", STRIPES)]},
    ]
    path = tmp_path / "2022_evaluation_topics_flattened_duplicated_v1.0.json"
    path.write_text(json.dumps(topics))
    return path


@pytest.fixture
def distractors(tmp_path):
    path = tmp_path / "distractors.jsonl"
    rows = [
        {"id": "panda", "title": "Giant panda", "contents": "Pandas eat bamboo; pandas eat little else."},
        {"id": "perth", "title": "Perth", "contents": "Perth is the capital of Western Australia."},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONVQA_CACHE", str(tmp_path / "cache"))


def _run(capsys, *args):
    code = main([*map(str, args), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out), err


def _lines(path):
    return [line.split() for line in path.read_text().splitlines()]



# Relevant passages' ranks (the run files are pinned below), and from them:
# RR = 1/rank; nDCG@3 = sum(1/log2(rank+1)) over the relevant in the top 3,
# divided by the same for an ideal ranking; recall@k = share found in the top k.
NDCG_RANK_2 = 1 / math.log2(3)  # one relevant passage, at rank 2
NDCG_RANKS_1_4 = 1 / (1 + 1 / math.log2(3))  # two relevant, at ranks 1 and 4


def test_original_human_and_automatic_rewrites_scored_by_trec_eval(cast2021, cast2022, distractors, tmp_path, capsys):
    data = ["--data", cast2021, cast2022, "--distractors", distractors]

    original, err = _run(capsys, *data, "--rewriter", "original", "--run", tmp_path / "original.trec")
    assert "Indexing the judged collection" in err
    run = _lines(tmp_path / "original.trec")
    ranked = {qid: [line[2] for line in run if line[0] == qid] for qid in dict.fromkeys(line[0] for line in run)}
    # "What does it eat?": the short panda distractor says "eat" twice and wins.
    assert ranked["106_2"][:2] == ["distractors0-0_p0", "cast2021_106_2"]
    # "What is a numbat?": both branches' responses are judged; the clarifying
    # question is fourth, out of nDCG@3's reach but within R@10's.
    assert ranked["132_1-1"] == ["cast2022_132_1-1", "cast2022_132_2-1", "cast2022_132_1-3", "cast2022_132_1-1_1"]
    assert all(ranked[q][0] == f"cast{2021 if q.startswith('10') else 2022}_{q}" for q in ("106_1", "107_1", "132_1-3", "132_2-1"))
    # 107_2's own passage is 106_1's text: one passage, judged for both turns.
    assert ranked["107_2"][0] == "cast2021_106_1"
    assert run[0][1] == "Q0" and run[0][3] == "1" and run[0][5] == "original"
    # Seven turns: 2021's four; 2022's three distinct turn ids (1-1 is in both branches).
    assert original == pytest.approx(
        {"n": 7, "mrr": 6.5 / 7, "ndcg_cut_3": (5 + NDCG_RANK_2 + NDCG_RANKS_1_4) / 7, "recall_10": 1.0, "recall_100": 1.0},
        abs=1e-4,  # trec_eval prints four decimals
    )
    assert _lines(tmp_path / "original.qrels") == [
        ["106_1", "0", "cast2021_106_1", "1"],
        ["106_2", "0", "cast2021_106_2", "1"],
        ["107_1", "0", "cast2021_107_1", "1"],
        ["107_2", "0", "cast2021_106_1", "1"],
        ["132_1-1", "0", "cast2022_132_1-1", "1"],
        ["132_1-1", "0", "cast2022_132_1-1_1", "1"],
        ["132_1-3", "0", "cast2022_132_1-3", "1"],
        ["132_2-1", "0", "cast2022_132_2-1", "1"],
    ]

    # "What does the quokka eat?" finds its passage first; the index is reused.
    human, err = _run(capsys, *data, "--rewriter", "human")
    assert "Indexing" not in err
    assert human == pytest.approx(
        {"n": 7, "mrr": 1.0, "ndcg_cut_3": (6 + NDCG_RANKS_1_4) / 7, "recall_10": 1.0, "recall_100": 1.0}, abs=1e-4
    )
    # Only CAsT 2021 has automatic rewrites; its 106_2 is the question as asked.
    automatic, _ = _run(capsys, *data, "--rewriter", "automatic")
    assert automatic == pytest.approx(
        {"n": 4, "mrr": 3.5 / 4, "ndcg_cut_3": (3 + NDCG_RANK_2) / 4, "recall_10": 1.0, "recall_100": 1.0}, abs=1e-4
    )
    assert len(list((tmp_path / "cache" / "indexes").glob("judged-*"))) == 1


def test_table_per_year(cast2021, cast2022, distractors, tmp_path, capsys):
    assert main(["--data", str(cast2021), str(cast2022), "--distractors", str(distractors),
                 "--rewriter", "original", "--index", str(tmp_path / "idx")]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split() for line in lines[:4]]
    assert rows[0] == ["turns", "n", "MRR", "nDCG@3", "R@10", "R@100"]
    assert [row[:2] for row in rows[1:]] == [["all", "7"], ["cast2021", "4"], ["cast2022", "3"]]
    # The defaults are not the app's search, and the table says so (it was read as the app's figures).
    assert lines[4:] == ["", "The questions as asked, searched by BM25 alone, as the field compares rewriters; the app's "
                             "search: --expansion-repeats 3 --dense-weight 0.9."]
    # 2021: ranks 1, 2, 1, 1; 2022: 1 and 4 (two judged), 1, 1.
    assert float(rows[2][2]) == pytest.approx(3.5 / 4, abs=1e-4)
    assert float(rows[3][3]) == pytest.approx((2 + NDCG_RANKS_1_4) / 3, abs=1e-4)
    assert (tmp_path / "idx" / "judged.json").is_file()
    import eval.retrieval as command

    assert command._how_searched(None, "D/cast.x.jsonl", 3, 0.9) == (
        "\nThe rewrites of D/cast.x.jsonl, searched as the app searches (--expansion-repeats 3 --dense-weight 0.9).")
    assert command._how_searched("trained", None, 3, 0) == (
        "\nThe trained rewriter's rewrites, searched with --expansion-repeats 3 --dense-weight 0; the app's: "
        "--expansion-repeats 3 --dense-weight 0.9.")


def test_rewrites_file_and_split(cast2021, distractors, tmp_path, capsys):
    data = ["--data", cast2021, "--distractors", distractors]
    rewrites = tmp_path / "r.jsonl"
    # As eval.rewrites export names turns: "<file>#<id>".
    rewrites.write_text(json.dumps({"id": f"{cast2021.name}#cast2021:106:2", "rewrite": "What does the quokka eat?"}) + "\n")
    # First turns (106_1, 107_1) are searched as asked; 107_2 has no rewrite and is left out.
    given, _ = _run(capsys, *data, "--rewrites", rewrites)
    assert given == pytest.approx({"n": 3, "mrr": 1.0, "ndcg_cut_3": 1.0, "recall_10": 1.0, "recall_100": 1.0}, abs=1e-4)
    # A turn of the data with no judged passage is not searched; an id of no turn at all is refused (below).
    topics = json.loads(cast2021.read_text())
    topics[0]["turn"].append(_turn(3, "And where?", "Where does the quokka live?", ""))
    cast2021.write_text(json.dumps(topics))
    with rewrites.open("a") as out:
        out.write(json.dumps({"id": "cast2021:106:3", "rewrite": "Where does the quokka live?"}) + "\n")
    assert _run(capsys, *data, "--rewrites", rewrites)[0] == given

    split = tmp_path / "split.json"
    split.write_text(json.dumps({"files": [str(cast2021)], "dev": {cast2021.name: ["cast2021:106:1", "cast2021:106:2"]}}))
    held_out, _ = _run(capsys, *data, "--rewriter", "original", "--split", split)
    assert held_out == pytest.approx(
        {"n": 2, "mrr": 0.75, "ndcg_cut_3": (1 + NDCG_RANK_2) / 2, "recall_10": 1.0, "recall_100": 1.0}, abs=1e-4
    )


def test_expansion_searches_as_the_app_does(cast2021, distractors, tmp_path, capsys):
    data = ["--data", cast2021, "--distractors", distractors, "--rewriter", "original"]
    _run(capsys, *data, "--expansion-repeats", "3", "--run", tmp_path / "expanded.trec")
    run = _lines(tmp_path / "expanded.trec")
    ranked = {qid: [line[2] for line in run if line[0] == qid] for qid in dict.fromkeys(line[0] for line in run)}
    # "What does it eat?" x3 + "quokka", the content word of turn 1 as asked:
    # the quokkas' grazing passage now beats the panda distractor (rank 2 without).
    assert ranked["106_2"] == ["cast2021_106_2", "distractors0-0_p0", "cast2021_106_1"]
    # First turns have no turn before: searched as asked, as without expansion.
    assert ranked["106_1"] == ["cast2021_106_1", "cast2021_106_2"] and ranked["107_1"][0] == "cast2021_107_1"
    expanded, _ = _run(capsys, *data, "--expansion-repeats", "3")
    plain, _ = _run(capsys, *data)
    assert (expanded["mrr"], plain["mrr"]) == pytest.approx((1.0, 3.5 / 4), abs=1e-4)


def test_against_gives_each_measure_minus_another_rewriter_with_an_interval(cast2021, cast2022, distractors, tmp_path, capsys):
    data = ["--data", cast2021, cast2022, "--distractors", distractors]
    human, _ = _run(capsys, *data, "--rewriter", "human", "--against", "original")
    # On the seven turns: human MRR 1, original 6.5/7 (one turn at rank 2).
    assert human["mrr"] == pytest.approx(1.0, abs=1e-4)
    against = human["against"]
    assert against["rewriter"] == "original" and against["n"] == 7
    mean, low, high = against["mrr"]
    assert mean == pytest.approx(0.5 / 7, abs=1e-4) and low <= mean <= high and low >= 0.0
    assert against["recall_10"] == [0.0, 0.0, 0.0]
    # A rewrites file against the same rewriter differs by nothing; paired on
    # the turns both scored (the file's one rewrite and the first turns, searched as asked).
    rewrites = tmp_path / "r.jsonl"
    rewrites.write_text(json.dumps({"id": f"{cast2021.name}#cast2021:106:2", "rewrite": "What does the quokka eat?"}) + "\n")
    given, _ = _run(capsys, *data, "--rewrites", rewrites, "--against", "human")
    assert given["against"]["n"] == 4 and given["against"]["mrr"] == [0.0, 0.0, 0.0]
    assert main([*map(str, data), "--rewriter", "original", "--against", str(rewrites)]) == 0
    out = capsys.readouterr().out
    assert f"minus {rewrites} on the 4 turns both scored" in out and "MRR    -0.1250 [" in out


def test_against_takes_a_rewrites_file_by_any_name(cast2021, cast2022, distractors, tmp_path, capsys):
    # A rewrites file not named .jsonl was loaded as a model and refused as one.
    data = ["--data", cast2021, cast2022, "--distractors", distractors]
    rewrites = tmp_path / "r.json"
    rewrites.write_text(json.dumps({"id": "cast2021:106:2", "rewrite": "What does the quokka eat?"}) + "\n")
    human, _ = _run(capsys, *data, "--rewriter", "human", "--against", rewrites)
    assert human["against"]["rewriter"] == str(rewrites) and human["against"]["n"] == 4
    assert human["against"]["mrr"] == [0.0, 0.0, 0.0]


def test_bad_input_ends_with_one_line(cast2021, cast2022, distractors, qrecc_conversations, tmp_path, capsys):
    def error(*args):
        assert main([*map(str, args)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: ")
        return err[0]

    assert "automatic rewrite" in error("--data", cast2022, "--distractors", "none", "--rewriter", "automatic")
    assert "CAsT 2021 or 2022" in error("--data", qrecc_conversations, "--rewriter", "original")
    assert "only one of" in error("--data", cast2021, "--rewriter", "human", "--rewrites", tmp_path / "r.jsonl")
    assert "--expansion-repeats must be 0" in error("--data", cast2021, "--rewriter", "human", "--expansion-repeats", "-1")
    stray = tmp_path / "stray.jsonl"
    stray.write_text(json.dumps({"id": "cast2021:999:1", "rewrite": "x"}) + "\n")
    message = error("--data", cast2021, "--distractors", distractors, "--rewrites", stray)
    assert "cast2021:999:1" in message and "drop those lines" in message
    # A typo is named with this command's own rewriters too (human, automatic).
    assert "also takes --rewriter human and --rewriter automatic" in error(
        "--data", cast2021, "--distractors", distractors, "--rewriter", "orignal")
    # A file that is not a split says what one is, not a raw TypeError.
    not_split = tmp_path / "list.json"
    not_split.write_text("[1, 2]")
    message = error("--data", cast2021, "--distractors", distractors, "--rewriter", "human", "--split", not_split)
    assert "not a split.json written by rewriting.train" in message and "TypeError" not in message


def test_output_paths_are_made_or_refused_before_any_work(cast2021, distractors, tmp_path, capsys):
    data = ["--data", cast2021, "--distractors", distractors, "--rewriter", "human"]
    # A --run or --qrels that cannot be written (its folder is a file) is
    # refused with one line before the collection is even indexed.
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    for flag in ("--run", "--qrels"):
        assert main([*map(str, data), flag, str(blocker / "x.trec")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [f"error: cannot write {flag} {blocker / 'x.trec'}: {blocker} is not a folder; give a path in a writable folder"]
    assert not (tmp_path / "cache" / "indexes").exists()
    # One in a folder not made yet gets its folders (as rewriting.rewrite
    # --output does), so the scores are not lost after the search.
    found, _ = _run(capsys, *data, "--run", tmp_path / "new" / "a" / "run.trec", "--qrels", tmp_path / "other" / "q.txt")
    assert found["n"] == 4
    assert _lines(tmp_path / "new" / "a" / "run.trec") and _lines(tmp_path / "other" / "q.txt")


def _rankings_without_and_with(capsys, tmp_path, data, line, alternatives, qid):
    """The run's ranking for ``qid`` with the rewrites file holding ``line``,
    then ``line`` with its ``"alternatives"``."""
    rankings = []
    for extra in ({}, {"alternatives": alternatives}):
        rewrites = tmp_path / "rewrites.jsonl"
        rewrites.write_text(json.dumps({**line, **extra}) + "\n")
        _run(capsys, *data, "--rewrites", rewrites, "--run", tmp_path / "run.trec")
        rankings.append([row[2] for row in _lines(tmp_path / "run.trec") if row[0] == qid])
    return rankings


def test_a_rewrites_lines_alternatives_join_the_expanded_search(cast2021, distractors, tmp_path, capsys):
    # rewriting.rewrite --candidates writes the other candidates as
    # "alternatives"; with expansion, as in the app, their words join the query once.
    data = ["--data", cast2021, "--distractors", distractors, "--expansion-repeats", "3"]
    line = {"id": f"{cast2021.name}#cast2021:107:2", "rewrite": "Tell me about the animal there."}
    rankings = _rankings_without_and_with(capsys, tmp_path, data, line, ["Tell me about the quokka there."], "107_2")
    # Without them, "animal there" + "rottnest island" finds the island's passage
    # first; "quokka" from the alternative brings the turn's own passage (106_1's text) up.
    assert rankings == [["cast2021_107_1", "cast2021_106_1"], ["cast2021_106_1", "cast2021_107_1", "cast2021_106_2"]]
    with_others = tmp_path / "others.jsonl"
    with_others.write_text(json.dumps({**line, "alternatives": "Tell me about the quokka there."}) + "\n")
    assert main(["--data", str(cast2021), "--distractors", str(distractors), "--rewrites", str(with_others)]) == 2
    assert '"alternatives" must be a list of strings' in capsys.readouterr().err


def test_dense_weight_rescores_as_the_app_does(cast2021, cast2022, distractors, tmp_path, capsys):
    rewrites = tmp_path / "r.jsonl"
    rewrites.write_text(json.dumps({"id": f"{cast2021.name}#cast2021:106:2", "rewrite": "What do quokkas like to munch on?"}) + "\n")
    data = ["--data", cast2021, cast2022, "--distractors", distractors, "--rewrites", rewrites]
    ranked = {}
    for weight in ("0", "0.9"):
        found, err = _run(capsys, *data, "--dense-weight", weight, "--run", tmp_path / f"{weight}.trec")
        ranked[weight] = [line[2] for line in _lines(tmp_path / f"{weight}.trec") if line[0] == "106_2"]
        ranked[weight, "mrr"] = found["mrr"]
    assert "Encoding the" in err  # the judged index's vectors, once
    # BM25 matches "like" in the numbat question and "quokka" in turn 1's
    # passage before the grazing one, which shares only "quokkas"; MiniLM
    # places "munch on" next to "eat grasses and leaves".
    assert ranked["0"] == ["cast2022_132_1-1_1", "cast2021_106_1", "cast2021_106_2"]
    assert ranked["0.9"] == ["cast2021_106_2", "cast2021_106_1", "cast2022_132_1-1_1"]
    # Four turns (the file's one and three first turns, each at rank 1): RR 1/3 -> 1.
    assert (ranked["0", "mrr"], ranked["0.9", "mrr"]) == pytest.approx(((3 + 1 / 3) / 4, 1.0), abs=1e-4)
    assert main([*map(str, data), "--dense-weight", "1.5"]) == 2
    assert "--dense-weight must be from 0 (off) to 1" in capsys.readouterr().err


def test_a_rewrites_lines_alternatives_join_the_rescorers_query_as_in_the_app(cast2021, distractors, tmp_path, capsys):
    # The rescorer reads the rewrite and, as the app passes them, the other
    # candidates: their mean vector joins the rewrite's (DenseRescorer).
    data = ["--data", cast2021, "--distractors", distractors, "--dense-weight", "0.9"]
    line = {"id": f"{cast2021.name}#cast2021:106:2", "rewrite": "What does it eat?"}
    rankings = _rankings_without_and_with(capsys, tmp_path, data, line, ["What does the quokka eat?"], "106_2")
    # Without expansion BM25's pool is the same for both ("eat": the panda
    # and the grazing passage); the quokka in the alternative lifts the turn's own.
    assert rankings == [["distractors0-0_p0", "cast2021_106_2"], ["cast2021_106_2", "distractors0-0_p0"]]


def test_a_run_of_ones_own_is_scored_against_the_judgements(cast2021, cast2022, distractors, tmp_path, capsys):
    # The collection and its judgements for a retriever of one's own: there was no way to get them,
    # nor to score its run as ours are.
    data = ["--data", cast2021, cast2022]
    assert main([*map(str, data), "--distractors", str(distractors), "--write-collection", str(tmp_path / "c.jsonl"),
                 "--qrels", str(tmp_path / "q.qrels")]) == 0
    ids = [json.loads(line)["id"] for line in (tmp_path / "c.jsonl").read_text().splitlines()]
    assert {"cast2021_106_1", "cast2022_132_1-1_1", "distractors0-0_p0"} <= set(ids) and len(ids) == len(set(ids))
    assert ["132_1-1", "0", "cast2022_132_1-1_1", "1"] in _lines(tmp_path / "q.qrels")
    assert "wrote" in capsys.readouterr().err
    # Three judged queries and one that is none, laid out as runs come: tabs, CRLF, a BOM.
    rows = [("106_2", "distractors0-0_p0"), ("106_2", "cast2021_106_2"),
            ("132_1-1", "cast2022_132_1-1_1"), ("132_1-1", "distractors0-1_p0"), ("132_1-1", "cast2022_132_1-1"),
            ("107_2", "cast2021_107_1"), ("107_2", "cast2021_106_2"), ("107_2", "cast2021_106_1"), ("999_1", "x")]
    run = tmp_path / "mine.trec"
    run.write_bytes("\ufeff".encode() + "".join(
        f"{qid}\tQ0  {docid}\t{rank}\t{10 - rank}.5\tmine\r\n" for rank, (qid, docid) in enumerate(rows, 1)).encode())
    mine, err = _run(capsys, *data, "--score-run", run)
    # RR 1/2, 1, 1/3; nDCG@3: one relevant at rank 2; two, at ranks 1 and 3 (of an ideal 1 and 2); one at rank 3.
    # The other four judged turns are not in the run: each scores 0, and the means are over all seven.
    ndcg = NDCG_RANK_2 + (1 + 0.5) / (1 + 1 / math.log2(3)) + 0.5
    assert mine == pytest.approx({"n": 7, "mrr": (0.5 + 1 + 1 / 3) / 7, "ndcg_cut_3": ndcg / 7, "recall_10": 3 / 7,
                                  "recall_100": 3 / 7}, abs=1e-4)
    assert f"note: {run}: 1 of its 4 queries are no judged turn and are not scored, e.g. '999_1'" in err


@pytest.mark.parametrize("text, message", [
    ("106_1 Q0 cast2021_106_1 1 2.0\n", "line 1: a run line is 'qid Q0 docid rank score tag' (6 fields), not 5"),
    ("\n106_1 Q0 cast2021_106_1 1 high mine\n", "line 2: the score 'high' is not a number"),
    ("106_1 Q0 p 1 2 mine\n106_1 Q0 p 2 1 mine\n", "line 2: p is ranked twice for query 106_1"),
    ("q1 Q0 p 1 2 mine\n", "none of its 1 queries is a judged turn of --data (e.g. 'q1'); qids are <topic>_<turn>, "
                           "e.g. '106_1', as --qrels writes them"),
    ("", "no run lines ('qid Q0 docid rank score tag')"),
])
def test_a_run_of_ones_own_that_trec_eval_would_misread_is_refused_naming_the_line(cast2021, tmp_path, capsys, text,
                                                                                   message):
    run = tmp_path / "mine.trec"
    run.write_text(text)
    assert main(["--data", str(cast2021), "--score-run", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {run}") and err.endswith(f"{message}\n") and err.count("\n") == 1, err


@pytest.mark.parametrize("flag", ["--run", "--qrels", "--write-collection"])
def test_no_output_is_written_over_an_input(cast2021, tmp_path, capsys, flag):
    # --run naming a --data file (or --qrels the rewrites file) replaced it.
    rewrites = tmp_path / "r.jsonl"
    rewrites.write_text(json.dumps({"id": "cast2021:106:2", "rewrite": "x"}) + "\n")
    before = cast2021.read_text(), rewrites.read_text()
    for target in (cast2021, rewrites):
        assert main(["--data", str(cast2021), *([] if flag == "--write-collection" else ["--rewrites", str(rewrites)]),
                     flag, str(target), "--distractors", "none"]) == 2
        err = capsys.readouterr().err
        assert err == f"error: {flag} {target} is an input of this command too; writing it would replace it: give another path\n"
        if flag == "--write-collection":
            break
    assert (cast2021.read_text(), rewrites.read_text()) == before


@pytest.fixture
def no_work(monkeypatch):
    """eval.retrieval's rewriting and judged-index build, each failing the
    test if run: the input is refused before either."""
    import eval.retrieval as command

    def no_work(*args, **kwargs):
        raise AssertionError("a rewriter ran or an index was built for input the command should have refused first")

    monkeypatch.setattr(command, "rewrite_with", no_work)
    monkeypatch.setattr(command, "build_index", no_work)


def test_a_split_holding_out_no_judged_turn_is_refused_before_any_model_or_index(cast2021, distractors, tmp_path,
                                                                              capsys, no_work):
    # "no turn left to score" came after the rewriter had loaded and the judged index was built.
    split = tmp_path / "split.json"
    split.write_text(json.dumps({"files": [str(cast2021)], "dev": {cast2021.name: ["cast2021:106:3"]}}))
    assert main(["--data", str(cast2021), "--distractors", str(distractors), "--split", str(split)]) == 2
    assert capsys.readouterr().err == (f"error: --split {split} holds out no judged turn of the --data files: nothing "
                                       "to score (give the split.json of a run trained with these files)\n")


def test_a_run_that_cannot_be_read_is_one_line(cast2021, tmp_path, capsys):
    missing = tmp_path / "missing.trec"
    assert main(["--data", str(cast2021), "--score-run", str(missing)]) == 2
    assert capsys.readouterr().err == f"error: cannot read the run {missing}: No such file or directory\n"


def test_a_bad_against_file_is_refused_before_the_rewriter_runs(cast2021, distractors, tmp_path, capsys, no_work):
    # Found only after --rewriter had rewritten every turn.
    stray = tmp_path / "theirs.jsonl"
    stray.write_text(json.dumps({"id": "cast2021:999:1", "rewrite": "x"}) + "\n")
    assert main(["--data", str(cast2021), "--distractors", str(distractors), "--rewriter", "trained",
                 "--against", str(stray)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {stray}: 1 id(s) are no turn of the --data files, e.g. 'cast2021:999:1'") and err.count("\n") == 1


@pytest.mark.parametrize("extra, message", [
    # Both did nothing, without a word: no scores are printed, and --split only picks --qrels' turns.
    (["--json"], "--write-collection writes files and prints no scores; leave out --json"),
    (["--split", "SPLIT"], "--split picks the turns whose judgements --qrels writes; give --qrels too, or leave out "
     "--split (the collection holds every turn's passages)"),
])
def test_write_collection_refuses_flags_that_would_do_nothing(cast2021, tmp_path, capsys, extra, message):
    extra = [str(tmp_path / "split.json") if word == "SPLIT" else word for word in extra]
    out = tmp_path / "c.jsonl"
    assert main(["--data", str(cast2021), "--distractors", "none", "--write-collection", str(out), *extra]) == 2
    assert capsys.readouterr().err == f"error: {message}\n"
    assert not out.exists()


def test_an_index_path_the_judged_index_cannot_go_to_is_refused_before_the_rewriting(cast2021, distractors, tmp_path,
                                                                                      capsys, no_work):
    # --index naming a file was refused by the index build, after every turn had been rewritten.
    a_file = tmp_path / "index.txt"
    a_file.write_text("notes")
    # A folder of one's own (or another collection's index): the build replaces the whole folder.
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.md").write_text("keep me")
    for index, message in [
        (a_file, f"cannot write --index {a_file}: it is a file; give a folder path"),
        (notes, f"cannot write --index {notes}: it holds 'todo.md' and no judged collection's index, and the judged "
                "index built there replaces the whole folder; give a new or empty folder, or one an earlier "
                "eval.retrieval --index filled"),
    ]:
        assert main(["--data", str(cast2021), "--distractors", str(distractors), "--rewriter", "trained",
                     "--index", str(index)]) == 2
        assert capsys.readouterr().err == f"error: {message}\n"
    assert a_file.read_text() == "notes" and (notes / "todo.md").read_text() == "keep me"


def test_an_index_folder_eval_retrieval_filled_is_reused_and_an_empty_one_filled(cast2021, distractors, tmp_path, capsys):
    data = ["--data", cast2021, "--distractors", distractors, "--rewriter", "human"]
    empty = tmp_path / "judged"
    empty.mkdir()
    first, _ = _run(capsys, *data, "--index", empty)
    assert (empty / "judged.json").is_file()
    again, _ = _run(capsys, *data, "--index", empty)
    assert again == first


def test_a_rewrites_file_with_no_lines_is_refused_before_any_work(cast2021, distractors, tmp_path, capsys, no_work):
    # An empty file was "scored": its first turns' questions alone, shown as "The rewrites of empty.jsonl".
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    assert main(["--data", str(cast2021), "--distractors", str(distractors), "--rewrites", str(empty)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {empty} holds no rewrites;") and err.count("\n") == 1
    # Nor is a file whose rewrites are all of turns with no judged passage.
    topics = json.loads(cast2021.read_text())
    topics[0]["turn"].append(_turn(3, "And where?", "Where does the quokka live?", ""))
    cast2021.write_text(json.dumps(topics))
    unjudged = tmp_path / "unjudged.jsonl"
    unjudged.write_text(json.dumps({"id": "cast2021:106:3", "rewrite": "Where does the quokka live?"}) + "\n")
    assert main(["--data", str(cast2021), "--distractors", str(distractors), "--rewrites", str(unjudged)]) == 2
    assert capsys.readouterr().err == (f"error: {unjudged} holds no rewrite of a judged turn of the --data files (with "
                                       "--split, of its held-out turns): nothing of it to score\n")
