"""The served app through its API (gradio_client), and its command line."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

import app
from assistant import session as S
from assistant.kernel import FairShareConfig, server_port


@pytest.fixture(scope="module")
def client_factory(app_server):
    from gradio_client import Client

    url, _ = app_server
    return lambda: Client(url, verbose=False)


def test_only_the_documented_endpoints_are_public(client_factory):
    api = client_factory().view_api(print_info=False, return_format="dict")
    assert sorted(api["named_endpoints"]) == ["/chat", "/new", "/rewrite"]
    assert [p["parameter_name"] for p in api["named_endpoints"]["/chat"]["parameters"]] == ["question"]
    assert [p["parameter_name"] for p in api["named_endpoints"]["/rewrite"]["parameters"]] == ["question", "history"]


def test_the_api_page_names_each_endpoints_inputs_and_says_what_it_does(client_factory):
    # The API page said 'The input value that is provided in the "parameter_75"
    # Textbox component' and nothing of what an endpoint does or returns.
    import re

    endpoints = client_factory().view_api(print_info=False, return_format="dict")["named_endpoints"]
    for name, endpoint in endpoints.items():
        labels = [p["label"] for p in endpoint["parameters"] + endpoint["returns"]]
        assert not [label for label in labels if re.fullmatch(r"(parameter|value)_\d+", label)], name
        assert "Returns {" in endpoint["description"], name
    assert [p["label"] for p in endpoints["/rewrite"]["parameters"]] == [
        "Question", "History: question and answer texts alternating, oldest first"]


def test_chat_api_keeps_one_conversation_per_client(client_factory):
    alice, bob = client_factory(), client_factory()
    first = alice.predict("Who was Ada Lovelace?", api_name="/chat")
    assert first["answer"] == "Ada Lovelace was an English mathematician and writer. She wrote the first published algorithm for Charles Babbage's Analytical Engine."
    assert first["rewrite"] == "Who was Ada Lovelace?"
    assert [s["id"] for s in first["sources"]] == ["ada", "babbage"]
    assert set(first["timings_ms"]) == {"rewrite", "retrieve", "read", "total"}
    assert (first["turn"], first["conversation"]) == (1, 1)
    assert bob.predict("What is Paris?", api_name="/chat")["turn"] == 1
    second = alice.predict("Who was her father?", api_name="/chat")
    assert second["turn"] == 2 and "Lord Byron" in second["answer"]
    assert alice.predict("   ", api_name="/chat") == {"question": "   ", "error": "Please type a question."}
    assert alice.predict(api_name="/new") == {"conversation": 2}
    assert alice.predict("What is Paris?", api_name="/chat")["turn"] == 1


def test_a_clients_cancel_of_an_api_request_sets_its_works_stop(tmp_path):
    # Gradio's /cancel (a client's job.cancel()) cancels an async handler's
    # task but waits for a sync one's thread: /rewrite's decoding and
    # /chat's turn ran to their end. Each rewrite here waits for its stop.
    import threading

    from gradio_client import Client

    from assistant.kernel import NO_STOP, Answer, Passage, Rewrite
    from assistant.pipeline import Assistant
    from conftest import serve_app

    guard = 60  # s: how long the test waits for what an event says will come
    began, stopped = threading.Semaphore(0), []

    class Rewriter:
        def rewrite(self, question, history, stop=NO_STOP):
            event = threading.Event()
            stopped.append(event)
            stop.on_set(event.set)
            began.release()
            event.wait(guard)  # Gradio's /cancel answers once the cancelled handler ended
            stop.check()
            return Rewrite(question)

    class Retriever:
        def search(self, query, k):
            return [Passage("ada", "Ada Lovelace wrote notes.", 1.0)]

    class Reader:
        def read(self, question, passages):
            return Answer("notes", 1.0)

    url, _, demo = serve_app(Assistant(Rewriter(), Retriever(), Reader()), tmp_path)
    try:
        client = Client(url, verbose=False)
        for arguments in [("What did she write?", ["Who was Ada?", "A mathematician."], "/rewrite"),
                          ("Who was Ada Lovelace?", "/chat")]:
            *inputs, endpoint = arguments
            job = client.submit(*inputs, api_name=endpoint)
            assert began.acquire(timeout=guard), f"{endpoint}'s rewrite never began"
            # gradio_client learns the event's id after the server may have begun
            # it; a cancel sent before then names no event (a busy machine's race).
            for _ in range(guard * 20):
                if job.communicator.event_id is not None:
                    break
                threading.Event().wait(0.05)
            job.cancel()
            assert stopped[-1].wait(guard), f"{endpoint}'s cancel never reached its rewrite's stop"
    finally:
        for event in stopped:
            event.set()
        demo.close()


def test_port_and_host_come_from_flags_and_environment(monkeypatch):
    for name in ("PORT", "GRADIO_SERVER_PORT", "GRADIO_SERVER_NAME"):
        monkeypatch.delenv(name, raising=False)
    args = app._parser().parse_args([])
    assert (server_port(args.port), args.host) == (7860, "127.0.0.1")
    monkeypatch.setenv("GRADIO_SERVER_PORT", "9000")
    assert server_port(app._parser().parse_args([]).port) == 9000
    monkeypatch.setenv("PORT", "8080")
    assert server_port(app._parser().parse_args([]).port) == 8080
    assert server_port(app._parser().parse_args(["--port", "7000", "--host", "0.0.0.0"]).port) == 7000


@pytest.mark.parametrize("argv, env, named", [
    (["--port", "70000"], {}, "--port='70000'"),
    (["--port", "0"], {}, "--port='0'"),
    ([], {"PORT": "abc"}, "PORT='abc'"),
])
def test_a_bad_port_is_one_line_before_anything_loads(monkeypatch, capsys, argv, env, named):
    # The missing index would be the error if the port were not checked first.
    for name in ("PORT", "GRADIO_SERVER_PORT"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert app.main([*argv, "--index", "/nowhere/at/all", "--rewriter", "original"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {named}") and err.count("\n") == 1


def test_a_taken_port_or_a_bad_host_is_one_line_before_anything_loads(monkeypatch, capsys):
    # A second server on the port, or a mistyped host, was Gradio's traceback after a minute of loading
    # ("Cannot find empty port" for the host too); the missing index would be the error here.
    import socket

    for name in ("PORT", "GRADIO_SERVER_PORT", "GRADIO_SERVER_NAME"):
        monkeypatch.delenv(name, raising=False)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert app.main(["--port", str(port), "--index", "/nowhere/at/all", "--rewriter", "original"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: port {port} on 127.0.0.1 is already in use") and err.count("\n") == 1
    assert "--port N" in err
    assert app.main(["--host", "999.1.1.1", "--index", "/nowhere/at/all", "--rewriter", "original"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --host '999.1.1.1' is no address of this machine") and err.count("\n") == 1


def test_the_operators_fair_shares_are_read_and_checked_before_anything_loads(app_services, monkeypatch, capsys):
    # A public Space is tuned by its variables: the fair shares of a crowd
    # (CONVQA_FAIR_*) reach the served limits, and a bad one is one line
    # before the models load (the missing index would be the error here).
    import assistant.pipeline
    import assistant.retrieval
    from assistant import session as S

    monkeypatch.setenv("CONVQA_FAIR_RESERVE", "1.5")
    assert app.main(["--port", "7999", "--index", "/nowhere/at/all", "--rewriter", "original"]) == 2
    assert capsys.readouterr().err == ("error: fair_reserve must be a number from 0 to 1, got 1.5 (from its command-line "
                                       "flag, or CONVQA_FAIR_RESERVE)\n")
    monkeypatch.setenv("CONVQA_FAIR_RESERVE", "0.5")
    monkeypatch.setenv("CONVQA_FAIR_HELD_MB", "20")
    monkeypatch.setattr(assistant.pipeline, "build_assistant", lambda **kw: app_services.assistant)
    monkeypatch.setattr(assistant.retrieval, "use_serving_java", lambda: None)
    monkeypatch.setattr(S, "remove_stale_sessions", lambda: 0)
    monkeypatch.setattr(app, "live_metrics", lambda: SimpleNamespace(names=(), load=lambda: None))
    monkeypatch.setattr(app, "build_app", lambda services, secret, actions: actions)
    served = []
    monkeypatch.setattr(app, "serve", lambda act, host, port, limits: served.append((limits, act.services.limits)))
    assert app.main(["--rewriter", "original", "--port", "7999"]) == 0
    (limits, theirs), = served
    assert limits is theirs and limits.fair == FairShareConfig(fair_reserve=0.5, fair_held_mb=20.0)


def test_help_works_whatever_port_says(monkeypatch, capsys):
    monkeypatch.setenv("PORT", "abc")
    with pytest.raises(SystemExit) as exit_:
        app.main(["--help"])
    assert exit_.value.code == 0 and "--port" in capsys.readouterr().out


def test_a_missing_index_is_a_one_line_error(tmp_path, capsys):
    assert app.main(["--index", str(tmp_path / "nowhere"), "--rewriter", "original"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: No Lucene index at") and err.count("\n") == 1


def test_a_null_question_through_the_api_is_a_message_and_the_conversation_goes_on(client_factory):
    client = client_factory()
    result = client.predict(None, api_name="/chat")
    assert result["error"] == "Please type a question."
    assert client.predict("Who was Ada Lovelace?", api_name="/chat")["turn"] == 1


def test_the_browser_secret_is_made_once_and_kept(tmp_path):
    path = tmp_path / "cache" / "app-secret"
    secret = S.browser_secret(path)
    assert len(secret) >= 32 and S.browser_secret(path) == secret
    assert path.stat().st_mode & 0o077 == 0


class Shouting:
    """A rewriter whose output shows what it was given (the tiny app's own is "original")."""

    def rewrite(self, question, history):
        from assistant.kernel import Rewrite

        return Rewrite(f"{question.upper()} after {len(history)}", note="shouted")


def test_rewrite_api_takes_a_question_and_its_history_and_keeps_no_state(client_factory, app_server):
    from rewriting import BatchingRewriter

    _, services = app_server
    client = client_factory()
    ada = ["Who was Ada Lovelace?", "An English mathematician."]
    assert client.predict("Who was her father?", ada, api_name="/rewrite") == {"rewrite": "Who was her father?", "note": ""}
    original = services.assistant.rewriter
    with BatchingRewriter(Shouting(), max_batch=2, window_ms=1) as batched:
        services.assistant.rewriter = batched  # the served assistant's, as app.main builds it
        try:
            assert client.predict("Who was her father?", ada, api_name="/rewrite") == {
                "rewrite": "WHO WAS HER FATHER? after 2", "note": "shouted"}
            # The history window is the assistant's (the last history_turns pairs); no state between calls.
            window = 2 * services.assistant.config.history_turns
            assert client.predict("and then?", ["q", "a"] * (window + 5), api_name="/rewrite")["rewrite"] == f"AND THEN? after {window}"
            assert client.predict("first?", [], api_name="/rewrite")["rewrite"] == "FIRST? after 0"
        finally:
            services.assistant.rewriter = original
    # /rewrite started no conversation of this client's.
    assert client.predict("Who was Ada Lovelace?", api_name="/chat")["turn"] == 1


@pytest.mark.parametrize(
    "question, history, error",
    [
        ("   ", [], "Please type a question."),
        ("\u200b\u200b\u200b", [], "Please type a question."),
        ("Who was her father?", "Who was Ada?", "The history must be a list of texts"),
        ("Who was her father?", ["Who was Ada?", 3], "The history must be a list of texts"),
        ("Who was her father?", {"a": 1}, "The history must be a list of texts"),
        # Said as refused ("send at most"), where "at most 200 are taken" sounded as if the rest were dropped.
        ("Who?", ["x"] * 201, "The history has 201 texts; send at most 200, the most recent."),
        ("Who?", ["x" * 10_001], "A text of the history is 10,001 characters long; send at most 10,000 characters"),
    ],
)
def test_rewrite_api_refuses_bad_input_with_a_message(client_factory, question, history, error):
    result = client_factory().predict(question, history, api_name="/rewrite")
    assert set(result) == {"question", "error"} and result["error"].startswith(error)


def test_rewrite_api_takes_a_missing_history_as_a_first_turn(client_factory):
    assert client_factory().predict("Who was Ada Lovelace?", None, api_name="/rewrite")["rewrite"] == "Who was Ada Lovelace?"


def test_while_passages_are_encoded_the_source_line_and_each_turn_say_the_search_is_bm25s(app_services, tmp_path):
    import dataclasses

    from assistant import session as S
    from conftest import encoding_rescorer

    deferred, release = encoding_rescorer(3, 4)
    services = dataclasses.replace(app_services, assistant=dataclasses.replace(app_services.assistant, rescorer=deferred))
    act, session = app.Actions(services, str(tmp_path)), S.Session()
    notice = "Search by BM25 alone while the collection's passages are encoded for the rescoring"
    assert "(75%)" in S.source_status(services, session)
    assert notice in act.source(session) and notice in act.source_tick(session)[0]
    act.take("Who was Ada Lovelace?", session)
    *_, views = act.ask(session, None)
    assert notice in views[1]  # the status line after the turn
    assert notice in session.turns[-1].info.notice  # and the turn's own warning, kept with it
    assert notice in S.ask_json(services, session, "Who was Lord Byron?")["notice"]  # as the API gives it
    S.use_document(services, session, "The Analytical Engine was designed by Charles Babbage.", "Engine")
    assert notice not in act.source(session)  # a single document is searched with BM25 alone
    S.use_default_collection(services, session)
    release.set()
    assert deferred.wait(60)
    line, timer = act.source_tick(session)
    assert notice not in line and "Answering from" in line and timer.active is False


def test_a_fresh_session_behind_an_open_page_reads_the_browsers_copy_before_it_saves(app_services, tmp_path):
    # After a server restart (or Gradio dropping the oldest sessions' state)
    # an open page's next event came with a new, empty session: its save wrote
    # over every conversation the browser kept, and the follow-up lost its history.
    from assistant import session as S

    act, before = app.Actions(app_services, str(tmp_path)), S.Session()
    act.restore(None, before)
    act.take("Who was Ada Lovelace?", before)
    list(act.ask(before, None))
    act.start_over(before, None)
    act.take("What is Paris?", before)
    *_, views = act.ask(before, None)
    kept = views[-1]  # what the browser keeps
    assert sorted(kept["conversations"]) == ["1", "2"]

    after = S.Session()  # the server restarted; the page was not reloaded
    act.take("What is it known for?", after)
    *_, views = act.ask(after, kept)
    assert sorted(views[-1]["conversations"]) == ["1", "2"]
    assert [t.turn.question for t in after.turns] == ["What is Paris?", "What is it known for?"]
    assert after.turns[-1].info.history[0] == "What is Paris?"  # the rewriter saw the conversation
    assert views[1].replace("\\", "").startswith("The server restarted or let this session go: Restored 2 conversations")
    # Read once: a page load arriving after it changes nothing.
    assert act.restore(kept, after)[1] == app.gr.skip() and len(after.turns) == 2


def test_a_reload_says_that_documents_given_before_are_not_kept(app_services, tmp_path):
    from assistant import session as S

    act, session = app.Actions(app_services, str(tmp_path)), S.Session()
    act.restore(None, session)
    S.use_document(app_services, session, "The zorblax flower grows only on Mount Quillon.", "Zorblax")
    act.take("Where does the zorblax flower grow?", session)
    *_, views = act.ask(session, None)
    reloaded = S.Session()
    status = act.restore(views[-1], reloaded)[1].replace("\\", "")  # shown as Markdown, escaped
    assert "Restored 1 conversation" in status
    assert ("Conversation 1 was answered from the document “Zorblax” (1 passage), which cannot be taken again: "
            "documents are not kept across a reload or a server restart") in status
    assert reloaded.source is None


def _answered_from_an_upload(app_services, tmp_path):
    """A page whose conversation was answered from an upload (engines.md):
    its services, Actions, session and saved copy."""
    import dataclasses

    services = dataclasses.replace(app_services, sessions_root=tmp_path / "sessions")
    act, before = app.Actions(services, str(tmp_path)), S.Session()
    engines = tmp_path / "engines.md"
    engines.write_text("The Difference Engine computed polynomial tables.")
    act.restore(None, before)
    act.upload([str(engines)], before, None)
    act.take("What did the Difference Engine compute?", before)
    *_, views = act.ask(before, None)
    return services, act, before, views[-1]


def test_uploads_read_again_after_a_reload_are_indexed_by_a_queued_event_not_the_pages_load(app_services, tmp_path):
    # Indexing a conversation's uploads again (minutes for many files, a
    # large PDF read again) ran in the page's load and the pick's quick
    # handlers, without a word of progress.
    services, act, before, saved = _answered_from_an_upload(app_services, tmp_path)
    for reloaded in (S.Session(), S.Session()):
        status = act.restore(saved, reloaded)[1].replace("\\", "")
        assert "Conversation 1 was answered from your upload (engines.md; 1 passage), which is being read again" in status
        assert reloaded.source is None and len(list((tmp_path / "sessions").iterdir())) == 1  # not yet
    first, second = reloaded, S.Session()
    # The queued event reads it, and says so; with nothing waiting it changes nothing.
    status = act.take_again(first, saved)[1].replace("\\", "")
    assert status == "Its answers come from your upload (engines.md; 1 passage)." and first.source is not None
    assert act.take_again(first, saved) == act.unchanged()
    # A question asked before it ran waits for it, and is answered from the uploads.
    act.restore(saved, second)
    act.take("What did it compute?", second)
    *_, views = act.ask(second, saved)
    assert second.turns[-1].turn.sources[0].id == "engines.md#0"
    assert "Its answers come from your upload (engines.md; 1 passage)." in views[1].replace("\\", "")


def test_uploads_read_again_for_a_question_count_against_the_visitor_and_stop_when_the_page_goes(
        app_services, tmp_path, monkeypatch):
    # Read again because a question was asked first, the index was counted
    # against no visitor's or network's share, and the page's going
    # (left) did not stop encoding its passages.
    visitor = "93.184.216.34"
    services, act, before, saved = _answered_from_an_upload(app_services, tmp_path)
    reloaded = S.Session()
    act.restore(saved, reloaded)
    assert S.waiting_for(reloaded) is not None and services.client_indexes.held(visitor) == 0
    act.take("What did it compute?", reloaded)
    page = SimpleNamespace(session_hash="reloaded", client=SimpleNamespace(host=visitor), headers={})
    *_, views = act.ask(reloaded, saved, page)
    assert reloaded.turns[-1].turn.sources[0].id == "engines.md#0"
    assert services.client_indexes.held(visitor) == 1 and services.network_indexes.held("93.184.216.0/24") == 1
    abandoned = []
    monkeypatch.setattr(app.S, "abandon", abandoned.append)
    act.left(SimpleNamespace(session_hash="reloaded"))
    assert abandoned == [reloaded]
    for session in (reloaded, before):
        session.close()
    assert services.client_indexes.held(visitor) == 0



def test_uploads_read_again_for_a_replayed_turn_count_against_the_visitor(app_services, tmp_path, qrecc_conversations):
    # A replay started after a reload waits for the uploads being read again
    # (its conversation starts from the one shown); read for a replayed
    # turn, they were counted against no visitor's or network's share.
    visitor = "93.184.216.34"
    services, act, before, saved = _answered_from_an_upload(app_services, tmp_path)
    page = SimpleNamespace(session_hash="reloaded", client=SimpleNamespace(host=visitor), headers={})
    for play in (act.replay_next, act.replay_all):
        reloaded = S.Session()
        act.restore(saved, reloaded, page)
        S.load_replay(reloaded, qrecc_conversations)
        act.replay_start("7", reloaded, saved)
        assert S.waiting_for(reloaded) is not None and services.client_indexes.held(visitor) == 0
        list(play(reloaded, saved, page))
        assert reloaded.source.kind == "uploads" and len(reloaded.turns) >= 1
        assert services.client_indexes.held(visitor) == 1 and services.network_indexes.held("93.184.216.0/24") == 1
        reloaded.close()
        assert services.client_indexes.held(visitor) == 0
    before.close()



def test_stop_while_a_question_waits_for_its_source_read_again_leaves_it_unasked_and_says_so(
        app_services, tmp_path, monkeypatch):
    # A question asked after a reload waits for its uploads to be indexed
    # again (minutes). Stop pressed meanwhile said "Nothing was running"
    # (the app read the source itself before its turn began): the turn
    # waits for it now, and Stop says the question was not asked, and why.
    import threading
    from conftest import GatedReading

    services, act, before, saved = _answered_from_an_upload(app_services, tmp_path)
    reloaded = S.Session()
    act.restore(saved, reloaded)
    held = GatedReading(monkeypatch, services.assistant)
    act.take("What did it compute?", reloaded)
    views = []
    run = threading.Thread(target=lambda: views.extend(act.ask(reloaded, saved)))
    run.start()
    assert held.started()
    stop = act.stopped(reloaded, saved)[1].replace("\\", "")
    held.gate.set()
    run.join(60)
    assert stop == ("Stopped: turn 2 was not asked (it waited for your upload (engines.md; 1 passage) to be read "
                    "again from the files on the server).")
    # The run's last word is Stop's, after what the reading said when it ended.
    assert [view[1].replace("\\", "") for view in views] == [
        f"Its answers come from your upload (engines.md; 1 passage). {stop}"]
    # The reading went on: the question asked again is answered from the upload.
    assert len(reloaded.turns) == 1 and reloaded.source is not None
    act.take("What did it compute?", reloaded)
    list(act.ask(reloaded, saved))
    assert len(reloaded.turns) == 2 and reloaded.turns[-1].turn.sources[0].id == "engines.md#0"
    for session in (reloaded, before):
        session.close()



def test_stop_ends_a_question_waiting_while_another_event_reads_its_source_again(app_services, tmp_path, monkeypatch):
    # The page's queued take_again reads the uploads again; a question asked
    # meanwhile waits for it. Stopped, that question's run went on waiting
    # (its spinner on the chat, its turn slot held) until the reading ended.
    import threading
    from conftest import GatedReading

    services, act, before, saved = _answered_from_an_upload(app_services, tmp_path)
    reloaded = S.Session()
    act.restore(saved, reloaded)
    held = GatedReading(monkeypatch, services.assistant)
    reading = threading.Thread(target=lambda: act.take_again(reloaded, saved))
    reading.start()
    views = []
    try:
        assert held.started()
        act.take("What did it compute?", reloaded)
        asking = threading.Thread(target=lambda: views.extend(act.ask(reloaded, saved)))
        asking.start()
        for _ in range(600):  # until the question waits for the reading
            if reloaded.awaiting:
                break
            threading.Event().wait(0.05)
        stop = act.stopped(reloaded, saved)[1].replace("\\", "")
        asking.join(10)
        assert not asking.is_alive() and reading.is_alive()  # it waits no more; the reading goes on
    finally:
        held.gate.set()
        reading.join(60)
    assert stop == ("Stopped: turn 2 was not asked (it waited for your upload (engines.md; 1 passage) to be read "
                    "again from the files on the server).")
    assert [view[1].replace("\\", "") for view in views] == [stop]
    assert len(reloaded.turns) == 1 and reloaded.source is not None and reloaded.awaiting == 0
    for session in (reloaded, before):
        session.close()


def test_sigterm_waits_for_the_turns_under_way_then_stops_as_ctrl_c_does(app_services, tmp_path):
    # SIGTERM (docker stop, a Space restart) killed the process at once: every
    # running turn was cut, and Gradio's shutdown, which deletes the uploads
    # it keeps, never ran.
    import signal
    import threading

    from assistant import session as S
    from assistant.kernel import sigterm_as_ctrl_c

    act, session = app.Actions(app_services, str(tmp_path)), S.Session()
    act.take("Who was Ada Lovelace?", session)
    run = act.ask(session, None)
    next(run)  # a turn under way
    assert act.running == 1
    waiting = threading.Thread(target=S.drain, args=(act, 120))
    waiting.start()
    waiting.join(0.3)
    assert waiting.is_alive()  # it waits for the turn ...
    list(run)
    waiting.join(60)
    assert not waiting.is_alive() and act.running == 0  # ... and ends with it
    before = signal.getsignal(signal.SIGTERM)
    with sigterm_as_ctrl_c(lambda: S.drain(act, 5)):  # as app.py's main serves
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGTERM)
    assert signal.getsignal(signal.SIGTERM) is before  # put back


