"""Stop ends a turn's model call at its next step (assistant.kernel.StopSignal).

A stopped turn kept its server thread until its model call returned (the
rewriter's decoding, a generative reader's): the session only dropped the
result. Each test here counts the model's passes and presses Stop from
within one of them (or from another thread while one is held), so what is
asserted is which pass was the last, never how long anything took.
"""

from __future__ import annotations

import dataclasses
import threading

import pytest

from assistant import session as S
from assistant.kernel import NO_STOP, Answer, InvalidInputError, Passage, Rewrite, StopSignal, Stopped, with_stop
from assistant.pipeline import Assistant
from rewriting import BatchingRewriter, CausalLMRewriter, FusedLlama, RewriterConfig
from conftest import build_tiny_gpt2

HISTORY = ["Who was Ada Lovelace?", "An English mathematician, the daughter of Lord Byron."]
ONE = [("What did she write about?", HISTORY)]
TWO = ONE + [("Who was her father?", HISTORY + ["What did she write?", "Notes on the Analytical Engine."])]
LONG = 60_000  # ms: a batch closes because it is full, never by the clock
GUARD = 60  # s: how long a test waits for what an event says will come, before it fails instead of hanging


class Passes:
    """Counts a rewriter's model passes (its model's forward, or its lean
    forward's); ``at(pass_number)`` is called at the start of each."""

    def __init__(self, rewriter: CausalLMRewriter, at=lambda number: None):
        self.count, self.at = 0, at
        if rewriter._fused is None:
            self._handle = rewriter.model.register_forward_pre_hook(lambda module, args: self._tick())
        else:
            for name in ("forward", "forward_prompts", "forward_groups"):
                setattr(rewriter._fused, name, self._counted(getattr(rewriter._fused, name)))

    def _tick(self) -> None:
        self.count += 1
        self.at(self.count)

    def _counted(self, method):
        def counted(*args, **kwargs):
            self._tick()
            return method(*args, **kwargs)

        return counted


def _tiny_llama(tokenizer):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    return LlamaForCausalLM(LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                        num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True,
                                        bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id)).eval()


def _rewriter(tiny_gpt2, lean: bool = False, **settings) -> CausalLMRewriter:
    """The tiny GPT-2 (or, ``lean``, a tiny Llama through the lean forward)
    as a plain-format rewriter; ``settings``: RewriterConfig's."""
    model, tokenizer = tiny_gpt2
    config = RewriterConfig(prompt_format="plain", max_new_tokens=12, **settings)
    if not lean:
        return CausalLMRewriter(model, tokenizer, config)
    llama = _tiny_llama(tokenizer)
    return CausalLMRewriter(llama, tokenizer, config, fused=FusedLlama.from_model(llama))


# Each decoding loop of the causal rewriter, and the pass after which Stop is
# pressed: the second, the first decoding step after the prompts' read (the
# second look's: its second pass after the greedy decoding's, "+").
LOOPS = {
    "one_question_drafted": (False, ONE, {"second_look": 0}, 2),
    "a_batch": (False, TWO, {"second_look": 0}, 2),
    "beam_search_with_greedy_row": (False, ONE, {"candidates": 2}, 2),
    "a_second_look": (False, ONE, {"second_look": 2, "second_look_below": 1.01}, "+2"),
    "one_question_lean": (True, ONE, {"second_look": 0}, 2),
    "a_batch_lean": (True, TWO, {"second_look": 0}, 2),
    "a_second_look_lean": (True, TWO, {"second_look": 2, "second_look_below": 1.01}, "+2"),
}


@pytest.mark.parametrize("lean, items, settings, last", LOOPS.values(), ids=list(LOOPS))
def test_a_rewrite_stopped_during_a_decoding_step_ends_before_the_next(tiny_gpt2, lean, items, settings, last):
    if isinstance(last, str):  # after the greedy decoding's passes
        greedy = _rewriter(tiny_gpt2, lean, **{**settings, "second_look": 0})
        passes = Passes(greedy)
        greedy.rewrite_batch(items)
        last = passes.count + int(last)
    whole = _rewriter(tiny_gpt2, lean, **settings)
    passes = Passes(whole)
    whole.rewrite_batch(items, stop=StopSignal())  # a signal never set: the whole rewrite
    assert passes.count > last  # so a Stop after pass ``last`` has passes left to save
    rewriter, stop = _rewriter(tiny_gpt2, lean, **settings), StopSignal()
    passes = Passes(rewriter, at=lambda number: number == last and stop.set())
    with pytest.raises(Stopped):
        rewriter.rewrite_batch(items, stop=stop)
    assert passes.count == last


def test_nothing_is_decoded_for_a_rewrite_stopped_before_it_began(tiny_gpt2):
    rewriter, stop = _rewriter(tiny_gpt2), StopSignal()
    passes = Passes(rewriter)
    stop.set()
    with pytest.raises(Stopped):
        rewriter.rewrite(*ONE[0], stop=stop)
    assert passes.count == 0


class Held:
    """Holds a rewriter's model at its ``at``-th pass (``held`` is set) until
    ``release`` is set; ``passes`` counts them, ``after`` those begun after
    the release."""

    def __init__(self, rewriter: CausalLMRewriter, at: int = 2):
        self.held, self.release, self.after = threading.Event(), threading.Event(), 0
        self.passes = Passes(rewriter, at=self._at)
        self.hold_at = at

    def _at(self, number: int) -> None:
        if self.release.is_set():
            self.after += 1
        elif number == self.hold_at:
            self.held.set()
            if not self.release.wait(GUARD):
                raise TimeoutError("the test never released the model")


def _in_thread(function, *args, **kwargs):
    """Start ``function`` on a thread; returns (thread, outcome): outcome
    holds its result or the exception it raised once the thread ends."""
    outcome: list = []

    def run():
        try:
            outcome.append(function(*args, **kwargs))
        except Exception as error:  # noqa: BLE001 - the test inspects it
            outcome.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def test_one_users_stop_leaves_the_others_batched_rewrite_as_it_would_be(tiny_gpt2):
    # A crowd's questions are decoded as one batch: Stop of one user ends
    # that user's wait at once, while the batch is still in its model call,
    # and the batch goes on for the others (the stopped row is decoded on
    # and dropped), so each other user gets the rewrite it gets alone.
    alone = _rewriter(tiny_gpt2).rewrite(*TWO[1])
    counting = _rewriter(tiny_gpt2)
    passes = Passes(counting)
    counting.rewrite_batch(TWO)
    whole = passes.count  # the passes of the two questions' batch, no one stopping
    rewriter = _rewriter(tiny_gpt2)
    model = Held(rewriter)
    stop = StopSignal()
    with BatchingRewriter(rewriter, max_batch=2, window_ms=LONG) as batcher:
        stopped = _in_thread(batcher.rewrite, *TWO[0], stop=stop)
        other = _in_thread(batcher.rewrite, *TWO[1])
        assert model.held.wait(GUARD), "the batch never reached its decoding"
        stop.set()
        stopped[0].join(GUARD)
        assert not stopped[0].is_alive() and not model.release.is_set()  # back while the model call is still held
        assert isinstance(stopped[1][0], Stopped)
        assert other[0].is_alive()  # the other user's rewrite still waits for the batch
        model.release.set()
        other[0].join(GUARD)
    assert other[1] == [alone]
    # The batch went on, both rows, to its end: it was not stopped and the
    # other user's question decoded again alone.
    assert model.passes.count == whole


