"""Serving a crowd: concurrent sessions share the models through the batchers
(BatchingRewriter, BatchingEncoder) and each still gets what it would alone.

Batches that must hold every caller close because they are full (a window far
longer than the test), so no assertion depends on timing; where the number of
callers is not known in advance the window is short and only results are
compared.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import threading
import time
from unittest import mock

import gradio as gr  # at the top: Gradio reads a handler's gr.Request hint in its module's names
import numpy as np
import pytest

from assistant import session as S
from assistant.encoders import BatchingEncoder, Encoder
from assistant.kernel import AssistantConfig, ConfigError, Conversation, MicroBatcher, RetrieverConfig
from assistant.pipeline import Assistant
from assistant.readers import SentenceReader
from rewriting import BatchingRewriter, CausalLMRewriter, RewriterConfig
from conftest import concurrently

LONG = 60_000  # ms: batches close because they are full, never by the clock

# One scripted conversation per session: different questions and histories,
# so a batch mixes prompts of different lengths.
SCRIPTS = [
    ["Who was Ada Lovelace?", "What did she write?", "Who was her father?"],
    ["What is Paris?", "What stands there?", "Is it the capital?"],
    ["Who was Charles Babbage?", "What did he originate?", "Was he English?"],
    ["What is Python?", "What does its design emphasise?", "Is it high-level?"],
    ["Who was Lord Byron?", "What movement was he part of?", "Was he a poet?"],
    ["Who was Ada Lovelace?", "Was she a writer?", "What engine did she write about?"],
]


class Recording:
    """Wraps an encoder or rewriter; records each model call's size and thread."""

    def __init__(self, inner):
        self.inner = inner
        self.calls: list[tuple[int, str]] = []

    def encode(self, texts):
        self.calls.append((len(texts), threading.current_thread().name))
        return self.inner.encode(texts)

    def rewrite(self, question, history):
        return self.rewrite_batch([(question, history)])[0]

    def rewrite_batch(self, items):
        self.calls.append((len(items), threading.current_thread().name))
        return self.inner.rewrite_batch(items)


class Lengths:
    """A deterministic encoder: one row per text, [length, number of vowels];
    a text containing "boom" makes the whole call fail."""

    def encode(self, texts):
        if any("boom" in t for t in texts):
            raise ValueError("boom in the input")
        return np.array([[float(len(t)), float(sum(c in "aeiou" for c in t))] for t in texts]).reshape(-1, 2)


# ---------------------------------------------------------------- MicroBatcher (the one batcher)


def test_the_micro_batcher_runs_all_callers_items_in_one_call_in_arrival_order_per_caller():
    calls = []

    def tens(items):
        calls.append((list(items), threading.current_thread().name))
        return [item * 10 for item in items]

    arguments = [([1, 2],), ([3],), ([4, 5, 6],)]
    with MicroBatcher(tens, max_batch=6, window_ms=LONG, name="tens") as batcher:
        results = concurrently(batcher.run, arguments)
    assert results == [[10, 20], [30], [40, 50, 60]]
    assert len(calls) == 1 and sorted(calls[0][0]) == [1, 2, 3, 4, 5, 6] and calls[0][1] == "tens"


def test_the_micro_batcher_retries_a_failed_batch_item_by_item():
    def halves(items):
        if 0 in items:
            raise ZeroDivisionError("a zero among the items")
        return [1 / item for item in items]

    with MicroBatcher(halves, max_batch=3, window_ms=LONG) as batcher:
        good, bad, other = concurrently(batcher.run, [([2],), ([0],), ([4],)])
    assert good == [0.5] and other == [0.25] and isinstance(bad, ZeroDivisionError)


def test_an_early_batch_gives_a_finished_result_at_once_and_retries_only_the_others():
    # run_batch hands 1's result back, then holds the batch until released:
    # 1's caller has it meanwhile. The batch then fails on 0, and only the
    # items not yet delivered are retried alone.
    release = threading.Event()
    calls = []

    def tens(items, deliver):
        calls.append(list(items))
        if 1 in items:
            deliver(items.index(1), 10)
            release.wait(30)
        if 0 in items:
            raise ZeroDivisionError("a zero among the items")
        return [item * 10 for item in items]

    with MicroBatcher(tens, max_batch=3, window_ms=LONG, early=True) as batcher:
        one, two, zero = (batcher.submit([item])[0] for item in (1, 2, 0))
        assert one.result(timeout=30) == 10
        assert not two.done() and not zero.done()  # the batch goes on for them
        release.set()
        assert two.result(timeout=30) == 20
        with pytest.raises(ZeroDivisionError):
            zero.result(timeout=30)
    assert calls[0] == [1, 2, 0] and sorted(calls[1:]) == [[0], [2]]


# ---------------------------------------------------------------- BatchingEncoder


def test_concurrent_encodes_are_one_call_and_each_caller_gets_its_own_rows(minilm):
    calls = [["Ada Lovelace was a mathematician."], ["Paris is a city.", "Python is a language.", "Byron wrote."],
             ["The Eiffel Tower stands in Paris."], ["Charles Babbage designed an engine.", "Ada wrote notes."]]
    alone = [minilm.encode(texts) for texts in calls]
    recording = Recording(minilm)
    with BatchingEncoder(recording, max_batch=len(calls), window_ms=LONG) as batched:
        assert isinstance(batched, Encoder)
        together = concurrently(batched.encode, [(texts,) for texts in calls])
    assert recording.calls == [(sum(map(len, calls)), "encode-batcher")]
    for mine, expected in zip(together, alone):
        assert mine.shape == expected.shape
        np.testing.assert_allclose(mine, expected, atol=1e-5)  # padded with others' texts: same up to float noise


def test_calls_beyond_max_batch_go_in_the_next_call():
    recording = Recording(Lengths())
    calls = [(["a"],), (["bb", "ccc"],), (["dddd"],), (["eeeee"],)]
    with BatchingEncoder(recording, max_batch=2, window_ms=LONG) as batched:
        results = concurrently(batched.encode, calls)
    # Two calls per model call, whichever arrived first: five texts in two calls.
    assert len(recording.calls) == 2 and sum(size for size, _ in recording.calls) == 5
    for (texts,), rows in zip(calls, results):
        np.testing.assert_array_equal(rows, Lengths().encode(texts))


def test_a_failing_input_fails_only_its_own_caller():
    recording = Recording(Lengths())
    calls = [(["Ada", "Byron"],), (["a boom here"],), (["Paris"],)]
    with BatchingEncoder(recording, max_batch=3, window_ms=LONG) as batched:
        results = concurrently(batched.encode, calls)
    assert isinstance(results[1], ValueError) and "boom" in str(results[1])
    np.testing.assert_array_equal(results[0], Lengths().encode(["Ada", "Byron"]))
    np.testing.assert_array_equal(results[2], Lengths().encode(["Paris"]))
    # The batch of all three failed, then each call ran alone.
    sizes = [size for size, _ in recording.calls]
    assert sizes[0] == 4 and sorted(sizes[1:]) == [1, 1, 2]


def test_an_empty_call_in_a_batch_gets_no_rows():
    with BatchingEncoder(Lengths(), max_batch=2, window_ms=LONG) as batched:
        empty, full = concurrently(batched.encode, [([],), (["abc"],)])
    assert empty.shape == (0, 2)
    np.testing.assert_array_equal(full, [[3.0, 1.0]])


def test_a_lone_call_waits_out_the_window_and_matches_the_encoder():
    with BatchingEncoder(Lengths(), max_batch=8, window_ms=1) as batched:
        np.testing.assert_array_equal(batched.encode(["Ada", "Byron"]), Lengths().encode(["Ada", "Byron"]))


def test_closed_encoder_refuses_new_calls():
    batched = BatchingEncoder(Lengths())
    batched.close()
    with pytest.raises(RuntimeError, match="closed"):
        batched.encode(["Ada"])


@pytest.mark.parametrize("settings", [{"max_batch": 0}, {"max_batch": 2.5}, {"window_ms": -1}])
def test_settings_out_of_range_are_config_errors(settings):
    with pytest.raises(ConfigError):
        BatchingEncoder(Lengths(), **settings)


# ---------------------------------------------------------------- sessions at once


@pytest.fixture
def causal(tiny_gpt2):
    model, tok = tiny_gpt2  # float32 weights: batched greedy decoding equals one at a time
    return CausalLMRewriter(model, tok, RewriterConfig(prompt_format="plain", max_new_tokens=8))


def _play(services, script):
    """One session plays ``script`` through the API's turn function."""
    session = S.Session()
    replies = [S.ask_json(services, session, question) for question in script]
    for reply in replies:
        reply.pop("timings_ms")
    return replies