def test_the_exports_folder_goes_with_the_server(app_services, monkeypatch):
    # Each start made a folder for the exports in the temporary folder, and
    # nothing removed it: one more for every start of the server.
    import assistant.pipeline
    import assistant.retrieval
    from assistant import session as S

    monkeypatch.setattr(assistant.pipeline, "build_assistant", lambda **kw: app_services.assistant)
    monkeypatch.setattr(assistant.retrieval, "use_serving_java", lambda: None)
    monkeypatch.setattr(S, "remove_stale_sessions", lambda: 0)
    monkeypatch.setattr(app, "live_metrics", lambda: SimpleNamespace(names=(), load=lambda: None))
    monkeypatch.setattr(S, "browser_secret", lambda: "secret")
    monkeypatch.setattr(app, "build_app", lambda services, secret, actions: actions)
    served = []

    def serve(act, host, port, limits):
        folder = Path(act.export_dir)
        (folder / "conversation-x-1.json").write_text("[]")  # an export made while it served
        served.append(folder)
        raise KeyboardInterrupt  # Ctrl-C: Gradio's launch() closes the server and raises it again

    monkeypatch.setattr(app, "serve", serve)
    with pytest.raises(KeyboardInterrupt):
        app.main(["--rewriter", "original", "--port", "7999"])
    assert len(served) == 1 and not served[0].exists()