def test_a_batch_none_of_whose_users_waits_any_more_ends_at_its_next_step(tiny_gpt2):
    rewriter = _rewriter(tiny_gpt2)
    model = Held(rewriter)
    stops = [StopSignal(), StopSignal()]
    with BatchingRewriter(rewriter, max_batch=2, window_ms=LONG) as batcher:
        calls = [_in_thread(batcher.rewrite, *item, stop=stop) for item, stop in zip(TWO, stops)]
        assert model.held.wait(GUARD), "the batch never reached its decoding"
        for stop in stops:
            stop.set()
        for thread, _ in calls:
            thread.join(GUARD)
        assert [type(outcome[0]) for _, outcome in calls] == [Stopped, Stopped]
        model.release.set()
    # close() waited for the worker: the held pass was the batch's last.
    assert model.after == 0 and model.passes.count == 2


class Recording:
    """A stoppable rewriter that records its batches and decodes nothing."""

    def __init__(self):
        self.batches: list[int] = []

    def rewrite(self, question, history, stop=NO_STOP):
        return self.rewrite_batch([(question, history)], stop=stop)[0]

    def rewrite_batch(self, items, stop=NO_STOP):
        self.batches.append(len(items))
        return [Rewrite(question) for question, _ in items]


def test_a_question_stopped_while_it_waits_for_its_batch_is_never_decoded():
    rewriter, stop = Recording(), StopSignal()
    with BatchingRewriter(rewriter, max_batch=2, window_ms=LONG) as batcher:
        thread, outcome = _in_thread(batcher.rewrite, *ONE[0], stop=stop)  # waits for a second question
        stop.set()
        thread.join(GUARD)
        assert isinstance(outcome[0], Stopped)
    assert rewriter.batches == []  # close() ran what was queued: nothing


def _services(rewriter, tmp_path, reader=None) -> S.Services:
    class Retriever:
        def search(self, query, k):
            return [Passage("p1", "Ada Lovelace wrote notes on the Analytical Engine.", 1.0, title="Ada")]

    class Reader:
        def read(self, question, passages):
            return Answer(passages[0].text, 1.0, evidence=passages[0].text, source_id=passages[0].id)

    return S.Services(Assistant(rewriter, Retriever(), reader or Reader()), S.LabelStore(tmp_path / "labels.jsonl"))


def _ask(services, session, question):
    for _ in S.ask(services, session, question):
        pass
    return session.turns[-1]


def test_stop_ends_a_turns_rewrite_at_its_next_step_and_adds_nothing(tiny_gpt2, tmp_path):
    rewriter = _rewriter(tiny_gpt2)
    services, session = _services(rewriter, tmp_path), S.Session()
    _ask(services, session, "Who was Ada Lovelace?")  # a first turn: no model call
    model = Held(rewriter)
    thread, outcome = _in_thread(_ask, services, session, "What did she write about?")
    assert model.held.wait(GUARD), "the turn never reached the rewriter's decoding"
    assert S.stop_turns(session).asked
    # Stop's signal ends the held pass's wait (the turn's own stop check follows it).
    model.release.set()
    thread.join(GUARD)
    assert not thread.is_alive()
    assert isinstance(outcome[0], InvalidInputError)
    assert str(outcome[0]) == "Stopped before “What did she write about?” was answered: it was not added."
    assert model.after == 0  # the held pass was the last: nothing decoded for a turn no one wants
    assert len(session.turns) == 1 and session.asking == 0
    # A turn asked after Stop has a signal of its own, not set.
    model.hold_at = 0
    assert _ask(services, session, "What did she write about?").turn.question == "What did she write about?"
    assert model.after > 0


def test_stop_ends_a_batched_turn_while_its_model_call_runs_for_others(tiny_gpt2, tmp_path):
    # The app's rewriter is a BatchingRewriter: a stopped turn gives its
    # server thread back before the batch's model call returns.
    rewriter = _rewriter(tiny_gpt2)
    with BatchingRewriter(rewriter, max_batch=1, window_ms=0) as batcher:
        services, session = _services(batcher, tmp_path), S.Session()
        _ask(services, session, "Who was Ada Lovelace?")  # a first turn: no model call
        model = Held(rewriter)
        thread, outcome = _in_thread(_ask, services, session, "What did she write about?")
        assert model.held.wait(GUARD), "the turn never reached the rewriter's decoding"
        S.stop_turns(session)
        thread.join(GUARD)
        assert not thread.is_alive() and not model.release.is_set()  # back while the model call is still held
        model.release.set()
    assert str(outcome[0]).startswith("Stopped before") and len(session.turns) == 1
    assert model.after == 0  # close() waited for the worker: no one waited, so the held pass was the last


class HeldReader:
    """A reader whose reading waits in its "model loop" until it is released
    or stopped (``reading`` is set when it begins): a generative reader's
    decoding, with a check between its steps."""

    def __init__(self):
        self.reading, self.release = threading.Event(), threading.Event()

    def read(self, question, passages, stop=NO_STOP):
        self.reading.set()
        stop.on_set(self.release.set)
        if not self.release.wait(GUARD):
            raise TimeoutError("the test never released the reader")
        stop.check()
        return Answer(passages[0].text, 1.0)


def test_stop_ends_a_re_run_with_the_users_rewrite_during_its_reading(tiny_gpt2, tmp_path):
    reader = HeldReader()
    services, session = _services(_rewriter(tiny_gpt2), tmp_path, reader), S.Session()
    reader.release.set()
    _ask(services, session, "Who was Ada Lovelace?")
    reader.release.clear(), reader.reading.clear()
    thread, outcome = _in_thread(S.correct, services, session, 0, "Who was Ada Lovelace, the mathematician?")
    assert reader.reading.wait(GUARD)
    S.stop_turns(session)  # sets the re-run's signal, which releases the reader, which checks it
    thread.join(GUARD)
    assert not thread.is_alive()
    assert str(outcome[0]) == "Stopped before turn 1 was re-run with your rewrite: it is as it was."
    assert session.turns[0].turn.rewrite.text == "Who was Ada Lovelace?"


def test_a_generative_readers_decoding_ends_at_the_step_after_stop():
    from assistant.readers import GenerativeReader, GenerationConfig

    model, tokenizer = build_tiny_gpt2(seed=4)  # seed 0's first token ends the answer: nothing left to stop
    evidence = "Cotton lived in a barn near the farm house with her mother and sisters."

    class Selector:
        def read(self, question, passages):
            return Answer(evidence, 1.0, evidence=evidence, source_id="p1")

    reader = GenerativeReader(Selector(), model, tokenizer, GenerationConfig(max_new_tokens=12))
    count = [0]
    model.register_forward_pre_hook(lambda module, args: count.__setitem__(0, count[0] + 1))
    reader.generate_ids("Where did Cotton live?", evidence, StopSignal())
    whole, count[0], stop = count[0], 0, StopSignal()
    assert whole > 3


    def pressed(module, args) -> None:  # Stop pressed during the first decoding step
        if count[0] == 2:
            stop.set()

    model.register_forward_pre_hook(pressed)
    with pytest.raises(Stopped):
        reader.read("Where did Cotton live?", [Passage("p1", "Cotton", evidence, 1.0)], stop=stop)
    assert count[0] == 2


def test_a_stage_without_a_stop_argument_is_called_as_it_is():
    stop = StopSignal()
    assert with_stop(lambda question, history: (question, history), stop)("Why?", []) == ("Why?", [])
    assert with_stop(lambda question, history, stop=NO_STOP: stop, stop)("Why?", []) is stop
    with pytest.raises(TypeError, match="never set"):
        NO_STOP.set()


