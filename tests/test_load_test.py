"""scripts/load_test.py: both of its clients play real sessions against the app, and its
isolation check (fake replies, no server) catches a reply from another session."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "load_test.py"


@pytest.fixture(scope="module")
def load_test():
    spec = importlib.util.spec_from_file_location("load_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("client", ["lean", "gradio"])
def test_every_turn_of_every_session_is_answered_in_its_own_conversation(load_test, app_server, client):
    url, _ = app_server
    result = load_test.run(url, sessions=3, turns=2, timeout=120, client=client)
    assert result["client"] == client
    assert (result["turns_requested"], result["turns_completed"], result["lost_turns"], result["errors"]) == (6, 6, 0, 0)
    assert (result["subjects"], result["sessions_isolated"], result["leaked_replies"]) == (3, True, 0)
    assert result["p50_s"] <= result["p95_s"] <= result["max_s"] and result["client_cpu_s"] >= 0


def test_the_lean_client_gets_the_reply_gradio_client_gets(load_test, app_server):
    import httpx
    from gradio_client import Client

    url, _ = app_server
    question = "Who was Ada Lovelace?"
    expected = Client(url, verbose=False).predict(question, api_name="/chat")

    async def lean():
        async with httpx.AsyncClient(timeout=120) as http:
            return await load_test._lean_turn(http, url, load_test._chat_endpoint(url), "lean-test-session", question)

    reply = asyncio.run(lean())
    assert reply["turn"] == expected["turn"] == 1
    for key in ("question", "rewrite", "answer", "sources"):
        assert reply[key] == expected[key]


# ---------------------------------------------------------------- the isolation check, on fake replies


def _reply(question, turn, rewrite=None, answer="An answer.", conversation=1):
    return {"question": question, "rewrite": question if rewrite is None else rewrite, "answer": answer,
            "sources": [], "turn": turn, "conversation": conversation}


class _Bar:
    n = 0

    def update(self, n):
        self.n += n


def _play(load_test, sessions, index, replies):
    """Session ``index`` of a run of ``sessions`` seeing ``replies`` (a reply
    dict, or an exception for a turn that failed), each turn counted by
    ``_Session.asking`` as both clients count theirs; the run's summary."""
    own, foreign = load_test.plan(sessions)[index]
    seen, bar = load_test._Session(index, own, foreign), _Bar()
    for question, reply in zip(load_test.questions_for(own, len(replies)), replies):
        with seen.asking(question, bar) as asked:
            if isinstance(reply, Exception):
                raise reply
            asked["reply"] = reply
    assert bar.n == len(replies)  # a failed turn moves the bar too
    return load_test.summary("lean", 1, len(replies), [seen.result()], 1.0, 0.0)


def test_sessions_play_different_conversations_each_cycling_through_its_own(load_test):
    conversations = load_test.CONVERSATIONS
    assert len({c.subject for c in conversations}) == len(conversations) >= 4
    for c in conversations:
        assert 3 <= len(c.questions) <= 5
        assert any(load_test._named(name, c.questions[0]) for name in c.names)  # the first question names it
        assert not any(load_test._named(name, q) for q in c.questions[1:] for name in c.names)  # then pronouns
        others = [name for o in conversations if o is not c for name in o.names]
        assert not any(load_test._named(name, q) for q in c.questions for name in others)
    played = load_test.plan(len(conversations) + 2)
    assert [own for own, _ in played] == [*conversations, *conversations[:2]]
    ada, ada_foreign = played[0]
    assert ada_foreign == conversations[1:] and played[len(conversations)] == played[0]
    assert load_test.plan(1) == [(conversations[0], ())]
    assert load_test.questions_for(ada, 7) == [*ada.questions, *ada.questions[:2]]
    assert load_test.questions_for(conversations[1], 2) == list(conversations[1].questions[:2])


def test_a_rewrite_naming_another_sessions_subject_is_a_leak_though_the_turns_run_1_2_3(load_test):
    # Marie Curie's session gets, in turn 3, the rewrite of Ada Lovelace's
    # session's turn: the turn numbers are right, as the old check wanted.
    curie = load_test.CONVERSATIONS[1]
    replies = [_reply(curie.questions[0], 1, answer="A Polish and naturalised-French physicist."),
               _reply(curie.questions[1], 2, rewrite="What did Marie Curie discover?", answer="Radium."),
               _reply(curie.questions[2], 3, rewrite="Who was Ada Lovelace's husband?")]
    result = _play(load_test, sessions=4, index=1, replies=replies)
    assert (result["turns_completed"], result["errors"]) == (3, 0)
    assert result["sessions_isolated"] is False and result["leaked_replies"] == 1
    assert "session 1 (Marie Curie), question 3 'Who was her husband?'" in result["leak_example"]
    assert "names Ada Lovelace, another session's subject" in result["leak_example"]


