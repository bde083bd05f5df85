"""The app's per-session logic, without a browser: the real pipeline over the tiny index."""

from __future__ import annotations

import copy
import dataclasses
import errno
import gc
import json
import os
import re
import time
from pathlib import Path

import pytest

from assistant import session as S
from assistant.kernel import DataFormatError, IndexNotFoundError, InvalidInputError, Rewrite, StopSignal, read_labels

ADA = "Who was Ada Lovelace?"


def turns(session):
    return [entry.turn for entry in session.turns]


def infos(session):
    return [entry.info for entry in session.turns]


def play(services, session, question, **kw):
    """Run a turn; return the Pending values it streamed."""
    return list(S.ask(services, session, question, **kw))


def test_a_turn_streams_the_rewrite_before_the_answer(app_services):
    session = S.Session()
    steps = play(app_services, session, "  Who was Ada Lovelace?  ")
    assert [s.rewrite for s in steps] == [None, Rewrite(ADA)]
    assert [s.question for s in steps] == [ADA, ADA]
    [turn] = turns(session)
    assert turn.answer.text == "Ada Lovelace was an English mathematician and writer. She wrote the first published algorithm for Charles Babbage's Analytical Engine."
    assert [p.id for p in turn.sources] == ["ada", "babbage"]
    assert set(turn.timings_ms) == {"rewrite", "retrieve", "read", "total"}
    assert turn.timings_ms["total"] == pytest.approx(sum(turn.timings_ms[k] for k in ("rewrite", "retrieve", "read")), abs=0.11)
    # While streaming, the chat shows the question and the rewrite step first.
    pending = S.chat_messages(session, steps[1])
    assert pending[-3]["content"] == ADA.replace(".", "\\.").replace("?", "?")
    assert pending[-2]["metadata"]["title"] == "🔁 System rewrite: Who was Ada Lovelace?"
    assert pending[-1]["content"] == "Searching and reading the sources…"


def test_three_turns_show_question_rewrite_answer_and_sources(app_services):
    session = S.Session()
    for question in (ADA, "What did she write about?", "Who was her father?"):
        play(app_services, session, question)
    messages = S.chat_messages(session)
    assert [m["role"] for m in messages] == ["user", "assistant", "assistant"] * 3
    assert [m["metadata"]["title"] for m in messages[1::3]] == [
        "🔁 System rewrite: Who was Ada Lovelace?",
        "🔁 System rewrite: What did she write about?",
        "🔁 System rewrite: Who was her father?",
    ]
    first = messages[2]["content"]
    assert '<a href="https://en.wikipedia.org/wiki/Ada_Lovelace" target="_blank"' in first
    assert ("<mark>Ada Lovelace was an English mathematician and writer. She wrote the first published algorithm for "
            "Charles Babbage&#x27;s Analytical Engine.</mark>") in first
    assert "score " in first and "Charles Babbage" in first and "⏱ Timings" in first
    # The history the rewriter saw is kept per turn (QReCC Context layout);
    # the second turn's answer was not found, so its place holds no text.
    assert not turns(session)[1].answer.found
    assert infos(session)[2].history == (ADA, turns(session)[0].answer.text, "What did she write about?", "")
    assert [S.turn_of_message(i) for i in (0, 2, 3, 8)] == [0, 0, 1, 2]


def test_script_and_markup_are_shown_as_text(app_services):
    session = S.Session()
    play(app_services, session, "<script>alert('x')</script> <img src=x onerror=alert(1)> **Ada**")
    rendered = json.dumps(S.chat_messages(session))
    assert "<script" not in rendered and "<img" not in rendered
    assert "&lt;script&gt;" in rendered and "\\\\*\\\\*Ada\\\\*\\\\*" in rendered


def test_bad_questions_get_messages_and_the_session_goes_on(app_services):
    session = S.Session()
    for question, message in (("   ", "Please type a question."),
                              ("x" * 20_000, "That message is 20,000 characters long; questions are limited to 1,000")):
        with pytest.raises(InvalidInputError, match=message):
            play(app_services, session, question)
    assert turns(session) == []
    assert S.ask_json(app_services, session, "")["error"] == "Please type a question."
    assert len(S.ask_json(app_services, session, "y" * 20_000)["question"]) == 200
    play(app_services, session, "Wer war die Tochter von Lord Byron?")
    assert infos(session)[0].notice == S.NOT_ENGLISH
    assert S.NOT_ENGLISH in S.chat_messages(session)[2]["content"]
    assert S.ask_json(app_services, session, ADA)["turn"] == 2


def test_invisible_characters_are_no_part_of_a_question(app_services):
    session = S.Session()
    for blank in ("\u200b\u200b\u200b", "\x00", " \u2060\ufeff\x07\r "):
        with pytest.raises(InvalidInputError, match="Please type a question."):
            play(app_services, session, blank)
        assert S.ask_json(app_services, session, blank)["error"] == "Please type a question."
        assert S.rewrite_json(app_services, blank, [])["error"] == "Please type a question."
    # A NUL or an escape stands between words; a zero-width or format character is dropped.
    play(app_services, session, "Who was Ada\u0000 Lovelace?")
    play(app_services, session, "Who was\x1b her fa\u00adther\u200b?")
    assert [(t.question, t.rewrite.text) for t in turns(session)] == [(ADA, ADA), ("Who was her father?",) * 2]
    assert S.rewrite_json(app_services, "Who was Ada\u0000 Lovelace?", [])["rewrite"] == ADA
    # Only what can be seen counts towards the limit.
    play(app_services, session, "Who was Ada Lovelace?" + "\u200b" * 2_000)
    assert turns(session)[-1].question == ADA


def test_questions_wait_in_line_in_the_order_sent_and_a_bad_one_never_joins(app_services):
    session = S.Session()
    assert S.take_question(app_services, session, f"  {ADA} ") == "⏳ Asking…"
    assert S.take_question(app_services, session, "Who was her father?") == "⏳ Queued after 1 other question."
    for bad, message in (("x" * 1_122, "1,122 characters long"), ("\u200b", "Please type a question.")):
        with pytest.raises(InvalidInputError, match=message):
            S.take_question(app_services, session, bad)
    assert S.waiting_notice(session) == "⏳ 2 more questions waiting."
    assert S.next_question(session) == ADA
    assert S.waiting_notice(session) == "⏳ 1 more question waiting."
    assert S.take_question(app_services, session, "What is Paris?") == "⏳ Queued after 1 other question."
    assert S.drop_waiting(session) == 2
    assert (S.next_question(session), S.waiting_notice(session)) == (None, "")


def test_undo_new_and_export_in_qrecc_layout(app_services, tmp_path):
    from rewriting.data import load_examples

    session = S.Session()
    assert S.undo(session) == "Nothing to undo."
    with pytest.raises(InvalidInputError, match="nothing to export"):
        S.write_export(session, tmp_path)
    for question in (ADA, "Who was her father?", "What is Paris?"):
        play(app_services, session, question)
    assert S.undo(session).startswith("Removed the turn “What is Paris?")
    path = S.write_export(session, tmp_path)
    records = json.loads(path.read_text())
    done = turns(session)
    assert records == [
        {"Context": [], "Question": ADA, "Rewrite": ADA, "Rewrite_kind": "system", "System_rewrite": ADA,
         "Answer": done[0].answer.text, "Conversation_no": 1, "Turn_no": 1, "Source": {"kind": "collection"}},
        {"Context": [ADA, done[0].answer.text], "Question": "Who was her father?", "Rewrite": "Who was her father?",
         "Rewrite_kind": "system", "System_rewrite": "Who was her father?",
         "Answer": done[1].answer.text, "Conversation_no": 1, "Turn_no": 2, "Source": {"kind": "collection"}},
    ]
    # The export reads back as a QReCC file (so it can be replayed).
    assert [e.id for e in load_examples(path)] == ["qrecc:1:1", "qrecc:1:2"]
    S.new_conversation(session)
    assert (session.turns, session.history(), session.conversation_no) == ([], [], 2)
    S.new_conversation(session)  # an empty conversation is new already: it keeps its number
    assert (session.conversation_no, sorted(session.archive)) == (2, ["1"])
    # The new, empty conversation is listed too: it is the one shown as chosen.
    assert S.conversation_choices(session) == [(f"1: {ADA}", 1), ("2: (empty)", 2)]
    assert S.switch_conversation(session, 2) == "Conversation 2 is the current one."


def test_correction_reruns_the_turn_and_scores_the_system_rewrite(scored_services):
    app_services = scored_services
    session = S.Session()
    play(app_services, session, ADA)
    play(app_services, session, "What did she write about?")
    assert not turns(session)[1].answer.found
    status = S.correct(app_services, session, -1, "What did Ada Lovelace write about?")
    assert status == "Turn 2 re-run with your rewrite."
    turn, info = turns(session)[1], infos(session)[1]
    assert turn.question == "What did she write about?"
    assert turn.rewrite.text == "What did Ada Lovelace write about?"
    assert turn.answer.found and turn.sources[0].id == "ada"
    assert (info.system_rewrite.text, info.reference, info.reference_kind) == (
        "What did she write about?", "What did Ada Lovelace write about?", "correction")
    # ROUGE-1 recall: 4 of the reference's 6 words (what did write about).
    assert info.scores["ROUGE-1 R"] == pytest.approx(4 / 6)
    assert 0.3 < info.scores["USE"] < 0.99
    assert 0.0 <= info.scores["R@10"] <= 1.0
    assert S.chat_messages(session)[4]["metadata"]["title"] == "✏️ Your rewrite: What did Ada Lovelace write about?"
    assert S.metrics_rows(session)[0][0] == "2"
    with pytest.raises(InvalidInputError, match="no turn 5"):
        S.correct(app_services, session, 4, "x")


def test_thumbs_write_labels_eval_can_read(app_services):
    session = S.Session()
    for label in (1, 0):  # the thumbs before any question (the target turn is then -1)
        with pytest.raises(InvalidInputError, match="There is no rewrite to judge yet: ask a question first."):
            S.judge(app_services, session, S.target_turn(session), label)
    play(app_services, session, ADA)
    play(app_services, session, "What did she write about?")
    assert S.judge(app_services, session, 0, 1) == "Turn 1: recorded 👍 correct in labels.jsonl."
    assert S.judge(app_services, session, 0, 1) == "Turn 1: already recorded as 👍 correct."
    # A thumbs down without a reference waits for the user's correction.
    assert "👎 noted" in S.judge(app_services, session, 1, 0)
    assert len(app_services.labels.read()) == 1
    # The rewrite judged wrong, given back as its correction, is refused: that
    # line would pair a 👎 with a perfect score.
    with pytest.raises(InvalidInputError, match="That is turn 2's rewrite as the system wrote it"):
        S.correct(app_services, session, 1, " What did  she write about? ")
    assert len(app_services.labels.read()) == 1
    status = S.correct(app_services, session, 1, "What did Ada Lovelace write about?")
    assert status.endswith("Turn 2: recorded 👎 incorrect in labels.jsonl.")
    first, second = read_labels(app_services.labels.path)
    assert (first.label, first.rewrite, first.reference, first.extra["reference_kind"]) == (1, ADA, ADA, "confirmed")
    assert (second.label, second.question, second.rewrite, second.reference) == (
        0, "What did she write about?", "What did she write about?", "What did Ada Lovelace write about?")
    assert second.history == (ADA, turns(session)[0].answer.text)
    assert second.id == f"app:{session.id}:1:2:{infos(session)[1].uid}"
    with pytest.raises(InvalidInputError):
        S.judge(app_services, session, 5, 1)
    # A turn asked in the place of an undone one is another turn: its
    # judgement got the undone turn's id, and eval.rewrites dropped one of them.
    S.undo(session)
    play(app_services, session, "Who was her father?")
    S.judge(app_services, session, 1, 1)
    ids = [line.id for line in read_labels(app_services.labels.path)]
    assert len(ids) == 3 and len(set(ids)) == 3 and ids[2].startswith(f"app:{session.id}:1:2:")