def test_the_page_loads_views_do_not_wipe_a_turn_that_began_before_they_arrived(app_services, tmp_path):
    # On a slow server a question asked at once was taken and began while the
    # page's load event still drew its views; those, drawn before the turn,
    # arrived after its first step, and the chat showed nothing of the
    # question until the turn ended (seen in the browser test of Stop).
    import gradio as gr

    from assistant import session as S

    act, session = app.Actions(app_services, str(tmp_path)), S.Session()
    act.take("Who was Ada Lovelace?", session)
    run = act.ask(session, None)
    pending = next(run)  # the turn's first step is drawn ...
    assert "Rewriting the question" in str(pending[0])
    chat, status, rows, plot, correction, kept, choices, saved = act.restore(None, session)  # ... then the load's views come
    assert chat == gr.skip() and correction == gr.skip() and saved == gr.skip() and kept is session
    list(run)
    chat = act.restore(None, session)[0]["value"]  # nothing running: the load draws the chat as before
    assert [m["content"] for m in chat if m["role"] == "user"] == ["Who was Ada Lovelace?"]
    # A page with nothing saved leaves the status to the events that set one
    # meanwhile: its empty status wiped "Loaded 2 conversations" of a replay
    # loaded before the load event's views arrived.
    assert act.restore(None, S.Session())[1] == gr.skip()