def test_a_rewrite_that_fails_to_name_its_own_subject_is_no_leak(load_test):
    newton = load_test.CONVERSATIONS[2]
    replies = [_reply(newton.questions[0], 1), _reply(newton.questions[1], 2),  # "What book did he publish?" as is
               _reply(newton.questions[2], 3, rewrite="Who shares credit with Leibniz for calculus?")]
    result = _play(load_test, sessions=6, index=2, replies=replies)
    assert (result["sessions_isolated"], result["leaked_replies"], result["leak_example"]) == (True, 0, None)


def test_a_foreign_name_already_in_the_sessions_own_answers_is_no_leak(load_test):
    eiffel = load_test.CONVERSATIONS[3]
    replies = [_reply(eiffel.questions[0], 1, answer="In Paris, where Marie Curie worked."),
               _reply(eiffel.questions[1], 2, rewrite="Who is Marie Curie named after?")]
    assert _play(load_test, sessions=4, index=3, replies=replies)["sessions_isolated"] is True
    # Not in its own text, and Marie Curie is played by another session: a leak.
    replies[0] = _reply(eiffel.questions[0], 1, answer="In Paris.")
    assert _play(load_test, sessions=4, index=3, replies=replies)["leaked_replies"] == 1
    # No session of the run plays Marie Curie (one session only): nobody's subject to leak.
    assert _play(load_test, sessions=1, index=0, replies=[_reply("Who was Ada Lovelace?", 1,
                                                                 rewrite="Who was Marie Curie?")])["leaked_replies"] == 0


def test_names_match_as_whole_words_in_any_case_and_alternatives_count(load_test):
    ada = load_test.CONVERSATIONS[0]
    adamant = [_reply(ada.questions[0], 1), _reply(ada.questions[1], 2, rewrite="What did the adamant newtonian write?")]
    assert _play(load_test, sessions=3, index=0, replies=adamant)["leaked_replies"] == 0
    shouted = [_reply(ada.questions[0], 1), _reply(ada.questions[1], 2, rewrite="WHAT DID CURIE WRITE ABOUT?")]
    assert _play(load_test, sessions=3, index=0, replies=shouted)["leaked_replies"] == 1
    alternative = dict(_reply(ada.questions[1], 2), alternatives=["What did Newton write about?"])
    assert _play(load_test, sessions=3, index=0, replies=[_reply(ada.questions[0], 1), alternative])["leaked_replies"] == 1


def test_another_question_echoed_or_a_turn_out_of_this_sessions_count_is_a_leak(load_test):
    ada = load_test.CONVERSATIONS[0]
    echoed = [_reply(ada.questions[0], 1), _reply("Which prizes did she win?", 2)]
    result = _play(load_test, sessions=1, index=0, replies=echoed)
    assert result["leaked_replies"] == 1 and "echoes the question 'Which prizes did she win?'" in result["leak_example"]
    shared = [_reply(ada.questions[0], 1), _reply(ada.questions[1], 4)]  # three turns of others in between
    result = _play(load_test, sessions=1, index=0, replies=shared)
    assert result["leaked_replies"] == 1 and "is turn 4 where this session is at turn 2" in result["leak_example"]
    moved = [_reply(ada.questions[0], 1), _reply(ada.questions[1], 2, conversation=2)]
    assert _play(load_test, sessions=1, index=0, replies=moved)["leaked_replies"] == 1
    wrong_error = [_reply(ada.questions[0], 1), {"question": "Who was Isaac Newton?", "error": "busy"}]
    result = _play(load_test, sessions=1, index=0, replies=wrong_error)
    assert (result["leaked_replies"], result["errors"], result["lost_turns"]) == (1, 1, 1)


def test_failed_turns_are_errors_not_leaks_and_the_server_may_or_may_not_have_added_them(load_test):
    ada = load_test.CONVERSATIONS[0]
    for turn_after in (2, 3):  # the timed-out turn 2 was dropped, or added
        replies = [_reply(ada.questions[0], 1), TimeoutError("turn 2"), _reply(ada.questions[2], turn_after),
                   {"question": ada.questions[3], "error": "The question is too long."},  # not added
                   _reply(ada.questions[4], turn_after + 1)]
        result = _play(load_test, sessions=1, index=0, replies=replies)
        assert (result["sessions_isolated"], result["errors"], result["lost_turns"]) == (True, 2, 2)
    replies = [_reply(ada.questions[0], 1), TimeoutError("turn 2"), _reply(ada.questions[2], 4)]
    assert _play(load_test, sessions=1, index=0, replies=replies)["leaked_replies"] == 1
    nothing = _play(load_test, sessions=1, index=0, replies=[TimeoutError("turn 1")])
    assert (nothing["sessions_isolated"], nothing["leaked_replies"], nothing["lost_turns"]) == (None, 0, 1)