def test_replay_choices_say_what_each_conversation_is(qrecc_conversations, tmp_path):
    # The "Conversation" list showed bare ids (1, 2, 856, ...); Start still gets the id.
    session = S.Session()
    assert S.replay_choices(session) == []
    S.load_replay(session, qrecc_conversations)
    assert S.replay_choices(session) == [("7: Who was Ada Lovelace? (2 turns)", "7"),
                                         ("9: What is Paris? (1 turn)", "9")]
    long = "How   did the   treaty signed in the small town of Westphalia end the wars of religion in Europe?"
    path = tmp_path / "long.json"
    path.write_text(json.dumps([{"Context": [], "Question": long, "Rewrite": long, "Answer": "",
                                 "Conversation_no": 856, "Turn_no": 1}]))
    S.load_replay(session, path)
    assert S.replay_choices(session) == [
        ("856: How did the treaty signed in the small town of Westphalia… (1 turn)", "856")]
    assert S.start_replay(session, S.replay_choices(session)[0][1]) == "Replaying conversation 856 (1 turn)."


def test_replay_scores_against_the_human_rewrite(scored_services, qrecc_conversations):
    app_services = scored_services
    session = S.Session()
    for play_on in (S.replay_step, S.replay_rest):  # ▶ Next turn and ⏩ Play all
        with pytest.raises(InvalidInputError, match="Load a conversations file and pick a conversation first."):
            list(play_on(app_services, session))
    assert S.load_replay(session, qrecc_conversations) == ["7", "9"]
    for play_on in (S.replay_step, S.replay_rest):  # loaded, not started: it said to load a file
        with pytest.raises(InvalidInputError, match="^Press Start to replay the conversation picked from "):
            list(play_on(app_services, session))
    assert S.start_replay(session, "7") == "Replaying conversation 7 (2 turns)."
    list(S.replay_rest(app_services, session))
    for play_on in (S.replay_step, S.replay_rest):
        with pytest.raises(InvalidInputError, match="Conversation 7 is finished"):
            list(play_on(app_services, session))
    first, second = infos(session)
    assert first.scores == pytest.approx({"ROUGE-1 R": 1.0, "USE": 1.0, "R@10": 1.0})
    # The second question is rewritten with the file's history; ours is the question itself.
    assert second.history == (ADA, "A mathematician.")
    assert (second.reference, second.reference_kind) == ("Who was Ada Lovelace's father?", "replay")
    # "who was ada lovelace s father": the question has 3 of the 6 tokens.
    assert second.scores["ROUGE-1 R"] == pytest.approx(3 / 6)
    rows = S.metrics_rows(session)
    assert [r[0] for r in rows] == ["1", "2", "mean of 2"]
    # Two decimals, as each turn's line in the chat shows them (the table showed "1", "0.5", "0.667").
    assert [row[1] for row in rows] == ["1.00", "0.50", "0.75"]
    assert all(re.fullmatch(r"\d\.\d\d", cell) for row in rows for cell in row[1:])
    points = [p for p in S.metrics_points(session) if p["metric"] == "ROUGE-1 R"]
    assert points == [{"turn": 1, "metric": "ROUGE-1 R", "mean": 1.0},
                      {"turn": 2, "metric": "ROUGE-1 R", "mean": 0.75}]
    message = S.chat_messages(session)[4]
    assert "Human rewrite (reference):** Who was Ada Lovelace's father?" in message["content"].replace("\\", "")
    assert "status" not in message["metadata"]  # open, so the human rewrite shows
    # The export keeps the file's human rewrite as QReCC's Rewrite (it had the
    # system's), the system's beside it.
    exported = S.export_qrecc(session)[1]
    assert (exported["Rewrite"], exported["Rewrite_kind"], exported["System_rewrite"]) == (
        "Who was Ada Lovelace's father?", "replay", second.system_rewrite.text)
    # Undo puts the replayed turn back in line; a thumbs on it is recorded with the human reference.
    assert S.judge(app_services, session, 1, 0).startswith("Turn 2: recorded 👎")
    assert app_services.labels.read()[0]["reference_kind"] == "replay"
    S.undo(session)
    assert session.replay.position == 1


def test_replay_file_errors(app_services, tmp_path, qrecc_conversations):
    session = S.Session()
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a list"}')
    with pytest.raises(DataFormatError, match="expected a JSON list") as error:
        S.load_replay(session, bad, "mine.json")
    assert str(tmp_path) not in str(error.value) and "mine.json" in str(error.value)
    with pytest.raises(InvalidInputError, match="no such file"):
        S.load_replay(session, tmp_path / "missing.json")
    with pytest.raises(InvalidInputError, match=r"^qrecc is a folder; give a file in it\.$"):
        S.load_replay(session, tmp_path, "qrecc")  # it said "no such file"
    S.load_replay(session, qrecc_conversations)
    with pytest.raises(InvalidInputError, match="No conversation '3'"):
        S.start_replay(session, "3")


def test_an_article_title_typed_without_its_accents_is_that_article(tiny_assistant, tmp_path):
    # "Pele" was told "No article is titled “Pele”", with no title offered,
    # though the chat's search finds Pelé by it.
    from assistant.retrieval import BM25Retriever, build_index

    build_index([{"id": "pele", "title": "Pelé", "contents": "Pelé was a Brazilian footballer."},
                 {"id": "dvorak", "title": "Antonín Dvořák", "contents": "Antonín Dvořák was a Czech composer."},
                 {"id": "tea", "title": "Tea", "contents": "Tea is a drink."}], tmp_path / "index", progress=False)
    pipeline = dataclasses.replace(tiny_assistant, retriever=BM25Retriever.from_index(tmp_path / "index"))
    services = S.Services(pipeline, S.LabelStore(tmp_path / "labels.jsonl"))
    session = S.Session()
    assert S.use_collection_document(services, session, "Pele") == "Answering from the document “Pelé” (1 passage)."
    assert S.use_collection_document(services, session, "antonin DVORAK").startswith("Answering from the document “Antonín Dvořák”")
    with pytest.raises(InvalidInputError, match="^No article is titled “Pelo”"):
        S.use_collection_document(services, session, "Pelo")


def test_an_article_title_is_found_however_far_down_a_search_for_it_ranks(tiny_assistant, tmp_path):
    # Only a search's first five hits were looked at: "germany" was refused
    # while articles that name Germany more often outranked it. A title equal
    # in its own accents comes before one equal once accents are dropped.
    from assistant.retrieval import BM25Retriever, build_index

    others = [{"id": f"History of Germany {n}", "contents": "Germany " * 20 + f"part {n}."} for n in range(8)]
    build_index(others + [{"id": "Germany", "title": "Germany", "contents": "A country in central Europe."},
                          {"id": "Père", "title": "Père", "contents": "Père is French for father."},
                          {"id": "Pere", "title": "Pere", "contents": "Pere is a given name."},
                          {"id": "Huế", "title": "Huế", "contents": "Huế is a city in Vietnam."}],
                tmp_path / "index", progress=False)
    retriever = BM25Retriever.from_index(tmp_path / "index")
    assert "Germany" not in [p.id for p in retriever.search("germany", 5)]
    services = S.Services(dataclasses.replace(tiny_assistant, retriever=retriever), S.LabelStore(tmp_path / "labels.jsonl"))
    session = S.Session()
    for typed, title in [("germany", "Germany"), ("hue", "Huế"), ("pere", "Pere"), ("PÈRE", "Père"), ("Pere", "Pere")]:
        assert S.use_collection_document(services, session, typed).startswith(f"Answering from the document “{title}”"), typed
    with pytest.raises(InvalidInputError, match="^No article is titled “Germ”"):
        S.use_collection_document(services, session, "Germ")


def test_a_question_asked_while_uploads_are_indexed_is_answered_from_them(app_services, tmp_path):
    # It was answered from the default collection meanwhile, in the
    # conversation the upload then left for a new one: it seemed lost.
    import threading

    app_services.sessions_root = tmp_path / "sessions"
    notes = tmp_path / "notes.txt"  # big enough that indexing takes seconds, not milliseconds
    filler = " ".join(f"Plain filler sentence number {n} about rivers and mountains." for n in range(40_000))
    notes.write_text("Zorblax Quintar was born in 1901 in Vilnius. " + filler)
    session = S.Session()
    done = []
    indexing = threading.Thread(target=lambda: done.append(S.use_uploads(app_services, session, [notes])))
    indexing.start()
    time.sleep(0.3)
    try:
        play(app_services, session, "When was Zorblax Quintar born?")
    finally:
        indexing.join(120)
    assert done and done[0].startswith("Answering from your upload (notes.txt;")
    [turn] = turns(session)
    assert turn.sources and all(p.id.startswith("notes.txt#") for p in turn.sources)
    assert "1901" in turn.answer.text


def test_single_document_mode_searches_inside_the_document(app_services):
    session = S.Session()
    text = ("The Analytical Engine was a proposed mechanical computer.\n\n"
            "It was designed by Charles Babbage in 1837. It had a mill and a store.")
    assert S.use_document(app_services, session, text, "Engine").startswith("Answering from the document “Engine”")
    play(app_services, session, "Who designed the Analytical Engine?")
    turn = turns(session)[0]
    assert {p.id for p in turn.sources} == {"Engine_p0"}
    assert turn.answer.source_id == "Engine_p0" and turn.answer.text in text
    assert S.use_collection_document(app_services, session, "ada").startswith("Answering from the document “Ada")
    assert S.use_collection_document(app_services, session, " lord  BYRON ").startswith("Answering from the document “Lord Byron”")
    # Only titles close to the one typed are offered: the search reads the
    # articles' text, and offered each article using a word of it.
    with pytest.raises(InvalidInputError, match="^No article is titled “charles babage”. Close titles: “Charles Babbage”.$"):
        S.use_collection_document(app_services, session, "charles babage")
    for unknown in ("eiffel tower", "English poet"):
        with pytest.raises(InvalidInputError) as refused:
            S.use_collection_document(app_services, session, unknown)
        assert str(refused.value) == (f"No article is titled “{unknown}”. Check its spelling, or ask about it in the chat: "
                                      "it searches every article, and each answer names the articles it comes from.")
    with pytest.raises(InvalidInputError):
        S.use_document(app_services, session, "  ")
    assert S.use_default_collection(app_services, session) == f"Answering from {app_services.collection_name}."
    assert session.source is None