def test_a_page_that_goes_stops_the_encoding_of_its_uploads(app_services, tmp_path):
    # A closed tab's upload went on encoding on the one worker until Gradio
    # dropped its session an hour later, holding up every other upload.
    import dataclasses
    import functools
    from types import SimpleNamespace

    from assistant import session as S
    from conftest import encoding_rescorer

    act = app.Actions(app_services, str(tmp_path))
    cancelled, sessions = [], []  # Gradio holds the sessions; the app only refers to them weakly
    for name in ("gone", "stays"):
        session = S.Session()
        sessions.append(session)
        S.use_document(app_services, session, "The zorblax flower grows only on Mount Quillon.", name)
        deferred, release = encoding_rescorer(1, 4)
        release.set()
        # What cancelling does to the encoding is tests/test_dense.py's; here, who is cancelled.
        deferred.cancel = functools.partial(cancelled.append, name)
        session.source = dataclasses.replace(session.source, rescorer=deferred)
        act.upload([], session, SimpleNamespace(session_hash=name))  # refused (no files), but the page is known
        if name == "gone":  # its conversation about the document is left, and keeps it
            list(S.ask(app_services, session, "Where does the zorblax flower grow?"))
            S.use_default_collection(app_services, session)
            assert session.source is None and session.sources["1"].rescorer is deferred
    act.left(SimpleNamespace(session_hash="gone"))
    act.left(SimpleNamespace(session_hash="never-uploaded"))  # nothing to stop
    assert cancelled == ["gone"]



