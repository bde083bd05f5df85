"""The reader, the pipeline and the terminal chat, with real components."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assistant import chat
from assistant.kernel import (
    Answer,
    AssistantConfig,
    Conversation,
    InvalidInputError,
    Passage,
    ReaderConfig,
    RetrieverConfig,
    Rewrite,
    Turn,
)
from assistant.pipeline import Assistant, turn_to_json, validate_question
from assistant.readers import NOT_FOUND, SentenceReader, split_sentences
from rewriting import OriginalRewriter

ROOT = Path(__file__).resolve().parents[1]


class RecordingRewriter:
    """Returns a fixed rewrite and remembers the history it was given."""

    def __init__(self, text):
        self.text, self.histories = text, []

    def rewrite(self, question, history):
        self.histories.append(list(history))
        return Rewrite(self.text)


@pytest.fixture(scope="module")
def reader(minilm):
    return SentenceReader(minilm)


def test_reader_picks_the_answer_sentence(reader, retriever):
    question = "Who was Ada Lovelace's father?"
    answer = reader.read(question, retriever.search(question, 5))
    assert answer.found
    # A "who" question gets the name; the sentence it rests on is the evidence.
    assert answer.text == "Lord Byron"
    assert answer.evidence == "Her father was the poet Lord Byron." and answer.source_id == "ada"


def test_reader_says_when_nothing_is_relevant(reader, retriever):
    assert reader.read("anything", []) == Answer(NOT_FOUND, 0.0, found=False)
    unrelated = [Passage("p", "Python is a high-level programming language.", 3.0)]
    answer = reader.read("How many legs does a spider have?", unrelated)
    assert not answer.found and answer.text == NOT_FOUND


def test_mu_weighs_retrieval_against_the_reader(minilm):
    # The same sentence in a passage with a low BM25 score against an off-topic
    # one with a high score: the reader's similarity wins at mu=0.7, BM25 at mu=0.
    passages = [
        Passage("off", "Bread is baked from flour and water in an oven.", 10.0),
        Passage("on", "Ada Lovelace wrote the first published computer algorithm.", 1.0),
    ]
    question = "What did Ada Lovelace write?"
    def source(mu):
        return SentenceReader(minilm, ReaderConfig(mu=mu, min_similarity=-1)).read(question, passages).source_id

    assert (source(0.7), source(0.0)) == ("on", "off")


def test_split_sentences():
    assert split_sentences("One. Two? \"Three\" four! five.") == ["One.", "Two?", '"Three" four! five.']


@pytest.mark.parametrize("rewrites", [True, False])
def test_pipeline_turn_and_history(retriever, reader, rewrites):
    rewriter = RecordingRewriter("Who was Ada Lovelace's father?")
    assistant = Assistant(rewriter, retriever, reader, AssistantConfig(history_turns=1, history_rewrites=rewrites))
    conversation = Conversation()
    first = assistant.ask("  Who was Ada Lovelace? ", conversation)
    assert first.question == "Who was Ada Lovelace?"
    assert [p.id for p in first.sources][0] == "ada"
    assert set(first.timings_ms) == {"rewrite", "retrieve", "read", "total"}
    conversation.add(first)
    conversation.add(assistant.ask("And her father?", conversation))
    third = assistant.ask("What else?", conversation)
    # history_turns=1: only the last question/answer pair reaches the rewriter,
    # the question as it was rewritten (the recording rewriter's fixed text) or as asked.
    earlier = [rewriter.text, rewriter.text] if rewrites else ["Who was Ada Lovelace?", "And her father?"]
    assert rewriter.histories == [[], [earlier[0], first.answer.text], [earlier[1], third.answer.text]]
    assert (third.answer.text, third.answer.evidence) == ("Lord Byron", "Her father was the poet Lord Byron.")


def test_by_default_the_rewriter_is_handed_more_than_the_last_three_turns(retriever, reader):
    # The trained rewriter's token budget decides what its model reads; a
    # window of three turns in front of it had cut the referents of long
    # conversations that the budget keeps (BENCHMARKS.md §10, session 33).
    rewriter = RecordingRewriter("Who was Ada Lovelace's father?")
    assistant = Assistant(rewriter, retriever, reader, AssistantConfig(history_rewrites=False))
    conversation = Conversation()
    asked = ["Who was Ada Lovelace?", "And her father?", "What else?", "Where was she born?", "When did she die?",
             "What did she write?"]
    for question in asked:
        conversation.add(assistant.ask(question, conversation))
    assert rewriter.histories[-1][::2] == asked[:-1]


class Recording:
    """A stage that passes calls on and remembers the first argument of each."""

    def __init__(self, inner, method):
        self.inner, self.method, self.seen = inner, method, []
        setattr(self, method, self._call)

    def _call(self, first, *rest):
        self.seen.append(first)
        return getattr(self.inner, self.method)(first, *rest)


def _ada_then_her_father(rewriter, retriever, reader):
    """Two turns through recording stages: ``(search, read, conversation, follow-up)``."""
    search, read = Recording(retriever, "search"), Recording(reader, "read")
    assistant = Assistant(rewriter, search, read)
    conversation = Conversation()
    conversation.add(assistant.ask("Who was Ada Lovelace?", conversation))
    return search, read, conversation, assistant.ask("Who was her father?", conversation)


def test_a_follow_up_is_searched_with_the_previous_rewrites_words_and_read_as_rewritten(retriever, reader):
    search, read, conversation, follow_up = _ada_then_her_father(OriginalRewriter(), retriever, reader)
    assert search.seen == ["Who was Ada Lovelace?", "Who was her father? " * 3 + "ada lovelace"]
    assert read.seen == ["Who was Ada Lovelace?", "Who was her father?"] and follow_up.rewrite.text == "Who was her father?"
    assert follow_up.answer.text == "Her father was the poet Lord Byron."

    plain = Recording(retriever, "search")
    assistant = Assistant(OriginalRewriter(), plain, reader, retriever_config=RetrieverConfig(expansion_repeats=0))
    assistant.ask("Who was her father?", conversation)
    assert plain.seen == ["Who was her father?"]


def test_a_follow_up_after_an_ok_is_searched_with_the_topic_before_it(retriever, reader):
    # "ok" asks nothing and is kept as asked: the next search was widened with "ok".
    search = Recording(retriever, "search")
    assistant = Assistant(OriginalRewriter(), search, reader)
    conversation = Conversation()
    for question in ("Who was Ada Lovelace?", "ok", "Who was her father?"):
        conversation.add(assistant.ask(question, conversation))
    assert search.seen[-1] == "Who was her father? " * 3 + "ada lovelace"


class _WithAlternatives:
    """A follow-up's rewrite picked among candidates, as ``candidates`` gives it."""

    def rewrite(self, question, history):
        return Rewrite(question, alternatives=("Who was Ada Lovelace's father?", question) if history else ())