def test_another_source_starts_a_new_conversation(app_services):
    # Follow-ups were rewritten against the last document's subject: "When did
    # it last erupt?" after a lighthouse became "... the Keepers of the Keepers ...".
    session = S.Session()
    S.use_document(app_services, session, "The Old Point lighthouse was first kept by Thomas Hale.", "Lighthouse")
    play(app_services, session, "Who first kept the Old Point lighthouse?")
    status = S.use_document(app_services, session, "Mount Kessel is a dormant volcano. It last erupted in 1723.", "Volcano")
    assert status == ("Answering from the document “Volcano” (1 passage). A new conversation starts for it "
                      "(conversation 2; the last one is kept in Your conversations).")
    assert session.turns == [] and list(session.archive) == ["1"]
    play(app_services, session, "When did Mount Kessel last erupt?")
    assert turns(session)[0].sources[0].id == "Volcano_p0" and infos(session)[0].history == ()
    # Back to the collection: a new one again; with no turn yet, nothing starts.
    assert "A new conversation starts for it (conversation 3" in S.use_default_collection(app_services, session)
    assert S.use_default_collection(app_services, session) == f"Answering from {app_services.collection_name}."
    assert S.use_document(app_services, session, "Mount Kessel is a dormant volcano.", "Volcano").endswith("(1 passage).")


VOLCANO = "Mount Kessel is a dormant volcano. It last erupted in 1723."
LIGHTHOUSE = "The Old Point lighthouse was first kept by Thomas Hale."


def test_each_conversation_is_answered_from_its_own_source_when_picked_again(app_services):
    # The source was the session's: a conversation about the collection,
    # picked again after a document was given, was answered from the
    # document, and the status only said so.
    session = S.Session()
    play(app_services, session, ADA)
    S.use_document(app_services, session, VOLCANO, "Volcano")
    play(app_services, session, "When did Mount Kessel last erupt?")
    volcano = session.source
    assert S.switch_conversation(session, 1, app_services) == (
        f"Back to conversation 1 (1 turn). Its answers come from {app_services.collection_name}.")
    assert session.source is None
    play(app_services, session, "Who was her father?")
    assert turns(session)[-1].sources[0].id in {"ada", "byron"}
    assert S.switch_conversation(session, 2, app_services) == (
        "Back to conversation 2 (1 turn). Its answers come from the document “Volcano” (1 passage).")
    assert session.source is volcano
    play(app_services, session, "When did it last erupt?")
    assert turns(session)[-1].sources[0].id == "Volcano_p0"
    # A new conversation goes on with the source of the one left: the same
    # source, held once for both.
    assert app_services.held_text.bytes == len(VOLCANO)
    S.new_conversation(session)
    assert session.source is volcano and app_services.held_text.bytes == len(VOLCANO)
    play(app_services, session, "Is Mount Kessel dormant?")
    named = {"kind": "document", "name": "the document “Volcano” (1 passage)"}
    saved = json.loads(json.dumps(S.saved_state(session)))
    assert saved["sources"] == {"1": {"kind": "collection"}, "2": named, "3": named}
    assert {record["Source"]["name"] for record in S.export_qrecc(session)} == {named["name"]}
    session.close()
    assert app_services.held_text.bytes == 0


def test_a_conversation_left_empty_lets_go_of_what_only_it_held(app_services):
    session = S.Session()
    S.use_document(app_services, session, VOLCANO, "Volcano")
    play(app_services, session, "When did Mount Kessel last erupt?")
    S.new_conversation(session)  # conversation 2, answered from the volcano too
    play(app_services, session, "Is Mount Kessel dormant?")
    S.use_document(app_services, session, LIGHTHOUSE, "Lighthouse")  # conversation 3
    play(app_services, session, "Who first kept the Old Point lighthouse?")
    both = len(VOLCANO) + len(LIGHTHOUSE)
    assert app_services.held_text.bytes == both
    S.switch_conversation(session, 1, app_services)
    S.undo(session)  # an empty conversation is not kept
    S.switch_conversation(session, 3, app_services)
    assert app_services.held_text.bytes == both  # conversation 2 still holds the volcano
    S.switch_conversation(session, 2, app_services)
    S.undo(session)
    S.switch_conversation(session, 3, app_services)
    assert app_services.held_text.bytes == len(LIGHTHOUSE) and sorted(session.archive) == []
    # An empty conversation given another document lets the first go too.
    S.new_conversation(session)
    S.use_document(app_services, session, VOLCANO, "Volcano")
    S.use_document(app_services, session, ADA, "Ada")
    assert app_services.held_text.bytes == len(LIGHTHOUSE) + len(ADA)


def test_a_document_let_go_for_room_is_read_again_from_its_upload_or_said_gone(app_services, tmp_path):
    visitor = "93.184.216.34"
    volcano, other = VOLCANO * 20, LIGHTHOUSE * 22
    services = dataclasses.replace(app_services, limits=S.UploadLimits(client_held_mb=1.5 * len(other) / 2**20))
    upload = tmp_path / "volcano.txt"
    upload.write_text(volcano, encoding="utf-8")
    session = S.Session()
    S.use_document_file(services, session, upload, visitor)
    play(services, session, "When did Mount Kessel last erupt?")
    # No room for two: this page's other conversation lets its document go.
    assert S.use_document(services, session, other, "Lighthouse", visitor).startswith("Answering from the document “Lighthouse”")
    assert services.client_text.held(visitor) == len(other)
    play(services, session, "Who first kept the Old Point lighthouse?")
    status = S.switch_conversation(session, 1, services, visitor)
    assert status.startswith("Back to conversation 1 (1 turn). Its answers come from the document “volcano” (")
    play(services, session, "When did it last erupt?")
    assert turns(session)[-1].sources[0].id.startswith("volcano_p")
    assert services.client_text.held(visitor) == len(volcano)
    # The pasted text let go is said so, and the default collection answers.
    status = S.switch_conversation(session, 2, services, visitor)
    assert status.startswith("Back to conversation 2 (1 turn). It was answered from the document “Lighthouse” (")
    assert status.endswith("which cannot be taken again: documents are not kept across a reload or a server restart, "
                           f"nor once their room is needed for another. Its answers now come from {services.collection_name}; "
                           "to ask about that source again, give it under Your documents (a new conversation starts "
                           "for it).")
    assert session.source is None
    # An upload deleted since (its page closed, the server cleared it) is said gone.
    S.use_document(services, session, other, "Lighthouse", visitor)  # conversation 3, the volcano let go for it
    play(services, session, "Who first kept the Old Point lighthouse?")
    upload.unlink()
    status = S.switch_conversation(session, 1, services, visitor)
    assert "which cannot be taken again: the file volcano.txt is no longer on the server" in status
    assert session.source is None and services.client_text.held(visitor) == len(other)


def test_a_reloaded_page_takes_each_conversations_source_again_where_it_can(app_services):
    session = S.Session()
    S.use_collection_document(app_services, session, "ada")
    play(app_services, session, "Who was her father?")
    S.use_document(app_services, session, VOLCANO, "Volcano")
    play(app_services, session, "When did Mount Kessel last erupt?")
    S.use_default_collection(app_services, session)
    play(app_services, session, ADA)
    copy_ = json.loads(json.dumps(S.saved_state(session)))
    session.close()
    reloaded = S.Session()
    assert S.restore_state(reloaded, copy_) == "Restored 3 conversations saved in this browser."
    # An article of the collection is taken again by its title.
    status = S.switch_conversation(reloaded, 1, app_services)
    assert status == "Back to conversation 1 (1 turn). Its answers come from the document “Ada Lovelace” (1 passage)."
    play(app_services, reloaded, "What did she write?")
    assert turns(reloaded)[-1].sources[0].id == "Ada-Lovelace_p0"
    # A pasted text is not kept: said, and the collection answers.
    assert "It was answered from the document “Volcano” (1 passage), which cannot be taken again: documents are not " \
           "kept across a reload" in S.switch_conversation(reloaded, 2, app_services)
    assert reloaded.source is None
    # The conversation shown at the reload is taken again as well (the app does it at the page's load).
    shown = S.Session()
    S.restore_state(shown, {**copy_, "current": 1})
    assert S.take_back(app_services, shown) == " Its answers come from the document “Ada Lovelace” (1 passage)."
    # A copy names no path on the server; one that does is not read.
    edited = S.Session()
    S.restore_state(edited, {**copy_, "sources": {"1": {"kind": "document", "name": "x", "file": str(Path(__file__))}}})
    assert "which cannot be taken again: documents are not kept" in S.switch_conversation(edited, 1, app_services)
    with pytest.raises(DataFormatError, match="a value of the wrong type"):
        S.restore_state(S.Session(), {**copy_, "sources": {"1": {"kind": "disk"}}})


def test_a_copy_saved_before_conversations_kept_their_source_goes_on_as_before(app_services):
    session = S.Session()
    play(app_services, session, ADA)
    S.new_conversation(session)
    play(app_services, session, "What is Paris?")
    old = {key: value for key, value in S.saved_state(session).items() if key != "sources"}
    reloaded = S.Session()
    S.restore_state(reloaded, old)
    S.use_document(app_services, reloaded, VOLCANO, "Volcano")  # conversation 3
    status = S.switch_conversation(reloaded, 1, app_services)
    assert status.startswith("Back to conversation 1 (1 turn). Its next answers come from the document “Volcano”")
    assert "press “Back to the default collection” under Your documents and pick it again" in status
    assert reloaded.source.name == "the document “Volcano” (1 passage)"
    # The one shown at the reload was answered from the collection since, and keeps it.
    assert S.switch_conversation(reloaded, 2, app_services) == (
        f"Back to conversation 2 (1 turn). Its answers come from {app_services.collection_name}.")


def test_a_miss_in_a_document_names_the_document_not_the_collection(app_services):
    session = S.Session()
    S.use_document(app_services, session, "The zorblax flower grows only on Mount Quillon.", "Zorblax")
    play(app_services, session, "How many legs does a spider have?")
    answer = turns(session)[0].answer
    assert not answer.found and answer.text == "I could not find an answer to that in the document “Zorblax” (1 passage)."
    assert session.history() == ["How many legs does a spider have?", ""]  # still no answer for the rewriter


def test_a_sessions_own_source_is_searched_without_the_served_indexs_rescorer(app_services):
    import dataclasses

    class Recording:  # a rescorer that keeps the served index's order and notes each call
        questions = []

        def rescore(self, question, passages, k, alternatives=()):
            self.questions.append(question)
            return list(passages)[:k]

    services = dataclasses.replace(app_services, assistant=dataclasses.replace(app_services.assistant, rescorer=Recording()))
    session = S.Session()
    play(services, session, "Who was Ada Lovelace?")
    assert Recording.questions == ["Who was Ada Lovelace?"]
    # Its vectors hold the served index's passages: a document's would all be
    # encoded during the turn.
    S.use_document(app_services, session, "The Analytical Engine was designed by Charles Babbage in 1837.", "Engine")
    play(services, session, "Who designed the Analytical Engine?")
    assert Recording.questions == ["Who was Ada Lovelace?"]
    assert [p.id for p in turns(session)[-1].sources] == ["Engine_p0"]