def test_the_signal_nobody_stops_keeps_no_callback():
    # NO_STOP is shared by every call nobody stops: each wait given it added
    # its callback (and what that holds: a batch's caller, its result) to one
    # list that was never cleared, though it could never be called.
    import gc
    import weakref

    class Waiter:
        def wake(self):
            raise AssertionError("NO_STOP is never set")

    waiter = Waiter()
    gone = weakref.ref(waiter)
    forget = NO_STOP.on_set(waiter.wake)
    del waiter
    gc.collect()
    assert gone() is None
    forget()  # a wait that ended otherwise forgets it: nothing to do
    stop = StopSignal()  # a signal of its own still calls it
    called = []
    stop.on_set(lambda: called.append(True))
    stop.set()
    assert called == [True]


def _failing_wake():
    raise ZeroDivisionError("a wake's bug")


def test_every_wake_runs_though_one_before_it_raises():
    # A callback that raised left the ones after it uncalled: their waiters
    # were never woken. Each is called; the first error is raised after.
    stop, woken = StopSignal(), []
    stop.on_set(_failing_wake)
    stop.on_set(lambda: woken.append(True))
    with pytest.raises(ZeroDivisionError, match="a wake's bug"):
        stop.set()
    assert woken == [True] and stop.is_set()


def test_a_stop_whose_wake_raises_leaves_the_next_turns_a_fresh_signal():
    # stop_turns set the session's signal, whose wake raised, before putting
    # a fresh one in its place: every later turn took the set signal and
    # was stopped at once, until the next Stop.
    session = S.Session()
    pressed, woken = session.stop_signal, []
    pressed.on_set(_failing_wake)
    pressed.on_set(lambda: woken.append(True))
    with pytest.raises(ZeroDivisionError, match="a wake's bug"):
        S.stop_turns(session)
    assert pressed.is_set() and woken == [True]
    assert session.stop_signal is not pressed and not session.stop_signal.is_set()
    assert session.stops == 1


def test_a_stops_wakes_run_after_it_let_every_session_go_on():
    # Stop ran its signal's wakes under the lock every session's turns take
    # to begin and to end: a wake that took it (here, another tab's Stop)
    # hung every session for good, and one that blocked stalled them all.
    session, others_stop = S.Session(), []

    def wake():
        pressing, outcome = _in_thread(S.stop_turns, S.Session())
        pressing.join(GUARD)
        others_stop.append(bool(outcome) and isinstance(outcome[0], S.StoppedTurns))

    session.stop_signal.on_set(wake)
    S.stop_turns(session)
    assert others_stop == [True], "the other tab's Stop waited for this one's wakes"


# ---------------------------------------------------------------- the tab's lock: Stop by the signal alone


class Looked(StopSignal):
    """A turn's stop signal that tells when a waiter first looks at it and
    finds it not set (``looked``), holds that look until ``go`` when
    ``hold``, and counts the wakes given to it (:meth:`on_set`) and not yet
    given back (``kept``)."""

    def __init__(self, hold: bool = False):
        super().__init__()
        self.looked, self.go, self.hold, self.kept = threading.Event(), threading.Event(), hold, 0

    def is_set(self) -> bool:
        seen = super().is_set()
        if not seen and not self.looked.is_set():
            self.looked.set()
            if self.hold and not self.go.wait(GUARD):
                raise TimeoutError("the test never let the look go on")
        return seen

    def on_set(self, callback):
        self.kept += 1
        forget = super().on_set(callback)

        def given_back():
            self.kept -= 1
            forget()

        return given_back


class Told(threading.Condition):
    """A condition that tells when a thread waits on it (``waiting``), set
    just before the wait, under its lock, which only the wait gives up."""

    def __init__(self):
        super().__init__()
        self.waiting = threading.Event()

    def wait(self, timeout=None):
        self.waiting.set()
        return super().wait(timeout)


RACE = ("before_it_waits", "between_its_look_and_its_wait", "while_it_waits", "after_it_took_the_lock")


@pytest.mark.parametrize("when", RACE)
def test_stop_reaches_a_turn_waiting_on_its_tabs_lock_through_its_signal_alone(when):
    # Stop reached a turn waiting for its source to be read again (the tab's
    # lock, held by the reading) by a second way: stop_turns set the turn's
    # signal, then woke the lock itself. Now the signal's own wake (on_set)
    # ends the wait, whenever Stop comes, with no wake-up lost in the window
    # between the waiter's look at its signal and its wait; a wait that ends
    # gives its wake back. Each moment is reached by events, never by time.
    session = S.Session()
    assert session.taking.acquire()  # held: the source is being read again
    session.taking._free = told = Told()  # nobody waits on it yet: one that tells when the waiter does
    session.stop_signal = Looked(hold=when == "between_its_look_and_its_wait")
    stop = session.stop_signal  # what a turn takes as it begins (under the session's ending lock)
    flagged = threading.Event()
    StopSignal.on_set(stop, flagged.set)  # the test's own, called first: the signal is set, its wakes still to run
    if when == "before_it_waits":
        S.stop_turns(session)
    waiter, outcome = _in_thread(session.taking.acquire, stop)
    if when == "between_its_look_and_its_wait":
        assert stop.looked.wait(GUARD), "the waiter never looked at its signal"
        # Stop now: its wake of the lock waits for the look to end in a wait.
        pressing, _ = _in_thread(S.stop_turns, session)
        assert flagged.wait(GUARD), "Stop never set the signal"
        stop.go.set()
        pressing.join(GUARD)
        assert not pressing.is_alive()
    elif when == "while_it_waits":
        assert told.waiting.wait(GUARD), "the waiter never waited"
        stop.set()  # the signal alone (whoever sets it), not stop_turns: it returns once the waiter was woken
    elif when == "after_it_took_the_lock":
        assert stop.looked.wait(GUARD), "the waiter never looked at its signal"
        session.taking.release()  # the reading ended: the waiter takes the lock
        waiter.join(GUARD)
        S.stop_turns(session)  # the turn's next stage check ends it (see the pipeline's tests)
    waiter.join(GUARD)
    assert not waiter.is_alive(), "the waiter was never woken"
    assert outcome == [when == "after_it_took_the_lock"]
    assert stop.kept == 0  # the signal, which outlives the wait, holds no wake of the lock
    assert stop.is_set()
    session.taking.release()


# ---------------------------------------------------------------- the stages that cannot be stopped inside


class Stages:
    """A rewriter, retriever, rescorer and reader, none of which takes a
    ``stop`` (each runs to its end), that record which of them ran; Stop is
    pressed (``press()``) during the one named ``pressed_in``."""

    def __init__(self, pressed_in: str, press):
        self.ran: list[str] = []
        self.pressed_in, self.press = pressed_in, press

    def _ran(self, stage: str) -> None:
        self.ran.append(stage)
        if stage == self.pressed_in:
            self.press()

    def rewrite(self, question, history):
        self._ran("rewrite")
        return Rewrite(question)

    def search(self, query, k):
        self._ran("search")
        return [Passage("p1", "Ada Lovelace wrote notes on the Analytical Engine.", 1.0, title="Ada")]

    def rescore(self, question, passages, k, alternatives=()):
        self._ran("rescore")
        return list(passages)[:k]

    def read(self, question, passages):
        self._ran("read")
        return Answer(passages[0].text, 1.0, evidence=passages[0].text, source_id=passages[0].id)

    def assistant(self) -> Assistant:
        return Assistant(self, self, self, rescorer=self)


STAGES = ["rewrite", "search", "rescore", "read"]


@pytest.mark.parametrize("pressed_in", ["before_the_turn"] + STAGES)
def test_a_turn_stopped_during_a_stage_that_cannot_be_stopped_runs_no_stage_after_it(pressed_in):
    # The retriever and the rescorer (its rewrite's encoding) take no stop:
    # a turn stopped during the search still rescored its hits, and one
    # stopped before it began still rewrote. Each stage's end is a check now.
    stop = StopSignal()
    stages = Stages(pressed_in, stop.set)
    if pressed_in == "before_the_turn":
        stop.set()
    with pytest.raises(Stopped):
        list(stages.assistant().steps("What did she write?", HISTORY, stop=stop))
    assert stages.ran == STAGES[: STAGES.index(pressed_in) + 1 if pressed_in in STAGES else 0]