def test_sessions_at_once_get_what_each_gets_alone(causal, retriever, minilm, tmp_path):
    alone = S.Services(Assistant(causal, retriever, SentenceReader(minilm)), S.LabelStore(tmp_path / "a.jsonl"))
    sequential = [_play(alone, script) for script in SCRIPTS]
    assert all("error" not in reply for replies in sequential for reply in replies)

    rewrites = Recording(causal)
    # Every session rewrites once per turn: each round of rewrites fills one
    # batch. The encoder's calls depend on its cache, so its window is short.
    with BatchingRewriter(rewrites, max_batch=len(SCRIPTS), window_ms=LONG) as rewriter, \
            BatchingEncoder(minilm, max_batch=len(SCRIPTS), window_ms=5) as encoder:
        crowd = S.Services(Assistant(rewriter, retriever, SentenceReader(encoder)), S.LabelStore(tmp_path / "b.jsonl"))
        concurrent = concurrently(lambda script: _play(crowd, script), [(script,) for script in SCRIPTS])
    assert rewrites.calls == [(len(SCRIPTS), "rewrite-batcher")] * len(SCRIPTS[0])
    for mine, expected in zip(concurrent, sequential):
        assert not isinstance(mine, Exception), mine
        assert [(r["rewrite"], r["answer"], r["turn"]) for r in mine] == [
            (r["rewrite"], r["answer"], r["turn"]) for r in expected]
        assert [[s["id"] for s in r["sources"]] for r in mine] == [[s["id"] for s in r["sources"]] for r in expected]
        assert [[s["score"] for s in r["sources"]] for r in mine] == [
            pytest.approx([s["score"] for s in r["sources"]]) for r in expected]


def test_rewrite_api_calls_at_once_are_one_batch_with_each_callers_own_rewrite(causal, retriever, minilm, tmp_path):
    items = [("What did she write?", ["Who was Ada Lovelace?", "A mathematician."]),
             ("Who was her father?", ["Who was Ada Lovelace?", "A mathematician.", "What did she write?", "Notes."]),
             ("Is it the capital?", ["What is Paris?", "A city in France."]),
             ("Who was Charles Babbage?", [])]
    expected = [{"rewrite": r.text, "note": r.note} for r in (causal.rewrite(q, h) for q, h in items)]
    rewrites = Recording(causal)
    with BatchingRewriter(rewrites, max_batch=len(items), window_ms=LONG) as rewriter:
        services = S.Services(Assistant(rewriter, retriever, SentenceReader(minilm)), S.LabelStore(tmp_path / "l.jsonl"))
        results = concurrently(lambda q, h: S.rewrite_json(services, q, h), items)
    assert results == expected
    assert rewrites.calls == [(len(items), "rewrite-batcher")]


def test_the_batching_assistant_wraps_the_models_it_loads(tiny_index):
    assistant = Assistant.from_config(AssistantConfig(rewriter="original"), RetrieverConfig(index_dir=str(tiny_index)),
                                      batching=True)
    try:
        assert isinstance(assistant.rewriter, BatchingRewriter)
        assert isinstance(assistant.reader, SentenceReader) and isinstance(assistant.reader.encoder, BatchingEncoder)
        # The reader's own cache sits in front of the batcher: seen sentences never reach it.
        assert assistant.reader.sentences.encoder is assistant.reader.encoder
        turn = assistant.ask("Who was Ada Lovelace?", Conversation())
        assert turn.answer.text == "Ada Lovelace was an English mathematician and writer. She wrote the first published algorithm for Charles Babbage's Analytical Engine."
    finally:
        assistant.rewriter.close()
        assistant.reader.encoder.close()


def test_one_retriever_searched_from_many_threads_gives_each_its_own_hits(retriever):
    queries = ["Ada Lovelace", "Paris capital", "Python language", "Lord Byron poet", "Babbage engine", "mathematician"]
    expected = [retriever.search(q, 3) for q in queries]
    rounds = 10
    results = concurrently(lambda q: [retriever.search(q, 3) for _ in range(rounds)], [(q,) for q in queries * 2])
    for query_results, alone in zip(results, expected * 2):
        assert not isinstance(query_results, Exception), query_results
        assert query_results == [alone] * rounds


# ---------------------------------------------------------------- bounds


def test_a_session_keeps_only_the_conversations_it_can_save(tiny_assistant, tmp_path):
    services = S.Services(tiny_assistant, S.LabelStore(tmp_path / "labels.jsonl"))
    session = S.Session()
    for number in range(1, S.MAX_CONVERSATIONS + 6):
        S.ask_json(services, session, f"Who was Ada Lovelace? ({number})")
        S.new_conversation(session)
    assert len(session.archive) == S.MAX_CONVERSATIONS - 1
    assert sorted(map(int, session.archive)) == list(range(7, S.MAX_CONVERSATIONS + 6))
    S.ask_json(services, session, "What is Paris?")
    saved = S.saved_state(session)["conversations"]
    assert len(saved) == S.MAX_CONVERSATIONS and str(session.conversation_no) in saved