def test_multiple_choice_over_a_document(app_services):
    session = S.Session()
    document = ("Mara grew up in a fishing village on the northern coast. Every morning she mended nets with her "
                "grandmother.\n\nWhen she was sixteen she left for the capital to study medicine, and she later "
                "became the first doctor of the village.")
    choice, options = S.multiple_choice(app_services, session, document, "What did Mara study in the capital?",
                                        ["Fishing", "Medicine", "Music", ""])
    assert options == ["Fishing", "Medicine", "Music"]
    assert choice.index == 1
    # An empty box between options shifted the letters of those after it;
    # two equal options could not both be right.
    with pytest.raises(InvalidInputError, match=r"^Option \(B\) is empty but a later one is not"):
        S.multiple_choice(app_services, session, document, "What did Mara study?", ["Fishing", " ", "Medicine", ""])
    with pytest.raises(InvalidInputError, match=r"^Options \(A\) and \(C\) are the same"):
        S.multiple_choice(app_services, session, document, "What did Mara study?", ["Medicine", "Music", "medicine ", ""])
    html = S.choice_html(choice, options)
    assert "Answer: <b>(B) Medicine</b>" in html
    with pytest.raises(InvalidInputError, match="at least two options"):
        S.multiple_choice(app_services, session, document, "Why?", ["Only one", " "])
    with pytest.raises(InvalidInputError, match="Paste the document"):
        S.multiple_choice(app_services, session, "", "Why?", ["a", "b"])
    S.use_document(app_services, session, document, "Mara")
    choice, _ = S.multiple_choice(app_services, session, "", "Where did Mara grow up?",
                                  ["In the capital", "In a fishing village"])
    assert choice.index == 1


def test_sessions_never_share_a_conversation(app_services):
    alice, bob = S.Session(), S.Session()
    play(app_services, alice, ADA)
    play(app_services, bob, "What is Paris?")
    assert [t.question for t in turns(alice)] == [ADA]
    assert [t.question for t in turns(bob)] == ["What is Paris?"]
    assert alice.id != bob.id


class RecordingRetriever:
    """The served retriever, noting each query it is asked."""

    def __init__(self, inner, queries):
        self.inner, self.queries = inner, queries

    def search(self, query, k):
        self.queries.append(query)
        return self.inner.search(query, k)


def recorded_queries(app_services) -> list:
    """The queries the served assistant searches from now on, as they come."""
    queries = []
    retriever = RecordingRetriever(app_services.assistant.retriever, queries)
    app_services.assistant = dataclasses.replace(app_services.assistant, retriever=retriever)
    return queries


def test_a_turn_and_its_correction_search_with_the_turn_befores_rewrite(app_services):
    queries = recorded_queries(app_services)
    session = S.Session()
    for question in (ADA, "What did she write about?", "What is Paris?"):
        play(app_services, session, question)
    S.correct(app_services, session, 1, "What did Ada Lovelace write about?")
    S.correct(app_services, session, 0, "Who was Ada Lovelace, the mathematician?")
    assert queries == [
        ADA,
        "What did she write about? " * 3 + "ada lovelace",
        "What is Paris? " * 3 + "write",  # turn 2's rewrite as it was then
        "What did Ada Lovelace write about? " * 3 + "ada lovelace",
        "Who was Ada Lovelace, the mathematician?",  # a first turn has no turn before
    ]

    # No history shown to the rewriter: no turn before to widen the search with.
    config = dataclasses.replace(app_services.assistant.config, history_turns=0)
    app_services.assistant = dataclasses.replace(app_services.assistant, config=config)
    queries.clear()
    session = S.Session()
    for question in (ADA, "What did she write about?"):
        play(app_services, session, question)
    S.correct(app_services, session, 1, "What did Ada Lovelace write about?")
    assert queries == [ADA, "What did she write about?", "What did Ada Lovelace write about?"]


def test_a_turn_after_an_ok_searches_with_the_topic_before_it(app_services):
    # "ok" is kept as asked (it asks nothing): the next turn's search was
    # widened with "ok" and lost the conversation's topic.
    queries = recorded_queries(app_services)
    session = S.Session()
    for question in (ADA, "ok", "What did she write about?"):
        play(app_services, session, question)
    S.correct(app_services, session, 2, "What did Ada Lovelace write about?")
    assert queries[2:] == ["What did she write about? " * 3 + "ada lovelace", "What did Ada Lovelace write about? " * 3 + "ada lovelace"]


def test_an_earlier_turn_can_be_selected_and_corrected_in_place(app_services):
    session = S.Session()
    for question in (ADA, "What did she write about?", "What is Paris?"):
        play(app_services, session, question)
    assert S.target_turn(session) == 2
    assert S.select_turn(session, 4) == 1  # message 4 = turn 2's rewrite step
    with pytest.raises(InvalidInputError):
        S.select_turn(session, 9)
    S.correct(app_services, session, S.target_turn(session), "What did Ada Lovelace write about?")
    assert [t.rewrite.text for t in turns(session)] == [
        ADA, "What did Ada Lovelace write about?", "What is Paris?"]
    assert turns(session)[2].answer.source_id == "paris"  # later turns stay as they were
    assert S.judge(app_services, session, S.target_turn(session), 1).startswith("Turn 2: recorded 👍")
    S.undo(session)
    assert S.target_turn(session) == 1 and session.selected is None


@pytest.mark.parametrize("leave", ["new", "switch"])
def test_an_answer_that_comes_after_its_conversation_was_left_is_not_added_to_the_next(app_services, monkeypatch, leave):
    # "New conversation" (a light event) pressed while a turn ran: the old
    # conversation's answer was appended to the new one, its history the old one's.
    session = S.Session()
    play(app_services, session, ADA)
    S.new_conversation(session)
    play(app_services, session, "What is Paris?")
    steps = app_services.assistant.steps

    def leaving(*args, **kwargs):
        for step in steps(*args, **kwargs):
            if not isinstance(step, Rewrite):
                S.new_conversation(session) if leave == "new" else S.switch_conversation(session, 1)
            yield step

    monkeypatch.setattr(app_services.assistant, "steps", leaving)
    with pytest.raises(InvalidInputError, match="was answered after its conversation was left"):
        play(app_services, session, "How many people live there?")
    expected = [] if leave == "new" else [ADA]
    assert [turn.question for turn in turns(session)] == expected


def test_stop_decides_whether_the_turn_under_way_is_added(app_services, qrecc_conversations):
    # Gradio's cancel does not stop a turn's thread: Stop said "the turn was
    # not added" and the turn, ending after it, was added (Play all showed a
    # turn more). Each interleaving is played here step by step.
    session = S.Session()
    run = S.ask(app_services, session, ADA)
    next(run)  # under way
    assert S.stop_turns(session) == S.StoppedTurns(asked=True, corrected=())  # Stop: a turn was under way
    with pytest.raises(InvalidInputError, match="^Stopped before “Who was Ada Lovelace\\?” was answered: it was not added"):
        list(run)  # its thread ends at its next stop check (the rewriter takes none: after it)
    assert turns(session) == [] and session.asking == 0
    play(app_services, session, ADA)  # ended before Stop: kept, and Stop says none was under way
    assert S.stop_turns(session).asked is False and len(session.turns) == 1
    # Play all stopped during its second turn: the first stays, the second is
    # not added and is the one ▶ Next turn plays.
    S.load_replay(session, qrecc_conversations)
    S.start_replay(session, "7")
    run = S.replay_rest(app_services, session)
    while not session.turns:
        next(run)
    assert S.stop_turns(session).asked is True
    with pytest.raises(InvalidInputError, match="it was not added"):
        list(run)
    assert len(session.turns) == 1 and session.replay.position == 1
    list(S.replay_step(app_services, session))
    assert [turn.question for turn in turns(session)] == [ADA, "Who was her father?"]
    # A turn begun after Stop is not stopped by it.
    session = S.Session()
    S.stop_turns(session)
    play(app_services, session, ADA)
    assert len(session.turns) == 1 and session.asking == 0


def test_stop_decides_whether_a_turn_re_run_with_a_correction_is_kept(app_services, monkeypatch):
    # "Re-run with your rewrite" took no part in Stop: Stop said nothing was
    # running, and the re-run, its thread running on, changed the turn after it.
    session = S.Session()
    play(app_services, session, ADA)
    play(app_services, session, "What did she write about?")
    S.judge(app_services, session, 1, 0)  # a 👎 waiting for its correction
    answer, stops = app_services.assistant.answer, []

    def stopping(*args, **kwargs):  # Stop pressed while the re-run searches
        stops.append(S.stop_turns(session))
        return answer(*args, **kwargs)

    monkeypatch.setattr(app_services.assistant, "answer", stopping)
    with pytest.raises(InvalidInputError, match="^Stopped before turn 2 was re-run with your rewrite: it is as it was"):
        S.correct(app_services, session, 1, "What did Ada Lovelace write about?")
    assert stops == [S.StoppedTurns(asked=False, corrected=(2,))] and session.correcting == []
    assert [turn.rewrite.text for turn in turns(session)] == [ADA, "What did she write about?"]
    assert infos(session)[1].reference == "" and infos(session)[1].awaiting_reference
    assert not app_services.labels.path.exists() or not read_labels(app_services.labels.path)  # the 👎 still waits

    def failing(*args, **kwargs):
        raise IndexNotFoundError("the index went away")

    monkeypatch.setattr(app_services.assistant, "answer", failing)  # a re-run that fails is over too
    with pytest.raises(IndexNotFoundError):
        S.correct(app_services, session, 1, "What did Ada Lovelace write about?")
    assert session.correcting == []
    # Ended before Stop: kept, and Stop says none was under way.
    monkeypatch.setattr(app_services.assistant, "answer", answer)
    S.correct(app_services, session, 1, "What did Ada Lovelace write about?")
    assert S.stop_turns(session) == S.StoppedTurns(asked=False, corrected=())
    assert turns(session)[1].rewrite.text == "What did Ada Lovelace write about?"
    assert infos(session)[1].reference_kind == "correction" and infos(session)[1].judgement == 0


def test_a_correction_that_comes_after_its_turn_was_undone_is_not_kept(app_services, monkeypatch):
    # "Re-run with this rewrite" after a 👎, then Undo before it finished: the
    # 👎 with the correction went to judge() on a session without the turn.
    session = S.Session()
    play(app_services, session, ADA)
    play(app_services, session, "What did she write about?")
    S.judge(app_services, session, 1, 0)
    answer = app_services.assistant.answer

    def undoing(*args, **kwargs):
        S.undo(session)
        return answer(*args, **kwargs)

    monkeypatch.setattr(app_services.assistant, "answer", undoing)
    with pytest.raises(InvalidInputError, match="Turn 2 was undone, or its conversation left, while it re-ran"):
        S.correct(app_services, session, 1, "What did Ada Lovelace write about?")
    assert [turn.rewrite.text for turn in turns(session)] == [ADA]
    assert not app_services.labels.path.exists() or not read_labels(app_services.labels.path)


def test_uploads_become_the_session_source_until_it_closes(app_services, tmp_path):
    app_services.sessions_root = tmp_path / "sessions"
    notes = tmp_path / "notes.md"
    notes.write_text("# Engines\n\nThe Difference Engine computed polynomial tables.")
    session = S.Session()
    assert S.use_uploads(app_services, session, [notes]) == "Answering from your upload (notes.md; 1 passage)."
    play(app_services, session, "What did the Difference Engine compute?")
    assert turns(session)[0].sources[0].id == "notes.md#0"
    [folder] = (tmp_path / "sessions").iterdir()
    session.close()
    assert not folder.exists() and session.source is None