def test_a_page_that_uploaded_a_document_is_told_when_it_goes(app_services, tmp_path, monkeypatch):
    # Only a page that indexed uploads (or read them again) was told when it
    # went (S.abandon): one that uploaded a document was not, so its
    # document's count in the visitor's share was never replaced by the one
    # read again after a reload.
    act, session = app.Actions(app_services, str(tmp_path)), S.Session()
    volcano = tmp_path / "volcano.txt"
    volcano.write_text("Mount Kessel is a dormant volcano. It last erupted in 1723.")
    page = SimpleNamespace(session_hash="document", client=SimpleNamespace(host="93.184.216.34"), headers={})
    assert "volcano" in act.document(str(volcano), "", "", session, page)[0]
    abandoned = []
    monkeypatch.setattr(app.S, "abandon", abandoned.append)
    act.left(SimpleNamespace(session_hash="document"))
    assert abandoned == [session]
    session.close()


def test_the_page_names_the_labels_file_but_not_where_it_lies_on_the_server(app_services, tmp_path):
    demo = app.build_app(app_services, export_dir=str(tmp_path))
    texts = [b.value for b in demo.blocks.values() if isinstance(b, app.gr.Markdown) and "Judgements" in (b.value or "")]
    path = app_services.labels.path
    assert len(texts) == 1 and path.name in texts[0] and str(path.parent) not in texts[0]


def test_stop_is_a_direct_call_not_an_event_in_the_queue(app_services, tmp_path):
    # Queued, a visitor's Stop waited while its turn ran behind every event of
    # the crowd's networks running none (the queue runs those first), and a
    # network at its fair share of a nearly full line was refused it (429).
    demo = app.build_app(app_services, export_dir=str(tmp_path))
    [stop] = [fn for fn in demo.fns.values() if getattr(fn.fn, "__name__", None) == "stopped"]
    assert stop.queue is False
    # Its share is the direct calls' (S.QueueShare's run route), which no fair share of the line refuses.
    assert stop.api_visibility == "private"