def test_what_a_session_saves_fits_the_browsers_storage(tiny_assistant, tmp_path):
    # Each turn keeps its sources' text: a heavy user's copy outgrew
    # localStorage, the browser's save failed without a word, and the turns
    # since were lost at the next reload.
    import json

    services = S.Services(tiny_assistant, S.LabelStore(tmp_path / "labels.jsonl"))
    session = S.Session()
    for question in ("Who was Ada Lovelace?", "What is Paris?"):
        for _ in range(3):
            S.ask_json(services, session, question)
        S.new_conversation(session)
    for _ in range(3):
        S.ask_json(services, session, "What is Python?")
    whole = S.saved_state(session)
    assert sorted(whole["conversations"]) == ["1", "2", "3"]
    one = len(json.dumps(whole["conversations"]["1"]))
    # Short by less than one conversation: the oldest goes, the others stay whole.
    cut = S.saved_state(session, limit=len(json.dumps(whole)) - one // 2)
    assert len(json.dumps(cut)) <= len(json.dumps(whole)) - one // 2
    assert sorted(cut["conversations"]) == ["2", "3"] and cut["conversations"]["3"] == whole["conversations"]["3"]
    # Room for no other conversation and not all of this one's sources: its
    # oldest turns lose their sources, every question and answer stays.
    current = whole["conversations"]["3"]
    limit = len(json.dumps(whole)) - len(json.dumps(whole["conversations"])) + len(json.dumps(current)) - 10
    tight = S.saved_state(session, limit=limit)
    kept = tight["conversations"]["3"]
    assert list(tight["conversations"]) == ["3"] and len(json.dumps(tight)) <= limit
    assert [t["turn"]["question"] for t in kept] == [t["turn"]["question"] for t in current]
    assert kept[0]["turn"]["sources"] == [] and kept[-1]["turn"]["sources"] == current[-1]["turn"]["sources"]
    # What is cut is only the copy: the session itself keeps everything.
    assert all(t.turn.sources for t in session.turns)
    restored = S.Session()
    S.restore_state(restored, tight)
    assert [t.turn.question for t in restored.turns] == [t.turn.question for t in session.turns]


def test_the_model_loaders_keep_a_bounded_number_of_models():
    from assistant.encoders import load_minilm, load_use

    assert load_minilm.cache_info().maxsize is not None and load_use.cache_info().maxsize is not None


def test_the_batchers_threads_use_the_torch_threads_of_a_single_call(causal):
    import torch

    seen = []

    class Threads:
        def encode(self, texts):
            seen.append(torch.get_num_threads())
            return np.zeros((len(texts), 1))

        def rewrite(self, question, history):
            seen.append(torch.get_num_threads())
            return causal.rewrite(question, history)

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        with BatchingEncoder(Threads()) as encoder, BatchingRewriter(Threads()) as rewriter:
            encoder.encode(["Ada"])
            rewriter.rewrite("Who?", [])
    finally:
        torch.set_num_threads(before)
    assert seen == [1, 1]


def test_two_full_batches_of_turns_can_be_in_flight():
    """The batchers merge as many calls as the causal rewriter decodes in one
    pass (a smaller limit anywhere would cap every batch below the others),
    and the app runs two such batches of turns at once: one is rewritten
    while the other is searched and read."""
    import app
    from assistant.pipeline import BATCH_SIZE

    assert BATCH_SIZE == RewriterConfig().batch_size
    assert app.TURN_CONCURRENCY == 2 * BATCH_SIZE


# ---------------------------------------------------------------- each client's share of the running events


class _Event:
    """A queued event as the running share sees it: its client."""

    def __init__(self, client):
        self.client = client


def _picked(share, lines, running):
    """The event ``share`` picks of ``lines`` (each a list, in line order), each client running ``running``."""
    picked = share.pick(lines, lambda event: event.client, share.room(running))
    return picked[1] if picked is not None else None


def test_the_queue_runs_no_event_of_a_client_past_its_share(caplog):
    a1, a2, b1, own = _Event("93.184.216.34"), _Event("93.184.216.34"), _Event("151.101.1.69"), _Event(None)
    line = [a1, a2, b1, own]
    assert _picked(S.RunningShare(2), [line], {}) is a1
    assert _picked(S.RunningShare(2), [line], {"93.184.216.34": 1}) is b1  # the fairer: its client runs none
    assert _picked(S.RunningShare(2), [[a1, a2]], {"93.184.216.34": 1}) is a1
    share = S.RunningShare(2)
    with caplog.at_level("WARNING", logger="convqa.serving"):
        # Past its share a client's events wait; the next visitor's run.
        assert _picked(share, [[a1, a2, b1]], {"93.184.216.34": 2}) is b1
        assert _picked(share, [[a1, a2, b1]], {"93.184.216.34": 2, "151.101.1.69": 1}) is b1
        # The server's own: not bounded.
        assert _picked(share, [line], {"93.184.216.34": 3, "151.101.1.69": 2, None: 5}) is own
        assert _picked(share, [line[:3]], {"93.184.216.34": 2, "151.101.1.69": 2}) is None
    assert [r.getMessage() for r in caplog.records] == [
        "refused running events (kept in line) to 93.184.216.34: it has 2 events running, the most one visitor may; "
        "the others wait in line",
        "refused running events (kept in line) to 151.101.1.69: it has 2 events running, the most one visitor may; "
        "the others wait in line"]  # a line per client and minute, whatever the events passed over


def _crowd(networks, clients, events):
    """A crowd's events in line: ``events`` each of ``clients`` clients in each of ``networks`` /24s, in turn."""
    return [_Event(f"198.51.{n}.{c + 1}") for _ in range(events) for n in range(networks) for c in range(clients)]


def test_a_quiet_networks_event_runs_before_a_crowd_spread_over_many_networks():
    # A crowd of forty networks, each of three clients with two events running
    # and two waiting, every one within its share: the queue ran them first
    # come, first served, and a visitor of a quiet network waited behind all
    # 240 of them.
    crowd = _crowd(40, 3, 2)
    running = {event.client: 2 for event in crowd}
    newcomer = _Event("93.184.216.34")
    share = S.RunningShare(8, network_limit=16)
    assert _picked(share, [crowd + [newcomer]], running) is newcomer
    # In a line of its own (another of the app's functions) too.
    assert share.pick([crowd, [_Event("203.0.113.7")]], lambda event: event.client, share.room(running))[0] == 1
    # Once it runs more than they do, the crowd's networks come first again.
    assert _picked(share, [[newcomer] + crowd], {**running, "93.184.216.34": 7}) is crowd[0]


def test_networks_take_turns_whatever_their_place_in_line():
    a, b, c = ([_Event(f"{net}.{n}") for n in range(1, 5)] for net in ("198.51.1", "198.51.2", "198.51.3"))
    line, running, share, ran = a + b + c[:1], collections.Counter(), S.RunningShare(8), []
    while line:
        event = _picked(share, [line], running)
        line.remove(event)
        running[event.client] += 1
        ran.append(event.client.rsplit(".", 1)[0])
    # Round robin: a network that runs fewer first, then the one served longest ago.
    assert ran == ["198.51.1", "198.51.2", "198.51.3", "198.51.1", "198.51.2", "198.51.1", "198.51.2", "198.51.1",
                   "198.51.2"]
    # Once their events end (none runs), the one served longest ago goes first.
    assert _picked(share, [[a[0], b[0]]], {}) is a[0]
    assert _picked(share, [[a[0], b[0]]], {}) is b[0]
    # A network's turn counts for all its clients: a new client of one just
    # served does not go before another network's client served earlier.
    assert _picked(share, [[a[0], b[0], c[0]]], {}) is c[0]
    assert _picked(share, [[_Event("198.51.2.99"), a[1]]], {}) is a[1]
    # Within a network, the client that runs fewer.
    assert _picked(S.RunningShare(8), [[a[0], a[1]]], {a[0].client: 2, a[3].client: 1}) is a[1]


def test_a_stream_of_newcomers_does_not_keep_a_returning_visitors_event_waiting():
    # A network never served was taken as served longest ago: newcomers, each
    # of a network of its own (IPv6 /48s for the asking), arriving a little
    # faster than the workers freed up, went before a returning visitor's
    # follow-up for as long as they kept coming.
    share = S.RunningShare(8, network_limit=16)
    assert _picked(share, [[_Event("93.184.216.34")]], {}) is not None  # the visitor's first question
    follow_up, ran, n = _Event("93.184.216.34"), None, 0
    line = [follow_up]
    for pick in range(1, 201):
        for _ in range(2):
            n += 1
            line.append(_Event(f"2001:db8:{n:x}::1"))
        event = _picked(share, [line], {})
        line.remove(event)
        if event is follow_up:
            ran = pick
            break
    assert ran is not None and ran <= 2
    # Newcomers still take turns with the networks already served: those seen
    # waiting before the visitor was served again go before its next event.
    assert _picked(share, [[_Event("93.184.216.34")] + line], {}) is line[0]


def test_a_burst_of_joins_from_one_network_is_held_to_its_fair_share():
    # Each join of a burst sent at once was checked against the events
    # already in line, none against the joins in flight: all passed the fair
    # share of a nearly full line.
    from conftest import asgi_post

    queued = {"198.51.7.0/24": 1, "198.51.7.1": 1}

    async def main():
        release, joined = asyncio.Event(), []

        async def app(scope, receive, send):  # the body read, then the event joins the line
            await release.wait()
            joined.append(S.request_client())

        middleware = S.QueueShare(app, waiting=lambda *who: [queued.get(key, 0) for key in who], limit=16,
                                  network_queued=32, crowd=lambda: (100, 40), capacity=128)
        posts = [asyncio.create_task(asgi_post(middleware, "/gradio_api/queue/join", f"198.51.7.{c}"))
                 for c in range(1, 11)]
        await asyncio.sleep(0.05)
        other = asyncio.create_task(asgi_post(middleware, "/gradio_api/queue/join", "93.184.216.34"))
        await asyncio.sleep(0.05)
        release.set()
        await asyncio.gather(*posts, other)
        return joined

    joined = asyncio.run(main())
    # Its fair share is 96 / 40 (2 whole events) and it has 1 in line: one more joins, and a quiet network's visitor.
    assert joined == ["198.51.7.1", "93.184.216.34"]
    # Everyone's joins in flight count in the line's fill: ten networks with
    # two in line each, at once, while the line has room for six before its reserve.
    queued.update({f"198.51.{n}.0/24": 2 for n in range(10)})

    async def burst():
        release, joined = asyncio.Event(), []

        async def app(scope, receive, send):
            await release.wait()
            joined.append(S.request_client())

        middleware = S.QueueShare(app, waiting=lambda *who: [queued.get(key, 0) for key in who], limit=16,
                                  network_queued=32, crowd=lambda: (90, 40), capacity=128)
        posts = [asyncio.create_task(asgi_post(middleware, "/gradio_api/queue/join", f"198.51.{n}.1"))
                 for n in range(10)]
        await asyncio.sleep(0.05)
        release.set()
        await asyncio.gather(*posts)
        return joined

    assert asyncio.run(burst()) == [f"198.51.{n}.1" for n in range(6)]


def test_a_join_in_line_is_not_counted_again_while_its_reply_is_sent():
    # A join whose event was already in line was counted twice (in line and
    # in flight) until its whole reply was sent: in a burst, a network was
    # refused one event below its fair share, told it had 2 waiting with 1.
    from conftest import asgi_post

    queued = {}

    async def main():
        replied = asyncio.Event()

        async def app(scope, receive, send):  # Gradio's join: the event in line, then its answer
            client = S.request_client()
            for key in (client, S.client_network(client)):
                queued[key] = queued.get(key, 0) + 1
            await send({"type": "http.response.start", "status": 200, "headers": []})
            if client == "198.51.7.1":
                await replied.wait()  # the body being written: other requests run meanwhile
            await send({"type": "http.response.body", "body": b"{}"})

        middleware = S.QueueShare(app, waiting=lambda *who: [queued.get(key, 0) for key in who], limit=16,
                                  network_queued=32, capacity=128,
                                  crowd=lambda: (100 + sum(v for k, v in queued.items() if "/" not in k), 40))
        first = asyncio.create_task(asgi_post(middleware, "/gradio_api/queue/join", "198.51.7.1"))
        await asyncio.sleep(0.05)
        held = middleware.joining.held("198.51.7.0/24"), middleware._in_flight
        second = await asgi_post(middleware, "/gradio_api/queue/join", "198.51.7.2")
        replied.set()
        await first
        return held, second, middleware.joining.held("198.51.7.0/24"), middleware._in_flight

    held, second, after, in_flight = asyncio.run(main())
    # Its fair share is 2.4 events: with 1 in line, a second joins.
    assert held == (0, 0) and [m["status"] for m in second if m["type"] == "http.response.start"] == [200]
    assert queued["198.51.7.0/24"] == 2 and (after, in_flight) == (0, 0)  # each given back once


FLOODER, VISITOR = {"x-forwarded-for": "93.184.216.34"}, {"x-forwarded-for": "151.101.1.69"}  # through a local proxy


@pytest.fixture(scope="module")
def four_workers(retriever, minilm, tmp_path_factory):
    """The app with four workers in its queue, of which one client may run
    two, and turns that wait for the rewriter's gate. Yields (url, demo, rewriter)."""
    from conftest import GatedRewriter, serve_app

    rewriter = GatedRewriter()
    url, _, demo = serve_app(Assistant(rewriter, retriever, SentenceReader(minilm)), tmp_path_factory.mktemp("four"),
                             max_threads=4, limits=S.UploadLimits(client_running=2))
    try:
        yield url, demo, rewriter
    finally:
        rewriter.gate.set()
        demo.close()


def _endpoints(url):
    """{"chat": ..., "load": ...}: the chat API's and the page load's (index, which inputs are state)."""
    import httpx

    config = httpx.get(url + "config", timeout=30).json()
    kinds = {component["id"]: component["type"] for component in config["components"]}
    found = {}
    for index, dependency in enumerate(config["dependencies"]):
        kind = "chat" if dependency.get("api_name") == "chat" else (
            "load" if any(target[1] == "load" for target in dependency["targets"]) else None)
        if kind is not None:
            found[kind] = (index, [kinds[i] in ("state", "browser_state") for i in dependency["inputs"]])
    return found


async def _event(http, url, endpoint, page, question="What is Paris?"):
    """One queued event (join, then the page's event stream): "ok", "failed", or the join's status."""
    import json

    fn_index, state = endpoint
    data = [None if is_state else question for is_state in state]
    joined = await http.post(url + "gradio_api/queue/join",
                             json={"data": data, "fn_index": fn_index, "session_hash": page, "event_data": None})
    if joined.status_code != 200:
        return joined.status_code
    event_id = joined.json()["event_id"]
    async with http.stream("GET", url + "gradio_api/queue/data", params={"session_hash": page}) as stream:
        async for line in stream.aiter_lines():
            message = json.loads(line[5:]) if line.startswith("data:") else {}
            if message.get("event_id") == event_id and message.get("msg") == "process_completed":
                return "ok" if message.get("success") else "failed"
    return "no reply"


def _flood_in_queue(demo, prefix):
    """The events of sessions named ``prefix``… (running, waiting) in ``demo``'s queue."""
    queue = demo._queue
    running = sum(event.session_hash.startswith(prefix) for job in queue.active_jobs if job for event in job)
    waiting = sum(event.session_hash.startswith(prefix)
                  for line in queue.event_queue_per_concurrency_id.values() for event in line.queue)
    return running, waiting


def test_one_client_cannot_take_every_worker_of_the_queue(four_workers):
    # Gradio's queue ran the events first in line on its workers: one script
    # sending turns from many sessions took every worker, and another
    # visitor's page could not even load until the script's turns ended.
    import httpx

    url, demo, rewriter = four_workers
    ends = _endpoints(url)
    rewriter.gate.clear()  # the script's turns hold their workers

    async def visit():
        async with httpx.AsyncClient(timeout=120, headers=FLOODER) as script, \
                httpx.AsyncClient(timeout=120, headers=VISITOR) as other:
            flood = [asyncio.create_task(_event(script, url, ends["chat"], f"flood-{n}")) for n in range(6)]
            while True:  # until the queue has taken all it will of the six
                running, waiting = _flood_in_queue(demo, "flood-")
                if running + waiting == 6 and (None not in demo._queue.active_jobs or running >= 2):
                    break
                await asyncio.sleep(0.02)
            # The other visitor's page loads while the script's turns still wait.
            loaded = await asyncio.wait_for(_event(other, url, ends["load"], "other-page"), timeout=60)
            held = _flood_in_queue(demo, "flood-")
            rewriter.gate.set()
            return loaded, held, await asyncio.gather(*flood)

    try:
        loaded, held, flood = asyncio.run(visit())
    finally:
        rewriter.gate.set()
    assert loaded == "ok"
    assert held == (2, 4)  # two of the script's running, its others waiting in line
    assert flood == ["ok"] * 6  # and answered in turn



def _seen(made: list):
    """app.Actions (appended to ``made`` once made) that keep the page of each
    source read again (``read_again``), and of each page gone (``left``)
    with how many of its events still waited in ``demo``'s queue (set
    ``demo``) when the app heard of it."""
    import app

    class Seen(app.Actions):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.read_again, self.gone_pages, self.demo = [], [], None

        def take_again(self, session, saved, request: gr.Request = None,
                       progress=gr.Progress(track_tqdm=True)):  # noqa: B008 (gradio's way)
            self.read_again.append(request.session_hash)
            return super().take_again(session, saved, request, progress)

        def left(self, request: gr.Request):
            self.gone_pages.append((request.session_hash, _flood_in_queue(self.demo, request.session_hash)[1]))
            super().left(request)

    def make(services, export_dir):
        made.append(Seen(services, export_dir))
        return made[-1]

    return make


class _UntilStopped:
    """The "original" rewriter, but a rewrite waits for its turn's stop (no
    longer than a minute), then ends as a stopped turn does."""

    def __init__(self):
        from rewriting import OriginalRewriter

        self.inner = OriginalRewriter()

    def rewrite(self, question, history, stop):
        stopped = threading.Event()
        stop.on_set(stopped.set)
        stopped.wait(60)
        stop.check()
        return self.inner.rewrite(question, history)


def test_a_page_gone_has_its_events_waiting_in_line_dropped_and_no_other_pages(retriever, minilm, tmp_path):
    # A closed page's heartbeat stopped its turns, but Gradio kept its other
    # events waiting in line (its source read again, queued behind its turn):
    # each ran later for no one, holding a worker while a crowd waited.
    import httpx

    from conftest import serve_app

    made = []
    url, _, demo = serve_app(Assistant(_UntilStopped(), retriever, SentenceReader(minilm)), tmp_path,
                             actions=_seen(made), limits=S.UploadLimits(client_running=1))
    actions, fns = made[0], {getattr(fn.fn, "__name__", ""): index for index, fn in demo.fns.items()}
    actions.demo = demo

    def until(condition, what):
        deadline = time.monotonic() + 60
        while not condition():
            assert time.monotonic() < deadline, what
            time.sleep(0.01)

    try:
        with httpx.Client(timeout=60, headers=FLOODER) as http, \
                http.stream("GET", url + "gradio_api/heartbeat/gone-page") as heartbeat:
            alive = heartbeat.iter_lines()  # kept: let go of, it closes the connection at once
            assert "ALIVE" in next(alive)
            sent = http.post(url + "gradio_api/run/predict", json={
                "data": ["Who was Ada Lovelace?", None], "fn_index": fns["take"], "session_hash": "gone-page"})
            assert sent.status_code == 200, sent.text
            # Its turn holds its client's one worker until stopped; its source's
            # reading, and another page's of the same client, wait in line.
            for page, name in (("gone-page", "ask"), ("gone-page", "take_again"), ("other-page", "take_again")):
                joined = http.post(url + "gradio_api/queue/join",
                                   json={"data": [None, None], "fn_index": fns[name], "session_hash": page})
                assert joined.status_code == 200, joined.text
                if name == "ask":
                    until(lambda: _flood_in_queue(demo, "gone-page") == (1, 0), "the turn never began")
            until(lambda: _flood_in_queue(demo, "gone-page") == (1, 1) and _flood_in_queue(demo, "other-page") == (0, 1),
                  "the events never waited in line")
        # The page's close stops its turn, which frees the worker: the other page's event runs, not its own.
        until(lambda: actions.read_again and _flood_in_queue(demo, "") == (0, 0), "the other page's event never ran")
        assert actions.read_again == ["other-page"]
        # Dropped before the app heard of the close: what it lets go of could
        # free a worker, which an event of the page still waiting could have
        # taken. The app hears of it on a thread, after the drop freed the worker.
        until(lambda: actions.gone_pages, "the app never heard of the page's close")
        assert actions.gone_pages == [("gone-page", 0)]
    finally:
        demo.close()


def _heartbeat_closed_under_an_open_stream(gone, holder="page"):
    """Served: an event of page ``holder`` running (held till the end) and
    one of page "page" waiting in line behind it, ``gone`` told of the page's close
    (server.stop_when_gone), then an unload listener of the app's. The page's
    heartbeat closes while its event stream stays open. Returns the
    stream's messages (dicts, till its close or 60 s) and the pages the
    app's listener heard of."""
    import json

    import httpx

    import server
    from conftest import _free_port

    release, left = threading.Event(), []

    def held(text):
        release.wait(60)
        return text

    def quick(text):
        return text

    def app_left(request: gr.Request):
        left.append(request.session_hash)

    with gr.Blocks() as demo:
        box = gr.Textbox()
        gr.Button().click(held, box, box, concurrency_id="one", concurrency_limit=1)
        gr.Button().click(quick, box, box, concurrency_id="one", concurrency_limit=1)
    demo.queue()
    server.stop_when_gone(demo, gone)
    demo.unload(app_left)
    port = _free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    url, fns = f"http://127.0.0.1:{port}/", {fn.fn.__name__: index for index, fn in demo.fns.items()}
    messages, ended = [], threading.Event()

    def read():
        with httpx.Client(timeout=60) as http, \
                http.stream("GET", url + "gradio_api/queue/data", params={"session_hash": "page"}) as stream:
            for line in stream.iter_lines():
                if line.startswith("data:"):
                    messages.append(json.loads(line[5:]))
                    if messages[-1]["msg"] == "close_stream":
                        ended.set()
                        return

    try:
        with httpx.Client(timeout=60) as http:
            with http.stream("GET", url + "gradio_api/heartbeat/page") as heartbeat:
                alive = heartbeat.iter_lines()  # kept: let go of, it closes the connection at once
                assert "ALIVE" in next(alive)
                for name, page in (("held", holder), ("quick", "page")):
                    joined = http.post(url + "gradio_api/queue/join",
                                       json={"data": ["x"], "fn_index": fns[name], "session_hash": page})
                    assert joined.status_code == 200, joined.text
                threading.Thread(target=read, daemon=True).start()
                deadline = time.monotonic() + 60
                while _flood_in_queue(demo, holder)[0] != 1 or _flood_in_queue(demo, "page")[1] != 1 or \
                        (holder == "page" and not any(m["msg"] == "process_starts" for m in messages)):
                    assert time.monotonic() < deadline, "the events never began and waited"
                    time.sleep(0.01)
            # Only the heartbeat closed: the stream reads on.
            ended.wait(60)
            deadline = time.monotonic() + 60
            while not left and time.monotonic() < deadline:
                time.sleep(0.01)
        return messages, left
    finally:
        release.set()
        demo.close()


@pytest.mark.parametrize("holder", ["page", "other-page"])
def test_a_page_gone_with_its_event_stream_still_open_is_told_each_of_its_events_ended(holder):
    # A client whose heartbeat closed while its event stream read on
    # (gradio_client's heartbeat gives up after a stall; a browser's
    # heartbeat fetch dropped while its tab lived) waited forever: its
    # events, dropped or cancelled, were marked dead, and Gradio sends a
    # dead event nothing. With none running (another page's holds the
    # worker), Gradio's cleanup forgot the page, and its stream failed.
    import server

    gone = []
    messages, left = _heartbeat_closed_under_an_open_stream(gone.append, holder)
    ended = [m for m in messages if m["msg"] == "process_completed"]
    assert len(ended) == (2 if holder == "page" else 1) and len({m["event_id"] for m in ended}) == len(ended), messages
    assert all(not m["success"] and m["output"]["error"] == server.PAGE_GONE for m in ended)
    assert messages[-1]["msg"] == "close_stream"
    assert gone == ["page"] and left == ["page"]


def _gone_page_served(*handlers, kept_s=60.0):
    """Serves a Blocks with a button per handler (one worker between them),
    server.stop_when_gone on it (``kept_s``), then an app's unload
    listener. Returns (demo, url, pages the app heard of, the loops that
    stop_when_gone's ``gone`` ran in)."""
    import server
    from conftest import _free_port

    left, loops = [], []

    def app_left(request: gr.Request):
        left.append(request.session_hash)

    with gr.Blocks() as demo:
        box = gr.Textbox()
        for handler in handlers:
            gr.Button().click(handler, box, box, concurrency_id="one", concurrency_limit=1)
    demo.queue()
    server.stop_when_gone(demo, lambda session_hash: loops.append(asyncio.get_running_loop()), kept_s=kept_s)
    demo.unload(app_left)
    port = _free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    return demo, f"http://127.0.0.1:{port}/", left, loops


def _until(condition, what: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def test_an_event_told_it_failed_is_not_told_again_that_its_page_went():
    # Gradio sends a raising handler's failed end, then awaits its
    # analytics with the event still alive and running: a heartbeat's close
    # then told it a second time it ended (PAGE_GONE) and put its id back
    # after its stream had closed, and the session's next stream read
    # that stray end. The analytics wait here till the page is gone.
    import json

    import httpx
    from gradio import queueing

    import server

    analysing, analysed = threading.Event(), threading.Event()
    analytics = queueing.Queue.compute_analytics_summary

    def held_analytics(self, *args, **kwargs):
        analysing.set()
        analysed.wait(60)
        return analytics(self, *args, **kwargs)

    def boom(text):
        raise gr.Error("the handler failed")

    with mock.patch.object(queueing.Queue, "compute_analytics_summary", held_analytics):
        demo, url, left, _ = _gone_page_served(boom)
        try:
            with httpx.Client(timeout=60) as http:
                with http.stream("GET", url + "gradio_api/heartbeat/page") as heartbeat:
                    alive = heartbeat.iter_lines()  # kept: let go of, it closes the connection at once
                    assert "ALIVE" in next(alive)
                    joined = http.post(url + "gradio_api/queue/join",
                                       json={"data": ["x"], "fn_index": 0, "session_hash": "page"})
                    assert joined.status_code == 200, joined.text
                    messages = []
                    with http.stream("GET", url + "gradio_api/queue/data", params={"session_hash": "page"}) as stream:
                        for line in stream.iter_lines():
                            if line.startswith("data:"):
                                messages.append(json.loads(line[5:]))
                                if messages[-1]["msg"] == "close_stream":
                                    break
                    ended = [m for m in messages if m["msg"] == "process_completed"]
                    assert len(ended) == 1 and ended[0]["output"]["error"] != server.PAGE_GONE, messages
                    assert analysing.wait(30), "the analytics never began"
                _until(lambda: left == ["page"], "the page's heartbeat close was never heard")
                queue = demo._queue
                assert "page" not in queue.pending_event_ids_session
                assert queue.pending_messages_per_session["page"].empty()
        finally:
            analysed.set()
            demo.close()


@pytest.mark.parametrize("closes", ["stream", "never-opened stream"])
def test_the_ends_put_back_for_a_gone_page_are_forgotten_when_no_stream_reads_them(closes):
    # drop_page puts each of a gone page's events' ids back for its stream
    # to deliver its end; a tab whose heartbeat's close was heard before its
    # stream's (Gradio then deletes the messages, not the ids), or a page
    # whose stream never opened, left them in Gradio's plain dict for the
    # server's life.
    import httpx

    release = threading.Event()

    def held(text):
        release.wait(60)
        return text

    def quick(text):
        return text

    demo, url, left, loops = _gone_page_served(held, quick, kept_s=60.0 if closes == "stream" else 0.5)
    queue = demo._queue
    try:
        with httpx.Client(timeout=60) as http:
            with http.stream("GET", url + "gradio_api/heartbeat/page") as heartbeat:
                alive = heartbeat.iter_lines()  # kept: let go of, it closes the connection at once
                assert "ALIVE" in next(alive)
                for fn_index in (0, 1):
                    joined = http.post(url + "gradio_api/queue/join",
                                       json={"data": ["x"], "fn_index": fn_index, "session_hash": "page"})
                    assert joined.status_code == 200, joined.text
                _until(lambda: _flood_in_queue(demo, "page") == (1, 1), "the events never began and waited")
        _until(lambda: left == ["page"], "the page's heartbeat close was never heard")
        if closes == "stream":
            assert len(queue.pending_event_ids_session["page"]) == 2
            # As Gradio does at a stream's cancel: its messages deleted, then the cleanup.
            del queue.pending_messages_per_session["page"]
            asyncio.run_coroutine_threadsafe(queue.clean_events(session_hash="page"), loops[0]).result(30)
            assert "page" not in queue.pending_event_ids_session
        else:
            _until(lambda: "page" not in queue.pending_event_ids_session, "the put-back ids were never forgotten")
    finally:
        release.set()
        demo.close()


def test_a_failed_drop_of_a_gone_pages_events_lets_the_app_hear_of_it(caplog):
    # An unload listener that raised stopped Starlette from running the
    # ones after it: the app's (which lets go of the page's uploads) never ran.
    def gone(session_hash):
        raise RuntimeError("the app could not stop the page's turns")

    with caplog.at_level("ERROR", logger="convqa.serving"):
        messages, left = _heartbeat_closed_under_an_open_stream(gone)
    assert left == ["page"]
    assert "the events of the page page, whose heartbeat closed, were not all dropped" in caplog.text
    assert "the app could not stop the page's turns" in caplog.text
    # Still dropped, and each told so.
    assert [m["success"] for m in messages if m["msg"] == "process_completed"] == [False, False]
    assert messages[-1]["msg"] == "close_stream"


# ---------------------------------------------------------------- each network's share (many clients, one person)


def test_the_clients_of_one_network_run_their_share_of_the_queue_together(caplog):
    one, two, three, other = (_Event("93.184.216.1"), _Event("93.184.216.2"), _Event("2001:db8:1:2::/64"),
                              _Event("151.101.1.69"))
    share = S.RunningShare(2, network_limit=3)
    with caplog.at_level("WARNING", logger="convqa.serving"):
        # Each client has room, but its /24 runs three already: another network's event runs.
        assert _picked(share, [[one, two, other]], {"93.184.216.1": 1, "93.184.216.9": 2}) is other
        assert _picked(share, [[one, two]], {"93.184.216.1": 1, "93.184.216.9": 1}) is two  # its client runs none
        # An IPv6 client is a /64; its network, the /48 a site or a tunnel broker hands out.
        assert _picked(share, [[three, other]], {"2001:db8:1:ff::/64": 2, "2001:db8:1:fe::/64": 1}) is other
        assert _picked(share, [[three]], {"2001:db8:2:ff::/64": 2, "2001:db8:2:fe::/64": 1}) is three
    assert [r.getMessage() for r in caplog.records] == [
        "refused running events (kept in line) to 93.184.216.0/24: its visitors have 3 events running, the most one "
        "network may; the others wait in line",
        "refused running events (kept in line) to 2001:db8:1::/48: its visitors have 3 events running, the most one "
        "network may; the others wait in line"]


def test_the_clients_of_one_network_may_have_their_share_of_the_queue_together():
    import json

    waiting = {"93.184.216.1": 1, "93.184.216.2": 2, "93.184.216.0/24": 3}
    joined = []

    async def app(scope, receive, send):
        joined.append(S.request_client())

    from conftest import asgi_post

    async def post(client, path="/gradio_api/queue/join"):
        sent = await asgi_post(middleware, path, client)
        return sent[1]["body"] if sent else None

    middleware = S.QueueShare(app, waiting=lambda *who: [waiting.get(key, 0) for key in who], limit=2, network_queued=3)
    refused = asyncio.run(post("93.184.216.1"))  # its own share has room; its network's has none
    assert json.loads(refused)["detail"] == (
        "Visitors of your network (93.184.216.0/24) already have 3 requests waiting in line, the most one network "
        "may: try again in a few seconds, when they have been answered.")
    assert asyncio.run(post("93.184.217.1")) is None  # the next /24 is another network
    waiting["93.184.216.0/24"] = 2
    assert asyncio.run(post("93.184.216.1")) is None
    assert joined == ["93.184.217.1", "93.184.216.1"]
    # Direct calls: a network's share of those under way at once.
    middleware = S.QueueShare(app, waiting=lambda *who: [0] * len(who), limit=2, running=2, network_running=0)
    assert "Visitors of your network (93.184.216.0/24) already have 0 requests running" in asyncio.run(
        post("93.184.216.1", "/gradio_api/run/predict")).decode()


def test_a_crowd_over_many_networks_leaves_places_in_line_for_a_quiet_network(caplog):
    # Forty networks, each within its share of the line, filled Gradio's
    # queue (128) first come, first served, and a visitor of a quiet network
    # was refused: "queue is full".
    import json

    from conftest import asgi_post

    waiting, crowd, joined = {}, [100, 40], []

    async def app(scope, receive, send):
        joined.append(S.request_client())

    def post(middleware, client):
        sent = asyncio.run(asgi_post(middleware, "/gradio_api/queue/join", client))
        return json.loads(sent[1]["body"])["detail"] if sent else None

    middleware = S.QueueShare(app, waiting=lambda *who: [waiting.get(key, 0) for key in who], limit=16,
                              network_queued=32, crowd=lambda: tuple(crowd), capacity=128)
    waiting.update({"198.51.7.0/24": 3, "198.51.7.1": 3})  # past 96 / 40
    with caplog.at_level("WARNING", logger="convqa.serving"):
        assert post(middleware, "198.51.7.1") == (
            "The server is busy: 100 of the 128 requests its line takes are waiting, and the last places are kept for "
            "networks with fewer in line. Visitors of your network (198.51.7.0/24) already have 3 waiting, their fair "
            "share while 40 networks wait (2 each): try again in a few seconds, when they have been answered.")
    assert "refused queued events, the line nearly full (429) to 198.51.7.0/24" in caplog.text
    assert post(middleware, "93.184.216.34") is None  # a quiet network's visitor joins
    waiting["198.51.7.0/24"] = 1
    assert post(middleware, "198.51.7.1") is None  # within its fair share
    crowd[:] = [95, 40]
    waiting["198.51.7.0/24"] = 10
    assert post(middleware, "198.51.7.1") is None  # a quarter of the line left: first come, first served
    crowd[:] = [120, 400]
    waiting["198.51.7.0/24"] = 1
    assert "already have 1 waiting, their fair share while 400 networks wait (1 each)" in post(middleware, "198.51.7.1")
    waiting["198.51.7.0/24"] = 0
    assert post(middleware, "198.51.7.1") is None  # each network may still have a turn in line
    assert joined == ["93.184.216.34", "198.51.7.1", "198.51.7.1", "198.51.7.1"]


@pytest.fixture(scope="module")
def small_queue(retriever, minilm, tmp_path_factory):
    """The app with a line of 16 events and two workers, and turns that wait
    for the rewriter's gate. Yields (url, demo, rewriter)."""
    import app
    from conftest import GatedRewriter, serve_app

    rewriter, patch = GatedRewriter(), pytest.MonkeyPatch()
    patch.setattr(app, "QUEUE_SIZE", 16)
    try:
        url, _, demo = serve_app(Assistant(rewriter, retriever, SentenceReader(minilm)), tmp_path_factory.mktemp("line"),
                                 max_threads=2)
    finally:
        patch.undo()
    try:
        yield url, demo, rewriter
    finally:
        rewriter.gate.set()
        demo.close()


def test_a_quiet_networks_turn_joins_a_line_a_crowd_of_networks_filled(small_queue):
    # Eight networks sending three turns each, every one within its share,
    # filled the line (16) first come, first served: the next visitor, of
    # a ninth network, was refused ("queue is full").
    import httpx

    url, demo, rewriter = small_queue
    ends = _endpoints(url)
    rewriter.gate.clear()

    async def visit():
        clients = [httpx.AsyncClient(timeout=120, headers={"x-forwarded-for": f"198.51.{n}.1"}) for n in range(8)]
        newcomer = httpx.AsyncClient(timeout=120, headers={"x-forwarded-for": "93.184.216.34"})
        try:
            crowd = []
            for turn in range(3):
                for n, client in enumerate(clients):
                    page = f"crowd-{n}-{turn}"
                    crowd.append(asyncio.create_task(_event(client, url, ends["chat"], page)))
                    # In this order: each in line (or refused) before the next is sent.
                    while not crowd[-1].done() and _flood_in_queue(demo, page) == (0, 0):
                        await asyncio.sleep(0.02)
            while sum(_flood_in_queue(demo, "crowd-")) + sum(task.done() for task in crowd) < len(crowd):
                await asyncio.sleep(0.02)
            mine = asyncio.create_task(_event(newcomer, url, ends["chat"], "newcomer"))
            while not mine.done() and _flood_in_queue(demo, "newcomer") == (0, 0):
                await asyncio.sleep(0.02)
            rewriter.gate.set()
            return await mine, await asyncio.gather(*crowd)
        finally:
            for client in [*clients, newcomer]:
                await client.aclose()

    try:
        mine, crowd = asyncio.run(visit())
    finally:
        rewriter.gate.set()
    assert mine == "ok"
    assert crowd.count(429) >= 4 and set(crowd) <= {"ok", 429}  # each network past its fair share was told so


def test_the_queue_counts_the_networks_waiting_in_one_pass():
    from types import SimpleNamespace as NS

    import server

    def event(client):
        return NS(request=NS(scope={"client": (client, 1), "headers": []}))

    lines = {"chat": NS(queue=[event("198.51.1.1"), event("198.51.1.2"), event("127.0.0.1")]),
             "load": NS(queue=[event("2a00:1450:4001:81b::1"), event("198.51.2.1")]), "idle": NS(queue=[])}
    demo = NS(_queue=NS(event_queue_per_concurrency_id=lines))
    # The server's own host is not a network among them.
    assert server._crowd(demo, server._Clients()) == (5, 3)


@contextlib.contextmanager
def _store_app(retriever, minilm, folder):
    """The app whose clients keep 2 sessions each, and a network's 3. Yields (url, demo)."""
    from conftest import serve_app
    from rewriting import OriginalRewriter

    url, _, demo = serve_app(Assistant(OriginalRewriter(), retriever, SentenceReader(minilm)), folder,
                             limits=S.UploadLimits(client_sessions=2, network_sessions=3))
    try:
        yield url, demo
    finally:
        demo.close()


@pytest.fixture(scope="module")
def small_store(retriever, minilm, tmp_path_factory):
    """:func:`_store_app`, shared by the module's tests."""
    with _store_app(retriever, minilm, tmp_path_factory.mktemp("store")) as app:
        yield app


def test_the_clients_of_one_network_opening_many_sessions_push_out_only_their_own(small_store, caplog):
    # One person may be many clients (an IPv6 /48 holds 65,536 /64s): ten
    # of them filled the store, each within its own share.
    import httpx

    import server

    url, demo = small_store
    ends = _endpoints(url)

    async def visit():
        async with httpx.AsyncClient(timeout=120, headers=VISITOR) as other:
            assert await _event(other, url, ends["load"], "other-page") == "ok"
        for n in range(3):  # three clients of one /24, two pages each: within each one's share
            async with httpx.AsyncClient(timeout=120, headers={"x-forwarded-for": f"93.184.216.{n + 1}"}) as script:
                for page in range(2):
                    assert await _event(script, url, ends["load"], f"net-{n}-{page}") == "ok"

    with caplog.at_level("WARNING", logger="convqa.serving"):
        asyncio.run(visit())
    store = demo.state_holder
    assert isinstance(store, server.ClientStore) and "other-page" in store.session_data
    assert sorted(key for key in store.session_data if key.startswith("net-")) == ["net-1-1", "net-2-0", "net-2-1"]
    assert store.networks.held("93.184.216.0/24") == 3 and store.shares.held("93.184.216.1") == 0
    assert [r.getMessage() for r in caplog.records if "new session" in r.getMessage()] == [
        "refused a new session (its oldest dropped) to 93.184.216.0/24: its visitors hold 3 sessions in the server's "
        "store, the most one network may"]  # one line a minute


@pytest.fixture
def tiny_store(retriever, minilm, tmp_path):
    """:func:`_store_app`, a test's own: its test makes the store keep 4 sessions."""
    with _store_app(retriever, minilm, tmp_path) as app:
        yield app


def test_a_full_store_drops_the_oldest_session_of_the_network_holding_the_most(tiny_store, caplog):
    # Past its capacity Gradio's store dropped its least recently used
    # session: a crowd of networks, each within its share, pushed out the
    # session of a visitor who had opened one page before them.
    import httpx

    url, demo = tiny_store
    ends = _endpoints(url)

    async def visit():
        async with httpx.AsyncClient(timeout=120, headers=VISITOR) as quiet:
            assert await _event(quiet, url, ends["load"], "quiet-page") == "ok"
        demo.state_holder.capacity = 4
        demo.state_holder.crowded_idle_s = 0  # the crowd's pages count as idle at once
        for n in range(3):
            async with httpx.AsyncClient(timeout=120, headers={"x-forwarded-for": f"198.51.{n}.1"}) as crowd:
                for page in range(2):
                    assert await _event(crowd, url, ends["load"], f"crowd-{n}-{page}") == "ok"

    with caplog.at_level("WARNING", logger="convqa.serving"):
        asyncio.run(visit())
    assert list(demo.state_holder.session_data) == ["quiet-page", "crowd-0-1", "crowd-1-1", "crowd-2-1"]
    assert "refused a new session (its oldest dropped, the store full) to 198.51.0.0/24: its visitors hold 2 " \
           "sessions, the most of any network, and the server's store is full (4)" in caplog.text


def _visited_store(capacity: int, *visits: tuple[str, str]):
    """A ClientStore (a client 2 sessions, a network 3) of ``capacity``, each
    (client, session) of ``visits`` opened or used in turn; and a visit(client, session)."""
    import gradio as gr

    import server

    with gr.Blocks() as demo:
        gr.State(0)
    store = server.ClientStore(2, network_limit=3)
    store.set_blocks(demo)
    store.capacity = capacity

    def visit(client, session):  # as a request of ``client`` would: the store asks S.request_client
        with mock.patch.object(S, "request_client", lambda: client):
            store[session]

    for client, session in visits:
        visit(client, session)
    return store, visit


def _idle(store, seconds: float, *sessions: str) -> None:
    import datetime

    for session in sessions:
        store.time_last_used[session] = datetime.datetime.now() - datetime.timedelta(seconds=seconds)


def test_a_full_store_keeps_the_active_sessions_of_the_network_holding_the_most():
    # Two people behind one office's /24, each with a page in use: while the
    # store was full, every newcomer dropped one of their pages (their
    # network held the most), and other networks' pages idle for an hour stayed.
    idle = [f"idle-{n}" for n in range(4)]
    store, visit = _visited_store(6, *[(f"198.51.{n}.1", session) for n, session in enumerate(idle)],
                                  ("203.0.113.5", "alice"), ("203.0.113.6", "bob"))
    _idle(store, 3600, *idle)
    visit("192.0.2.9", "newcomer")
    assert list(store.session_data) == ["idle-1", "idle-2", "idle-3", "alice", "bob", "newcomer"]
    # Once alice's page has been idle crowded_idle_s, the network holding the most gives it up.
    _idle(store, store.crowded_idle_s + 1, "alice")
    visit("192.0.2.10", "later")
    assert list(store.session_data) == ["idle-1", "idle-2", "idle-3", "bob", "newcomer", "later"]


def test_a_full_store_drops_the_least_recently_used_of_the_networks_tied_for_the_most():
    # Networks tied for the most: the store dropped the session of the one
    # that first opened a session (the oldest key of its counts), a visitor
    # who had just used both pages, not the crowd's least recently used.
    crowd = [(f"198.51.{n}.{k}", f"crowd-{n}-{k}") for n in range(3) for k in (1, 2)]
    visitor = [("203.0.113.5", "visitor-1"), ("203.0.113.5", "visitor-2")]
    store, visit = _visited_store(8, *visitor, *crowd, *visitor)
    _idle(store, 3600, *(session for _, session in crowd))
    _idle(store, store.crowded_idle_s + 60, "visitor-1", "visitor-2")
    for n in range(3, 5):
        visit(f"198.51.{n}.1", f"crowd-{n}-1")
    assert list(store.session_data) == ["crowd-0-2", "crowd-1-2", "crowd-2-1", "crowd-2-2", "visitor-1", "visitor-2",
                                        "crowd-3-1", "crowd-4-1"]
    assert store.networks.held("198.51.0.0/24") == 1 and store.networks.held("203.0.113.0/24") == 2


def test_a_gradio_other_than_the_tested_one_is_warned_about_once(monkeypatch, caplog):
    # A start checks Gradio twice (app.main before the models load, launch
    # on the Blocks it serves): the log said the same warning twice.
    import gradio

    import server

    monkeypatch.setattr(gradio, "__version__", "0.0.0+warned-once")  # a version no other test checks
    with caplog.at_level("WARNING", logger="convqa.serving"):
        server.check_gradio()
        server.check_gradio(gradio.Blocks().queue())
    warned = [r.getMessage() for r in caplog.records if r.getMessage().startswith("gradio 0.0.0+warned-once, not the")]
    assert len(warned) == 1 and "check the per-client shares and the drop of a gone page's events" in warned[0]
    assert "the unload listeners run in the order they were added (tests/test_crowd.py)" in warned[0]


def test_a_gradio_without_the_internals_the_server_fits_into_is_refused_at_start(monkeypatch, capsys):
    # ClientStore and the queue's running share sit on Gradio internals (its
    # store of sessions, its queue's lines and workers), no public API: a
    # Gradio that renamed one served with no share, or failed on a
    # visitor's first event.
    from pathlib import Path

    import gradio
    from gradio import queueing
    from gradio.state_holder import StateHolder

    import app
    import server
    from assistant import pipeline
    from assistant.kernel import DependencyError, ModelNotFoundError

    server.check_gradio()  # the installed Gradio has them
    requirements = (Path(__file__).parents[1] / "requirements.txt").read_text().splitlines()
    assert f"gradio=={server.TESTED_GRADIO}" in requirements  # the version tested is the one installed

    class Renamed(StateHolder):
        def __init__(self):
            super().__init__()
            self.last_used = self.__dict__.pop("time_last_used")

    monkeypatch.setattr(server, "StateHolder", Renamed)
    monkeypatch.delattr(queueing.Queue, "get_events")
    with pytest.raises(DependencyError) as refused:
        server.check_gradio()
    message = str(refused.value)
    assert "StateHolder.time_last_used; Blocks._queue.get_events." in message
    assert f"tested with gradio {server.TESTED_GRADIO}: install that version (pip install gradio==" in message

    def models(*args, **kwargs):
        raise ModelNotFoundError("the models were loaded")

    monkeypatch.setattr(pipeline, "build_assistant", models)
    assert app.main(["--port", "7999"]) == 2  # before any model loads: one line
    assert capsys.readouterr().err.startswith(f"error: gradio {gradio.__version__} lacks what server.py fits")


def test_a_stream_closed_while_its_event_runs_leaves_no_id_of_it():
    # A tab closed mid-turn: Gradio's cleanup at its stream's close marks
    # the running event dead (sent nothing after) and forgets only the ids
    # of events waiting in line, so the running one's id stayed in Gradio's
    # plain dict for the server's life, one per page closed so.
    import httpx

    release = threading.Event()

    def held(text):
        release.wait(60)
        return text

    import json

    demo, url, left, loops = _gone_page_served(held)
    queue = demo._queue
    try:
        with httpx.Client(timeout=60) as http:
            joined = http.post(url + "gradio_api/queue/join", json={"data": ["x"], "fn_index": 0, "session_hash": "page"})
            assert joined.status_code == 200, joined.text
            with http.stream("GET", url + "gradio_api/queue/data", params={"session_hash": "page"}) as stream:
                for line in stream.iter_lines():
                    if line.startswith("data:") and json.loads(line[5:])["msg"] == "process_starts":
                        # Looked at before the close: once heard, the close
                        # cancels the event's task, which frees its slot.
                        assert _flood_in_queue(demo, "page") == (1, 0)
                        break  # the stream closes here, its event running
        _until(lambda: loops, "the stream's close was never heard")  # stop_when_gone's gone, in its cleanup
        _until(lambda: "page" not in queue.pending_event_ids_session, "the running event's id stayed")
        release.set()
        _until(lambda: _flood_in_queue(demo, "page") == (0, 0), "the event never ended")
        assert "page" not in queue.pending_event_ids_session and "page" not in queue.pending_messages_per_session
    finally:
        release.set()
        demo.close()


def test_a_stream_that_never_opens_keeps_its_messages_in_gradio_s_capped_cache():
    # Not ours to bound: a client that joins the queue and never reads its
    # stream (a script; a tab whose stream's request never arrived) has its
    # events' messages kept in Gradio's pending_messages_per_session, an
    # LRUCache of 2000 sessions. Each event of it leaves its own few
    # messages there (its start and its end, at most three); the oldest
    # session's go when a newer one joins past the cap, and every session's
    # at the server's stop. Pinned so that a Gradio that changes the cap
    # (or drops it) is seen. Its events' ids, in Gradio's plain dict, are
    # ours to bound: stop_when_gone forgets those of sessions pushed out of
    # the cache (no stream can deliver them) once twice the cap are held.
    import httpx
    from gradio import utils as gradio_utils

    demo, url, left, loops = _gone_page_served(lambda text: text)
    queue = demo._queue
    try:
        cache = queue.pending_messages_per_session
        assert isinstance(cache, gradio_utils.LRUCache) and cache.max_size == 2000
        with httpx.Client(timeout=60) as http:
            for _ in range(2):
                joined = http.post(url + "gradio_api/queue/join",
                                   json={"data": ["x"], "fn_index": 0, "session_hash": "never-read"})
                assert joined.status_code == 200, joined.text
            _until(lambda: _flood_in_queue(demo, "never-read") == (0, 0) and not queue.active_jobs[0], "never ran")
        kinds = [message.msg for message in list(cache["never-read"]._queue)]
        assert kinds.count("process_completed") == 2 and len(kinds) <= 2 * 3, kinds
        assert len(queue.pending_event_ids_session["never-read"]) == 2  # delivered by no stream

        # The cap: newer sessions push the oldest out, messages and all.
        for number in range(cache.max_size):
            cache[f"newer-{number}"] = None
        assert "never-read" not in cache and len(cache) == cache.max_size
        cache.clear()
        # Their ids: kept till twice the cap, then those of sessions no longer in the cache are forgotten.
        ids = queue.pending_event_ids_session
        ids.update({f"pushed-out-{number}": {f"id-{number}"} for number in range(2 * cache.max_size)})
        with httpx.Client(timeout=60) as http:
            for page in ("read-later", "one-more"):
                joined = http.post(url + "gradio_api/queue/join", json={"data": ["x"], "fn_index": 0, "session_hash": page})
                assert joined.status_code == 200, joined.text
                _until(lambda: _flood_in_queue(demo, page) == (0, 0) and not queue.active_jobs[0], "never ran")
        assert sorted(ids) == ["one-more", "read-later"]  # in the cache: a stream may still read them
    finally:
        demo.close()


class _Running:
    """A stand-in for a Gradio event running in a worker slot."""

    def __init__(self, event_id, session_hash):
        self._id, self.session_hash, self.alive = event_id, session_hash, True
        self.fn = type("Fn", (), {"batch": False})()


def _closing_stream(session_hash, *, messages_kept):
    """A queue whose session ``session_hash`` has one event running, already
    told it ended (its end in the session's messages), and one id of an
    earlier event whose end is unread; its stream closes, with Gradio's
    messages of the session kept (a disconnect) or dropped (a cancel).
    Returns the ids of the session held after."""
    import server
    from gradio import server_messages

    with gr.Blocks() as demo:
        pass
    demo.queue()
    queue = demo._queue
    server.stop_when_gone(demo, lambda session: None)
    queue.pending_messages_per_session[session_hash] = asyncio.Queue()
    queue.pending_event_ids_session[session_hash] = {"ended", "earlier"}
    event = _Running("ended", session_hash)
    queue.active_jobs = [[event]]
    queue.send_message(event, server_messages.ProcessCompletedMessage(output={}, success=True))
    if not messages_kept:
        del queue.pending_messages_per_session[session_hash]
    asyncio.run(queue.clean_events(session_hash=session_hash))
    assert not event.alive
    return queue.pending_event_ids_session.get(session_hash)


def test_a_stream_disconnected_after_its_event_ended_keeps_the_id_its_end_is_read_with():
    # Gradio keeps a session's messages at its stream's disconnect: a stream
    # of the session opened next reads the end put there, and removes its id
    # from the session's (a KeyError in that stream once the session's ids
    # were all forgotten). The id of an event still running, if already
    # told it ended (alive, awaiting Gradio's analytics), was forgotten.
    assert _closing_stream("page", messages_kept=True) == {"ended", "earlier"}


def test_a_stream_cancelled_forgets_every_id_of_its_session():
    # At a cancel, Gradio drops the session's messages: no stream can deliver
    # any of its ids, those of events ended but unread included, which
    # stayed in Gradio's plain dict for good.
    assert _closing_stream("page", messages_kept=False) is None


def test_a_stream_disconnected_forgets_a_running_event_s_id_and_keeps_the_ended_one_s():
    # No end of a running event is in the session's messages: Gradio's
    # cleanup marks it dead and forgets the ids of waiting events alone, so a
    # running one's id (a turn under way as the tab closed) stayed for good.
    import server
    from gradio import server_messages

    with gr.Blocks() as demo:
        pass
    demo.queue()
    queue = demo._queue
    server.stop_when_gone(demo, lambda session: None)
    queue.pending_messages_per_session["page"] = asyncio.Queue()
    queue.pending_event_ids_session["page"] = {"ended", "running"}
    ended, running = _Running("ended", "page"), _Running("running", "page")
    queue.active_jobs = [[ended], [running]]
    queue.send_message(ended, server_messages.ProcessCompletedMessage(output={}, success=True))
    asyncio.run(queue.clean_events(session_hash="page"))
    assert not running.alive
    assert queue.pending_event_ids_session.get("page") == {"ended"}
