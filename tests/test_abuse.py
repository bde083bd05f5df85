"""A public app's hostile or careless visitor: what the browser sends back
(its saved conversations are the visitor's to edit: their key is in the
page), and what a script can send through the events and the API, is
refused or bounded, never crashes a handler nor reaches the models unbounded."""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import gc
import json
import shutil

import pytest

from assistant import session as S
from assistant.kernel import DataFormatError, InvalidInputError

ADA = "Who was Ada Lovelace?"


def saved_turn(question=ADA):
    """One turn as the browser keeps it (saved_state's layout)."""
    return {"turn": {"question": question, "rewrite": {"text": question}, "timings_ms": {"rewrite": 1.0},
                     "answer": {"text": "A mathematician.", "score": 1.0, "evidence": "", "source_id": "p1", "found": True},
                     "sources": [{"id": "p1", "text": "Ada was a mathematician.", "score": 2.5, "title": "Ada", "url": ""}]},
            "info": {"system_rewrite": {"text": question}, "history": [], "scores": {}, "judgement": None}}


def saved(*conversations, current=1):
    return {"version": 1, "id": "abc123", "current": current,
            "conversations": {str(n): turns for n, turns in enumerate(conversations, 1)}}


def test_the_copy_of_a_page_never_asked_anything_is_restored_without_a_word():
    # Its one empty conversation was announced as "Restored 1 conversation"
    # on the next visit, and the chat showed none.
    session = S.Session()
    assert S.restore_state(session, S.saved_state(S.Session())) == ""
    assert session.restored and session.turns == [] and session.archive == {}
    assert S.restore_state(S.Session(), saved([saved_turn()])) == "Restored 1 conversation saved in this browser."


def edited(path, value):
    """The saved copy with one value at ``path`` (keys from the top) replaced."""
    data = saved([saved_turn()], [saved_turn("What is Paris?")])
    *parents, last = path
    node = data
    for key in parents:
        node = node[key]
    node[last] = value
    return data


TURN = ("conversations", "1", 0, "turn")
INFO = ("conversations", "1", 0, "info")
WRONG_TYPES = [
    (TURN + ("question",), 5),
    (TURN + ("rewrite", "text"), 5),
    (TURN + ("answer", "text"), ["x"]),
    (TURN + ("answer", "found"), "yes"),
    (TURN + ("sources", 0, "score"), "high"),
    (TURN + ("sources", 0, "url"), 5),
    (TURN + ("sources",), {"p1": 1}),
    (TURN + ("timings_ms",), [1]),
    (TURN + ("timings_ms",), {"rewrite": float("nan")}),
    (INFO + ("scores",), "high"),
    (INFO + ("scores",), {"USE": "high"}),
    (INFO + ("judgement",), "yes"),
    (INFO + ("judgement",), 7),
    (INFO + ("history",), "Who was Ada?"),
    (INFO + ("notice",), 5),
    (("conversations", "2"), "not turns"),
    (("conversations", "2", 0), {"foo": 1}),  # an archived conversation is checked too, not at the switch
    (("current",), float("inf")),
    (("current",), 1.5),
    (("current",), -5),
    (("conversations", "9" * 400), []),
    (("id",), ["abc"]),
]


@pytest.mark.parametrize(("path", "value"), WRONG_TYPES, ids=[f"{p[-1]}={str(v)[:12]}" for p, v in WRONG_TYPES])
def test_a_saved_copy_with_a_wrong_type_is_refused_whole(path, value):
    session = S.Session()
    with pytest.raises(DataFormatError, match="cannot be read"):
        S.restore_state(session, edited(path, value))
    assert session.turns == [] and session.archive == {} and session.restored
    S.chat_messages(session), S.saved_state(session), S.metrics_rows(session)  # the page still draws