def test_the_soak_samples_a_servers_descriptors_and_threads_beside_its_memory():
    # A server that runs for days leaks as surely by descriptors (uploads'
    # files left open) or threads as by memory; the soak sampled RSS alone.
    import subprocess
    import sys

    spec = importlib.util.spec_from_file_location("soak_test", SCRIPT.with_name("soak_test.py"))
    soak = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(soak)
    child = ("import sys, threading, time\n"
             "files = [open(sys.executable, 'rb') for _ in range(int(sys.argv[1]))]\n"
             "stop = threading.Event()\n"
             "for _ in range(int(sys.argv[2])): threading.Thread(target=stop.wait).start()\n"
             "print('ready', flush=True)\n"
             "sys.stdin.read()\n"
             "stop.set()\n")
    figures = []
    for files, threads in ((0, 0), (5, 3)):
        process = subprocess.Popen([sys.executable, "-c", child, str(files), str(threads)], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, text=True)
        try:
            assert process.stdout.readline() == "ready\n"
            figures.append(soak.process_figures(process.pid))
        finally:
            process.communicate("", timeout=60)
    plain, busy = figures
    assert (busy["fds"] - plain["fds"], busy["threads"] - plain["threads"]) == (5, 3)
    assert set(plain) == {"rss_mb", "fds", "threads"} and plain["rss_mb"] > 0
    # It had not started at all since load_test's QUESTIONS became
    # CONVERSATIONS: each client now plays one of those, from its first
    # question in each new conversation.
    marie = soak.CONVERSATIONS[1]
    turns = [soak.next_turn(marie, asked, 3) for asked in range(7)]
    assert [new for new, _ in turns] == [False, False, False, True, False, False, True]
    assert [question for _, question in turns] == [*marie.questions[:3], *marie.questions[:3], marie.questions[0]]
    assert [soak.next_turn(marie, asked, 0)[1] for asked in range(5)] == [*marie.questions, marie.questions[0]]


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # free again once closed: nothing listens there


@pytest.fixture()
def not_an_app():
    """A loopback web server that is not the app: its /config is a page, not JSON."""
    import http.server
    import threading

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            body = b"<html>hello</html>" if self.path != "/good/config" else b'{"components": []}'
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def _screenshots():
    spec = importlib.util.spec_from_file_location("screenshots", SCRIPT.with_name("screenshots.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_url_where_no_app_answers_is_one_error_line_before_any_work(load_test, not_an_app, capsys):
    # A stopped or mistyped app's URL printed a table of failed turns (load_test) or
    # playwright's traceback (screenshots) instead of saying what to do.
    screenshots = _screenshots()
    if not Path(screenshots.CHROMIUM).is_file():
        pytest.skip(f"{screenshots.CHROMIUM} is missing (apt-get install chromium)")
    for url, why in ((f"http://127.0.0.1:{_closed_port()}/", "refused"), (not_an_app, "Expecting value")):
        for main, argv in ((load_test.main, ["--sessions", "1", "--turns", "1"]), (screenshots.main, [])):
            assert main(["--url", url, *argv]) == 2
            captured = capsys.readouterr()
            assert captured.out == "" and len(captured.err.splitlines()) == 1
            assert captured.err.startswith(f"error: no app answers at {url} (") and why in captured.err
            assert "leave --url out" in captured.err
    assert load_test.not_serving(not_an_app + "good/") is None  # an app's config: it serves


@pytest.mark.parametrize(("flags", "message"), [
    (["--sessions", "0"], "--sessions must be 1 to 1000, not 0"),
    (["--sessions", "1001"], "--sessions must be 1 to 1000, not 1001"),
    (["--turns", "0"], "--turns must be at least 1, not 0"),
    (["--timeout", "-1"], "--timeout must be above 0 seconds, not -1"),
])
def test_a_flag_out_of_range_is_named_with_its_value(load_test, capsys, flags, message):
    # One line listed every flag's range whichever was wrong.
    assert load_test.main(["--url", "http://127.0.0.1:1/", *flags]) == 2
    assert capsys.readouterr().err == f"error: {message}\n"