def test_a_turn_stopped_after_its_last_stage_computes_no_metrics(tmp_path, monkeypatch):
    # The live metrics (ROUGE, USE, R@10: an encoding and a search) were
    # computed for a turn Stop came to once its stages were over, then dropped.
    session, stages, scored = S.Session(), Stages("", None), []
    assistant = stages.assistant()
    services = dataclasses.replace(_services(stages, tmp_path), assistant=assistant,
                                   scorer=lambda *args: scored.append(args) or {})
    list(S.ask(services, session, "Who was Ada Lovelace?", reference="Who was Ada Lovelace?"))
    assert len(scored) == 1  # not stopped: scored against its reference
    steps, answer = assistant.steps, assistant.answer

    def then_stopped(*args, **kwargs):  # Stop pressed once the turn passed its last check
        for step in steps(*args, **kwargs):
            if not isinstance(step, Rewrite):
                S.stop_turns(session)
            yield step

    def answered_then_stopped(*args, **kwargs):
        answered = answer(*args, **kwargs)
        S.stop_turns(session)
        return answered

    monkeypatch.setattr(assistant, "steps", then_stopped)
    with pytest.raises(InvalidInputError, match="^Stopped before “What did she write\\?” was answered"):
        list(S.ask(services, session, "What did she write?", reference="What did Ada Lovelace write?"))
    assert len(scored) == 1
    monkeypatch.setattr(assistant, "answer", answered_then_stopped)
    with pytest.raises(InvalidInputError, match="^Stopped before turn 1 was re-run with your rewrite"):
        S.correct(services, session, 0, "Who was Ada Lovelace, the mathematician?")
    assert len(scored) == 1 and len(session.turns) == 1


class HeldEncoder:
    """Unit rows; holds its first call (``held`` is set) until ``release``;
    ``calls`` records the texts of each."""

    def __init__(self):
        self.held, self.release, self.calls = threading.Event(), threading.Event(), []

    def encode(self, texts):
        self.calls.append(list(texts))
        if len(self.calls) == 1:
            self.held.set()
            if not self.release.wait(GUARD):
                raise TimeoutError("the test never released the encoder")
        return self.rows(texts)

    def rows(self, texts):
        import numpy as np

        return np.full((len(texts), 2), 0.5 ** 0.5)


class Waiting(StopSignal):
    """A stop signal that tells when a wait gives it its wake (``waiting``)."""

    def __init__(self):
        super().__init__()
        self.waiting = threading.Event()

    def on_set(self, callback):
        forget = super().on_set(callback)
        self.waiting.set()
        return forget


@pytest.mark.parametrize("served", ["as_made", "deferred"])
def test_a_turn_stopped_while_its_rescoring_waits_for_the_shared_encoder_leaves_at_once(served):
    # The rescorer's encoding of the rewrite waits in the encoder's queue,
    # which every turn's reader and rescorer share, behind a crowd's batch:
    # a stopped turn kept its server thread until its own encoding was done.
    # The app serves a DeferredRescorer (its passage vectors made in the
    # background), which hands the stop on to the rescorer it made.
    import numpy as np
    from assistant.encoders import BatchingEncoder
    from assistant.retrieval import DeferredRescorer, DenseRescorer

    encoder, stages, stop = HeldEncoder(), Stages("", None), Waiting()
    with BatchingEncoder(encoder, max_batch=1, window_ms=0) as shared:
        rescorer = DenseRescorer(shared, ["p1"], np.full((1, 2), 0.5 ** 0.5, dtype=np.float16), 0.5)
        if served == "deferred":
            rescorer = DeferredRescorer(lambda report, made=rescorer: made, total=1)
            assert rescorer.wait(GUARD) and not rescorer.notice, "the deferred rescorer was never made"
        assistant = Assistant(stages, stages, stages, rescorer=rescorer)
        crowd = _in_thread(shared.encode, ["Another turn's sentence."])
        assert encoder.held.wait(GUARD), "the crowd's batch never reached the encoder"
        turn = _in_thread(assistant.answer, "What did she write?", Rewrite("What did Ada Lovelace write?"), stop=stop)
        assert stop.waiting.wait(GUARD), "the rescoring never waited for the encoder"
        stop.set()
        turn[0].join(GUARD)
        assert not turn[0].is_alive() and not encoder.release.is_set()  # back while the crowd's batch still runs
        assert isinstance(turn[1][0], Stopped)
        encoder.release.set()
        crowd[0].join(GUARD)
    assert encoder.calls == [["Another turn's sentence."]]  # the stopped turn's rewrite was never encoded
    assert stages.ran == ["search"]  # nor read


class Keyed(HeldEncoder):
    """A held encoder whose rows tell the texts apart (each text's length)."""

    def rows(self, texts):
        import numpy as np

        return np.array([[float(len(text)), 1.0] for text in texts])


def test_a_caller_stopped_in_a_shared_encoding_leaves_the_other_callers_rows_to_them():
    # Two turns' texts in one encode call of the shared encoder: the one
    # stopped leaves at once, the batch goes on, and the other gets its own
    # rows, with neither encoded again.
    from assistant.encoders import BatchingEncoder

    encoder, stop = Keyed(), Waiting()
    with BatchingEncoder(encoder, max_batch=2, window_ms=LONG) as shared:  # the batch closes when both came
        stopped = _in_thread(shared.encode, ["b"], stop)
        assert stop.waiting.wait(GUARD), "the stopped caller never waited for the encoder"
        other = _in_thread(shared.encode, ["aa", "aaaa"], StopSignal())
        assert encoder.held.wait(GUARD), "the batch never reached the encoder"
        stop.set()
        stopped[0].join(GUARD)
        assert not stopped[0].is_alive() and not encoder.release.is_set()  # back while the batch still runs
        assert isinstance(stopped[1][0], Stopped)
        encoder.release.set()
        other[0].join(GUARD)
    assert encoder.calls == [["b", "aa", "aaaa"]]
    assert other[1][0].tolist() == [[2.0, 1.0], [4.0, 1.0]]


# ---------------------------------------------------------------- /rewrite and nbest_batch


def test_the_rewrite_api_takes_a_stop(tiny_gpt2, tmp_path):
    rewriter = _rewriter(tiny_gpt2)
    services = _services(rewriter, tmp_path)
    stop = StopSignal()
    passes = Passes(rewriter, at=lambda number: number == 2 and stop.set())
    assert S.rewrite_json(services, "What did she write about?", HISTORY, stop) == {
        "question": "What did she write about?", "error": str(Stopped())}
    assert passes.count == 2  # its decoding ended at the step after Stop
    passes.count = 0
    assert S.rewrite_json(services, "What did she write about?", HISTORY, stop)["error"] == str(Stopped())
    assert passes.count == 0  # stopped before it began: nothing read
    assert "rewrite" in S.rewrite_json(services, "What did she write about?", HISTORY, StopSignal())


def test_an_nbest_search_ends_at_the_step_after_stop(tiny_gpt2):
    rewriter = _rewriter(tiny_gpt2)
    passes = Passes(rewriter)
    whole = rewriter.nbest_batch(TWO, beams=2, stop=StopSignal())  # a signal never set: the whole search
    assert passes.count > 2 and all(len(found) == 2 for found in whole)
    rewriter, stop = _rewriter(tiny_gpt2), StopSignal()
    passes = Passes(rewriter, at=lambda number: number == 2 and stop.set())
    with pytest.raises(Stopped):
        rewriter.nbest_batch(TWO, beams=2, stop=stop)
    assert passes.count == 2
    passes.count = 0
    with pytest.raises(Stopped):
        rewriter.nbest_batch(TWO, beams=2, stop=stop)  # stopped before it began: nothing read
    assert passes.count == 0