def test_what_a_saved_copy_may_hold_is_bounded():
    # More than a browser keeps for the app: not a copy it saved.
    huge = saved([saved_turn("Ada " * (S.MAX_RESTORED_CHARS // 4))])
    with pytest.raises(DataFormatError, match="more than a browser keeps"):
        S.restore_state(S.Session(), huge)
    # Texts that come back into the rewriter's history and the search are cut.
    long = "Ada " * (S.MAX_HISTORY_CHARS // 2)
    data = saved([{**saved_turn(long), "info": {**saved_turn()["info"], "history": [long], "system_rewrite": {"text": long}}}])
    data["conversations"]["1"][0]["turn"]["answer"]["text"] = long
    session = S.Session()
    S.restore_state(session, data)
    [entry] = session.turns
    assert len(entry.turn.question) == len(entry.turn.rewrite.text) == S.MAX_HISTORY_CHARS
    assert len(entry.turn.answer.text) == len(entry.info.system_rewrite.text) == S.MAX_HISTORY_CHARS
    assert [len(text) for text in session.history()] == [S.MAX_HISTORY_CHARS] * 2
    # Thousands of conversations: the newest are kept, as saving keeps them (the current one too).
    many = saved(*[[saved_turn(f"Question {n}?")] for n in range(1, 1001)], current=3)
    session = S.Session()
    assert S.restore_state(session, many) == f"Restored {S.MAX_CONVERSATIONS} conversations saved in this browser."
    assert session.conversation_no == 3 and session.turns[0].turn.question == "Question 3?"
    assert len(session.archive) == S.MAX_CONVERSATIONS - 1 and "1000" in session.archive and "4" not in session.archive
    # A conversation longer than one may grow is not a saved one.
    with pytest.raises(DataFormatError):
        S.restore_state(S.Session(), saved([saved_turn()] * (S.MAX_TURNS + 1)))


def test_a_deeply_nested_saved_copy_is_refused():
    nested: list = []
    for _ in range(5000):
        nested = [nested]
    with pytest.raises(DataFormatError, match="cannot be read"):
        S.restore_state(S.Session(), {**saved([saved_turn()]), "extra": nested})


def test_a_saved_session_id_names_no_file_of_its_own():
    for bad in ("../../etc/x", "a" * 5000, "١٢٣"):
        session = S.Session()
        S.restore_state(session, edited(("id",), bad))
        assert session.id != bad and session.id.isalnum() and len(session.id) == 12


def test_restored_scores_without_the_served_metrics_are_not_drawn():
    data = edited(INFO + ("scores",), {"BLEU": 0.5})
    session = S.Session()
    S.restore_state(session, data)
    assert S.metrics_rows(session) == [] and S.metrics_points(session) == []


def test_a_conversation_holds_at_most_max_turns(app_services):
    session = S.Session()
    assert "error" not in S.ask_json(app_services, session, ADA)
    session.turns *= S.MAX_TURNS - 1  # as if asked in a loop through the API
    assert "error" not in S.ask_json(app_services, session, ADA)
    refused = S.ask_json(app_services, session, ADA)
    assert "start a new conversation" in refused["error"] and len(session.turns) == S.MAX_TURNS
    with pytest.raises(InvalidInputError, match=f"reached {S.MAX_TURNS} turns"):
        S.take_question(app_services, session, ADA)
    S.new_conversation(session)
    assert S.ask_json(app_services, session, ADA)["turn"] == 1


def test_a_page_may_have_only_max_waiting_questions_in_line(app_services):
    session = S.Session()
    for _ in range(S.MAX_WAITING):
        S.take_question(app_services, session, ADA)
    with pytest.raises(InvalidInputError, match="already waiting"):
        S.take_question(app_services, session, "What is Paris?")
    assert len(session.waiting) == S.MAX_WAITING
    S.next_question(session)
    S.take_question(app_services, session, "What is Paris?")  # room again once one is asked


def test_multiple_choice_bounds_its_document_and_options(app_services):
    session = S.Session()
    document = "Mara studied medicine in the capital. " * 10
    with pytest.raises(InvalidInputError, match="multiple choice reads at most"):
        S.multiple_choice(app_services, session, "x" * (S.MAX_CHOICE_CHARS + 1), "What did Mara study?", ["Medicine", "Music"])
    with pytest.raises(InvalidInputError, match=r"Option \(B\) is 5,000 characters long"):
        S.multiple_choice(app_services, session, document, "What did Mara study?", ["Medicine", "x" * 5000])
    with pytest.raises(InvalidInputError, match="at most 8 options"):
        S.multiple_choice(app_services, session, document, "What did Mara study?", [f"Option {i}" for i in range(9)])
    assert app_services.choice_reader is None  # refused before anything was encoded


def test_sessions_share_the_multiple_choice_readers_bounded_store_of_prepared_documents(app_services):
    # Each session had a reader of its own keeping up to 128 prepared
    # documents (every passage's vector): many sessions asking about new
    # long documents grew the server's memory without a bound.
    encoded, minilm = [], app_services.minilm()

    class Recording:
        def encode(self, texts):
            encoded.append(list(texts))
            return minilm.encode(texts)

    app_services.choice_encoder = Recording()
    document = "Mara studied medicine in the capital. She later taught music in the north. " * 20
    first, second = S.Session(), S.Session()
    S.multiple_choice(app_services, first, document, "What did Mara study?", ["Medicine", "Music"])
    prepared = len(encoded)
    S.multiple_choice(app_services, second, document, "What did Mara teach?", ["Medicine", "Music"])
    # The second session's question encodes its two statements only: the
    # document prepared for the first is the one the server keeps.
    assert encoded[prepared:] == [["What did Mara teach? Medicine", "What did Mara teach? Music"]]


def test_sessions_asking_their_first_multiple_choice_question_at_once_make_one_reader(app_services):
    # The reader is made on first use; sessions arriving together must not
    # each make one (and keep their own prepared documents). Its lock is the
    # Services' own, so a copy made with dataclasses.replace shares it.
    import time

    from conftest import concurrently

    minilm = app_services.minilm()
    copy_ = dataclasses.replace(app_services)
    # A slow encoder's load widens the window between the check and the reader's making.
    app_services.minilm = lambda: time.sleep(0.05) or minilm
    assert copy_.reader_lock is app_services.reader_lock
    readers = concurrently(lambda services: services.multiple_choice_reader(), [(app_services,)] * 8)
    assert all(reader is readers[0] for reader in readers) and app_services.choice_reader is readers[0]
    assert S.Services(app_services.assistant).reader_lock is not app_services.reader_lock


def test_a_judgement_records_the_history_the_rewriter_saw_not_the_saved_one(app_services):
    # A turn read back from the browser with a long history made each 👍/👎
    # (a light event) append megabytes to the server's labels file.
    turn = saved_turn()
    turn["info"]["history"] = [f"Text {n}" for n in range(500)]
    session = S.Session()
    S.restore_state(session, saved([turn]))
    S.judge(app_services, session, 0, 1)
    [line] = app_services.labels.read()
    window = 2 * app_services.assistant.config.history_turns
    assert line["history"] == [f"Text {n}" for n in range(500 - window, 500)]


def test_a_page_appends_at_most_max_judgements_lines(app_services):
    turn = saved_turn()
    turn["info"].update(reference=ADA, reference_kind="replay")
    session = S.Session()
    S.restore_state(session, saved([turn]))
    for n in range(6):  # thumbs up and down in turn: a line each time
        S.judge(app_services, session, 0, n % 2)
    assert len(app_services.labels.read()) == 6 and session.judgements == 6
    session.judgements = S.MAX_JUDGEMENTS - 1
    S.judge(app_services, session, 0, 0)
    with pytest.raises(InvalidInputError, match=f"recorded {S.MAX_JUDGEMENTS} judgements"):
        S.judge(app_services, session, 0, 1)
    assert len(app_services.labels.read()) == 7


def test_the_labels_file_refuses_lines_past_its_size(tmp_path):
    store = S.LabelStore(tmp_path / "labels.jsonl", max_bytes=1000)
    line = dict(history=[], question=ADA, rewrite=ADA, reference=ADA, label=1, reference_kind="confirmed")
    written = 0
    with pytest.raises(InvalidInputError, match="labels file labels.jsonl is full"):
        for n in range(100):
            store.append(id=f"app:x:1:{n}", **line)
            written += 1
    assert 0 < written < 100 and (tmp_path / "labels.jsonl").stat().st_size <= 1000
    assert len(store.read()) == written  # every line whole
    assert S.LabelStore(tmp_path / "other.jsonl").max_bytes == S.MAX_LABELS_BYTES


def test_a_replayed_files_long_history_reaches_the_rewriter_cut(app_services, tmp_path):
    # An uploaded replay file's Context may hold megabytes: the rewriter
    # tokenised them whole at every turn (seconds each).
    long = "word " * S.MAX_HISTORY_CHARS
    path = tmp_path / "qrecc.json"
    path.write_text(json.dumps([{"Context": [ADA, long], "Question": "Who was her father?",
                                 "Rewrite": "Who was Ada Lovelace's father?", "Answer": "Lord Byron.",
                                 "Conversation_no": 1, "Turn_no": 2}]))
    session = S.Session()
    S.load_replay(session, path)
    S.start_replay(session, "1")
    list(S.replay_step(app_services, session))
    [entry] = session.turns
    assert entry.info.history == (ADA, long[:S.MAX_HISTORY_CHARS])  # what the rewriter was given


@pytest.mark.parametrize("path", ["qrecc/\x00x.json", "a" * 5000, "../../../etc/passwd", "/etc/passwd"])
def test_an_odd_replay_path_gets_the_data_folders_message(path):
    # A NUL byte or an over-long name got "Something went wrong (ValueError)".
    with pytest.raises(InvalidInputError, match="Only files in the data folder"):
        S.shared_data_file(path)


def test_an_article_title_is_bounded_before_it_is_searched_and_quoted(app_services):
    with pytest.raises(InvalidInputError, match="an article's title has at most") as refused:
        S.use_collection_document(app_services, S.Session(), "Ada " * 50_000)
    assert len(str(refused.value)) < 300  # not quoted back whole


def test_conversations_started_over_in_a_loop_keep_only_what_the_browser_keeps():
    # A script asking through the API and calling /new in a loop kept every
    # conversation's sources in the session's memory, though only what fits
    # in the browser's copy is ever saved or listed.
    turn = saved_turn()
    turn["turn"]["sources"][0]["text"] = "Ada was a mathematician. " * 16_000  # 400,000 characters
    source = S.Session()
    S.restore_state(source, saved([turn]))
    session = S.Session()
    for _ in range(12):
        session.turns = list(source.turns)
        S.new_conversation(session)
    assert len(json.dumps(session.archive)) <= S.MAX_SAVED_CHARS
    assert "12" in session.archive and session.conversation_no == 13
    listed = {number for _, number in S.conversation_choices(session)}
    assert listed <= {*map(int, session.archive), 13}


def test_a_text_far_past_the_question_limit_is_refused_before_it_is_cleaned(app_services):
    # Cleaning looks at each character in Python: ten million characters sent
    # to the take event (no queue, no concurrency limit) held the interpreter
    # for seconds. Invisible characters do not count towards the limit, but a
    # text many times its length is refused whatever it holds.
    limit = app_services.assistant.config.max_question_chars
    mostly_invisible = "Who was Ada?" + "\u200b" * (5 * limit)
    with pytest.raises(InvalidInputError, match=f"That message is {len(mostly_invisible):,} characters long"):
        S.take_question(app_services, S.Session(), mostly_invisible)
    assert S.take_question(app_services, S.Session(), "Who was Ada?" + "\u200b" * limit) == "⏳ Asking…"


def test_an_export_is_bounded_and_a_session_keeps_only_its_last_one(tmp_path):
    # Each turn's Context repeats every turn before it: a conversation read
    # back from a 2 MB edited copy exported 86 MB; and every export stayed on
    # the server's disk for good.
    turns = []
    for _ in range(60):
        turn = saved_turn("q" * 5000)
        turn["turn"].update(answer={"text": "a" * 5000, "score": 1.0}, sources=[])
        turns.append(turn)
    session = S.Session()
    S.restore_state(session, saved(turns, [saved_turn()], current=1))
    with pytest.raises(InvalidInputError, match="export would hold .* more than the 5,000,000"):
        S.write_export(session, tmp_path)
    assert list(tmp_path.iterdir()) == []
    S.switch_conversation(session, 2)
    first = S.write_export(session, tmp_path)
    S.new_conversation(session)
    session.turns = list(_restored([saved_turn("What is Paris?")]).turns)
    second = S.write_export(session, tmp_path)
    assert not first.exists() and second.exists()
    session.close()
    assert list(tmp_path.iterdir()) == []


def test_the_documents_all_sessions_hold_in_memory_are_bounded(app_services):
    # Each session kept its pasted document in memory, several times its
    # size: a crowd pasting 10 MB each exhausted the server's memory.
    text = "Ada Lovelace wrote the first published algorithm. " * 100
    size = len(text.strip().encode())  # as held: stripped
    # Room for two such documents.
    services = dataclasses.replace(app_services, limits=S.UploadLimits(max_held_mb=2.5 * size / 2**20))
    first, second, third = S.Session(), S.Session(), S.Session()
    S.use_document(services, first, text)
    S.use_document(services, second, text)
    with pytest.raises(InvalidInputError, match=r"holds as many documents and conversations files in memory as it can .* upload the file"):
        S.use_document(services, third, text)
    assert third.source is None and services.held_text.bytes == 2 * size
    # Replacing one's own document needs room for the difference only.
    S.use_document(services, first, text.replace("Ada", "Eve"))
    S.use_default_collection(services, first)  # its document let go
    S.use_document(services, third, text)
    with pytest.raises(InvalidInputError, match="as many documents"):
        S.use_document(services, first, text)
    third.close()
    S.use_document(services, first, text)
    # A session Gradio dropped past its capacity is never closed: its share
    # goes with it.
    del second
    gc.collect()
    S.use_document(services, S.Session(), text)


def test_gradios_upload_route_is_refused_while_the_disk_is_nearly_full(tmp_path, monkeypatch):
    # Gradio keeps any number of uploaded files for a day: a script posting
    # in a loop filled the disk, and the labels, exports and indexes failed.
    reached, sent = [], []

    async def app(scope, receive, send):
        reached.append(scope["path"])

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    middleware = S.BodyLimit(app, limit=100_000, upload_dir=tmp_path / "gradio", min_free=10_000)

    def post(path, length):
        sent.clear()
        scope = {"type": "http", "path": path, "headers": [(b"content-length", str(length).encode())]}
        asyncio.run(middleware(scope, receive, send))
        return sent[0]["status"] if sent else None

    usage = collections.namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**6, 10**6 - 12_000, 12_000))
    assert post("/gradio_api/upload", 1_000) is None and reached == ["/gradio_api/upload"]
    assert post("/gradio_api/upload", 5_000) == 507 and reached == ["/gradio_api/upload"]
    assert sent[1]["body"].decode().startswith("The server's storage is nearly full: uploads are refused for now.")
    assert post("/gradio_api/queue/join", 5_000) is None and reached[-1] == "/gradio_api/queue/join"
    assert post("/gradio_api/queue/join", 200_000) == 413
    # As JSON, whose "detail" (a join) or "error" (a direct call) the page
    # shows: as text it showed "Could not parse server response".
    assert post("/gradio_api/run/predict", 200_000) == 413
    assert dict(sent[0]["headers"])[b"content-type"] == b"application/json"
    assert json.loads(sent[1]["body"]) == {"detail": "Request too large: at most 100,000 bytes.",
                                           "error": "Request too large: at most 100,000 bytes."}


def _restored(turns):
    session = S.Session()
    S.restore_state(session, saved(turns))
    return session


def test_one_client_may_have_only_its_share_of_direct_calls_under_way():
    # The page's events that skip the queue are direct calls to Gradio's run
    # route, each run at once on one of the threads every handler runs on:
    # a script sending them by the hundred at once had every thread (and
    # held every one's body in memory).
    release, entered = asyncio.Event(), []

    async def handler(scope, receive, send):
        entered.append(S.request_client())
        await release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    middleware = S.QueueShare(handler, waiting=lambda *who: [0] * len(who), limit=16, running=2)

    from conftest import asgi_post

    async def call(path, client="93.184.216.34"):
        sent = await asgi_post(middleware, path, client)
        return sent[0]["status"], dict(sent[0]["headers"]), sent[1]["body"]

    async def crowd():
        calls = [asyncio.create_task(call("/gradio_api/run/predict")), asyncio.create_task(call("/gradio_api/api/chat/"))]
        while len(entered) < 2:
            await asyncio.sleep(0)
        try:  # a third at once (were it let through, it would wait for the release below)
            refused = await asyncio.wait_for(call("/gradio_api/run/predict"), timeout=60)
        except TimeoutError:
            refused = None
        other = asyncio.create_task(call("/gradio_api/run/predict", client="151.101.1.69"))  # another visitor's
        while len(entered) < 3:
            await asyncio.sleep(0)
        release.set()
        answered = await asyncio.gather(*calls, other)
        again = await call("/gradio_api/run/predict")  # its calls ended: the client may call again
        return refused, answered, again

    refused, answered, again = asyncio.run(crowd())
    assert refused is not None, "a third call at once was let through"
    status, headers, body = refused
    assert (status, headers[b"retry-after"]) == (429, b"5")
    message = "You already have 2 requests running, the most one visitor may: try again in a few seconds, when they " \
              "have been answered."
    # The page shows a refused direct call's "error" (a join's "detail").
    assert json.loads(body) == {"detail": message, "error": message}
    assert [status for status, _, _ in answered] == [200, 200, 200] and again[0] == 200
    assert entered == ["93.184.216.34", "93.184.216.34", "151.101.1.69", "93.184.216.34"]