def test_an_index_of_uploads_a_conversation_keeps_goes_for_room_when_indexing_more(app_services, tmp_path):
    visitor = "93.184.216.34"
    services = dataclasses.replace(app_services, sessions_root=tmp_path / "sessions",
                                   limits=S.UploadLimits(client_indexes=1))
    engines, lamps = tmp_path / "engines.md", tmp_path / "lamps.md"
    engines.write_text("The Difference Engine computed polynomial tables.")
    lamps.write_text("The Old Point lighthouse was first kept by Thomas Hale.")
    session = S.Session()
    S.use_uploads(services, session, [engines], visitor)
    play(services, session, "What did the Difference Engine compute?")
    [first] = (tmp_path / "sessions").iterdir()
    # One index a visitor: conversation 1's goes for the new one's room.
    assert S.use_uploads(services, session, [lamps], visitor).startswith("Answering from your upload (lamps.md")
    assert not first.exists() and services.client_indexes.held(visitor) == 1
    play(services, session, "Who first kept the Old Point lighthouse?")
    # Picked again, its uploads are indexed again from their files, conversation 2's index let go for the room.
    status = S.switch_conversation(session, 1, services, visitor)
    assert status == "Back to conversation 1 (1 turn). Its answers come from your upload (engines.md; 1 passage)."
    play(services, session, "What did the Difference Engine compute?")
    assert turns(session)[-1].sources[0].id == "engines.md#0"
    assert services.client_indexes.held(visitor) == 1 and len(list((tmp_path / "sessions").iterdir())) == 1
    # Files gone since (the page closed, the server cleared them) are said so, and the collection answers.
    lamps.unlink()
    status = S.switch_conversation(session, 2, services, visitor)
    assert "It was answered from your upload (lamps.md; 1 passage), which cannot be taken again: the file lamps.md " \
           "is no longer on the server" in status
    assert session.source is None and services.client_indexes.held(visitor) == 1  # conversation 1 keeps its own
    session.close()
    assert services.client_indexes.held(visitor) == 0 and list((tmp_path / "sessions").iterdir()) == []


def test_a_reloaded_page_reads_its_uploads_again_while_their_files_are_on_the_server(app_services, tmp_path):
    visitor = "93.184.216.34"
    services = dataclasses.replace(app_services, sessions_root=tmp_path / "sessions")
    engines, lamps, volcano = tmp_path / "engines.md", tmp_path / "lamps.md", tmp_path / "volcano.txt"
    engines.write_text("The Difference Engine computed polynomial tables.")
    lamps.write_text("The Old Point lighthouse was first kept by Thomas Hale.")
    volcano.write_text(VOLCANO)
    before = S.Session()
    S.track_uploads(before, [engines, lamps, volcano])  # as the app does: the page's uploads
    S.use_uploads(services, before, [engines, lamps], visitor)
    play(services, before, "Who first kept the Old Point lighthouse?")
    S.use_document_file(services, before, volcano, visitor)
    play(services, before, "When did Mount Kessel last erupt?")
    copy_ = json.loads(json.dumps(S.saved_state(before)))
    assert str(tmp_path) not in json.dumps(copy_)  # the copy still names no path on the server
    # The reloaded page's session (Gradio ends the one before an hour later).
    reloaded = S.Session()
    S.restore_state(reloaded, copy_)
    # A pick leaves the index to be built again by a queued event (the app's take_again), which says so.
    status = S.switch_conversation(reloaded, 1, services, visitor, later=True)
    assert status == ("Back to conversation 1 (1 turn). It was answered from your uploads (engines.md, lamps.md; "
                      "2 passages), which is being read again from the files on the server: its answers come from it "
                      "once it is (a question asked meanwhile waits for it).")
    assert reloaded.source is None and S.waiting_for(reloaded).name.startswith("your uploads (engines.md, lamps.md")
    assert S.source_status(services, reloaded) == ("Reading your uploads (engines.md, lamps.md; 2 passages) again from "
                                                   "the files on the server…")
    assert S.saved_state(reloaded)["sources"]["1"] == copy_["sources"]["1"]  # saved meanwhile, it keeps its source
    assert S.take_waiting(services, reloaded, visitor) == "Its answers come from your uploads (engines.md, lamps.md; " \
                                                          "2 passages)."
    assert S.take_waiting(services, reloaded, visitor) == "" and S.waiting_for(reloaded) is None
    play(services, reloaded, "Who first kept it?")
    assert turns(reloaded)[-1].sources[0].id == "lamps.md#0"
    # The uploaded document too (read at once where not left for later).
    assert S.switch_conversation(reloaded, 2, services, visitor) == (
        "Back to conversation 2 (1 turn). Its answers come from the document “volcano” (1 passage).")
    # The page before ends: the files stay, the reloaded page holds them now.
    before.close()
    assert engines.is_file() and lamps.is_file() and volcano.is_file()
    # A copy of another browser that names the same sources without their tokens cannot read them.
    other = S.Session()
    S.restore_state(other, {**copy_, "id": "0123456789ab", "sources": {
        key: {k: v for k, v in value.items() if k != "token"} for key, value in copy_["sources"].items()}})
    assert "which cannot be taken again: documents are not kept" in S.switch_conversation(other, 1, services, visitor)
    reloaded.close()
    assert not engines.exists() and not volcano.exists()


def _from_uploads_then_a_document(services, session, upload, client=None):
    """Two conversations of ``session``: one answered from ``upload`` indexed
    (a Markdown file written here), then one from a volcano document uploaded
    beside it, as the page's uploads; returns ``upload``."""
    volcano = upload.parent / "volcano.txt"
    upload.write_text("The Difference Engine computed polynomial tables.")
    volcano.write_text(VOLCANO)
    S.track_uploads(session, [upload, volcano])
    S.use_uploads(services, session, [upload], client)
    play(services, session, "What did the Difference Engine compute?")
    S.use_document_file(services, session, volcano, client)
    play(services, session, "When did Mount Kessel last erupt?")
    return upload


def _saved_from_uploads_then_a_document(app_services, tmp_path):
    """The services (sessions kept under ``tmp_path``), a session with
    :func:`_from_uploads_then_a_document`'s two conversations, and the
    browser's copy of it, as a reload hands it back."""
    services = dataclasses.replace(app_services, sessions_root=tmp_path / "sessions")
    before = S.Session()
    _from_uploads_then_a_document(services, before, tmp_path / "engines.md")
    return services, before, json.loads(json.dumps(S.saved_state(before)))


def test_a_forged_copy_with_anothers_browser_id_reads_none_of_their_uploads(app_services, tmp_path):
    # The browser's id is no secret (an export's file name and contents and
    # each labels line show it), and the browser's copy can be forged: a
    # copy naming a victim's id and an uploaded source's kind and name got
    # the victim's files indexed and shown. An uploaded source has a token
    # of its own now, in the browser's sealed copy alone.
    visitor, stranger = "93.184.216.34", "198.51.100.7"
    services = dataclasses.replace(app_services, sessions_root=tmp_path / "sessions")
    victim = S.Session()
    diary = _from_uploads_then_a_document(services, victim, tmp_path / "diary.md", visitor)
    copy_ = json.loads(json.dumps(S.saved_state(victim)))
    tokens = [copy_["sources"][key]["token"] for key in ("1", "2")]
    assert all(len(token) >= 22 for token in tokens) and tokens[0] != tokens[1]
    # Nothing the visitor or another sees carries a token: the export (its
    # contents; its file name has the browser's id), a labels line, the views.
    export = S.write_export(victim, tmp_path / "export")
    exported = [export.read_text()]
    S.judge(services, victim, 0, 1)
    S.switch_conversation(victim, 1, services, visitor)
    exported.append(S.write_export(victim, tmp_path / "export").read_text())
    shown = " ".join([*exported, services.labels.path.read_text(), S.source_status(services, victim), victim.id])
    assert victim.id in export.name and victim.id in services.labels.path.read_text()
    assert sorted(json.loads(text)[0]["Source"]["kind"] for text in exported) == ["document", "uploads"]
    assert not any(token in shown for token in tokens)
    # A forged copy: the victim's id and sources, no token, a guessed one,
    # or the token of the victim's other source (its kind and name differ).
    forged = []
    for token in (None, "A" * 22, tokens[1]):
        sources = {"1": {k: v for k, v in copy_["sources"]["1"].items() if k != "token"}}
        if token is not None:
            sources["1"]["token"] = token
        forged.append({**copy_, "sources": sources, "current": 2})
    forged.append({**copy_, "sources": {"2": {k: v for k, v in copy_["sources"]["2"].items() if k != "token"}},
                   "current": 1})
    for copy_of in forged:
        other = S.Session()
        S.restore_state(other, copy_of)
        assert other.id == victim.id
        number = 2 if copy_of["current"] == 1 else 1
        status = S.switch_conversation(other, number, services, stranger)
        assert "which cannot be taken again: documents are not kept" in status, status
        assert other.source is None and other.files.uploads == set()
        other.close()
    # Nor does the forger's own upload of the same name overwrite the victim's entry.
    decoy = tmp_path / "decoy" / "diary.md"
    decoy.parent.mkdir()
    decoy.write_text("Nothing about engines here.")
    forger = S.Session()
    S.restore_state(forger, {**copy_, "sources": {}})
    S.use_uploads(services, forger, [decoy], stranger)
    again = S.Session()
    S.restore_state(again, copy_)
    assert S.switch_conversation(again, 1, services, visitor).endswith("Its answers come from your upload (diary.md; "
                                                                        "1 passage).")
    assert again.source.origin.files == (str(diary),)
    for session in (forger, again, victim):
        session.close()


def test_uploads_with_long_names_are_read_again_after_a_reload(app_services, tmp_path):
    # The browser's copy is read with a source's name cut to 300 characters:
    # looked up by the cut name, uploads with long file names were said
    # "not kept across a reload".
    visitor = "93.184.216.34"
    services = dataclasses.replace(app_services, sessions_root=tmp_path / "sessions")
    paths = []
    for n, text in enumerate(["The Difference Engine computed polynomial tables.",
                              "The Old Point lighthouse was first kept by Thomas Hale."]):
        path = tmp_path / f"{n}-{'a-very-long-file-name-' * 9}.md"
        path.write_text(text)
        paths.append(path)
    before = S.Session()
    S.track_uploads(before, paths)
    S.use_uploads(services, before, paths, visitor)
    play(services, before, "Who first kept the Old Point lighthouse?")
    S.use_default_collection(services, before)
    S.new_conversation(before)
    copy_ = json.loads(json.dumps(S.saved_state(before)))
    # The source's name shows each file's cut short (shown_name); the files keep their long names.
    assert len(before.archive) == 1 and all(len(path.name) > 200 for path in paths)
    reloaded = S.Session()
    S.restore_state(reloaded, copy_)
    status = S.switch_conversation(reloaded, 1, services, visitor)
    assert "Its answers come from your uploads (0-a-very-long" in status, status
    play(services, reloaded, "Who first kept it?")
    assert turns(reloaded)[-1].sources[0].id.startswith("1-a-very-long")
    for session in (before, reloaded):
        session.close()