# ---------------------------------------------------------------- the sentence reader's encoding


class Batches:
    """A sentence-transformers model's stand-in under MiniLMEncoder: rows
    that tell the texts apart (each text's length), ``calls`` the texts of
    each call (one batch each), ``at(call_number)`` called as each begins."""

    def __init__(self, at=lambda number: None):
        self.calls, self.at = [], at

    def encode(self, texts, batch_size, **settings):
        import numpy as np

        assert len(texts) <= batch_size  # one batch a call
        self.calls.append(list(texts))
        self.at(len(self.calls))
        return np.array([[float(len(text)), 1.0] for text in texts])


class HeldBatches(Batches):
    """:class:`Batches` holding its first call (``held`` is set) until ``release``."""

    def __init__(self):
        self.held, self.release = threading.Event(), threading.Event()
        super().__init__(self._hold)

    def _hold(self, number):
        if number == 1:
            self.held.set()
            if not self.release.wait(GUARD):
                raise TimeoutError("the test never released the model")


TEXTS = ["a" * 5, "b" * 3, "c" * 9, "d" * 1, "e" * 7]  # three batches of two


def test_a_minilm_encoding_stopped_during_a_batch_encodes_no_batch_after_it():
    from assistant.encoders import MiniLMEncoder

    model = Batches()
    rows = MiniLMEncoder(model, batch_size=2).encode(TEXTS, StopSignal())  # a signal never set: every batch
    assert rows[:, 0].tolist() == [5.0, 3.0, 9.0, 1.0, 7.0]  # each text its own row, in the texts' order
    assert model.calls == [["c" * 9, "e" * 7], ["a" * 5, "b" * 3], ["d"]]  # longest first, as one call batches them
    stop = StopSignal()
    model = Batches(at=lambda number: number == 1 and stop.set())
    with pytest.raises(Stopped):
        MiniLMEncoder(model, batch_size=2).encode(TEXTS, stop)
    assert len(model.calls) == 1


def test_minilms_batches_give_the_rows_one_call_gives(minilm):
    # Each batch sent alone is the batch the model makes of one call: the
    # same texts padded together, so the very same rows.
    import numpy as np

    texts = [f"Sentence {number} of a reading{' that goes on' * (number % 7)}." for number in range(150)]
    whole = np.asarray(minilm._model.encode(texts, batch_size=minilm._batch_size, convert_to_numpy=True,
                                            normalize_embeddings=True, show_progress_bar=False), dtype=np.float32)
    assert np.array_equal(minilm.encode(texts), whole)


PASSAGE = Passage("p1", " ".join(f"Ada Lovelace wrote her note number {n} on the engine." for n in range(5)), 1.0,
                  title="Ada Lovelace")


class OnePassage:
    def search(self, query, k):
        return [PASSAGE]


@pytest.mark.parametrize("last", [1, 3], ids=["the_first_batch", "the_last_sentences_batch"])
def test_a_reading_stopped_during_its_sentences_encoding_encodes_nothing_after_that_batch(last):
    # The reader's encoding of its sentences (several batches of the
    # model's) ran to its end, then the question's, once begun.
    from assistant.encoders import MiniLMEncoder
    from assistant.readers import SentenceReader

    model = Batches()
    SentenceReader(MiniLMEncoder(model, batch_size=2)).read("What did Ada Lovelace write?", [PASSAGE], StopSignal())
    assert len(model.calls) == 4  # three batches of the five sentences, then the question
    stop = StopSignal()
    model = Batches(at=lambda number: number == last and stop.set())
    reader = SentenceReader(MiniLMEncoder(model, batch_size=2))
    stages = Stages("", None)
    with pytest.raises(Stopped):
        Assistant(stages, OnePassage(), reader).answer("What did she write?", Rewrite("What did Ada Lovelace write?"),
                                                     stop=stop)
    assert len(model.calls) == last  # the question never encoded
    # Nothing of a stopped encoding is kept; the sentences' finished one is, for the next turn.
    assert len(reader.sentences) == (5 if last == 3 else 0)


def test_a_shared_encoding_every_caller_of_which_stopped_ends_after_its_batch_under_way():
    # In the app the reader's sentences go to the shared encoder's worker:
    # the stopped turn left at once, but the worker encoded all its batches.
    from assistant.encoders import BatchingEncoder, MiniLMEncoder
    from assistant.readers import SentenceReader

    model, stop = HeldBatches(), StopSignal()
    with BatchingEncoder(MiniLMEncoder(model, batch_size=2), max_batch=1, window_ms=0) as shared:
        reader = SentenceReader(shared)
        turn = _in_thread(reader.read, "What did Ada Lovelace write?", [PASSAGE], stop)
        assert model.held.wait(GUARD), "the reading never reached the model"
        stop.set()
        turn[0].join(GUARD)
        assert not turn[0].is_alive() and isinstance(turn[1][0], Stopped)
        model.release.set()
    # close() waited for the worker: the held batch was the encoding's last.
    assert len(model.calls) == 1


# ---------------------------------------------------------------- the live metrics


class Searches:
    """A retriever that records its queries; ``at(query)`` is called as each search begins."""

    def __init__(self, at=lambda query: None):
        self.queries, self.at = [], at

    def search(self, query, k):
        self.queries.append(query)
        self.at(query)
        return [Passage(query, query, 1.0)]


class Use:
    """USE's stand-in; ``at()`` is called as it encodes."""

    def __init__(self, at=lambda: None):
        self.at, self.encoded = at, 0

    def encode(self, texts):
        import numpy as np

        self.encoded += 1
        self.at()
        return np.ones((len(texts), 2))


def _metrics(use):
    import app

    metrics = app.LiveMetrics()
    metrics._use = use
    return metrics


REFERENCE, CANDIDATE = "What did Ada Lovelace write?", "What did she write?"


def test_the_live_metrics_stopped_during_use_search_nothing():
    searches = Searches()
    assert set(_metrics(Use())(REFERENCE, CANDIDATE, searches, StopSignal())) == {"ROUGE-1 R", "USE", "R@10"}
    assert searches.queries == [REFERENCE, CANDIDATE]  # not stopped: R@10's two searches
    stop, searches = StopSignal(), Searches()
    with pytest.raises(Stopped):
        _metrics(Use(at=stop.set))(REFERENCE, CANDIDATE, searches, stop)
    assert searches.queries == []


def test_the_live_metrics_stopped_during_r_at_10s_first_search_do_not_begin_its_second():
    stop = StopSignal()
    searches = Searches(at=lambda query: stop.set())
    with pytest.raises(Stopped):
        _metrics(Use())(REFERENCE, CANDIDATE, searches, stop)
    assert searches.queries == [REFERENCE]


def test_the_live_metrics_of_a_turn_stopped_before_they_began_compute_nothing():
    stop, use, searches = StopSignal(), Use(), Searches()
    stop.set()
    with pytest.raises(Stopped):
        _metrics(use)(REFERENCE, CANDIDATE, searches, stop)
    assert use.encoded == 0 and searches.queries == []


class StoppedScorer:
    """A scorer that takes a stop: Stop is pressed (``press()``) during its
    first metric; ``computed`` lists the metrics it got to."""

    def __init__(self):
        self.press, self.computed = None, []

    def __call__(self, reference, candidate, retriever, stop=NO_STOP):
        self.computed.append("first")
        if self.press is not None:
            self.press()
        stop.check()
        self.computed.append("rest")
        return {"ROUGE-1 R": 1.0}