def test_replay_messages_name_what_the_user_gave_not_the_servers_folders(app_services, tmp_path, monkeypatch):
    from assistant import session as S

    monkeypatch.setenv("CONVQA_DATA", str(tmp_path / "data"))
    (tmp_path / "data" / "qrecc").mkdir(parents=True)
    act, session = app.Actions(app_services, str(tmp_path)), S.Session()
    for path, said in (("qrecc/nonexistent.json", "qrecc/nonexistent.json: no such file"),
                       ("qrecc", "qrecc is a folder; give a file in it"),  # it said "qrecc: no such file"
                       ("../outside.json", "Only files in the data folder can be opened by path")):
        _, status, in_tab, _ = act.replay_load(None, path, session)
        assert in_tab == status  # also in the Replay tab: on a narrow screen the chat's line is far above
        status = status.replace("\\", "")
        assert said in status and str(tmp_path) not in status


def test_replay_load_lists_each_conversation_by_its_first_question(app_services, tmp_path, qrecc_conversations,
                                                                   monkeypatch):
    # The "Conversation" list showed bare ids; the value Start gets stays the id.
    from assistant import session as S

    monkeypatch.setenv("CONVQA_DATA", str(qrecc_conversations.parent))
    act, session = app.Actions(app_services, str(tmp_path)), S.Session()
    pick, status, _, _ = act.replay_load(None, qrecc_conversations.name, session)
    assert "Loaded 2 conversations" in status
    assert pick["choices"] == [("7: Who was Ada Lovelace? (2 turns)", "7"), ("9: What is Paris? (1 turn)", "9")]
    assert pick["value"] == "7"


def test_stop_during_play_all_is_the_last_word(app_services, tmp_path, qrecc_conversations):
    # Stop pressed during Play all's second turn; the cancelled stream, whose
    # thread runs on, drew a turn more and blank status lines after Stop's.
    from assistant import session as S

    act, session = app.Actions(app_services, str(tmp_path)), S.Session()
    S.load_replay(session, qrecc_conversations)
    S.start_replay(session, "7")
    run = act.replay_all(session, None)
    while not session.turns:
        next(run)
    views = act.stopped(session, None)
    assert views[1] == "Stopped: turn 2 was not added\\."
    # The stream, its thread running on, draws nothing new after Stop's: its
    # last views say what Stop said (a view of it sent before Stop may arrive after).
    after = list(run)
    assert [v[1] for v in after] == [views[1]] and after[0][0] == views[0]
    assert len(session.turns) == 1 and session.running == 0
    # Stopped between two turns (its stream not yet in the next): the turn ended is kept, and said so.
    run = act.replay_all(session, None)
    with act._turn(session):  # the stream under way, its next turn not yet begun
        assert act.stopped(session, None)[1] == "Stopped after turn 1, which is kept\\."
    run.close()
    assert len(session.turns) == 1


def test_stop_during_a_re_run_with_a_correction_is_the_last_word(app_services, tmp_path, monkeypatch):
    # Stop while a turn re-ran with the user's rewrite said "Nothing was
    # running", and the re-run, its thread running on, changed the turn after it.
    from assistant import session as S

    act, session = app.Actions(app_services, str(tmp_path)), S.Session()
    for question in ("Who was Ada Lovelace?", "What did she write about?"):
        act.take(question, session)
        list(act.ask(session, None))
    answer, stopped = app_services.assistant.answer, []

    def stopping(*args, **kwargs):  # Stop pressed while the re-run searches
        stopped.append(act.stopped(session, None))
        return answer(*args, **kwargs)

    monkeypatch.setattr(app_services.assistant, "answer", stopping)
    views = act.rerun("What did Ada Lovelace write about?", session, None)
    [stop] = stopped
    assert stop[1].replace("\\", "") == "Stopped: turn 2 was not re-run with your rewrite (it is as it was)."
    # The re-run's views, should they arrive after Stop's, say what Stop said;
    # neither puts the turn's rewrite back over the one typed, to be run again.
    assert views[1] == stop[1] and views[0] == stop[0]
    assert views[4] == stop[4] == app.gr.skip()
    assert "Your rewrite" not in str(stop[0]) and session.turns[1].turn.rewrite.text == "What did she write about?"



def test_a_stop_just_after_a_kept_re_run_leaves_it_said_re_run(app_services, tmp_path, monkeypatch):
    # S.correct decides under its lock whether a re-run is kept; the app then
    # looked at the Stop count again itself, so a Stop landing between the
    # two showed "Nothing was running" over a turn that had been re-run.
    act, session = app.Actions(app_services, str(tmp_path)), S.Session()
    for question in ("Who was Ada Lovelace?", "What did she write about?"):
        act.take(question, session)
        list(act.ask(session, None))
    correct, stopped = S.correct, []

    def then_stop(*args, **kwargs):  # Stop pressed once the re-run has ended, before the app draws it
        status = correct(*args, **kwargs)
        stopped.append(act.stopped(session, None)[1])
        return status

    monkeypatch.setattr(app.S, "correct", then_stop)
    views = act.rerun("What did Ada Lovelace write about?", session, None)
    assert stopped == ["Nothing was running\\."]
    assert views[1].replace("\\", "") == "Turn 2 re-run with your rewrite."
    assert session.turns[1].turn.rewrite.text == "What did Ada Lovelace write about?"


def test_questions_sent_during_a_turn_are_asked_after_it_in_order(app_services, tmp_path):
    from assistant import session as S

    act, session = app.Actions(app_services, str(tmp_path)), S.Session()
    questions = ["Who was Ada Lovelace?", "What did she write about?", "Who was her father?", "What is Paris?"]
    assert act.take(questions[0], session)[:2] == ("", "⏳ Asking…")
    run = act.ask(session, None)
    next(run)  # the first turn is under way
    for question in questions[1:]:
        assert act.take(question, session)[0] == ""  # put in line, the box emptied
    assert next(run)[1] == "⏳ 3 more questions waiting\\."
    *_, last = run
    assert [entry.turn.question for entry in session.turns] == questions
    assert "Paris" in last[0]["value"][-1]["content"]
    # A run with nothing left in line (its questions were asked by the run before) changes nothing.
    assert list(act.ask(session, None)) == [act.unchanged()]
    # Stop ends the run; the questions still in line are not asked, and the status says so.
    act.take("Who was Lord Byron?", session)
    run = act.ask(session, None)
    next(run)  # under way
    act.take("What is Python?", session)
    act.take("What is Paris?", session)
    status = act.stopped(session, None)[1].replace("\\", "")  # shown as Markdown, escaped
    run.close()  # what Gradio's cancel does to the run
    assert status.startswith("Stopped: turn 5 was not added.") and "The 2 questions sent after it were not asked" in status
    assert list(act.ask(session, None)) == [act.unchanged()] and len(session.turns) == 4
    # With nothing running, Stop says so (it said the turn was not added).
    assert act.stopped(session, None)[1] == "Nothing was running\\." and session.running == 0