def test_uploads_read_again_once_at_a_time_and_kept_by_their_conversation_when_it_is_left_meanwhile(
        app_services, tmp_path, monkeypatch):
    import threading
    from conftest import GatedReading

    services = dataclasses.replace(app_services, sessions_root=tmp_path / "sessions")
    engines = tmp_path / "engines.md"
    engines.write_text("The Difference Engine computed polynomial tables.")
    before = S.Session()
    S.use_uploads(services, before, [engines])
    play(services, before, "What did the Difference Engine compute?")
    S.new_conversation(before)
    S.use_default_collection(services, before)
    play(services, before, "What is Paris?")
    copy_ = json.loads(json.dumps(S.saved_state(before)))
    # Each index built again waits at its end until the test lets it go on.
    held = GatedReading(monkeypatch, services.assistant)
    gate, builds, started = held.gate, held.builds, held.started
    said = {}

    def take(name, session):
        thread = threading.Thread(target=lambda: said.__setitem__(name, S.take_waiting(services, session)))
        thread.start()
        return thread

    class Watched:
        """A session's lock that tells when a taker finds it held, and waits."""

        def __init__(self):
            self.lock, self.waiting = threading.Lock(), threading.Event()

        def acquire(self, stop=None):
            if not self.lock.acquire(blocking=False):
                self.waiting.set()
                self.lock.acquire()
            return True

        def release(self):
            self.lock.release()

    # A second taker (a question asked meanwhile) waits for the first, then finds it taken.
    reloaded = S.Session()
    S.restore_state(reloaded, copy_)
    S.switch_conversation(reloaded, 1, services, later=True)
    reloaded.taking = Watched()
    first = take("first", reloaded)
    assert started(1)
    second = take("second", reloaded)
    assert reloaded.taking.waiting.wait(60)  # the second waits on the lock the first holds
    assert second.is_alive() and len(builds) == 1
    gate.set()
    first.join(60), second.join(60)
    assert len(builds) == 1  # not built twice
    assert said == {"first": "Its answers come from your upload (engines.md; 1 passage).", "second": ""}
    # A conversation left while its uploads are indexed again keeps them; the one picked keeps its own.
    gate.clear()
    left = S.Session()
    S.restore_state(left, copy_)
    S.switch_conversation(left, 1, services, later=True)
    taking = take("left", left)
    assert started(2)
    assert S.switch_conversation(left, 2, services) == (
        f"Back to conversation 2 (1 turn). Its answers come from {services.collection_name}.")
    gate.set()
    taking.join(60)
    assert said["left"] == "" and left.source is None
    assert S.switch_conversation(left, 1, services) == (
        "Back to conversation 1 (1 turn). Its answers come from your upload (engines.md; 1 passage).")
    assert len(builds) == 2


def test_uploads_read_again_are_held_while_they_are_read_and_let_go_when_the_reading_fails(
        app_services, tmp_path, monkeypatch):
    # Held only once read, the files of uploads read again were deleted
    # under the reading when the page before the reload ended meanwhile.
    visitor = "93.184.216.34"
    services = dataclasses.replace(app_services, sessions_root=tmp_path / "sessions",
                                   limits=dataclasses.replace(app_services.limits, client_indexes=1))
    engines = tmp_path / "engines.md"
    engines.write_text("The Difference Engine computed polynomial tables.")
    before = S.Session()
    S.track_uploads(before, [engines])  # as the app does: the page's uploads
    S.use_uploads(services, before, [engines])
    play(services, before, "What did the Difference Engine compute?")
    copy_ = json.loads(json.dumps(S.saved_state(before)))
    real, seen = services.assistant.rescorer_for, []

    def ending(*args, **kwargs):  # the page before the reload ends while its uploads are read again
        before.close()
        seen.append(engines.is_file())
        return real(*args, **kwargs)

    monkeypatch.setattr(services.assistant, "rescorer_for", ending)
    reloaded = S.Session()
    S.restore_state(reloaded, copy_)
    assert S.take_waiting(services, reloaded, visitor) == "Its answers come from your upload (engines.md; 1 passage)."
    assert seen == [True] and engines.is_file()
    # A reading refused (the visitor's one index is held) holds the files no more.
    other = S.Session()
    S.restore_state(other, copy_)
    assert "which cannot be taken again: Your other pages or sessions already answer from 1 index" in \
        S.take_waiting(services, other, visitor)
    reloaded.close()
    assert not engines.exists()
    other.close()



def test_uploads_read_again_after_a_reload_count_once_the_page_before_has_gone(app_services, tmp_path):
    # For an hour after a reload (until Gradio ends the session of the page
    # before), that page's index and the one read again from the same files
    # both counted against the visitor's and its network's shares: a
    # visitor could read fewer of its uploads again than it had. Two open
    # pages (tabs) that each read them again hold two indexes: both count.
    visitor, network = "93.184.216.34", "93.184.216.0/24"
    limits = dataclasses.replace(app_services.limits, client_indexes=2, network_indexes=2)
    services = dataclasses.replace(app_services, sessions_root=tmp_path / "sessions", limits=limits)
    engines = tmp_path / "engines.md"
    engines.write_text("The Difference Engine computed polynomial tables.")
    before = S.Session()
    S.track_uploads(before, [engines])
    S.use_uploads(services, before, [engines], visitor)
    play(services, before, "What did the Difference Engine compute?")
    copy_ = json.loads(json.dumps(S.saved_state(before)))

    def held():
        return services.client_indexes.held(visitor), services.network_indexes.held(network)

    # The page before goes (S.abandon, when the page is closed or reloaded), then its uploads are read again.
    S.abandon(before)
    assert held() == (1, 1)  # gone, it may come back: still counted until read again
    reloaded = S.Session()
    S.restore_state(reloaded, copy_)
    assert S.take_waiting(services, reloaded, visitor) == "Its answers come from your upload (engines.md; 1 passage)."
    assert held() == (1, 1)
    before.close()
    assert held() == (1, 1)
    # A second page (a tab) reads them again while the first is open: both count.
    tab = S.Session()
    S.restore_state(tab, copy_)
    assert S.take_waiting(services, tab, visitor).startswith("Its answers come from your upload")
    assert held() == (2, 2)
    # Read again before the page before went: counted once it goes.
    S.abandon(reloaded)
    assert held() == (1, 1)
    # With the page before gone, the visitor's share has room for the one read again.
    third = S.Session()
    S.restore_state(third, copy_)
    S.abandon(tab)
    services.limits = dataclasses.replace(limits, client_indexes=1, network_indexes=1)
    assert S.take_waiting(services, third, visitor).startswith("Its answers come from your upload")
    assert held() == (1, 1)
    play(services, third, "What did it compute?")
    assert turns(third)[-1].sources[0].id == "engines.md#0"
    for session in (reloaded, tab, third):
        session.close()
    assert held() == (0, 0)
    # An uploaded document read again: its text counted once, with the visitor's share just its size.
    volcano = tmp_path / "volcano.txt"
    volcano.write_text(VOLCANO)
    size, mb = len(VOLCANO.encode()), 2**20
    page = S.Session()
    S.track_uploads(page, [volcano])
    S.use_document_file(services, page, volcano, visitor)
    play(services, page, "When did Mount Kessel last erupt?")
    copy_ = json.loads(json.dumps(S.saved_state(page)))
    S.abandon(page)
    services.limits = dataclasses.replace(limits, client_held_mb=(size + 0.5) / mb, network_held_mb=(size + 0.5) / mb)
    after = S.Session()
    S.restore_state(after, copy_)
    assert S.take_waiting(services, after, visitor) == "Its answers come from the document “volcano” (1 passage)."
    assert services.client_text.held(visitor) == services.network_text.held(network) == size
    for session in (page, after):
        session.close()
    assert services.client_text.held(visitor) == 0


def test_a_correction_and_a_multiple_choice_wait_for_the_source_being_read_again(app_services, tmp_path):
    # Only a question waited for a source being read again after a reload: a
    # re-run with a correction was answered from the default collection
    # meanwhile, and a multiple choice about the document found none.
    services, before, copy_ = _saved_from_uploads_then_a_document(app_services, tmp_path)
    reloaded = S.Session()
    S.restore_state(reloaded, copy_)
    assert S.waiting_for(reloaded).kind == "document" and reloaded.source is None
    choice, _ = S.multiple_choice(services, reloaded, "", "When did Mount Kessel last erupt?",
                                  ["In 1723", "In 1066", "In 1999", ""])
    assert choice.index == 0 and reloaded.source.kind == "document" and S.waiting_for(reloaded) is None
    assert reloaded.notes == ["Its answers come from the document “volcano” (1 passage)."]
    S.switch_conversation(reloaded, 1, services, later=True)
    assert S.waiting_for(reloaded).kind == "uploads"
    S.correct(services, reloaded, 0, "What did the Difference Engine compute?")
    assert turns(reloaded)[0].sources[0].id == "engines.md#0"
    # A question asked through the session layer itself (the API's, a replay's) waits too.
    other = S.Session()
    S.restore_state(other, copy_)
    S.switch_conversation(other, 1, services, later=True)
    play(services, other, "What did it compute?")
    assert turns(other)[-1].sources[0].id == "engines.md#0"
    for session in (before, reloaded, other):
        session.close()



def test_a_new_conversation_started_while_its_source_is_read_again_waits_for_it_too(app_services, tmp_path,
                                                                                     monkeypatch):
    # "New conversation" pressed after a reload, while the conversation's
    # uploads were read again, answered the new one from the default
    # collection: a new conversation keeps the source of the one left, and
    # that one was waiting for it. A document read again the same way; and
    # "Back to the default collection" is how to leave it, as for a source held.
    import threading
    from conftest import GatedReading

    services, before, copy_ = _saved_from_uploads_then_a_document(app_services, tmp_path)
    # Before the reading began: the new conversation waits for the document, and says so.
    reloaded = S.Session()
    S.restore_state(reloaded, copy_)
    assert S.new_conversation(reloaded) == (
        "New conversation. Its answers come from the document “volcano” (1 passage) once it is read again from the "
        "files on the server (a question asked meanwhile waits for it).")
    assert reloaded.conversation_no == 3 and S.waiting_for(reloaded).kind == "document"
    play(services, reloaded, "When did Mount Kessel last erupt?")
    assert turns(reloaded)[0].sources[0].id.startswith("volcano") and reloaded.source.kind == "document"
    assert reloaded.sources["2"] is reloaded.source  # read once, for both conversations
    # While the reading runs: the new conversation gets what it reads.
    held = GatedReading(monkeypatch, services.assistant)
    reading = S.Session()
    S.restore_state(reading, copy_)
    S.switch_conversation(reading, 1, services, later=True)
    said = {}
    thread = threading.Thread(target=lambda: said.__setitem__("read", S.take_waiting(services, reading)))
    thread.start()
    assert held.started() and S.new_conversation(reading).startswith("New conversation. Its answers come from your upload")
    held.gate.set()
    thread.join(60)
    assert said["read"] == "Its answers come from your upload (engines.md; 1 passage)."
    assert reading.source is not None and reading.sources["1"] is reading.source and len(held.builds) == 1
    play(services, reading, "What did the Difference Engine compute?")
    assert turns(reading)[0].sources[0].id == "engines.md#0"
    # An empty conversation waiting for its source keeps waiting (it keeps its number).
    empty = S.Session()
    S.restore_state(empty, copy_)
    S.new_conversation(empty)
    assert S.new_conversation(empty).startswith("New conversation. Its answers come from the document")
    assert empty.conversation_no == 3 and S.waiting_for(empty).kind == "document"
    # Back to the default collection: it waits no more.
    assert S.use_default_collection(services, empty) == f"Answering from {services.collection_name}."
    assert S.waiting_for(empty) is None
    play(services, empty, ADA)
    assert turns(empty)[0].sources[0].id == "ada"
    for session in (before, reloaded, reading, empty):
        session.close()