def test_a_rewrites_alternatives_join_the_search_but_not_the_reading(retriever, reader):
    search, read, conversation, follow_up = _ada_then_her_father(_WithAlternatives(), retriever, reader)
    # The terminal chat's JSON names them only where there are some.
    assert "alternatives" not in turn_to_json(conversation.turns[0])
    assert turn_to_json(follow_up)["alternatives"] == ["Who was Ada Lovelace's father?", "Who was her father?"]
    # Each candidate once instead of the repeats; one equal to the rewrite is not added again.
    assert search.seen[-1] == "Who was her father? Who was Ada Lovelace's father? ada lovelace"
    assert read.seen[-1] == "Who was her father?"
    plain = Recording(retriever, "search")
    Assistant(_WithAlternatives(), plain, reader, retriever_config=RetrieverConfig(expansion_repeats=0)).ask("Who was her father?", conversation)
    assert plain.seen == ["Who was her father?"]  # expansion off: the rewrite alone
    # A saved session reads them back from a JSON list.
    assert Rewrite("a", alternatives=["b"]) == Rewrite("a", alternatives=("b",))


@pytest.mark.parametrize("bad", ["", "   \n ", "x" * 20_000, "\u200b\x00\u200b"])
def test_pipeline_refuses_bad_input(retriever, reader, bad):
    assistant = Assistant(OriginalRewriter(), retriever, reader)
    with pytest.raises(InvalidInputError):
        assistant.ask(bad, Conversation())


