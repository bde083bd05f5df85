"""Tests for BatchingRewriter: concurrent calls are decoded as one batch by
one worker, and each caller gets exactly what the rewriter alone gives it.

Batches are made to close by filling (max_batch callers, a window far longer
than the test), so no assertion depends on timing.
"""

from __future__ import annotations

import threading

import pytest

from assistant.kernel import ConfigError, InvalidInputError, Rewrite
from rewriting import BatchingRewriter, CausalLMRewriter, OriginalRewriter, Rewriter, RewriterConfig
from conftest import concurrently

HISTORY = ["Who was Ada Lovelace?", "An English mathematician, the daughter of Lord Byron.", "What did she write?", "Notes on the Analytical Engine."]
# Different lengths (left padding in the batch) and one first turn (no model call).
ITEMS = [
    ("What did she write about?", HISTORY[:2]),
    ("Who was her father?", HISTORY),
    ("When?", ["Hi", ""]),
    ("Who was Charles Babbage?", []),
    ("Where did she live and what did she study at home?", HISTORY[:3]),
    ("Why?", HISTORY),
]
LONG = 60_000  # ms: batches close because they are full, never by the clock


class Recording:
    """Wraps a rewriter; records each rewrite_batch call's size and thread."""

    def __init__(self, rewriter):
        self.rewriter = rewriter
        self.calls: list[tuple[int, str]] = []

    def rewrite(self, question, history):
        return self.rewrite_batch([(question, history)])[0]

    def rewrite_batch(self, items):
        self.calls.append((len(items), threading.current_thread().name))
        return self.rewriter.rewrite_batch(items)


@pytest.fixture
def causal(tiny_gpt2):
    model, tok = tiny_gpt2  # float32 weights
    return CausalLMRewriter(model, tok, RewriterConfig(prompt_format="plain", max_new_tokens=8))


def test_concurrent_calls_are_one_batch_with_each_callers_own_result(causal):
    sequential = [causal.rewrite(q, h) for q, h in ITEMS]
    assert len({r.rejected for r in sequential if r.rejected}) >= 3  # the model's own outputs are in play
    recording = Recording(causal)
    with BatchingRewriter(recording, max_batch=len(ITEMS), window_ms=LONG) as batcher:
        assert isinstance(batcher, Rewriter)
        concurrent = concurrently(batcher.rewrite, ITEMS)
    assert concurrent == sequential
    assert recording.calls == [(len(ITEMS), "rewrite-batcher")]


def test_calls_beyond_max_batch_go_in_the_next_batch(causal):
    sequential = [causal.rewrite(q, h) for q, h in ITEMS]
    recording = Recording(causal)
    with BatchingRewriter(recording, max_batch=3, window_ms=LONG) as batcher:
        assert batcher.rewrite_batch(ITEMS) == sequential
    assert [size for size, _ in recording.calls] == [3, 3]


def test_a_lone_call_waits_out_the_window_and_matches_the_rewriter(causal):
    with BatchingRewriter(causal, max_batch=8, window_ms=1) as batcher:
        assert batcher.rewrite(*ITEMS[0]) == causal.rewrite(*ITEMS[0])


def test_a_bad_input_fails_only_its_own_caller(causal):
    items = [ITEMS[0], ("Why\ud800?", HISTORY), ITEMS[1]]
    with BatchingRewriter(causal, max_batch=3, window_ms=LONG) as batcher:
        results = concurrently(batcher.rewrite, items)
    assert isinstance(results[1], InvalidInputError)
    assert results[0] == causal.rewrite(*ITEMS[0]) and results[2] == causal.rewrite(*ITEMS[1])


class Looking:
    """A rewriter whose batches give "Who was her father?" a second look that
    holds the batch until ``release`` is set; the others' rewrites are final
    at once, and go to ``ready`` first when it is given."""

    def __init__(self):
        self.release = threading.Event()

    def rewrite(self, question, history):
        return self.rewrite_batch([(question, history)])[0]

    def rewrite_batch(self, items, ready=None):
        results = [Rewrite(question.upper()) for question, _ in items]
        searched = [index for index, (question, _) in enumerate(items) if "father" in question]
        for index in range(len(items)):
            if ready is not None and searched and index not in searched:
                ready(index, results[index])
        if searched:
            self.release.wait(30)
        return results


def test_a_caller_whose_rewrite_is_final_does_not_wait_for_the_batchs_second_look():
    rewriter = Looking()
    with BatchingRewriter(rewriter, max_batch=2, window_ms=LONG) as batcher:
        results = {}
        threads = [threading.Thread(target=lambda q=q: results.setdefault(q, batcher.rewrite(q, HISTORY)))
                   for q in ("Who was her father?", "What did she write?")]
        for thread in threads:
            thread.start()
        threads[1].join(30)
        assert results == {"What did she write?": Rewrite("WHAT DID SHE WRITE?")}  # while the other is searched
        assert threads[0].is_alive()
        rewriter.release.set()
        threads[0].join(30)
    assert results["Who was her father?"] == Rewrite("WHO WAS HER FATHER?")


def test_a_rewriter_without_rewrite_batch_is_called_per_question():
    with BatchingRewriter(OriginalRewriter(), max_batch=2, window_ms=LONG) as batcher:
        assert concurrently(batcher.rewrite, [(" Why? ", ["a", "b"]), ("Who?", [])]) == [Rewrite("Why?"), Rewrite("Who?")]


def test_closed_batcher_refuses_new_calls():
    batcher = BatchingRewriter(OriginalRewriter())
    batcher.close()
    with pytest.raises(RuntimeError, match="closed"):
        batcher.rewrite("Why?", [])


@pytest.mark.parametrize("settings", [{"max_batch": 0}, {"window_ms": -1}])
def test_settings_out_of_range_are_config_errors(settings):
    with pytest.raises(ConfigError):
        BatchingRewriter(OriginalRewriter(), **settings)
