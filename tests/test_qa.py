"""QReCC-style QA evaluation: data readers, QReCC's relevance heuristic, metrics by hand."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.kernel import Answer, DataFormatError, Passage
from assistant.retrieval import ChunkRetriever
from eval import qa

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("CONVQA_DATA", ROOT.parent / "shared" / "data"))

QRECC = [
    {"Context": [], "Question": "Who was Ada Lovelace's father?", "Rewrite": "Who was Ada Lovelace's father?",
     "Answer": "the poet Lord Byron", "Answer_URL": "", "Conversation_no": 1, "Turn_no": 1, "Conversation_source": "trec"},
    {"Context": ["Who was Ada Lovelace's father?", "the poet Lord Byron"], "Question": "What is the capital of France?",
     "Rewrite": "What is the capital of France?", "Answer": "Paris", "Answer_URL": "", "Conversation_no": 1,
     "Turn_no": 2, "Conversation_source": "trec"},
    {"Context": [], "Question": "How tall is Mount Everest?", "Rewrite": "How tall is Mount Everest?",
     "Answer": "8,849 m", "Answer_URL": "", "Conversation_no": 2, "Turn_no": 1, "Conversation_source": "nq"},
]


class FirstSentence:
    """A stand-in reader: the first sentence of the first passage."""

    def read(self, question, passages):
        if not passages:
            return Answer("nothing", 0.0, found=False)
        sentence = passages[0].text.split(". ")[0].rstrip(".") + "."
        return Answer(sentence, 1.0, evidence=sentence, source_id=passages[0].id)


@pytest.fixture
def qrecc_file(tmp_path):
    path = tmp_path / "qrecc.json"
    path.write_text(json.dumps(QRECC))
    return path


def test_load_qrecc_official_and_scai_keys(qrecc_file, tmp_path):
    turns = qa.load_qrecc(qrecc_file)
    assert [(t.conversation, t.turn) for t in turns] == [("1", 1), ("1", 2), ("2", 1)]
    assert turns[1].history == ("Who was Ada Lovelace's father?", "the poet Lord Byron")
    scai = tmp_path / "scai.json"
    scai.write_text(json.dumps([{"Conversation_no": 7, "Turn_no": 2, "Question": "and her?", "Truth_rewrite": "and Ada?",
                                 "Truth_answer": "", "Truth_passages": ["u_p0"], "NewContext": ["q", "a"]}]))
    [turn] = qa.load_qrecc(scai)
    assert (turn.rewrite, turn.answer, turn.gold_ids, turn.history) == ("and Ada?", "", ("u_p0",), ("q", "a"))
    scai.write_text(json.dumps([{"Question": "x"}]))
    with pytest.raises(DataFormatError):
        qa.load_qrecc(scai)



def test_load_qrecc_is_as_strict_as_the_rewriting_reader(tmp_path):
    # The one QReCC reader (rewriting.data) refuses a history that is not
    # question/answer pairs, and a turn number that is not a number.
    path = tmp_path / "qrecc.json"
    path.write_text(json.dumps([{**QRECC[1], "Context": ["only a question"]}]))
    with pytest.raises(DataFormatError, match="record 0.*even number"):
        qa.load_qrecc(path)
    path.write_text(json.dumps([{**QRECC[0], "Turn_no": "1"}]))
    with pytest.raises(DataFormatError, match="Turn_no"):
        qa.load_qrecc(path)
    path.write_text(json.dumps([{**QRECC[0], "Truth_passages": "u_p0"}]))
    with pytest.raises(DataFormatError, match="Truth_passages"):
        qa.load_qrecc(path)


MD2D = [
    {"input": "Renew a license\n\nYou can renew your license online or by mail.\n\nFees\n\nThe fee is 30 dollars.",
     "instructions": ["How can I renew my license?", "How much is it?"],
     "outputs": ["online or  by mail", "30 dollars"], "source": "multidoc_qa", "evaluation": "f1"},
    {"input": "Register a boat\n\nBoats must be registered every three years.",
     "instructions": ["How often do boats need registering?"], "outputs": ["every three years"]},
    {"input": "Renew a license\n\nYou can renew your license online or by mail.\n\nFees\n\nThe fee is 30 dollars.",
     "instructions": ["Can I renew by mail?"], "outputs": ["yes"]},
]


@pytest.fixture
def md2d_file(tmp_path):
    path = tmp_path / "md2d.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in MD2D))
    return path


def test_load_multidoc2dial_turns_history_and_known_context(md2d_file):
    turns = qa.load_multidoc2dial(md2d_file)
    assert [t.question for t in turns] == [
        "How can I renew my license?", "How much is it?", "How often do boats need registering?", "Can I renew by mail?"]
    assert turns[1].history == ("How can I renew my license?", "online or by mail")
    assert turns[1].answer == "30 dollars" and turns[1].rewrite is None
    # The repeated document group gets one id, so its passages are indexed once.
    assert turns[0].context == turns[3].context and turns[0].context[0].id == "md2d0_p0"
    assert turns[2].context[0].id == "md2d1_p0"
    passages = qa.multidoc2dial_passages(md2d_file)
    assert [p.id for p in passages] == ["md2d0_p0", "md2d1_p0"]
    assert "The fee is 30 dollars." in passages[0].text


def test_a_natural_questions_page_gives_its_passages_its_title(tmp_path):
    # NQ's pages (LEval's file) open "<title> - wikipedia <H1> <title> </H1>"; every passage of the
    # page carries the title, as a collection article's do, so the reader counts and embeds each
    # sentence with the page's subject. A document without that heading (MultiDoc2Dial's) has none.
    page = ("Beauty and the Beast ( 2017 film ) - wikipedia <H1> Beauty and the Beast ( 2017 film ) </H1> "
            + "<P> The film was released in March . </P> " * 40 + "<Ul> <Li> Kevin Kline as Maurice </Li> </Ul>")
    path = tmp_path / "nq.jsonl"
    path.write_text(json.dumps({"input": page, "instructions": ["who played maurice"], "outputs": ["Kevin Kline"]}) + "\n"
                    + json.dumps(MD2D[1]) + "\n")
    turns = qa.load_multidoc2dial(path)
    assert len(turns[0].context) > 1
    assert {p.title for p in turns[0].context} == {"Beauty and the Beast ( 2017 film )"}
    assert {p.title for p in turns[1].context} == {""}
    assert {p.title for p in qa.multidoc2dial_passages(path) if p.id.startswith("md2d0_")} == {"Beauty and the Beast ( 2017 film )"}


def test_qrecc_span_heuristic_relevance_and_hits():
    # The normalised answer occurs in the passage: F1 1.
    assert qa.closest_span("Her father was the poet Lord Byron.", "the poet Lord Byron") == ("poet lord byron", 1.0)
    # No exact occurrence: the best span of the closest window.
    _, f1 = qa.closest_span("George Gordon Byron was an English poet.", "the poet Lord Byron")
    assert f1 < qa.RELEVANCE_THRESHOLD
    passages = [Passage("a", "Her father was the poet Lord Byron.", 1.0), Passage("b", "George Gordon Byron was an English poet.", 0.5)]
    assert qa.relevant_ids(passages, "the poet Lord Byron") == {"a"}
    assert qa.relevant_ids(passages, "") == set()  # no answer: nothing is relevant
    assert qa.hit_at_k(["b", "a"], {"a"}, 1) == 0.0 and qa.hit_at_k(["b", "a"], {"a"}, 2) == 1.0


def test_end_to_end_metrics_by_hand(qrecc_file, retriever):
    turns = qa.load_qrecc(qrecc_file)
    results = qa.run_turns(turns, "end-to-end", [FirstSentence()], retriever=retriever)
    assert [r.retrieved[:1] for r in results] == [("ada",), ("paris",), ()]
    summary = qa.summarize(turns, results, "end-to-end")
    # Turn 1: "Ada Lovelace was an English mathematician and writer." vs "the poet Lord Byron": 0.
    # Turn 2: "Paris is the capital and largest city of France." -> 8 tokens, 1 shared: F1 2/9.
    # Turn 3: nothing retrieved, "" vs "8,849 m": 0.  F1 = (2/9) / 3 = 7.41%.
    assert summary["f1"] == 7.41 and summary["em"] == 0.0
    # Relevant: ada (turn 1) and paris (turn 2) at rank 1; none for turn 3.
    assert (summary["mrr"], summary["r@10"], summary["r@100"]) == (66.67, 66.67, 66.67)
    assert (summary["upper_bound_f1"], summary["upper_bound_em"]) == (66.67, 66.67)
    assert summary["n"] == 3 and summary["read_ms_median"] >= 0


class Reversed:
    """A stand-in rescorer: the hits in reverse, each call (question, hits, k) noted."""

    def __init__(self):
        self.calls = []

    def rescore(self, question, passages, k, alternatives=()):
        self.calls.append((question, len(passages), k))
        return list(reversed(passages))[:k]


def test_a_rescorer_reorders_each_turns_hits_for_its_query(qrecc_file, retriever):
    turns = qa.load_qrecc(qrecc_file)
    plain = qa.run_turns(turns, "human-rewrite", [FirstSentence()], retriever=retriever)
    spy = Reversed()
    rescored = qa.run_turns(turns, "human-rewrite", [FirstSentence()], retriever=retriever, rescorer=spy)
    # The whole depth is reordered (MRR and R@100 are of the rescored ranking), for the turn's own query.
    assert [call[0] for call in spy.calls] == [t.rewrite for t in turns] and {call[2] for call in spy.calls} == {100}
    assert [r.retrieved for r in rescored] == [tuple(reversed(r.retrieved)) for r in plain]
    assert any(len(r.retrieved) > 1 for r in plain)


def test_the_rescoring_reorders_as_many_hits_as_the_app_s_rescore_depth(qrecc_file, retriever):
    # The app rescores BM25's first max(k, rescore_depth) hits; eval
    # rescored its whole depth (100) whatever the rescore_depth.
    turns = qa.load_qrecc(qrecc_file)
    plain = qa.run_turns(turns, "human-rewrite", [FirstSentence()], retriever=retriever)
    spy = Reversed()
    rescored = qa.run_turns(turns, "human-rewrite", [FirstSentence()], retriever=retriever, rescorer=spy,
                            rescore_depth=1, read_k=1)
    assert {call[2] for call in spy.calls} == {1} and {call[1] for call in spy.calls} <= {0, 1}
    # The rescored first one (alone, as it was), then BM25's order: not the whole depth reversed.
    assert [r.retrieved for r in rescored] == [r.retrieved for r in plain]
    assert any(len(r.retrieved) > 1 for r in plain)
    # A rescore_depth past the depth kept: searched and rescored that deep,
    # as the app's; searched depth deep alone, BM25's first hit stayed first.
    spy = Reversed()
    rescored = qa.run_turns(turns, "human-rewrite", [FirstSentence()], retriever=retriever, rescorer=spy,
                            depth=1, rescore_depth=2, read_k=1)
    assert {call[2] for call in spy.calls} == {2}
    assert [r.retrieved for r in rescored] == [r.retrieved[1:2] or r.retrieved[:1] for r in plain]  # BM25's second


def test_human_rewrite_uses_the_gold_rewrite_and_needs_one(qrecc_file, md2d_file, retriever):
    turns = qa.load_qrecc(qrecc_file)
    results = qa.run_turns(turns, "human-rewrite", [FirstSentence()], retriever=retriever)
    assert [r.query for r in results] == [t.rewrite for t in turns]
    with pytest.raises(DataFormatError, match="no human rewrite"):
        qa.run_turns(qa.load_multidoc2dial(md2d_file), "human-rewrite", [FirstSentence()], retriever=retriever)


class ReadIds:
    """A stand-in reader that answers with the ids of the passages it was handed."""

    def read(self, question, passages):
        return Answer(" ".join(p.id for p in passages), 1.0)


def _page(*texts):
    return tuple(Passage(f"d_p{i}", text, 0.0, title="A made-up page") for i, text in enumerate(texts))


_FILLER = (
    "The film opened in March and was a success at the box office around the world, earning over a billion "
    "dollars; this was its beauty.",
    "Its songs were written by Alan Menken, with new lyrics by Tim Rice for three of them, and the score was "
    "recorded in London.",
    "Critics praised the sets, the costumes and the beauty of the village of Villeneuve built at Shepperton Studios.",
)


def _handed(context, question, rescorer, read_k=3):
    turn = qa.QATurn("c", 1, question, (), "", context=context)
    [result] = qa.run_turns([turn], "known-context", [ReadIds()], rescorer=rescorer, read_k=read_k)
    return result.answers[0].split()


def test_known_context_rescores_the_documents_passages_by_meaning(minilm):
    # The cast line shares two of the question's words; the castle's passage
    # repeats "Beast" four times, and BM25 alone hands it first.
    page = _page(
        "The Beast's castle in Beauty and the Beast was built on a sound stage; the Beast's rose sits in the "
        "Beast's west wing, by the Beast's library.",
        "The actor Dan Stevens was cast as the Beast.",
        *_FILLER,
    )
    question = "who plays the beast in beauty and the beast"
    assert _handed(page, question, None) == ["d_p0", "d_p1", "d_p4"]
    assert _handed(page, question, qa.document_rescorer(0.9, minilm)) == ["d_p1", "d_p0", "d_p4"]
    assert qa.document_rescorer(0.0, minilm) is None  # dense_weight 0: BM25 alone, as before


def test_known_context_rescores_a_documents_hits_as_deep_as_the_app_does(minilm):
    page = _page(
        "The Beast's castle in Beauty and the Beast was built on a sound stage; the Beast's rose sits in the "
        "Beast's west wing, by the Beast's library.",
        "The actor Dan Stevens was cast as the Beast.",
        *_FILLER,
    )
    turn = qa.QATurn("c", 1, "who plays the beast in beauty and the beast", (), "", context=page)
    rescorer = qa.document_rescorer(0.9, minilm)
    handed = [qa.run_turns([turn], "known-context", [ReadIds()], rescorer=rescorer, read_k=1,
                           rescore_depth=depth)[0].answers[0]
              for depth in (1, 100)]
    assert handed == ["d_p0", "d_p1"]  # BM25's first hit alone is all a depth of 1 rescores


def test_known_context_rescoring_leaves_the_reader_bm25s_scores(minilm):
    # The reader weighs a passage's retrieval score against its own measure
    # of meaning: the rescoring chooses and orders, each score stays BM25's.
    page = _page("The bridge opened in 1932.", "Ferries crossed the harbour before the bridge opened.", *_FILLER)
    seen = []

    class Scores:
        def read(self, question, passages):
            seen.extend((p.id, p.score) for p in passages)
            return Answer("x", 1.0)

    turn = qa.QATurn("c", 1, "when did the bridge open", (), "", context=page)
    qa.run_turns([turn], "known-context", [Scores()], rescorer=qa.document_rescorer(0.9, minilm), read_k=2)
    bm25 = ChunkRetriever(page).scores("when did the bridge open")
    assert [p for p, _ in seen] == ["d_p0", "d_p1"]
    assert [s for _, s in seen] == pytest.approx([bm25[0], bm25[1]])


@pytest.mark.parametrize(
    "texts, question",
    [
        (("Work on the Harbour Bridge began in 1924; the Harbour Bridge was opened on 19 March 1932.",
          "Bridges across the harbour had been proposed for decades; engineers drew many plans for a crossing of the harbour.",
          "The bridge is painted grey and maintained by a crew of painters.",
          "Ferries crossed the harbour before the bridge."), "when was the harbour bridge opened"),
        (("Zorvath Quellin founded the guild in the northern valley.",
          "The founder of a guild is usually a master craftsman who establishes the guild's rules and founded its school.",
          "The guild's hall burned down in a fire and was rebuilt.", "Members of the guild pay dues."),
         "who founded the guild zorvath quellin"),
        (("The stadium holds 52,000 spectators when full.",
          "Many people attend matches at the stadium every season, filling the large crowd areas; spectators love it.",
          "The stadium roof was replaced in 2010.", "The stadium lies by the river."),
         "how many spectators does the stadium hold"),
        (("The recipe calls for two cups of flour and one egg.",
          "Baking is a popular hobby; a recipe for bread needs yeast, and many bakers love cakes and cookies.",
          "Preheat the oven to 180 degrees before baking the cake from the recipe."), "how much flour does the recipe need"),
    ],
)
def test_known_context_rescoring_keeps_the_passage_bm25_rightly_put_first(minilm, texts, question):
    # Adversarial: a passage on the question's topic in other words (the
    # encoder's strength) beside the one that holds the very words and the answer.
    page = _page(*texts)
    assert _handed(page, question, None)[0] == "d_p0"
    assert _handed(page, question, qa.document_rescorer(0.9, minilm))[0] == "d_p0"


def test_known_context_reads_the_conversations_own_documents(md2d_file):
    turns = qa.load_multidoc2dial(md2d_file)
    results = qa.run_turns(turns, "known-context", [FirstSentence()])
    # The whole group fits one passage, so the reader reads it (no retrieval metrics).
    assert results[1].answers == ("Renew a license You can renew your license online or by mail.",)
    assert results[2].answers == ("Register a boat Boats must be registered every three years.",)
    summary = qa.summarize(turns, results, "known-context")
    assert summary["mrr"] is None and summary["upper_bound_f1"] is None
    # Turn 1: "online or by mail" (4 tokens) within 11 normalised tokens: F1 2*(4/11)/(4/11+1) = 8/15.
    # Turn 3: "every three years" (3 tokens) within 9: F1 2*(1/3)/(1/3+1) = 1/2. Turns 2 and 4: 0.
    assert summary["f1"] == round(100 * (8 / 15 + 1 / 2) / 4, 2)
    # A question with no words reads the context's first passages (a
    # retriever refuses an empty query).
    blank = [dataclasses.replace(turns[1], question=" ")]
    assert qa.run_turns(blank, "known-context", [FirstSentence()])[0].answers == results[1].answers


def test_several_readers_share_one_retrieval(qrecc_file, retriever):
    turns = qa.load_qrecc(qrecc_file)[:2]

    class Echo:
        def read(self, question, passages):
            return Answer(question, 1.0)

    results = qa.run_turns(turns, "end-to-end", [FirstSentence(), Echo()], retriever=retriever)
    assert [len(r.answers) for r in results] == [2, 2]
    assert results[0].answers[1] == "Who was Ada Lovelace's father?"
    assert qa.summarize(turns, results, "end-to-end", 1)["f1"] != qa.summarize(turns, results, "end-to-end", 0)["f1"]


def test_a_reader_of_ones_own_is_built_once_with_the_first_mu_and_refuses_a_sweep(monkeypatch):
    # build_readers took every reader for a SentenceReader ("'MyReader' object
    # has no attribute 'encoder'"), so a reader added as ARCHITECTURE.md says
    # could not be scored by eval.qa.
    from assistant.kernel import InvalidInputError, ReaderConfig

    class MyReader:
        def __init__(self, config):
            self.config = config

        def read(self, question, passages):
            return Answer("mine", 1.0)

    monkeypatch.setitem(qa.build_readers.__globals__, "build_reader", lambda kind, config: MyReader(config))
    [reader] = qa.build_readers("mine", [0.3], ReaderConfig())
    assert isinstance(reader, MyReader) and reader.config.mu == 0.3
    with pytest.raises(InvalidInputError, match="the mine reader takes one --mu, not 2"):
        qa.build_readers("mine", [0.3, 0.7], ReaderConfig())


def test_cli_writes_a_collection_and_evaluates_it(md2d_file, tmp_path):
    from assistant.retrieval import build_index, read_collection

    collection = tmp_path / "passages.jsonl"
    subprocess.run([sys.executable, "-m", "eval.qa", "--data", str(md2d_file), "--write-collection", str(collection)],
                   cwd=ROOT, check=True, capture_output=True)
    rows = [json.loads(line) for line in collection.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["md2d0_p0", "md2d1_p0"] and set(rows[0]) == {"id", "contents", "title", "url"}
    index = tmp_path / "index"
    build_index(read_collection(collection), index, progress=False)
    out = subprocess.run(
        [sys.executable, "-m", "eval.qa", "--data", str(md2d_file), "--index", str(index), "--json", "--mu", "0.7,1.0"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert out.returncode == 0, out.stderr
    summaries = json.loads(out.stdout)
    assert [s["mu"] for s in summaries] == [0.7, 1.0]
    for s in summaries:
        assert s["n"] == 4 and s["setting"] == "end-to-end" and s["rewriter"] == "original"
        # Turns 1 and 3 find their (relevant) passage at rank 1. Turn 2 asked as
        # is, "How much is it?", has no indexed term (the original rewriter does
        # not resolve "it"), and turn 4's "yes" is in no passage: MRR 2/4.
        assert s["mrr"] == 50.0 and s["r@10"] == 50.0
        assert 0 < s["f1"] < 100


def test_cli_turns_writes_each_turns_answers_and_scores_whose_means_are_the_summary(md2d_file, tmp_path, capsys):
    # Without it the F1 could not be checked turn by turn from the command line.
    out = tmp_path / "turns.jsonl"
    assert qa.main(["--data", str(md2d_file), "--setting", "known-context", "--mu", "0.7,1.0", "--json",
                    "--turns", str(out)]) == 0
    summaries = json.loads(capsys.readouterr().out)
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(row["conversation"], row["turn"]) for row in rows] == [
        ("md2d-line0", 1), ("md2d-line0", 2), ("md2d-line1", 1), ("md2d-line2", 1)]
    assert set(rows[0]) == {"conversation", "turn", "question", "query", "gold", "answers", "retrieved", "relevant"}
    for i, summary in enumerate(summaries):
        assert [row["answers"][i]["mu"] for row in rows] == [summary["mu"]] * 4
        assert sum(row["answers"][i]["f1"] for row in rows) / 4 == pytest.approx(summary["f1"], abs=0.01)
        assert sum(row["answers"][i]["em"] for row in rows) / 4 == pytest.approx(summary["em"], abs=0.01)


def test_cli_write_collection_makes_its_folder_or_refuses_one_that_is_a_file(md2d_file, tmp_path, capsys):
    out = tmp_path / "new" / "passages.jsonl"
    assert qa.main(["--data", str(md2d_file), "--write-collection", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 2
    assert qa.main(["--data", str(md2d_file), "--write-collection", str(out / "x.jsonl")]) == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert err == f"error: cannot write --write-collection {out / 'x.jsonl'}: {out} is not a folder; give a path in a writable folder"


def test_cli_write_collection_counts_one_passage_in_the_singular(tmp_path, capsys):
    # One document's passage was "wrote 1 passages".
    data = tmp_path / "one.jsonl"
    data.write_text(json.dumps(MD2D[1]) + "\n")
    out = tmp_path / "passages.jsonl"
    assert qa.main(["--data", str(data), "--write-collection", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 1
    assert capsys.readouterr().err.splitlines()[-1] == f"wrote 1 passage to {out}"


def test_cli_json_is_a_list_for_one_run_too(md2d_file):
    out = subprocess.run(
        [sys.executable, "-m", "eval.qa", "--data", str(md2d_file), "--setting", "known-context", "--json"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert out.returncode == 0, out.stderr
    [summary] = json.loads(out.stdout)
    assert (summary["mu"], summary["n"], summary["setting"]) == (0.7, 4, "known-context")
    assert summary["mrr"] is None and 0 <= summary["f1"] <= 100  # no retrieval metrics in known context


def test_cli_reads_with_the_apps_reader_settings(md2d_file):
    def f1(**env):
        out = subprocess.run(
            [sys.executable, "-m", "eval.qa", "--data", str(md2d_file), "--setting", "known-context", "--json"],
            cwd=ROOT, capture_output=True, text=True, check=False, env={**os.environ, **env},
        )
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)[0]["f1"]

    # No sentence is ever as similar as 1.0: every answer is "not found", F1 0.
    assert f1() > 0 and f1(CONVQA_MIN_SIMILARITY="1.0") == 0.0


def test_cli_searches_with_the_apps_bm25_settings(md2d_file, tmp_path, monkeypatch, capsys):
    # CONVQA_BM25_K1 was accepted and then not used: the index opened at 0.9 / 0.4.
    from assistant.retrieval import BM25Retriever, build_index, read_collection

    collection = tmp_path / "passages.jsonl"
    assert qa.main(["--data", str(md2d_file), "--write-collection", str(collection)]) == 0
    build_index(read_collection(collection), tmp_path / "index", progress=False)
    opened = []
    real = BM25Retriever.from_index.__func__

    def recording(cls, index_dir, config=None, **kw):
        opened.append(None if config is None else (config.bm25_k1, config.bm25_b))
        return real(cls, index_dir, **({} if config is None else {"config": config}), **kw)

    monkeypatch.setattr(BM25Retriever, "from_index", classmethod(recording))
    for name, value in {"CONVQA_BM25_K1": "1.5", "CONVQA_BM25_B": "0.6", "CONVQA_DENSE_WEIGHT": "0"}.items():
        monkeypatch.setenv(name, value)
    capsys.readouterr()
    assert qa.main(["--data", str(md2d_file), "--index", str(tmp_path / "index"), "--json"]) == 0
    assert opened == [(1.5, 0.6)]
    assert json.loads(capsys.readouterr().out)[0]["n"] == 4


def test_cli_errors_exit_2(md2d_file):
    out = subprocess.run([sys.executable, "-m", "eval.qa", "--data", str(md2d_file), "--setting", "end-to-end"],
                         cwd=ROOT, capture_output=True, text=True, check=False)
    assert out.returncode == 2 and "--index" in out.stderr
    # The reader is chosen by assistant.readers.build_reader, which names the choices.
    out = subprocess.run([sys.executable, "-m", "eval.qa", "--data", str(md2d_file), "--setting", "known-context",
                          "--reader", "nope"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert out.returncode == 2 and "nope" in out.stderr and "sentence, generative" in out.stderr
    assert out.stderr.startswith("error:") and len(out.stderr.strip().splitlines()) == 1


@pytest.mark.skipif(not (DATA / "multidoc2dial" / "multidoc_qa.jsonl").is_file(), reason="missing prerequisite: shared data (multidoc2dial)")
def test_shared_data_loads():
    turns = qa.load_multidoc2dial(DATA / "multidoc2dial" / "multidoc_qa.jsonl")
    assert len(turns) == 158
    assert len({p.id for p in qa.multidoc2dial_passages(DATA / "multidoc2dial" / "multidoc_qa.jsonl")}) > 100
    assert len(qa.scai_passages(DATA / "qrecc" / "scai" / "batch1-top1.csv")) == 326
    assert len(qa.load_qrecc(DATA / "qrecc" / "qrecc_test_sample.json")) == 53


class PerQuery:
    """The real retriever without batch_search: one search a query."""

    def __init__(self, inner):
        self.inner, self.queries = inner, []

    def search(self, query, k):
        self.queries.append(query)
        return self.inner.search(query, k)


def test_retrieval_of_all_turns_is_one_batch_search_equal_to_searching_each(qrecc_file, retriever, monkeypatch):
    turns = qa.load_qrecc(qrecc_file)
    batches = []
    real = type(retriever).batch_search

    def recording(self, queries, k=10, threads=1):
        batches.append((list(queries), k, threads))
        return real(self, queries, k, threads)

    monkeypatch.setattr(type(retriever), "batch_search", recording)
    batched = qa.run_turns(turns, "human-rewrite", [FirstSentence()], retriever=retriever, search_threads=2)
    one_by_one = PerQuery(retriever)
    each = qa.run_turns(turns, "human-rewrite", [FirstSentence()], retriever=one_by_one)
    assert batches == [([t.rewrite for t in turns], 100, 2)] and one_by_one.queries == [t.rewrite for t in turns]
    assert batched == [dataclasses.replace(r, read_ms=b.read_ms) for r, b in zip(each, batched)]
    assert [r.retrieved[:1] for r in batched] == [("ada",), ("paris",), ()]


def test_gold_passages_come_from_the_one_qrecc_reader(tmp_path):
    from rewriting.data import load_examples

    path = tmp_path / "scai.json"
    path.write_text(json.dumps([{"Conversation_no": 7, "Turn_no": 1, "Question": "q?", "Truth_rewrite": "q?", "Truth_answer": "",
                                 "Truth_passages": ["u_p0", "u_p3"], "NewContext": []},
                                {**QRECC[0], "Truth_passages": None}, QRECC[1]]))
    assert [ex.passages for ex in load_examples(path)] == [("u_p0", "u_p3"), (), ()]
    assert [t.gold_ids for t in qa.load_qrecc(path)] == [("u_p0", "u_p3"), (), ()]
    path.write_text(json.dumps([{**QRECC[0], "Truth_passages": ["u_p0", 3]}]))
    with pytest.raises(DataFormatError, match="record 0.*'Truth_passages' should be a list of passage ids"):
        load_examples(path)


@pytest.mark.parametrize("flags, message", [
    (["--limit", "-1"], "--limit must be at least 1, not -1"),
    (["--read-k", "0"], "--read-k must be at least 1, not 0"),
    (["--search-threads", "0"], "--search-threads must be at least 1, not 0"),
    (["--mu", "2"], "--mu must be from 0 to 1 (each, in a list), not '2'"),
    (["--mu", "0.5,-0.1"], "--mu must be from 0 to 1 (each, in a list), not '0.5,-0.1'"),
    # Refused by build_readers, after the index and the rewriter had loaded.
    (["--reader", "nope"], "reader must be one of sentence, generative, got 'nope' (from its command-line flag, or CONVQA_READER)"),
])
def test_cli_flags_are_checked_before_the_data_is_read_or_a_model_loads(tmp_path, capsys, flags, message):
    # The data file does not exist: the flag, not the file, must be what is refused.
    missing = tmp_path / "missing.json"
    assert qa.main(["--data", str(missing), "--setting", "known-context", *flags]) == 2
    assert capsys.readouterr().err == f"error: {message}\n"



def test_cli_without_index_says_what_to_give_and_how_to_build_it(qrecc_file, capsys):
    # It said "--index is needed for the end-to-end setting", naming neither what nor how.
    assert qa.main(["--data", str(qrecc_file), "--limit", "1"]) == 2
    assert capsys.readouterr().err == (
        "error: --index is needed for the end-to-end setting: give the Lucene index of the passages to search "
        "(python -m assistant.index --input COLLECTION --index DIR)\n")


@pytest.fixture
def no_models(monkeypatch):
    """eval.qa's rewriter and readers, each failing the test if loaded: the
    input is refused before any model loads."""
    def no_model(*args, **kwargs):
        raise AssertionError("a model was loaded for input the command should have refused first")

    monkeypatch.setattr(qa, "load_rewriter", no_model)
    monkeypatch.setattr(qa, "build_readers", no_model)


def test_cli_refuses_a_file_without_gold_answers_before_a_model_loads(tmp_path, capsys, no_models):
    # A QReCC file without "Answer" (one made for rewriting) read as all unanswerable:
    # every "not found" scored F1 100, the upper bound 100, without a word.
    path = tmp_path / "rewrites-only.json"
    path.write_text(json.dumps([{k: v for k, v in record.items() if k != "Answer"} for record in QRECC]))
    assert qa.main(["--data", str(path), "--index", str(tmp_path / "no-index"), "--limit", "2"]) == 2
    assert capsys.readouterr().err == (f"error: {path}: no turn has a gold answer (QReCC's Answer, MultiDoc2Dial's "
                                       "outputs); give a file with answers\n")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert qa.main(["--data", str(empty), "--setting", "known-context"]) == 2
    assert capsys.readouterr().err == f"error: {empty}: no turns to answer\n"


def test_cli_write_collection_refuses_to_write_over_the_data_file(md2d_file, capsys):
    # --write-collection naming the --data file replaced the dialogues with the passages.
    before = md2d_file.read_text()
    assert qa.main(["--data", str(md2d_file), "--write-collection", str(md2d_file)]) == 2
    assert capsys.readouterr().err == (f"error: --write-collection {md2d_file} is an input of this command too; "
                                       "writing it would replace it: give another path\n")
    assert md2d_file.read_text() == before


@pytest.mark.parametrize("line, message", [
    # QReCC's records one a line: refused as "not LEval's MultiDoc2Dial ... KeyError('input')".
    (QRECC[0], "line 1: a QReCC record; eval.qa reads QReCC as one JSON list in a .json file "
               "(a .jsonl file is LEval's MultiDoc2Dial)"),
    ({"input": "x", "instructions": ["a"]}, "line 1: not LEval's MultiDoc2Dial jsonl: no outputs "
                                            "(each line needs input, instructions and outputs)"),
    ({"input": "x", "instructions": ["a", "b"], "outputs": ["c"]}, "line 1: 2 instructions but 1 outputs"),
    ({"input": "x", "instructions": ["a"], "outputs": [None]},
     "line 1: input must be a text, instructions and outputs lists of texts"),
])
def test_a_bad_jsonl_line_is_named_with_what_it_lacks(tmp_path, capsys, line, message):
    path = tmp_path / "turns.jsonl"
    path.write_text(json.dumps(line) + "\n")
    assert qa.main(["--data", str(path), "--setting", "known-context"]) == 2
    assert capsys.readouterr().err == f"error: {path}, {message}\n"


def test_known_context_without_a_gold_context_is_refused_before_a_model_loads(qrecc_file, tmp_path, capsys, no_models):
    # QReCC's own files have no Truth_passages: every turn was rewritten and the
    # readers loaded before the first turn was refused.
    assert qa.main(["--data", str(qrecc_file), "--setting", "known-context"]) == 2
    assert capsys.readouterr().err == (
        "error: 3 of the 3 turns have no gold context (e.g. turn 1/1): known-context needs QReCC's Truth_passages "
        "(SCAI's files) with --index of their passages, or MultiDoc2Dial documents; give a file of the turns that "
        "have them\n")


def test_known_context_counts_the_turns_a_file_gives_no_truth_passages(tmp_path, capsys, no_models):
    # InfoCQR's QReCC sample has Truth_passages for some turns and an empty
    # list for the rest: the refusal named one turn, as if the file had none.
    path = tmp_path / "sample.json"
    path.write_text(json.dumps([
        {"Conversation_no": 7, "Turn_no": turn, "Question": f"q{turn}?", "Truth_rewrite": f"q{turn}?", "Truth_answer": "a",
         "Truth_passages": ids, "NewContext": ["q", "a"] * (turn - 1)}
        for turn, ids in [(1, ["byron"]), (2, []), (3, ["ada"]), (4, [])]]))
    assert qa.main(["--data", str(path), "--setting", "known-context", "--index", str(tmp_path / "no-index")]) == 2
    assert capsys.readouterr().err.startswith("error: 2 of the 4 turns have no gold context (e.g. turn 7/2): ")


def test_known_context_reads_the_truth_passages_and_refuses_an_index_that_has_none(tmp_path, retriever):
    scai = tmp_path / "scai.json"
    scai.write_text(json.dumps([{"Conversation_no": 7, "Turn_no": 1, "Question": "Who was Byron?", "Truth_rewrite": "Who was Byron?",
                                 "Truth_answer": "an English poet", "Truth_passages": ["byron"], "NewContext": []}]))
    turns = qa.load_qrecc(scai)
    [result] = qa.run_turns(turns, "known-context", [FirstSentence()], retriever=retriever)
    assert result.answers == ("George Gordon Byron was an English poet.",)
    # Another collection's index read every turn with no passage: F1 0, without a word.
    other = [dataclasses.replace(turns[0], gold_ids=("qrecc_p9",))]
    with pytest.raises(DataFormatError, match=r"none of the turns' 1 Truth_passages \(e.g. 'qrecc_p9'\) is in the index"):
        qa.run_turns(other, "known-context", [FirstSentence()], retriever=retriever)


def test_truth_passages_the_index_lacks_in_part_are_counted_in_a_note(tmp_path, retriever):
    # An index holding some of the turns' Truth_passages: a turn whose
    # passages it lacked read nothing (F1 0), without a word.
    scai = tmp_path / "scai.json"
    scai.write_text(json.dumps([
        {"Conversation_no": 7, "Turn_no": turn, "Question": "Who was Byron?", "Truth_rewrite": "Who was Byron?",
         "Truth_answer": "an English poet", "Truth_passages": ids, "NewContext": ["q", "a"] * (turn - 1)}
        for turn, ids in [(1, ["byron"]), (2, ["byron", "qrecc_p9"]), (3, ["qrecc_p8"])]]))
    turns = qa.load_qrecc(scai)
    results = qa.run_turns(turns, "known-context", [FirstSentence()], retriever=retriever)
    assert [r.gold_missing for r in results] == [(), ("qrecc_p9",), ("qrecc_p8",)]
    assert [r.answers for r in results] == [("George Gordon Byron was an English poet.",)] * 2 + [("",)]
    assert qa.missing_gold_note(turns, results) == (
        "note: 2 of the turns' 4 Truth_passages are not in the index (e.g. 'qrecc_p9' of turn 7/2): 1 of 3 turns read "
        "none of theirs, 1 only some")
    assert qa.missing_gold_note(turns[:1], results[:1]) is None


def test_a_chunk_whose_truth_passages_the_index_lacks_reads_nothing_and_the_whole_run_is_checked(tmp_path, retriever):
    # On Ray each worker runs a chunk of turns: checked per chunk, one whose
    # passages were all missing stopped the whole run, which as one run only
    # counts them in a note. The whole run's results are checked instead.
    scai = tmp_path / "scai.json"
    scai.write_text(json.dumps([
        {"Conversation_no": 7, "Turn_no": turn, "Question": "Who was Byron?", "Truth_rewrite": "Who was Byron?",
         "Truth_answer": "an English poet", "Truth_passages": ids, "NewContext": ["q", "a"] * (turn - 1)}
        for turn, ids in [(1, ["byron"]), (2, ["qrecc_p8"]), (3, ["qrecc_p9"])]]))
    turns = qa.load_qrecc(scai)
    whole = qa.run_turns(turns, "known-context", [FirstSentence()], retriever=retriever)
    chunks = [r for part in (turns[:1], turns[1:]) for r in
              qa.run_turns(part, "known-context", [FirstSentence()], retriever=retriever, check_index=False)]
    untimed = [dataclasses.replace(r, read_ms=()) for r in whole]
    assert [dataclasses.replace(r, read_ms=()) for r in chunks] == untimed and [r.answers for r in whole] == [("George Gordon Byron was an English poet.",), ("",), ("",)]
    assert qa.missing_gold_note(turns, chunks) == qa.missing_gold_note(turns, whole) == (
        "note: 2 of the turns' 3 Truth_passages are not in the index (e.g. 'qrecc_p8' of turn 7/2): 2 of 3 turns read "
        "none of theirs, 0 only some")
    with pytest.raises(DataFormatError, match=r"none of the turns' 2 Truth_passages \(e.g. 'qrecc_p8'\) is in the index"):
        qa.run_turns(turns[1:], "known-context", [FirstSentence()], retriever=retriever)
    # Chunks that together read none: refused from their results, as one run refuses up front.
    with pytest.raises(DataFormatError, match=r"none of the turns' 2 Truth_passages \(e.g. 'qrecc_p8'\) is in the index"):
        qa.missing_gold_note(turns[1:], chunks[1:])


def test_the_command_prints_the_note_of_truth_passages_the_index_lacks(tmp_path, tiny_index, capsys, monkeypatch):
    monkeypatch.setattr(qa, "build_readers", lambda *args, **kwargs: [FirstSentence()])
    monkeypatch.setenv("CONVQA_DENSE_WEIGHT", "0")  # no MiniLM: the gold passages are read, not searched
    scai = tmp_path / "scai.json"
    scai.write_text(json.dumps([
        {"Conversation_no": 7, "Turn_no": turn, "Question": "Who was Byron?", "Truth_rewrite": "Who was Byron?",
         "Truth_answer": "an English poet", "Truth_passages": ids, "NewContext": ["q", "a"] * (turn - 1)}
        for turn, ids in [(1, ["byron"]), (2, ["qrecc_p8"])]]))
    assert qa.main(["--data", str(scai), "--setting", "known-context", "--index", str(tiny_index),
                    "--rewriter", "original", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)[0]["n"] == 2
    assert ("note: 1 of the turns' 2 Truth_passages are not in the index (e.g. 'qrecc_p8' of turn 7/2): 1 of 2 turns "
            "read none of theirs, 0 only some\n") in err


@pytest.mark.parametrize("name, content, message", [
    # A QReCC .json was read as MultiDoc2Dial jsonl: "line 1: not valid JSON (Expecting value)".
    ("qrecc.json", json.dumps(QRECC), "{path}: --write-collection takes LEval's MultiDoc2Dial .jsonl or SCAI's batch .csv, "
     "whose passages it writes (a QReCC .json holds no passages; index its collection with python -m assistant.index)"),
    # A header-only csv wrote an empty collection and exited 0.
    ("batch.csv", "passage_ids,passages\n", "{path}: no passages to write"),
    ("other.csv", "x,y\n1,2\n", "{path} is not SCAI's batch csv: it has no 'passage_ids' column "
     "(SCAI-QReCC-21's batch1-top1.csv has passage_ids and passages)"),
])
def test_cli_write_collection_refuses_a_file_with_no_passages_to_write(tmp_path, capsys, name, content, message):
    path = tmp_path / name
    path.write_text(content)
    assert qa.main(["--data", str(path), "--write-collection", str(tmp_path / "out.jsonl")]) == 2
    assert capsys.readouterr().err == f"error: {message.format(path=path)}\n"
    assert not (tmp_path / "out.jsonl").exists()