def test_a_turn_stopped_while_its_metrics_are_computed_computes_no_more_of_them(tmp_path):
    session, stages, scorer = S.Session(), Stages("", None), StoppedScorer()
    services = dataclasses.replace(_services(stages, tmp_path), assistant=stages.assistant(), scorer=scorer)
    list(S.ask(services, session, "Who was Ada Lovelace?", reference="Who was Ada Lovelace?"))
    assert scorer.computed == ["first", "rest"]  # not stopped: every metric
    scorer.computed, scorer.press = [], lambda: S.stop_turns(session)
    with pytest.raises(InvalidInputError, match="^Stopped before “What did she write\\?” was answered"):
        list(S.ask(services, session, "What did she write?", reference="What did Ada Lovelace write?"))
    assert scorer.computed == ["first"] and len(session.turns) == 1
    scorer.computed = []
    with pytest.raises(InvalidInputError, match="^Stopped before turn 1 was re-run with your rewrite"):
        S.correct(services, session, 0, "Who was Ada Lovelace, the mathematician?")
    assert scorer.computed == ["first"] and len(session.turns) == 1


# ---------------------------------------------------------------- a cancelled /rewrite


class UntilStopped:
    """Work that begins (``began`` is set), waits for its stop (no longer
    than GUARD; ``stopped`` is set once it came), then, once ``may_end`` is
    set, checks it; ``rest`` says whether it went on after, ``ended``
    whether it ended."""

    def __init__(self):
        self.began, self.stopped, self.may_end = threading.Event(), threading.Event(), threading.Event()
        self.rest = self.ended = False
        self.may_end.set()

    def __call__(self, stop):
        try:
            self.began.set()
            stop.on_set(self.stopped.set)
            self.stopped.wait(GUARD)
            if not self.may_end.wait(GUARD):
                raise TimeoutError("the test never let the work end")
            stop.check()
            self.rest = True
            return "done"
        finally:
            self.ended = True


class UntilStoppedRewriter:
    """A rewriter whose rewrite is :class:`UntilStopped` work (``work``)."""

    def __init__(self):
        self.work = UntilStopped()

    def rewrite(self, question, history, stop=NO_STOP):
        return Rewrite(self.work(stop))


def _cancelled(coroutine, began: threading.Event):
    """Run ``coroutine`` as a task, cancel it once ``began`` is set; returns
    what awaiting it raised."""
    import asyncio

    async def main():
        task = asyncio.ensure_future(coroutine)
        assert await asyncio.get_running_loop().run_in_executor(None, began.wait, GUARD), "the work never began"
        task.cancel()
        try:
            await task
        except BaseException as error:  # noqa: BLE001 - the test inspects it
            return error

    return asyncio.run(main())


def test_work_whose_task_is_cancelled_is_stopped_and_waited_for():
    import asyncio
    from assistant.kernel import stopped_when_cancelled

    work = UntilStopped()
    work.may_end.clear()

    async def main():
        task = asyncio.ensure_future(stopped_when_cancelled(work))
        run = asyncio.get_running_loop().run_in_executor
        assert await run(None, work.began.wait, GUARD), "the work never began"
        task.cancel()
        assert await run(None, work.stopped.wait, GUARD), "the cancel never set the work's stop"
        assert not task.done()  # the cancel waits for the work's end
        work.may_end.set()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert work.ended and not work.rest


def test_a_cancelled_rewrite_request_ends_its_rewrite_at_its_next_step(tmp_path):
    # Gradio's /cancel (a client's job.cancel()) cancels the task of the
    # event: a sync /rewrite's decoding ran on to its end meanwhile.
    import asyncio
    import app

    rewriter = UntilStoppedRewriter()
    actions = app.Actions(_services(rewriter, tmp_path), export_dir=str(tmp_path))
    assert isinstance(_cancelled(actions.api_rewrite(*ONE[0]), rewriter.work.began), asyncio.CancelledError)
    assert rewriter.work.ended and not rewriter.work.rest


def test_a_cancelled_chat_request_is_the_api_clients_stop(tmp_path):
    # /chat's turn takes the session's stop: the request's cancel stops it
    # as the Stop button does, and it is not added.
    import asyncio
    import app

    rewriter, session = UntilStoppedRewriter(), S.Session()
    actions = app.Actions(_services(rewriter, tmp_path), export_dir=str(tmp_path))
    assert isinstance(_cancelled(actions.api_chat("Who was Ada Lovelace?", session), rewriter.work.began),
                      asyncio.CancelledError)
    assert rewriter.work.ended and not rewriter.work.rest
    assert session.turns == [] and actions.running == 0


def test_a_chat_request_cancelled_before_its_turn_took_the_sessions_signal_adds_no_turn(tmp_path, monkeypatch):
    # The cancel stopped the session's turns (swapping in a fresh signal)
    # before the turn took the signal: it took the fresh one, ran on, and
    # was added after the client's cancel.
    import asyncio
    import app

    class Rewriter:
        def rewrite(self, question, history, stop=NO_STOP):
            stop.check()
            return Rewrite(question)

    session = S.Session()
    actions = app.Actions(_services(Rewriter(), tmp_path), export_dir=str(tmp_path))
    entered, cancelled, go = threading.Event(), threading.Event(), threading.Event()
    ask_json = S.ask_json

    def held_ask_json(services, session, question, **settings):  # its thread not yet at the turn's signal
        entered.set()
        settings["cancelled"].on_set(cancelled.set)
        if not go.wait(GUARD):
            raise TimeoutError("the test never let the turn begin")
        return ask_json(services, session, question, **settings)

    monkeypatch.setattr(S, "ask_json", held_ask_json)

    async def main():
        task = asyncio.ensure_future(actions.api_chat("Who was Ada Lovelace?", session))
        run = asyncio.get_running_loop().run_in_executor
        assert await run(None, entered.wait, GUARD), "the request's work never began"
        task.cancel()
        assert await run(None, cancelled.wait, GUARD), "the cancel never reached the request's stop"
        go.set()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert session.turns == [] and session.asking == 0


def test_a_chat_requests_cancel_after_its_turn_ended_stops_nothing_after_it(tmp_path):
    # The request's stop hooked to the session's only while its turn runs.
    class Rewriter:
        def rewrite(self, question, history, stop=NO_STOP):
            return Rewrite(question)

    session, cancelled = S.Session(), StopSignal()
    services = _services(Rewriter(), tmp_path)
    S.ask_json(services, session, "Who was Ada Lovelace?", cancelled=cancelled)
    signal = session.stop_signal
    cancelled.set()
    assert not signal.is_set() and session.stop_signal is signal and len(session.turns) == 1


def test_a_generative_readers_selector_stopped_during_its_encoding_encodes_no_batch_after_it(tiny_gpt2):
    # The generative reader called its selector (the sentence reader) with
    # no stop: a Stop during its sentences' encoding ran every batch.
    from assistant.encoders import MiniLMEncoder
    from assistant.readers import GenerativeReader, SentenceReader

    stop = StopSignal()
    model = Batches(at=lambda number: number == 1 and stop.set())
    reader = GenerativeReader(SentenceReader(MiniLMEncoder(model, batch_size=2)), *tiny_gpt2)
    with pytest.raises(Stopped):
        reader.read("What did Ada Lovelace write?", [PASSAGE], stop)
    assert len(model.calls) == 1