def test_a_refused_question_stays_in_the_box(app_services, tmp_path):
    from assistant import session as S

    act, session = app.Actions(app_services, str(tmp_path)), S.Session()
    for question, message in (("x" * 5_022, "That message is 5,022 characters long"), ("\u200b ", "Please type a question")):
        box, status, _ = act.take(question, session)
        assert box == app.gr.skip() and message in status
    assert list(act.ask(session, None)) == [act.unchanged()] and session.turns == []


def test_a_refused_correction_stays_in_its_box(app_services, tmp_path):
    from assistant import session as S

    act, session = app.Actions(app_services, str(tmp_path)), S.Session()
    act.take("Who was Ada Lovelace?", session)
    list(act.ask(session, None))
    views = act.rerun("x" * 1_122, session, None)
    assert "That message is 1,122 characters long" in views[1] and views[4] == app.gr.skip()
    views = act.rerun("Who was Ada Lovelace, the mathematician?", session, None)
    assert views[4]["value"] == "Who was Ada Lovelace, the mathematician?"


def test_play_all_draws_every_panel_between_turns(app_services, tmp_path, qrecc_conversations):
    # Only the chat moved during Play all: the metrics table, their plot and
    # the conversations list appeared at the end.
    from assistant import session as S

    act, session = app.Actions(app_services, str(tmp_path)), S.Session()
    S.load_replay(session, qrecc_conversations)
    act.replay_start("7", session, None)
    views = list(act.replay_all(session, None))
    between = [v for v in views[:-1] if v[2] != app.gr.skip()]
    # Drawn whole after the first turn (its chat shorter than the last), the saved copy too.
    assert between and 0 < len(between[0][0]["value"]) < len(views[-1][0]["value"])
    assert len(between[0][-1]["conversations"][str(session.conversation_no)]) == 1


def test_converse_with_nothing_given_says_what_to_give(app_services, tmp_path):
    # A file Gradio refused for its size left nothing, and the message asked for a title only.
    from assistant import session as S

    act, session = app.Actions(app_services, str(tmp_path)), S.Session()
    status = act.document(None, "  ", "", session)[0]
    assert "Upload a document, paste its text, or type an article's title first" in status.replace("\\", "")


def test_converse_says_which_of_file_text_and_title_it_used(app_services, tmp_path):
    from assistant import session as S

    act, session = app.Actions(app_services, str(tmp_path)), S.Session()
    status = act.document(None, "The zorblax flower grows on Mount Quillon.", "Ada Lovelace", session)[0].replace("\\", "")
    assert "the document “your text”" in status and "(the title left unused: one document at a time.)" in status
    doc = tmp_path / "notes.txt"
    doc.write_text("Ada wrote notes.")
    status = act.document(str(doc), "Some text.", "Paris", session)[0].replace("\\", "")
    assert "the document “notes”" in status and "(the pasted text and the title left unused" in status
    assert "left unused" not in act.document(None, "", "Paris", session)[0]


def test_replay_buttons_with_nothing_loaded_say_to_load_a_file(app_services, tmp_path):
    from assistant import session as S

    act, session = app.Actions(app_services, str(tmp_path)), S.Session()
    for button in (act.replay_next, act.replay_all):
        *_, views = button(session, None)
        assert "Load a conversations file and pick a conversation first" in views[1]


def test_gradio_refuses_uploads_over_the_size_the_upload_panel_states(tmp_path):
    from assistant import session as S

    launched = {}
    # A queued Blocks: launch fits the per-client shares into its queue (server.check_gradio).
    demo = app.gr.Blocks().queue()
    demo.launch = lambda **settings: launched.update(settings)
    app.serve(demo)
    limits = S.UploadLimits()
    # Gradio's refusal counts 1024² bytes a "Mb" and shows one decimal; the panel says "10 MB each".
    assert f"{launched['max_file_size'] / 1024**2:.1f} Mb" == f"{limits.max_file_mb:.1f} Mb" == "10.0 Mb"
    # The app's own check takes what Gradio takes, and no more.
    small = S.UploadLimits(max_file_mb=0.01)
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"a" * small.max_file_bytes)
    assert S.check_uploads([notes], small) == [notes]
    notes.write_bytes(b"a" * (small.max_file_bytes + 1))
    with pytest.raises(app.AssistantError, match="files are limited to 0.01 MB each"):
        S.check_uploads([notes], small)


def test_the_try_examples_are_hidden_while_the_session_answers_from_its_own_documents(app_services, tmp_path):
    # They ask about Ada Lovelace, which a pasted document or an upload does not know.
    from assistant import session as S

    act, session = app.Actions(app_services, str(tmp_path)), S.Session()
    assert act.document(None, "The zorblax flower grows on Mount Quillon.", "", session)[-1]["visible"] is False
    assert act.default(session)[-1]["visible"] is True
    refused = act.document(None, "  ", "", session)  # nothing given: the source, and the examples, stay
    assert refused[-1]["visible"] is True
    assert act.refresh(session, None)[0]["placeholder"] == app.PLACEHOLDER
    act.document(None, "The zorblax flower grows on Mount Quillon.", "", session)
    assert act.refresh(session, None)[0]["placeholder"] == "Ask about the document “your text” \\(1 passage\\)."


def test_a_request_body_past_the_limit_is_refused_before_it_is_read(app_server):
    # Gradio took any body: a few 100 MB posts to its queue from a script grew
    # the server's memory by gigabytes.
    import httpx

    from assistant import session as S

    url, _ = app_server
    limit = S.request_limit(S.UploadLimits())
    join = url + "gradio_api/queue/join"
    body = b'{"data": ["' + b"x" * limit + b'"], "fn_index": 0, "session_hash": "abc"}'
    refused = httpx.post(join, content=body, headers={"content-type": "application/json"}, timeout=60)
    assert refused.status_code == 413 and f"at most {limit:,} bytes" in refused.text

    def chunks():  # no Content-Length: counted as it comes
        for start in range(0, len(body), 2**20):
            yield body[start:start + 2**20]

    refused = httpx.post(join, content=chunks(), headers={"content-type": "application/json"}, timeout=60)
    assert refused.status_code == 413
    # An ordinary request still goes through.
    assert httpx.get(url + "config", timeout=60).status_code == 200
    ok = httpx.post(join, json={"data": [None], "fn_index": 0, "session_hash": "abc"}, timeout=60)
    assert ok.status_code != 413