def test_ask_with_a_history_list_instead_of_a_conversation_says_what_it_takes(retriever, reader):
    # It failed with "'list' object has no attribute 'turns'".
    assistant = Assistant(OriginalRewriter(), retriever, reader)
    with pytest.raises(TypeError, match="ask takes a Conversation .*not list; with a history of texts, call steps"):
        assistant.ask("Who was her father?", ["Who was Ada Lovelace?", "A mathematician."])


@pytest.mark.parametrize("history, message", [
    ("Who was Ada Lovelace?", r"history must be a list of strings .*\[\] for a first turn\), not str"),
    (None, "history must be a list of strings .*not NoneType"),
    (["Who was Ada Lovelace?", 3], "history must be a list of strings, not a list holding int"),
])
def test_steps_refuses_a_history_that_is_not_a_list_of_texts(retriever, reader, history, message):
    # A string was taken letter by letter as earlier turns ("e", "l", "a", ...).
    rewriter = RecordingRewriter("What did she write?")
    with pytest.raises(TypeError, match=message):
        list(Assistant(rewriter, retriever, reader).steps("What did she write?", history))
    assert rewriter.histories == []


class _Returns:
    """A stage of any kind that returns ``value``."""

    def __init__(self, value):
        self.value = value

    def rewrite(self, question, history):
        return self.value

    def search(self, query, k):
        return self.value

    def read(self, question, passages):
        return self.value


def test_a_plugged_in_stage_returning_the_wrong_kind_of_value_is_named(retriever, reader):
    # Each failed later and far away: a str answer in Conversation.history on
    # the next turn, a retriever's dicts in turn_to_json, a str rewrite as
    # "'str' object has no attribute 'text'".
    rewriter = RecordingRewriter("Who was Ada Lovelace?")
    cases = [
        (Assistant(_Returns("Who was Ada?"), retriever, reader), r"_Returns.rewrite returned str instead of assistant.kernel.Rewrite"),
        (Assistant(rewriter, _Returns([{"id": "ada"}]), reader), r"_Returns.search returned a list of dict instead of a list of assistant.kernel.Passage"),
        (Assistant(rewriter, _Returns(None), reader), r"_Returns.search returned NoneType instead of a list of assistant.kernel.Passage"),
        (Assistant(rewriter, _Returns("Ada"), reader), r"_Returns.search returned str instead of a list of assistant.kernel.Passage"),
        (Assistant(rewriter, retriever, _Returns("Lord Byron")), r"_Returns.read returned str instead of assistant.kernel.Answer"),
    ]
    for assistant, message in cases:
        with pytest.raises(TypeError, match=message):
            assistant.ask("Who was Ada Lovelace?", Conversation())


def test_conversation_undo():
    conversation = Conversation()
    assert conversation.undo() is None
    turn = Turn("q", Rewrite("q"), Answer("a", 1.0))
    conversation.add(turn)
    assert conversation.undo() is turn and conversation.history() == []