def test_a_bug_the_work_raises_after_its_cancel_is_reported_to_the_loop():
    # Only its Stopped is the cancel's: a KeyError raised after it was
    # dropped with the request, logged nowhere.
    import asyncio
    from assistant.kernel import stopped_when_cancelled

    began, stopped, reported = threading.Event(), threading.Event(), []

    def work(stop):
        began.set()
        stop.on_set(stopped.set)
        if not stopped.wait(GUARD):
            raise TimeoutError("the cancel never set the work's stop")
        return {}["a bug"]

    assert isinstance(_cancelled(_reported_to(reported, stopped_when_cancelled(work)), began), asyncio.CancelledError)
    assert len(reported) == 1 and isinstance(reported[0], KeyError)
    # The work's Stopped, the cancel's own end, is not reported.
    reported.clear()
    work = UntilStopped()
    assert isinstance(_cancelled(_reported_to(reported, stopped_when_cancelled(work)), work.began), asyncio.CancelledError)
    assert work.ended and not work.rest and reported == []


async def _reported_to(reported: list, coroutine):
    import asyncio

    asyncio.get_running_loop().set_exception_handler(lambda loop, context: reported.append(context["exception"]))
    return await coroutine


def test_a_second_cancel_leaves_the_request_waiting_for_its_works_end():
    # Gradio's second /cancel, or its queue's shutdown, cancels the task
    # again while it waits for the work: the wait ended, and the request's
    # slot went to the next one while the model still ran.
    import asyncio
    from assistant.kernel import stopped_when_cancelled

    work, ended_first = UntilStopped(), []
    work.may_end.clear()

    async def main():
        task = asyncio.ensure_future(stopped_when_cancelled(work))
        task.add_done_callback(lambda task: ended_first.append(work.ended))
        run = asyncio.get_running_loop().run_in_executor
        assert await run(None, work.began.wait, GUARD), "the work never began"
        task.cancel()
        assert await run(None, work.stopped.wait, GUARD), "the cancel never set the work's stop"
        task.cancel()
        await asyncio.sleep(0)  # the second cancel lands while the work is held
        await asyncio.sleep(0)
        work.may_end.set()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert ended_first == [True] and not work.rest


def test_the_work_runs_in_the_context_of_the_task_that_awaits_it():
    # As anyio's run_sync runs a sync handler: a context variable the
    # request set (a framework's, a tracer's) is the work's too.
    import asyncio
    import contextvars
    from assistant.kernel import stopped_when_cancelled

    request = contextvars.ContextVar("request", default="none")

    async def main():
        request.set("this request")
        return await stopped_when_cancelled(lambda stop: request.get())

    assert asyncio.run(main()) == "this request"


# ---------------------------------------------------------------- a client whose connection closed


def _recording(made: list):
    """The app's handlers, made as app.Actions (and appended to ``made``),
    which keep the session of each page that ran a turn (``sessions``, by
    its session hash) and of each /chat request (``sessions["chat"]``)."""
    import app

    class Recording(app.Actions):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.sessions = {}

        def _turn_client(self, session, request):
            self.sessions[request.session_hash] = session
            return super()._turn_client(session, request)

        async def api_chat(self, question, session):
            self.sessions["chat"] = session
            return await super().api_chat(question, session)

    def make(services, export_dir):
        made.append(Recording(services, export_dir))
        return made[-1]

    return make


@pytest.fixture
def gone_app(tmp_path):
    """The served app over a rewriter that waits for its stop; yields
    (url, demo, actions, rewriter's work)."""
    from conftest import serve_app

    rewriter, made = UntilStoppedRewriter(), []
    url, _, demo = serve_app(_services(rewriter, tmp_path).assistant, tmp_path, actions=_recording(made))
    try:
        yield url, demo, made[0], rewriter.work
    finally:
        rewriter.work.stopped.set()  # a work never stopped ends at once
        demo.close()


def _fn_index(demo, name: str) -> int:
    """The index of the event whose handler is called ``name``."""
    return next(index for index, fn in demo.fns.items() if getattr(fn.fn, "__name__", "") == name)


def _closed_mid_event(url, demo, name: str, data: list, work: UntilStopped, page: str, before=None) -> None:
    """A client joins ``name``'s event with ``data`` (its page ``page``),
    opens its event stream, and closes its connection once the event's work
    began. ``before(http)``: what it sends first."""
    import httpx

    with httpx.Client(timeout=GUARD) as http:
        if before is not None:
            before(http)
        joined = http.post(url + "gradio_api/queue/join",
                           json={"data": data, "fn_index": _fn_index(demo, name), "session_hash": page})
        assert joined.status_code == 200, joined.text
        with http.stream("GET", url + "gradio_api/queue/data", params={"session_hash": page}) as stream:
            # Kept: a line iterator let go of closes the connection at once,
            # perhaps before the handler ran at all.
            lines = stream.iter_lines()
            assert any('"process_starts"' in line for line in lines), "the event never began"
            assert work.began.wait(GUARD), "the event's work never began"
        # Left unread, the stream's connection is closed, not kept for another request.


def _take(http, url: str, demo, page: str, question: str) -> None:
    """``question`` put in line for ``page`` (a direct call), as the page sends it before its run."""
    sent = http.post(url + "gradio_api/run/predict",
                     json={"data": [question, None], "fn_index": _fn_index(demo, "take"), "session_hash": page})
    assert sent.status_code == 200, sent.text


def _stopped_and_not_added(actions, work: UntilStopped, page: str) -> None:
    """The turn of ``page``, whose connections closed, was stopped, its run ended, and nothing added."""
    assert work.stopped.wait(GUARD), "the closed page's turn was never stopped"
    assert _until(lambda: work.ended and actions.running == 0), "the stopped turn's run never ended"
    session = actions.sessions[page]
    assert not work.rest
    assert session.turns == [] and session.asking == 0 and session.running == 0 and not session.waiting


def _until(condition) -> bool:
    """Whether ``condition()`` held within GUARD seconds (asked every 10 ms)."""
    import time

    deadline = time.monotonic() + GUARD
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_a_chat_turn_whose_page_closed_its_connection_is_stopped_and_not_added(gone_app):
    # Gradio marks a closed client's events dead (their views go nowhere)
    # but ran the turn to its end, holding its worker under a crowd.
    url, demo, actions, work = gone_app
    page = "closed-tab"
    _closed_mid_event(url, demo, "ask", [None, None], work, page,
                      before=lambda http: _take(http, url, demo, page, "Who was Ada Lovelace?"))
    _stopped_and_not_added(actions, work, page)


def test_a_chat_turn_whose_page_closed_before_it_opened_its_event_stream_is_stopped(gone_app):
    # The run is asked as soon as it joins the queue; the page opens its
    # event stream once the join is answered. A tab closed between had
    # only its heartbeat's connection to close, and its turn ran on.
    import httpx

    url, demo, actions, work = gone_app
    page = "closed-early"
    with httpx.Client(timeout=GUARD) as http, http.stream("GET", url + f"gradio_api/heartbeat/{page}") as heartbeat:
        alive = heartbeat.iter_lines()  # kept: let go of, it closes the connection at once
        assert "ALIVE" in next(alive)
        _take(http, url, demo, page, "Who was Ada Lovelace?")
        joined = http.post(url + "gradio_api/queue/join",
                           json={"data": [None, None], "fn_index": _fn_index(demo, "ask"), "session_hash": page})
        assert joined.status_code == 200, joined.text
        assert work.began.wait(GUARD), "the turn never began"
    _stopped_and_not_added(actions, work, page)


def test_a_chat_request_whose_client_closed_its_connection_is_stopped(gone_app):
    url, demo, actions, work = gone_app
    _closed_mid_event(url, demo, "api_chat", ["Who was Ada Lovelace?", None], work, "killed-script")
    assert work.stopped.wait(GUARD), "the closed client's /chat turn was never stopped"
    assert _until(lambda: work.ended and actions.running == 0), "the stopped request never ended"
    session = actions.sessions["chat"]
    assert not work.rest and session.turns == [] and session.asking == 0