def test_a_stop_while_a_turn_waits_for_its_source_read_again_ends_it_before_it_runs(app_services, tmp_path,
                                                                                      monkeypatch):
    # Stop pressed while a question or a re-run waited for the source being
    # read again found nothing under way (the turn registered only once its
    # source was read), and the turn then ran and was kept.
    import threading
    from conftest import GatedReading

    services, before, copy_ = _saved_from_uploads_then_a_document(app_services, tmp_path)
    for turn, cut, said in [
        (lambda session: play(services, session, "What did it compute?"),
         S.StoppedTurns(True, (), "your upload (engines.md; 1 passage)"),
         "Stopped before “What did it compute?” was asked (it waited for its source to be read again): it was not "
         "added."),
        (lambda session: S.correct(services, session, 0, "What did the Difference Engine compute?"),
         S.StoppedTurns(False, (1,)),
         "Stopped before turn 1 was re-run with your rewrite (it waited for its source to be read again): it is as "
         "it was."),
    ]:
        session = S.Session()
        S.restore_state(session, copy_)
        S.switch_conversation(session, 1, services, later=True)
        rewrite = session.turns[0].turn.rewrite
        held = GatedReading(monkeypatch, services.assistant)
        errors = []

        def run(session=session, turn=turn, errors=errors):
            try:
                turn(session)
            except InvalidInputError as error:
                errors.append(str(error))

        thread = threading.Thread(target=run)
        thread.start()
        assert held.started()
        assert S.stop_turns(session) == cut
        held.gate.set()
        thread.join(60)
        assert errors == [said]
        assert len(session.turns) == 1 and session.turns[0].turn.rewrite == rewrite
        assert session.source is not None and (session.asking, session.awaiting, session.correcting) == (0, 0, [])
        session.close()
    before.close()


def test_replay_paths_must_lie_in_the_shared_data_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("CONVQA_DATA", str(tmp_path / "data"))
    (tmp_path / "data" / "qrecc").mkdir(parents=True)
    inside = tmp_path / "data" / "qrecc" / "x.json"
    assert S.shared_data_file(f"  {tmp_path}/data/qrecc/../qrecc/x.json ") == inside
    monkeypatch.chdir(tmp_path)  # a relative path is the data folder's, not the server's working folder's
    assert S.shared_data_file("qrecc/x.json") == S.shared_data_file("./qrecc/x.json ") == inside
    for outside in ("/etc/passwd", f"{tmp_path}/data/../secret.json", "../secret.json"):
        with pytest.raises(InvalidInputError, match="Only files in the data folder can be opened by path"):
            S.shared_data_file(outside)


def test_the_pipeline_streams_the_rewrite_then_the_turn(tiny_assistant):
    steps = tiny_assistant.steps("  Who was her father?  ", [ADA, "A mathematician."])
    rewrite = next(steps)
    assert rewrite == Rewrite("Who was her father?")
    [turn] = list(steps)
    assert (turn.question, turn.rewrite) == ("Who was her father?", rewrite)
    assert turn.timings_ms["rewrite"] >= 0.0
    with pytest.raises(InvalidInputError, match="Please type a question"):
        next(tiny_assistant.steps("  ", []))


def test_without_a_scorer_turns_are_not_scored(app_services, qrecc_conversations):
    assert app_services.scorer is None
    session = S.Session()
    S.load_replay(session, qrecc_conversations)
    S.start_replay(session, "7")
    list(S.replay_step(app_services, session))
    assert infos(session)[0].reference == ADA and infos(session)[0].scores == {}
    assert S.metrics_rows(session) == [] and S.metrics_points(session) == []


def test_conversations_round_trip_through_the_browser_json(app_services):
    session = S.Session()
    play(app_services, session, ADA)
    play(app_services, session, "Who was her father?")
    S.judge(app_services, session, 0, 1)
    assert S.new_conversation(session) == "New conversation."
    play(app_services, session, "What is Paris?")
    saved = json.loads(json.dumps(S.saved_state(session)))  # what the browser keeps: plain JSON
    assert saved["current"] == 2 and sorted(saved["conversations"]) == ["1", "2"]
    # A new tab (or the same one after a reload or a server restart) gets them back.
    restored = S.Session()
    assert S.restore_state(restored, saved) == "Restored 2 conversations saved in this browser."
    assert restored.id == session.id  # labels' ids stay the same
    assert S.chat_messages(restored) == S.chat_messages(session)
    assert S.conversation_choices(restored) == [(f"1: {ADA}", 1), ("2: What is Paris?", 2)]
    assert S.switch_conversation(restored, 1) == "Back to conversation 1 (2 turns). Its answers come from the default collection."
    assert [t.question for t in turns(restored)] == [ADA, "Who was her father?"]
    assert infos(restored)[0].judgement == 1 and infos(restored)[1].history == (ADA, turns(restored)[0].answer.text)
    # The restored conversation goes on with its own history.
    play(app_services, restored, "What did she write about?")
    assert infos(restored)[2].history[:2] == (ADA, turns(restored)[0].answer.text)
    assert S.switch_conversation(restored, 2).startswith("Back to conversation 2 (1 turn)")
    S.new_conversation(restored)
    assert restored.conversation_no == 3 and sorted(restored.archive) == ["1", "2"]
    with pytest.raises(InvalidInputError, match="no conversation 9"):
        S.switch_conversation(restored, 9)


def test_unreadable_saved_conversations_are_refused_whole(app_services):
    session = S.Session()
    assert S.restore_state(session, None) == ""
    for bad in ("text", {"version": 1}, {"version": 1, "current": 1, "conversations": {"1": [{"turn": {}}]}},
                {"version": 0, "current": 1, "conversations": {}}):
        with pytest.raises(DataFormatError):
            S.restore_state(session, bad)
        assert session.turns == [] and session.archive == {}


def test_null_and_broken_questions_through_the_api_get_a_message(app_services):
    session = S.Session()
    for question, message in ((None, "Please type a question."), ("Who was \ud800 Ada?", "not valid text")):
        result = S.ask_json(app_services, session, question)
        assert message in result["error"]
        json.dumps(result, ensure_ascii=False).encode("utf-8")  # it can be sent back
    assert S.ask_json(app_services, session, "Who was \ud800 Ada?")["question"] == "Who was ? Ada?"
    assert S.ask_json(app_services, session, 42)["question"] is None
    assert S.ask_json(app_services, session, ADA)["turn"] == 1


def test_one_document_mode_applies_the_upload_limits(app_services, tmp_path):
    session = S.Session()
    limits = S.UploadLimits(max_file_mb=0.001)  # 1,048 bytes
    big = tmp_path / "big.txt"
    big.write_text("Ada wrote notes. " * 100)
    services = dataclasses.replace(app_services, limits=limits)
    with pytest.raises(InvalidInputError, match="big.txt is 0.0 MB; files are limited to 0.001 MB each"):
        S.use_document_file(services, session, big)
    with pytest.raises(InvalidInputError, match="unsupported file type"):
        S.use_document_file(services, session, tmp_path / "notes.exe")
    with pytest.raises(InvalidInputError, match="documents are limited to 0.001 MB"):
        S.use_document(services, session, big.read_text(), "pasted")
    assert session.source is None
    small = tmp_path / "small.txt"
    small.write_text("Ada wrote notes.")
    assert S.use_document_file(services, session, small).startswith("Answering from the document “small”")


def test_a_markdown_document_is_read_without_its_heading_marks(app_services, tmp_path):
    # "## Keepers" was part of the one-document mode's passages and answers.
    session = S.Session()
    doc = tmp_path / "lighthouse.md"
    doc.write_text("# The Old Point lighthouse\n\nIt was built in 1801.\n\n## Keepers\n\nIts first keeper was Thomas Hale.\n")
    S.use_document_file(app_services, session, doc)
    assert "#" not in session.source.text and "Keepers" in session.source.text


def test_a_closed_session_deletes_its_uploaded_files(tmp_path):
    session = S.Session()
    folder = tmp_path / "gradio" / "abc123"
    folder.mkdir(parents=True)
    (folder / "notes.txt").write_text("x")
    shared = tmp_path / "gradio" / "other"
    shared.mkdir()
    (shared / "a.txt").write_text("a")
    (shared / "b.txt").write_text("b")
    S.track_uploads(session, [str(folder / "notes.txt"), shared / "a.txt", None])
    session.close()
    assert not folder.exists() and not (shared / "a.txt").exists()
    assert (shared / "b.txt").exists() and session.uploads == set()


def test_a_tracked_folder_is_left_alone_and_the_files_beside_it_still_deleted(tmp_path):
    # Its unlink raised IsADirectoryError, out of close() or, unraisable, out
    # of the session's finalizer, and the uploads after it stayed on disk.
    session = S.Session()
    folder = tmp_path / "a_folder"
    (folder / "inside").mkdir(parents=True)
    (folder / "inside" / "keep.txt").write_text("k")
    upload = tmp_path / "gradio" / "zzz" / "notes.txt"
    upload.parent.mkdir(parents=True)
    upload.write_text("x")
    S.track_uploads(session, [str(folder), str(upload)])
    session.close()
    assert (folder / "inside" / "keep.txt").exists() and not upload.exists() and session.uploads == set()


def test_an_upload_two_sessions_share_is_deleted_when_the_last_of_them_ends(tmp_path):
    # Gradio names an upload's copy by its content: two visitors uploading
    # the same file share it, and the first to leave deleted the other's.
    upload = tmp_path / "gradio" / "0f1e2d" / "notes.txt"
    upload.parent.mkdir(parents=True)
    upload.write_text("Ada Lovelace wrote notes.")
    first, second = S.Session(), S.Session()
    S.track_uploads(first, [str(upload)])
    S.track_uploads(first, [str(upload)])  # the same file given again (Index pressed twice)
    S.track_uploads(second, [str(upload)])
    first.close()
    assert S.check_uploads([upload]) == [upload]
    second.close()
    assert not upload.exists() and not upload.parent.exists()


def test_a_session_dropped_unclosed_deletes_its_files_once_collected(app_services, tmp_path):
    # Gradio drops the oldest sessions past its capacity without closing
    # them: their uploads and export stayed on the server's disk for good.
    session = S.Session()
    upload = tmp_path / "gradio" / "abc123" / "notes.txt"
    upload.parent.mkdir(parents=True)
    upload.write_text("x")
    S.track_uploads(session, [str(upload)])
    for _ in S.ask(app_services, session, "Who was Ada Lovelace?"):
        pass
    export = S.write_export(session, tmp_path / "exports")
    copied = copy.deepcopy(session)  # owns none of its files
    del copied
    gc.collect()
    assert upload.exists() and export.exists()
    del session
    gc.collect()
    assert not upload.exists() and not upload.parent.exists() and not export.exists()


def test_a_full_disk_refuses_a_judgement_and_an_export_clearly_and_keeps_the_conversation(app_services, tmp_path,
                                                                                             monkeypatch):
    # Both were "Something went wrong (OSError)", and the export left a file
    # cut short on the disk that nothing deleted.
    session = S.Session()
    for _ in S.ask(app_services, session, ADA):
        pass
    writes = os.write

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(InvalidInputError, match=r"^This judgement was not recorded: the server's storage is full\. "
                                                r"Nothing else is lost"):
        S.judge(app_services, session, 0, 1)
    monkeypatch.setattr(os, "write", writes)
    assert session.judgements == 0 and session.turns[0].info.judgement is None

    def cut_short(path, text, encoding=None):
        with open(path, "w", encoding=encoding) as file:
            file.write(text[:10])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_text", cut_short)
    with pytest.raises(InvalidInputError, match="^The conversation could not be exported: the server's storage is full"):
        S.write_export(session, tmp_path / "exports")
    monkeypatch.undo()
    assert list((tmp_path / "exports").iterdir()) == [] and session.export == ""
    assert len(session.turns) == 1
    S.judge(app_services, session, 0, 1)
    assert S.write_export(session, tmp_path / "exports").exists() and len(app_services.labels.read()) == 1