def test_terminal_chat_json(tiny_index):
    lines = "Who was Ada Lovelace?\n\nWhat did she write?\n<script>alert(1)</script>\n"
    env = dict(os.environ, CONVQA_INDEX_DIR=str(tiny_index))
    result = subprocess.run(
        [sys.executable, "-m", "assistant.chat", "--json", "--rewriter", "original"],
        input=lines, capture_output=True, text=True, cwd=ROOT, env=env, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    turns = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(turns) == 4
    assert turns[0]["question"] == "Who was Ada Lovelace?" and turns[0]["sources"][0]["id"] == "ada"
    assert set(turns[0]) == {"question", "rewrite", "answer", "sources", "timings_ms"}
    assert set(turns[0]["sources"][0]) == {"id", "title", "score", "text"}
    assert set(turns[0]["timings_ms"]) == {"rewrite", "retrieve", "read", "total"}
    assert turns[1] == {"question": "", "error": "Please type a question."}
    assert turns[2]["answer"].startswith("She wrote the first published algorithm")
    assert turns[3]["question"] == "<script>alert(1)</script>"


def test_terminal_chat_plain_output_names_the_other_candidates_searched():
    turn = Turn("Who was her father?", Rewrite("Who was Ada's father?", alternatives=("Who was Ada Lovelace's father?",)),
                Answer("Lord Byron.", 1.0))
    assert chat._plain(turn).splitlines() == [
        "rewrite: Who was Ada's father?",
        "  also searched with: Who was Ada Lovelace's father?",
        "answer:  Lord Byron.",
    ]
    alone = Turn("Who was her father?", Rewrite("Who was Ada's father?"), Answer("Lord Byron.", 1.0))
    assert "also searched" not in chat._plain(alone)


def test_terminal_chat_plain_output_labels_the_score_it_shows(tiny_index):
    # The rescored score is a mix of scaled BM25 and the MiniLM cosine; it
    # used to be labelled "BM25". With CONVQA_DENSE_WEIGHT=0 it is BM25's own.
    source = Passage("ada", "Ada Lovelace was a mathematician.", 0.734, title="Ada Lovelace")
    turn = Turn("Who was Ada?", Rewrite("Who was Ada?"), Answer("A mathematician.", 1.0), (source,))
    assert chat._plain(turn, rescored=True).splitlines()[-1] == "source:  Ada Lovelace (score 0.73, BM25 mixed with MiniLM)"
    assert chat._plain(turn, rescored=False).splitlines()[-1] == "source:  Ada Lovelace (BM25 0.73)"
    for weight, label in (("0.9", "BM25 mixed with MiniLM"), ("0", "(BM25 ")):
        env = dict(os.environ, CONVQA_INDEX_DIR=str(tiny_index), CONVQA_DENSE_WEIGHT=weight)
        result = subprocess.run([sys.executable, "-m", "assistant.chat", "--rewriter", "original"], input=b"Who was Ada Lovelace?\n",
                                capture_output=True, cwd=ROOT, env=env, timeout=300)
        assert result.returncode == 0, result.stderr.decode()
        assert label in result.stdout.decode().splitlines()[-1]


def test_terminal_chat_missing_index(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "assistant.chat", "--index", str(tmp_path / "none"), "--rewriter", "original"],
        input="hi\n", capture_output=True, text=True, cwd=ROOT, timeout=300,
    )
    assert result.returncode == 2
    assert "python -m assistant.index" in result.stderr


def test_terminal_chat_first_start_builds_the_default_index(tmp_path):
    # A fresh cache: the chat indexes the default collection first; stdout
    # must still hold nothing but the turns' JSON (Anserini logs to stderr).
    env = {k: v for k, v in os.environ.items() if k != "CONVQA_INDEX_DIR"}
    env["CONVQA_CACHE"] = str(tmp_path / "cache")
    # BM25 alone: encoding the 10,033 passages for the rescoring would add
    # minutes; the encoding on first start is tested on the tiny index (test_dense).
    env["CONVQA_DENSE_WEIGHT"] = "0"
    result = subprocess.run(
        [sys.executable, "-m", "assistant.chat", "--json", "--rewriter", "original"],
        input="Who was Ada Lovelace?\n", capture_output=True, text=True, cwd=ROOT, env=env, timeout=600,
    )
    assert result.returncode == 0, result.stderr
    assert "indexing the default collection" in result.stderr
    [turn] = [json.loads(line) for line in result.stdout.splitlines()]
    assert turn["sources"][0]["id"] == "Ada Lovelace"
    assert (tmp_path / "cache" / "indexes" / "wiki-vital-en" / "convqa.json").exists()