def test_a_rewrite_request_whose_client_closed_its_connection_is_stopped(gone_app):
    url, demo, _, work = gone_app
    _closed_mid_event(url, demo, "api_rewrite", ["What did she write?", HISTORY], work, "dropped-network")
    assert work.stopped.wait(GUARD), "the closed client's /rewrite was never stopped"
    assert _until(lambda: work.ended), "the stopped rewrite never ended"
    assert not work.rest


def test_a_rewrite_called_as_curl_calls_it_whose_client_closed_its_connection_is_stopped(gone_app):
    # Gradio's two-request protocol (POST /call/rewrite, then GET its
    # event's stream), with no session of the client's own.
    import httpx

    url, _, _, work = gone_app
    with httpx.Client(timeout=GUARD) as http:
        posted = http.post(url + "gradio_api/call/rewrite", json={"data": ["What did she write?", HISTORY]})
        assert posted.status_code == 200, posted.text
        with http.stream("GET", url + f"gradio_api/call/rewrite/{posted.json()['event_id']}"):
            assert work.began.wait(GUARD), "the rewrite never began"
    assert work.stopped.wait(GUARD), "the closed client's /call/rewrite was never stopped"
    assert _until(lambda: work.ended), "the stopped rewrite never ended"
    assert not work.rest


def test_a_client_that_stays_connected_gets_its_answer(gone_app):
    # Nothing stops the work of a client still listening.
    url, demo, actions, work = gone_app
    work.stopped.set()  # the work goes on at once, unstopped
    from gradio_client import Client

    reply = Client(url, verbose=False).predict("Who was Ada Lovelace?", api_name="/chat")
    assert reply["rewrite"] == "done" and work.rest


def test_a_question_waiting_when_its_pages_connection_closed_is_dropped(tmp_path):
    # The run that would ask it was dropped from the queue with the page's
    # events: a page that came back (a network drop) had it asked before
    # its next question, though it was told it failed.
    from types import SimpleNamespace
    import app

    session = S.Session()
    actions = app.Actions(_services(UntilStoppedRewriter(), tmp_path), export_dir=str(tmp_path))
    actions.take("Who was Ada Lovelace?", session, SimpleNamespace(session_hash="dropped", client=None, headers={}))
    actions.gone("another page")  # nothing of this one's
    assert list(session.waiting) == ["Who was Ada Lovelace?"]
    actions.gone("dropped")
    assert not session.waiting and session.turns == []
    # Nothing was running: no Stop counted (a stream of the session's would
    # have ended at its next view), no status said to a page that is gone.
    assert session.stops == 0 and session.stopped == ""


def test_a_page_gone_mid_turn_stops_it_as_stop_does_with_no_status(tmp_path):
    from types import SimpleNamespace
    import app

    session, page = S.Session(), SimpleNamespace(session_hash="gone", client=None, headers={})
    actions = app.Actions(_services(UntilStoppedRewriter(), tmp_path), export_dir=str(tmp_path))
    actions.take("Who was Ada Lovelace?", session, page)
    signal = session.stop_signal
    session.running = 1  # a stream under way (Actions._turn)
    actions.gone("gone")
    assert signal.is_set() and session.stops == 1 and not session.waiting and session.stopped == ""


def test_an_event_whose_stream_closed_before_its_task_began_gives_its_worker_back(gone_app):
    # The close handled in the loop's pass that made the event's task, before
    # its first step: a task cancelled then never ran process_events, whose
    # finally gives the worker back (active_jobs, current_concurrency): each
    # such close took one worker from every client to come, till a restart.
    import httpx

    url, demo, _, work = gone_app
    queue, closed = demo._queue, []

    class Tasks(set):
        def add(self, task):
            super().add(task)
            if not closed:  # the first event's task: the closing client's
                closed.append(task)
                cleaning = queue.clean_events(session_hash="closed-at-once")
                with pytest.raises(StopIteration):  # ended with no await: before the task's first step
                    cleaning.send(None)

    queue._asyncio_tasks = Tasks()
    with httpx.Client(timeout=GUARD) as http:
        joined = http.post(url + "gradio_api/queue/join",
                           json={"data": ["What did she write?", HISTORY],
                                 "fn_index": _fn_index(demo, "api_rewrite"), "session_hash": "closed-at-once"})
        assert joined.status_code == 200, joined.text
    assert _until(lambda: closed and closed[0].done()), "the closed client's event's task never ended"
    assert _until(lambda: all(job is None for job in queue.active_jobs)
                  and all(line.current_concurrency == 0 for line in queue.event_queue_per_concurrency_id.values())), \
        f"the closed client's worker was never given back: {queue.active_jobs}"
    assert not work.began.is_set()  # its events dead when its task began: not run

    work.stopped.set()  # the next client's work goes on at once
    from gradio_client import Client

    answer = Client(url, verbose=False).submit("What did she write?", HISTORY, api_name="/rewrite")
    assert answer.result(timeout=GUARD)["rewrite"] == "done"


def test_a_gradio_without_what_stops_a_gone_clients_events_is_refused_at_start(monkeypatch):
    # server.stop_when_gone wraps the queue's cleanup of a closed stream's
    # events and cancels their tasks by name: no public API, so a Gradio
    # that renamed them would have let a gone client's turns run on unsaid.
    from gradio import queueing
    import server
    from assistant.kernel import DependencyError

    monkeypatch.delattr(queueing.Queue, "clean_events")
    with pytest.raises(DependencyError) as refused:
        server.check_gradio()
    assert "Blocks._queue.clean_events" in str(refused.value) and "stop_when_gone" in str(refused.value)


def test_a_gradio_without_what_tells_a_gone_pages_stream_its_events_ended_is_refused_at_start(monkeypatch):
    # stop_when_gone puts an end message for each event of a gone page into
    # its stream's messages, and keeps each event known till it is sent: a
    # Gradio without them would have failed at a page's close, its stream
    # waiting forever.
    import gradio as gr
    from gradio import server_messages
    import server
    from assistant.kernel import DependencyError

    demo = gr.Blocks().queue()
    del demo._queue.pending_event_ids_session
    monkeypatch.delattr(server_messages, "ProcessCompletedMessage")
    with pytest.raises(DependencyError) as refused:
        server.check_gradio(demo)
    said = str(refused.value)
    assert "Blocks._queue.pending_event_ids_session" in said and "ProcessCompletedMessage(output=" in said


def _named_otherwise(task, session_hash, fn_index, event_id, batch):
    if not batch:
        task.set_name(f"{event_id}<gradio-sep>{session_hash}_{fn_index}")


def _named_with_no_batch(task, session_hash, fn_index, event_id):
    task.set_name(f"{session_hash}_{fn_index}<gradio-sep>{event_id}")


@pytest.mark.parametrize("set_task_name", [_named_otherwise, _named_with_no_batch])
def test_a_gradio_naming_its_events_tasks_otherwise_is_refused_at_start(monkeypatch, set_task_name):
    # stop_when_gone finds a gone client's tasks by how their names end: a
    # Gradio that named them otherwise (or whose set_task_name took other
    # arguments) would have cancelled none, its turns running on unsaid.
    from gradio import queueing
    import server
    from assistant.kernel import DependencyError

    server.check_gradio()  # this Gradio's names are found
    monkeypatch.setattr(queueing, "set_task_name", set_task_name)
    with pytest.raises(DependencyError) as refused:
        server.check_gradio()
    said = str(refused.value)
    assert "set_task_name" in said and "'<gradio-sep>{event_id}'" in said and "stop_when_gone" in said
    assert "pip install gradio==" in said