def test_a_rated_rewrite_is_drawn_with_its_thumb_pressed(app_services, tmp_path):
    # The chat, drawn anew after each event, dropped the thumb Gradio had
    # pressed: a rated rewrite looked unrated, after a reload too.
    from assistant import session as S

    act, session = app.Actions(app_services, str(tmp_path)), S.Session()
    for question in ("Who was Ada Lovelace?", "Who was her father?"):
        act.take(question, session)
        *_, views = act.ask(session, None)
    assert views[0]["feedback_value"] == [None, None]
    assert act.thumb(0, session, None)[0]["feedback_value"] == [None, "Dislike"]  # the panel's 👎: the last turn
    liked = app.gr.LikeData(None, {"index": 2, "value": "", "liked": True})  # the chat's 👍 under turn 1's answer
    assert act.like(session, None, liked)[0]["feedback_value"] == ["Like", "Dislike"]
    # Clicked off again, the thumb is drawn pressed again: its line in the labels file stays.
    unliked = app.gr.LikeData(None, {"index": 2, "value": "", "liked": ""})
    chat, status, *_, saved = act.like(session, None, unliked)
    assert chat["feedback_value"] == ["Like", "Dislike"] and "not taken back" in status
    reloaded = S.Session()
    assert act.restore(saved, reloaded)[0]["feedback_value"] == ["Like", "Dislike"]


def test_the_correction_box_says_how_its_turn_was_judged_for_the_panels_thumbs(app_services, tmp_path):
    # The Rewrite panel's 👍/👎 rate the turn the correction box shows and
    # showed no pressed state: the box's class names the judgement for the page.
    from assistant import session as S

    act, session = app.Actions(app_services, str(tmp_path)), S.Session()
    assert act.correction_box(session)["elem_classes"] == []
    for question in ("Who was Ada Lovelace?", "Who was her father?"):
        act.take(question, session)
        list(act.ask(session, None))
    assert act.thumb(1, session, None)[4]["elem_classes"] == ["cqa-judged-up"]  # the last turn
    select = app.gr.SelectData(None, {"index": 0, "value": "Who was Ada Lovelace?"})
    assert act.select(session, select)[0]["elem_classes"] == []  # turn 1: not judged
    assert act.thumb(0, session, None)[4]["elem_classes"] == ["cqa-judged-down"]


def test_the_page_script_gets_every_name_it_reads_from_the_server():
    # app.js reads the ids and texts it shares with the server from config; a
    # name it reads that page_js does not give is undefined in the page, where
    # it fails only when that code runs (a tab's save, a reload note).
    import json
    import re

    script = app.page_js()
    source = app.JS_FILE.read_text(encoding="utf-8")
    config = json.loads(script[script.rindex(")(") + 2 : -1])
    assert script.startswith("() => (") and source in script
    assert set(re.findall(r"\bconfig\.(\w+)", source)) == set(config)
    assert config["unread"] == app.OTHER_TAB_UNREAD and config["key"] == app.STORAGE_KEY


def test_an_export_of_one_turn_says_one_turn(app_services, tmp_path):
    # It said "Exported 1 turns."
    from assistant import session as S

    act, session = app.Actions(app_services, str(tmp_path)), S.Session()
    act.take("Who was Ada Lovelace?", session)
    list(act.ask(session, None))
    assert "Exported 1 turn." in act.export(session)[1].replace("\\", "")
    act.take("Who was her father?", session)
    list(act.ask(session, None))
    assert "Exported 2 turns." in act.export(session)[1].replace("\\", "")


@pytest.mark.parametrize("turns", [[1], [3], [1, 2], [2, 5, 9]])
def test_the_metrics_plot_marks_whole_turns_only(turns):
    # With one scored turn the x axis read "0.945 0.960 ... 1.050": a turn has no fractions.
    metrics = ("ROUGE-1 R", "USE", "R@10")
    points = [{"turn": turn, "metric": metric, "mean": 1.0} for turn in turns for metric in metrics]
    axes = app._figure(points, metrics).axes[0]
    low, high = axes.get_xlim()
    shown = [tick for tick in axes.get_xticks() if low <= tick <= high]
    assert all(tick == pytest.approx(round(tick)) for tick in shown)
    assert {round(tick) for tick in shown} >= {turns[0], turns[-1]}


@pytest.mark.skipif(not __import__("shutil").which("make"), reason="missing prerequisite: make")
def test_make_run_leaves_the_port_to_the_environment_unless_given(monkeypatch):
    # `make run` always passed --port 7860, so GRADIO_SERVER_PORT (README: read by app.py) was ignored.
    import subprocess

    def command(*args, **env):
        for name in ("PORT", "GRADIO_SERVER_PORT"):
            monkeypatch.delenv(name, raising=False)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        out = subprocess.run(["make", "-s", "-n", "-o", ".venv/.installed", "run", *args], cwd=Path(app.__file__).parent,
                             capture_output=True, text=True, check=True).stdout
        return out.strip().splitlines()[-1].split()[1:]

    assert command(GRADIO_SERVER_PORT="9000") == ["app.py"]
    assert command() == ["app.py"]
    assert command("PORT=8081") == ["app.py", "--port", "8081"]
    assert command(PORT="8080") == ["app.py", "--port", "8080"]


def test_a_stream_woken_by_stop_draws_a_stopped_status(app_services, tmp_path, monkeypatch):
    # Stop raised the session's stops before it set the status a stopped
    # stream draws last: a stream waking in between drew the old status (a
    # blank one on a first Stop), and Stop's own views may reach the page before it.
    from assistant import session as S

    act, session, seen = app.Actions(app_services, str(tmp_path)), S.Session(), []
    stop_turns = S.stop_turns

    def stopping(session):
        cut = stop_turns(session)
        seen.append(session.stopped)  # what a stream woken now yields as its last status
        return cut

    monkeypatch.setattr(S, "stop_turns", stopping)
    act.stopped(session, None)
    assert seen and seen[0].startswith("Stopped")