@pytest.mark.parametrize(
    "question, message",
    [
        (None, "Please type a question."),
        ("Who was \udcff\udcfe?", "not valid text"),
        (42, "must be text"),
    ],
)
def test_questions_no_stage_can_take_are_refused_with_a_message(question, message):
    # A lone surrogate is what invalid UTF-8 becomes when stdin is read with
    # surrogateescape, or what a client can send through the API.
    with pytest.raises(InvalidInputError, match=message):
        validate_question(question, 1000)


@pytest.mark.parametrize("question", ["?!", "?!...,;", " ¿? ", "🤖🤖", "…", "--- !!!", "？"])
def test_a_question_of_punctuation_or_symbols_alone_is_refused(question):
    # "?!" after Ada turns was rewritten into a question out of the history
    # ("What is the name of Ada Lovelace?") and searched.
    with pytest.raises(InvalidInputError, match="no words in it; please type a question in words"):
        validate_question(question, 1000)


@pytest.mark.parametrize("question", ["1984?", "居里夫人是谁？", "من هو؟", "Кто такая Ада?", "¿Quién?", "42", "a"])
def test_a_question_in_any_script_or_of_digits_is_text(question):
    assert validate_question(question, 1000).rstrip("?？؟") == question.rstrip("?？؟")


def _chat(args, input, env_extra, tiny_index):
    env = dict(os.environ, CONVQA_INDEX_DIR=str(tiny_index), **env_extra)
    return subprocess.run(
        [sys.executable, "-m", "assistant.chat", "--json", "--rewriter", "original", *args],
        input=input, capture_output=True, cwd=ROOT, env=env, timeout=300,
    )


def test_terminal_chat_honours_the_settings_the_app_honours(tiny_index):
    # The chat used to build fresh configs and drop CONVQA_MAX_QUESTION_CHARS & co.
    result = _chat([], b"Who was the mathematician Ada Lovelace, then?\nAda?\n", {"CONVQA_MAX_QUESTION_CHARS": "10"}, tiny_index)
    assert result.returncode == 0, result.stderr
    refused, answered = [json.loads(line) for line in result.stdout.splitlines()]
    assert "limited to 10" in refused["error"]
    assert answered["question"] == "Ada?" and "error" not in answered


def test_terminal_chat_survives_a_line_of_invalid_utf8(tiny_index):
    result = _chat([], b"Who was Ada Lovelace?\n\xff\xfe\nWhat did she write?\n", {}, tiny_index)
    assert result.returncode == 0, result.stderr.decode()
    first, bad, third = [json.loads(line) for line in result.stdout.decode("utf-8").splitlines()]
    assert first["sources"][0]["id"] == "ada"
    assert bad == {"question": "\\xff\\xfe", "error": bad["error"]} and "not valid text" in bad["error"]
    assert third["answer"].startswith("She wrote the first published algorithm")


def test_terminal_chat_echoes_a_refused_question_cut_as_the_api_does(tiny_index):
    # The chat used to echo a 5,000-character line whole (a 5,131-byte error
    # line); the app's API cuts it to ECHO_CHARS, and the chat now shares that cut.
    from assistant.kernel import ECHO_CHARS

    result = _chat([], b"x" * 5_000 + b"\n", {}, tiny_index)
    assert result.returncode == 0, result.stderr.decode()
    [refused] = [json.loads(line) for line in result.stdout.splitlines()]
    assert refused["question"] == "x" * ECHO_CHARS and ECHO_CHARS == 200
    assert refused["error"].startswith("That message is 5,000 characters long")