def test_toggling_a_thumb_writes_a_line_only_when_the_judgement_changes(app_services, qrecc_conversations):
    session = S.Session()
    S.load_replay(session, qrecc_conversations)
    S.start_replay(session, "7")
    list(S.replay_step(app_services, session))
    for label in (1, 1, 0, 0, 1):
        S.judge(app_services, session, 0, label)
    assert [line["label"] for line in app_services.labels.read()] == [1, 0, 1]


@pytest.mark.parametrize("rewrites", [True, False])
def test_the_rewriter_sees_earlier_turns_as_they_were_rewritten_unless_told_otherwise(app_services, rewrites):
    import dataclasses

    seen = []
    inner = app_services.assistant.rewriter

    class Recording:
        def rewrite(self, question, history):
            seen.append(list(history))
            return inner.rewrite(question, history)

    config = dataclasses.replace(app_services.assistant.config, history_rewrites=rewrites)
    app_services.assistant = dataclasses.replace(app_services.assistant, rewriter=Recording(), config=config)
    session = S.Session()
    for question in (ADA, "What did she write about?"):
        play(app_services, session, question)
    S.correct(app_services, session, 1, "What did Ada Lovelace write about?")  # the user's rewrite now stands for turn 2
    play(app_services, session, "When did she die?")
    turns = [entry.turn for entry in session.turns]
    assert seen[-1] == [ADA, turns[0].answer.text,
                        "What did Ada Lovelace write about?" if rewrites else "What did she write about?", turns[1].answer.text]


def test_the_rewrite_step_names_the_other_candidates_the_search_used(app_services):
    import dataclasses

    class Candidates:
        def rewrite(self, question, history):
            return Rewrite(question, alternatives=("Who was Ada Lovelace's father?",) if history else ())

    app_services.assistant = dataclasses.replace(app_services.assistant, rewriter=Candidates())
    session = S.Session()
    for question in (ADA, "Who was her father?"):
        play(app_services, session, question)
    steps = [m["content"] for m in S.chat_messages(session) if m.get("metadata", {}).get("title", "").startswith("🔁")]
    assert "candidates" not in steps[0]
    assert "_Picked among candidates; the search also used the others: Who was Ada Lovelace's father?_" in steps[1]
    # A corrected rewrite is searched alone: the others no longer apply.
    S.correct(app_services, session, 1, "Who was Lord Byron?")
    assert not any("candidates" in m["content"] for m in S.chat_messages(session) if m["role"] == "assistant")


def test_uploads_are_rescored_once_their_passages_are_encoded_in_the_background(app_services, tmp_path):
    import dataclasses
    import threading

    import numpy as np

    from assistant.pipeline import BackgroundEncoding
    from assistant.retrieval import VECTORS_FILE, DeferredRescorer

    class Gated:  # a toy encoder, one axis per word; passages wait for the gate
        axes = ("engine", "table", "loom", "card", "what")

        def __init__(self):
            self.gate, self.texts = threading.Event(), []

        def encode(self, texts):
            if len(texts) > 1 or "Engines" in texts[0]:
                assert self.gate.wait(60)
            self.texts += list(texts)
            rows = np.array([[t.lower().count(w) for w in self.axes] for t in texts], dtype=float) + 1e-3
            return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    encoder = Gated()
    assistant = dataclasses.replace(app_services.assistant, encoding=BackgroundEncoding(encoder, 1.0, bulk=encoder))
    services = dataclasses.replace(app_services, assistant=assistant, sessions_root=tmp_path / "sessions")
    notes = tmp_path / "notes.md"
    notes.write_text("# Engines\n\nThe Difference Engine computed polynomial tables.\n\n"
                     "# Looms\n\nThe Jacquard loom read punched cards; the Analytical Engine would too.")
    session = S.Session()
    S.use_uploads(services, session, [notes])
    assert isinstance(session.source.rescorer, DeferredRescorer)
    assert "while your documents' passages are encoded" in S.source_status(services, session)
    play(services, session, "Which engine read cards?")
    assert "while your documents' passages are encoded" in session.turns[-1].info.notice
    encoder.gate.set()
    assert session.source.rescorer.wait(60) and S.search_notice(services, session) == ""
    [folder] = (tmp_path / "sessions").iterdir()
    assert any(folder.rglob(VECTORS_FILE))  # kept with the uploads' index, removed with it
    play(services, session, "Which engine read cards?")
    assert "Which engine read cards?" in encoder.texts and not session.turns[-1].info.notice
    # A session that closes while its uploads are encoded stops that job.
    encoder.gate.clear()
    other = S.Session()
    S.use_uploads(services, other, [notes])
    job = other.source.rescorer
    other.close()
    encoder.gate.set()
    assert job.wait(60) and "could not be made" not in job.notice


class _Handed:
    """A stand-in reader that keeps the passages it was handed."""

    def __init__(self):
        self.passages = []

    def read(self, question, passages):
        from assistant.kernel import Answer

        self.passages = list(passages)
        return Answer(passages[0].text if passages else "", 1.0)


# The cast line shares two of the question's words; the castle's passage
# repeats "Beast" four times, and BM25 alone hands it first (as in
# test_qa's known-context page).
_NOTES = (" It was described in the studio's notes of that year, which list the crews, the schedules, the budgets, "
          "the equipment hired for each week of the shoot and the names of the many people who worked on it.") * 2
_BEAST = "\n\n".join(paragraph + _NOTES for paragraph in (
    "The Beast's castle in Beauty and the Beast was built on a sound stage; the Beast's rose sits in the "
    "Beast's west wing, by the Beast's library.",
    "The actor Dan Stevens was cast as the Beast.",
    "The film opened in March and was a success at the box office around the world, earning over a billion "
    "dollars; this was its beauty.",
))


def _document_services(app_services, encoding):
    reader = _Handed()
    assistant = dataclasses.replace(app_services.assistant, reader=reader, encoding=encoding)
    return dataclasses.replace(app_services, assistant=assistant), reader


def test_a_pasted_documents_passages_reach_the_reader_in_the_order_the_evaluation_measures(app_services, minilm):
    # A one-document source was searched by BM25 alone while the evaluation's
    # known context rescored the page's hits by meaning.
    from assistant.pipeline import BackgroundEncoding
    from assistant.retrieval import ChunkRetriever, DeferredRescorer, DenseRescorer

    question = "who plays the beast in beauty and the beast"
    services, reader = _document_services(app_services, BackgroundEncoding(minilm, 0.9, bulk=minilm))
    session = S.Session()
    S.use_document(services, session, _BEAST, "Beauty and the Beast (2017 film)")
    rescorer = session.source.rescorer
    assert isinstance(rescorer, DeferredRescorer) and rescorer.wait(60) and rescorer.notice == ""
    play(services, session, question)
    handed = [(p.id, p.score) for p in reader.passages]
    passages = session.source.retriever.passages
    bm25 = ChunkRetriever(passages).search(question, len(passages))
    evaluated = DenseRescorer.for_document(minilm, 0.9).rescore(question, bm25, len(bm25))
    assert "Dan Stevens" not in bm25[0].text and "Dan Stevens" in evaluated[0].text
    # The same passages, in the same order, each with its BM25 score.
    assert [i for i, _ in handed] == [p.id for p in evaluated]
    assert [s for _, s in handed] == pytest.approx([p.score for p in evaluated])
    assert [s for _, s in handed] == pytest.approx([{p.id: p.score for p in bm25}[i] for i, _ in handed])


def test_a_document_source_without_an_encoder_keeps_bm25s_order(app_services):
    # dense_weight 0: the assistant makes no rescorer, for a document as for uploads.
    from assistant.retrieval import ChunkRetriever

    question = "who plays the beast in beauty and the beast"
    services, reader = _document_services(app_services, None)
    session = S.Session()
    S.use_document(services, session, _BEAST, "Beauty and the Beast (2017 film)")
    assert session.source.rescorer is None
    play(services, session, question)
    passages = session.source.retriever.passages
    bm25 = ChunkRetriever(passages).search(question, len(passages))
    assert [(p.id, p.score) for p in reader.passages] == [(p.id, pytest.approx(p.score)) for p in bm25]


def test_a_document_replaced_or_closed_while_encoded_stops_its_encoding(app_services):
    import threading

    import numpy as np

    from assistant.pipeline import BackgroundEncoding

    class Gated:  # a toy encoder, one axis per word; a document's passages wait for the gate
        axes = ("beast", "castle", "film")

        def __init__(self):
            self.gate = threading.Event()

        def encode(self, texts):
            if len(texts) > 1:
                assert self.gate.wait(60)
            rows = np.array([[t.lower().count(w) for w in self.axes] for t in texts], dtype=float) + 1e-3
            return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    encoder = Gated()
    services, _ = _document_services(app_services, BackgroundEncoding(encoder, 0.9, bulk=encoder))
    session = S.Session()
    S.use_document(services, session, _BEAST, "Beauty and the Beast")
    replaced = session.source.rescorer
    S.use_document(services, session, _BEAST + "\n\nThe castle was filmed at Shepperton.", "Beauty and the Beast, again")
    closed = session.source.rescorer
    session.close()
    encoder.gate.set()
    for job in (replaced, closed):
        # Cancelled: it ends without a rescorer (BM25's order), not for a failure.
        assert job.wait(60) and job.notice.startswith("Search by BM25 alone while the passages of")
    # Not cancelled, the same encoding ends with the rescorer.
    kept = S.Session()
    S.use_document(services, kept, _BEAST, "Beauty and the Beast")
    assert kept.source.rescorer.wait(60) and kept.source.rescorer.notice == ""
    kept.close()


def test_a_session_dropped_without_close_removes_its_uploads_index(app_services, tmp_path):
    # Gradio evicts the oldest sessions' state past STATE_SESSIONS without
    # calling their delete callback: the index folder stayed until a restart.
    import gc

    app_services.sessions_root = tmp_path / "sessions"
    notes = tmp_path / "notes.md"
    notes.write_text("The Difference Engine computed polynomial tables.")
    session = S.Session()
    S.use_uploads(app_services, session, [notes])
    play(app_services, session, "What did the Difference Engine compute?")
    [folder] = (tmp_path / "sessions").iterdir()
    del session
    gc.collect()
    assert not folder.exists()
    kept = S.Session()  # a live session's folder stays
    S.use_uploads(app_services, kept, [notes])
    gc.collect()
    [folder] = (tmp_path / "sessions").iterdir()
    assert kept.source.retriever.search("Difference Engine", 1)
    kept.close()
    assert not folder.exists()


def test_a_one_turn_replay_says_one_turn(qrecc_conversations):
    # It said "(1 turns)".
    session = S.Session()
    S.load_replay(session, qrecc_conversations)
    assert S.start_replay(session, "9") == "Replaying conversation 9 (1 turn)."


def test_a_free_tab_lock_is_not_taken_once_stopped():
    # acquire looked at the turn's stop only while another held the lock:
    # a turn stopped before it asked took a free lock and ran.
    session, stopped = S.Session(), StopSignal()
    stopped.set()
    assert session.taking.acquire(stopped) is False
    assert session.taking.acquire(StopSignal()) is True  # not stopped: taken, as before
    session.taking.release()