@pytest.mark.parametrize(
    "setting, message",
    [
        ({"CONVQA_K": "abc"}, "CONVQA_K='abc': k must be a whole number >= 1"),
        ({"CONVQA_K": "0"}, "k must be a whole number >= 1, got 0 (from its command-line flag, or CONVQA_K)"),
        ({"CONVQA_MU": "2"}, "mu must be a number from 0 to 1, got 2.0 (from its command-line flag, or CONVQA_MU)"),
        ({"CONVQA_READER": "foo"}, "reader must be one of sentence, generative, got 'foo' (from its command-line flag, or CONVQA_READER)"),
        ({"CONVQA_KK": "3"}, "CONVQA_KK is not a setting (did you mean CONVQA_K?)"),
        ({"CONVQA_REWRITE_CANDIDATES": "-1"}, "rewrite_candidates must be a whole number >= 0, got -1 (from its command-line flag, or CONVQA_REWRITE_CANDIDATES)"),
    ],
)
def test_terminal_chat_refuses_a_bad_setting_in_one_line(tiny_index, setting, message):
    result = _chat([], b"Who was Ada Lovelace?\n", setting, tiny_index)
    stderr = result.stderr.decode()
    assert result.returncode == 2 and result.stdout == b""
    assert stderr.startswith(f"error: {message}") and stderr.count("\n") == 1, stderr


@pytest.mark.parametrize("typed, meant", [("Sentence", "sentence"), ("generativ", "generative")])
def test_a_reader_name_near_a_known_one_says_which_was_meant(monkeypatch, typed, meant):
    from assistant.kernel import ConfigError, load_configs

    monkeypatch.setenv("CONVQA_READER", typed)
    with pytest.raises(ConfigError) as raised:
        load_configs()
    assert str(raised.value) == (f"reader must be one of sentence, generative, got {typed!r} (from its command-line "
                                 f"flag, or CONVQA_READER); did you mean {meant!r}?")


def test_a_flag_replaces_a_bad_setting_in_the_environment(tiny_index, monkeypatch):
    # README: flags win over CONVQA_* variables. The variable used to be
    # range-checked before the flag replaced it, so CONVQA_K=-1 stopped -k 3.
    from assistant.kernel import ConfigError, load_configs

    monkeypatch.setenv("CONVQA_K", "-1")
    monkeypatch.setenv("CONVQA_READER", "foo")
    config, retrieval, _ = load_configs(k=3, reader="sentence")
    assert (retrieval.k, config.reader) == (3, "sentence")
    monkeypatch.setenv("CONVQA_K", "abc")  # not even read when a flag sets k
    assert load_configs(k=3, reader="sentence")[1].k == 3
    # One that no flag replaces is still refused with its message.
    with pytest.raises(ConfigError, match=r"^reader must be one of sentence, generative, got 'foo' \(from its command-line flag, or CONVQA_READER\)$"):
        load_configs(k=3)
    monkeypatch.delenv("CONVQA_READER")  # the chat below inherits the environment
    result = _chat(["-k", "1"], b"Who was Ada Lovelace?\n", {"CONVQA_K": "-1"}, tiny_index)
    assert result.returncode == 0, result.stderr.decode()
    assert len(json.loads(result.stdout)["sources"]) == 1


def test_the_assistant_loads_its_rewriter_with_the_configured_candidates(tiny_index, monkeypatch):
    import assistant.pipeline as pipeline

    asked = []
    monkeypatch.setattr(pipeline, "load_rewriter", lambda name, **options: asked.append((name, options)) or OriginalRewriter())
    Assistant.from_config(AssistantConfig(rewriter="original", rewrite_candidates=4), RetrieverConfig(index_dir=str(tiny_index)))
    # The second look's beams are the rewriter's own unless it is turned off.
    Assistant.from_config(AssistantConfig(rewriter="original", rewrite_second_look=False), RetrieverConfig(index_dir=str(tiny_index)))
    # The unsure rewrites' look: the rewriter's threshold unless it is turned off.
    Assistant.from_config(AssistantConfig(rewriter="original", rewrite_second_look_unsure=False), RetrieverConfig(index_dir=str(tiny_index)))
    assert asked == [("original", {"candidates": 4, "second_look": None, "second_look_below": None}),
                     ("original", {"candidates": 0, "second_look": 0, "second_look_below": None}),
                     ("original", {"candidates": 0, "second_look": None, "second_look_below": 0.0})]
