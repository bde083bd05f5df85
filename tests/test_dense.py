"""Rescoring BM25's hits with a sentence encoder, and the passage vectors it reads."""

from __future__ import annotations

import logging
import os
import re
import threading
from pathlib import Path

import numpy as np
import pytest

from assistant import Assistant
from assistant.kernel import ConfigError, IndexDamagedError, Passage, RetrieverConfig, Rewrite, from_env
from assistant.pipeline import Assistant as PipelineAssistant
from assistant.readers import SentenceReader
from assistant.retrieval import (
    VECTORS_FILE,
    BM25Retriever,
    DeferredRescorer,
    DenseRescorer,
    build_index,
    passage_vectors,
)
from rewriting import OriginalRewriter


class Words:
    """A toy encoder, one axis per word it knows; it counts its calls."""

    axes = ("cat", "dog", "car", "ada", "byron", "paris", "python", "babbage", "mathematician")

    def __init__(self):
        self.texts: list[str] = []
        self.calls = 0

    def encode(self, texts):
        self.texts += list(texts)
        self.calls += 1
        rows = np.array([[t.lower().count(w) for w in self.axes] for t in texts], dtype=np.float64)
        return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-9)


def _rescorer(weight, texts=("car car", "dog", "cat")):
    encoder = Words()
    ids = ["a", "b", "c"][: len(texts)]
    return DenseRescorer(encoder, ids, encoder.encode(list(texts)), weight), encoder


HITS = [Passage("a", "car car", 3.0, "A"), Passage("b", "dog", 2.0, "B"), Passage("c", "cat", 1.0, "C")]


def test_the_mixed_score_orders_the_hits_and_travels_with_them():
    rescorer, _ = _rescorer(0.9)
    found = rescorer.rescore("my dog", HITS, 3)
    # b: 0.1 * 0.5 + 0.9 * 1 = 0.95; a: 0.1 * 1 + 0.9 * 0 = 0.1; c: 0 + 0 = 0.
    assert [p.id for p in found] == ["b", "a", "c"]
    assert [p.score for p in found] == pytest.approx([0.95, 0.1, 0.0])
    assert (found[0].text, found[0].title) == ("dog", "B")
    # A small weight leaves BM25's order: a: 0.9 * 1; b: 0.9 * 0.5 + 0.1 * 1 = 0.55.
    assert [p.id for p in _rescorer(0.1)[0].rescore("my dog", HITS, 3)] == ["a", "b", "c"]


def test_k_weight_zero_and_no_hits():
    rescorer, encoder = _rescorer(0.9)
    assert [p.id for p in rescorer.rescore("my dog", HITS, 1)] == ["b"]
    assert rescorer.rescore("my dog", [], 5) == []
    off, encoder = _rescorer(0.0)
    encoder.texts.clear()
    assert off.rescore("my dog", HITS, 2) == HITS[:2]
    assert encoder.texts == []  # nothing encoded when the encoder has no say


def test_equal_bm25_scores_and_ties_keep_bm25_order():
    rescorer, _ = _rescorer(0.5, texts=("dog", "dog", "cat"))
    level = [Passage(p.id, p.text, 1.0) for p in HITS]
    # All BM25 scores equal: each scales to 1; a and b tie on the cosine too.
    assert [p.id for p in rescorer.rescore("dog", level, 3)] == ["a", "b", "c"]


def test_hits_the_vectors_lack_are_encoded_on_the_spot_in_one_call():
    rescorer, encoder = _rescorer(1.0, texts=("car",))
    strangers = [Passage("z", "a dog and a dog", 0.5, title="Dogs"), Passage("y", "a cat", 0.4)]
    encoder.texts.clear()
    encoder.calls = 0
    assert [p.id for p in rescorer.rescore("dog", [HITS[0], *strangers], 3)] == ["z", "a", "y"]
    assert encoder.texts == ["dog", "Dogs a dog and a dog", "a cat"]
    assert encoder.calls == 2  # the question, then every stranger together


def test_the_rewriters_other_candidates_join_the_query_vector_in_one_call():
    rescorer, encoder = _rescorer(0.9)
    assert [p.id for p in rescorer.rescore("my car", HITS, 3)] == ["a", "b", "c"]
    encoder.texts.clear()
    encoder.calls = 0
    # Duplicates and the rewrite itself are dropped: the query is car + 3 * dog,
    # made unit. b: 0.1 * 0.5 + 0.9 * 3 / sqrt(10); a: 0.1 + 0.9 / sqrt(10).
    found = rescorer.rescore("my car", HITS, 3, ("my dog", "my dog", "my car"))
    assert [p.id for p in found] == ["b", "a", "c"]
    assert [p.score for p in found] == pytest.approx([0.05 + 2.7 / 10 ** 0.5, 0.1 + 0.9 / 10 ** 0.5, 0.0])
    assert encoder.texts == ["my car", "my dog"] and encoder.calls == 1
    # At the same weight as the rewrite (car + dog), the passage BM25 put first keeps its place.
    equal = DenseRescorer(encoder, ["a", "b", "c"], encoder.encode(["car car", "dog", "cat"]), 0.9, alternatives_weight=1)
    assert [p.id for p in equal.rescore("my car", HITS, 3, ("my dog",))] == ["a", "b", "c"]
    off = DenseRescorer(encoder, ["a", "b", "c"], encoder.encode(["car car", "dog", "cat"]), 0.9, alternatives_weight=0)
    encoder.texts.clear()
    assert [p.id for p in off.rescore("my car", HITS, 3, ("my dog",))] == ["a", "b", "c"]
    assert encoder.texts == ["my car"]  # off: the alternatives are not even encoded
    with pytest.raises(ConfigError, match="alternatives' weight must be 0 .off. or more"):
        DenseRescorer(encoder, [], np.zeros((0, 0)), 0.9, alternatives_weight=-1)


def test_a_weight_outside_zero_to_one_is_refused(monkeypatch):
    with pytest.raises(ConfigError, match="from 0 to 1"):
        _rescorer(1.5)
    monkeypatch.setenv("CONVQA_DENSE_WEIGHT", "2")
    with pytest.raises(ConfigError, match=r"dense_weight must be a number from 0 to 1, got .* \(from its command-line flag, or CONVQA_DENSE_WEIGHT\)"):
        from_env(RetrieverConfig())
    with pytest.raises(ConfigError, match="rescore_depth"):
        RetrieverConfig(rescore_depth=0)


@pytest.mark.parametrize("variable, text", [("CONVQA_DENSE_WEIGHT", "nan"), ("CONVQA_BM25_K1", "inf"), ("CONVQA_BM25_B", "NaN")])
def test_a_setting_that_is_no_finite_number_is_refused(monkeypatch, variable, text):
    # float("nan") parses, and NaN is neither below 0 nor above 1.
    monkeypatch.setenv(variable, text)
    field = variable.removeprefix("CONVQA_").lower()
    with pytest.raises(ConfigError, match=rf"^{field} must be a number .*, got (nan|inf) \(from its command-line flag, or {variable}\)$"):
        from_env(RetrieverConfig())


@pytest.fixture
def own_index(tiny_collection, tmp_path):
    from assistant.retrieval import read_collection

    build_index(read_collection(tiny_collection), tmp_path / "index", progress=False)
    return BM25Retriever.from_index(tmp_path / "index")


def test_vectors_are_encoded_once_and_kept_with_the_index(own_index, capsys):
    encoder = Words()
    ids, vectors = passage_vectors(own_index, encoder, progress=False)
    assert sorted(ids) == sorted(p.id for p in own_index.passages()) and len(ids) == own_index.size == 5
    assert vectors.dtype == np.float16 and vectors.shape == (5, len(Words.axes))
    # The title is encoded in front of the passage, as the index ranks it.
    assert any(t.startswith("Ada Lovelace Ada Lovelace was") for t in encoder.texts)
    assert "Encoding the 5 passages" in capsys.readouterr().err
    assert (own_index.index_dir and os.path.exists(os.path.join(own_index.index_dir, VECTORS_FILE)))
    again = Words()
    ids2, vectors2 = passage_vectors(own_index, again, progress=False)
    assert again.texts == [] and ids2 == ids and np.array_equal(vectors2, vectors)


class _OnePassage:
    """An index of one passage: what passage_vectors reads of a BM25Retriever."""

    size = 1

    def __init__(self, index_dir):
        self.index_dir = str(index_dir)

    def passages(self):
        return iter([Passage("p1", "Bees make honey.", 0.0, title="Bees")])


def test_one_passage_is_encoded_in_the_singular(tmp_path, capsys):
    ids, _ = passage_vectors(_OnePassage(tmp_path), Words(), progress=False)
    assert ids == ["p1"]
    assert f"Encoding the 1 passage of {tmp_path} " in capsys.readouterr().err  # not "the 1 passages"


def test_vectors_of_another_index_are_encoded_again(own_index, capsys):
    path = os.path.join(own_index.index_dir, VECTORS_FILE)
    np.savez(path, ids=np.array(["x"]), vectors=np.zeros((1, 2), dtype=np.float16))
    encoder = Words()
    ids, _ = passage_vectors(own_index, encoder, progress=False)
    assert len(ids) == 5 and encoder.texts
    assert "of another index; encoding them again" in capsys.readouterr().err


def test_an_unreadable_vectors_file_names_the_fix(own_index):
    with open(os.path.join(own_index.index_dir, VECTORS_FILE), "wb") as out:
        out.write(b"not a numpy file")
    with pytest.raises(IndexDamagedError, match="Delete that file"):
        passage_vectors(own_index, Words(), progress=False)


def test_a_read_only_index_keeps_no_vectors_and_says_so(own_index, capsys, monkeypatch):
    # A folder that refuses a new file, as a read-only one does for any user
    # but root (who runs CI): the staging file cannot be made.
    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("tempfile.mkstemp", refuse)
    ids, vectors = passage_vectors(own_index, Words(), progress=False)
    assert len(ids) == len(vectors) == 5 and not os.path.exists(os.path.join(own_index.index_dir, VECTORS_FILE))
    assert "Could not keep the passage vectors" in capsys.readouterr().err


class _Recording:
    def __init__(self, retriever):
        self.retriever, self.calls = retriever, []

    def search(self, query, k):
        self.calls.append((query, k))
        return self.retriever.search(query, k)


class _Spy:
    def __init__(self):
        self.calls = []

    def rescore(self, question, passages, k, alternatives=()):
        self.calls.append((question, [p.id for p in passages], k, alternatives))
        return list(reversed(passages))[:k]


def test_the_pipeline_searches_deep_and_rescores_for_the_rewrite_not_the_query(retriever, minilm):
    search, spy = _Recording(retriever), _Spy()
    config = RetrieverConfig(k=1, rescore_depth=4, expansion_repeats=3)
    assistant = PipelineAssistant(OriginalRewriter(), search, SentenceReader(minilm), retriever_config=config, rescorer=spy)
    turn = assistant.answer("Who was her father?", Rewrite("Who was Ada Lovelace's father?"), previous="Who was Ada Lovelace?")
    (query, depth), = search.calls
    assert depth == 4 and query.startswith("Who was Ada Lovelace's father? " * 2)
    (question, ids, k, others), = spy.calls
    # Every hit of the deep search reaches the rescorer, which keeps k.
    assert question == "Who was Ada Lovelace's father?" and k == 1 and ids == ["ada", "babbage"] and others == ()
    assert [p.id for p in turn.sources] == ["babbage"]
    # The rewriter's other candidates reach the rescorer too.
    assistant.answer("Who was her father?", Rewrite("Who was her father?", alternatives=("Who was Byron's daughter's father?",)))
    assert spy.calls[-1][0] == "Who was her father?" and spy.calls[-1][3] == ("Who was Byron's daughter's father?",)


def test_from_config_builds_the_rescorer_only_with_a_weight(tiny_index):
    from assistant.kernel import AssistantConfig

    off = Assistant.from_config(AssistantConfig(rewriter="original"), RetrieverConfig(index_dir=str(tiny_index), dense_weight=0.0))
    assert off.rescorer is None
    on = Assistant.from_config(AssistantConfig(rewriter="original"), RetrieverConfig(index_dir=str(tiny_index)))
    assert isinstance(on.rescorer, DenseRescorer) and on.rescorer.weight == RetrieverConfig().dense_weight
    # BM25 ranks Babbage first for these words ("who" matches his "engineer
    # who originated"); MiniLM places Byron's passage ("an English poet")
    # closest to the question.
    assert [p.id for p in off.retriever.search("Who was the English poet?", 3)] == ["babbage", "byron", "ada"]
    assert off.answer("q", Rewrite("Who was the English poet?")).sources[0].id == "babbage"
    assert on.answer("q", Rewrite("Who was the English poet?")).sources[0].id == "byron"


def test_minilm_bulk_form_runs_in_bf16_and_plain_encode_stays_float32(minilm, monkeypatch):
    from assistant.encoders import MiniLMEncoder

    texts = [f"Passage {i} about the numbat and its stripes." for i in range(64)]
    plain = MiniLMEncoder(minilm._model)
    exact = plain.encode(texts)
    fast = MiniLMEncoder(minilm._model, bf16=True).encode(texts)
    # Under bf16 autocast: not float32's values (they differ by ~1e-3, far
    # above another machine's float32 kernels), but the same directions.
    assert not np.allclose(fast, exact, rtol=0, atol=1e-5)
    assert np.min(np.sum(fast * exact, axis=1)) > 0.999
    # bulk() asks the kernel whether the CPU has native bfloat16.
    monkeypatch.setattr("assistant.encoders.native_bf16", lambda: False)
    assert np.allclose(minilm.bulk().encode(texts), exact, rtol=0, atol=1e-6)
    monkeypatch.setattr("assistant.encoders.native_bf16", lambda: True)
    assert np.allclose(minilm.bulk().encode(texts), fast, rtol=0, atol=1e-6)


def test_passage_vectors_use_the_encoders_bulk_form(own_index):
    class Bulky(Words):
        def bulk(self):
            self.bulked = Words()
            return self.bulked

    encoder = Bulky()
    passage_vectors(own_index, encoder, progress=False)
    assert encoder.texts == [] and len(encoder.bulked.texts) == 5


def test_a_deferred_rescorer_keeps_bm25s_order_until_its_rescorer_is_made():
    reported, release = threading.Event(), threading.Event()

    def make(report):
        report(2)
        reported.set()
        release.wait(30)
        return _rescorer(1.0)[0]

    deferred = DeferredRescorer(make, total=4)
    assert reported.wait(30)
    assert deferred.notice == ("Search by BM25 alone while the collection's passages are encoded for the rescoring "
                               "(50%); it starts by itself.")
    assert [p.id for p in deferred.rescore("dog", HITS, 2)] == ["a", "b"]
    release.set()
    assert deferred.wait(30) and deferred.notice == ""
    assert [p.id for p in deferred.rescore("dog", HITS, 2)] == ["b", "a"]
    # The other candidates are passed on: car + 3 * dog still puts b first, car alone a.
    assert [p.id for p in deferred.rescore("car", HITS, 2)] == ["a", "b"]
    assert [p.id for p in deferred.rescore("car", HITS, 2, ("dog",))] == ["b", "a"]


def test_a_deferred_rescorer_that_fails_keeps_bm25s_order_and_says_why(caplog):
    def make(report):
        raise OSError("No space left on device")

    with caplog.at_level(logging.ERROR):
        deferred = DeferredRescorer(make, total=4)
        assert deferred.wait(30)
    assert deferred.notice == "Search by BM25 alone: the passage vectors could not be made (No space left on device)."
    assert [p.id for p in deferred.rescore("dog", HITS, 3)] == ["a", "b", "c"]
    assert "Rescoring is off" in caplog.text


def test_a_bug_while_making_the_rescorer_is_raised_where_it_rescores_not_hidden(caplog):
    """A bug in making the vectors (here a TypeError) was shown as "Search by
    BM25 alone: ..." and the search went on as if the encoder were missing.
    It is raised by rescore, in the caller's thread, and the job's own
    thread (a worker that may serve other jobs) is left running."""
    def make(report):
        return DenseRescorer(None, ["a"], np.zeros((2, 3)), 0.5)  # 1 id for 2 vectors: a ValueError

    def buggy(report):
        return len(None)

    jobs = []
    for job, error in ((make, ValueError), (buggy, TypeError)):
        with caplog.at_level(logging.ERROR):
            deferred = DeferredRescorer(job, total=4, start=jobs.append)
            jobs[-1]()  # returns: the worker that runs it goes on
        assert deferred.wait(0)
        for _ in range(2):  # the same error at every call
            with pytest.raises(error) as caught:
                deferred.rescore("dog", HITS, 2)
            assert caught.value.__traceback__ is not None
        assert "A bug while making the passage vectors" in caplog.text
        caplog.clear()


def test_a_background_start_answers_at_once_and_rescores_once_encoded(own_index, monkeypatch):
    from assistant.encoders import new_minilm
    from assistant.kernel import AssistantConfig

    gate = threading.Event()

    class Gated:  # the worker's own MiniLM, whose passages wait for the gate
        def __init__(self):
            self.model = new_minilm().bulk()

        def encode(self, texts):
            assert gate.wait(60)
            return self.model.encode(texts)

    monkeypatch.setattr("assistant.pipeline.new_minilm", Gated)
    configs = AssistantConfig(rewriter="original"), RetrieverConfig(index_dir=str(own_index.index_dir))
    served = Assistant.from_config(*configs, background=True)
    assert isinstance(served.rescorer, DeferredRescorer)
    assert "while the collection's passages are encoded" in served.search_notice()
    # Meanwhile the hits keep BM25's order (see the from_config test above).
    assert served.answer("q", Rewrite("Who was the English poet?")).sources[0].id == "babbage"
    gate.set()
    assert served.rescorer.wait(120) and served.search_notice() == ""
    assert served.answer("q", Rewrite("Who was the English poet?")).sources[0].id == "byron"
    assert (Path(own_index.index_dir) / VECTORS_FILE).exists()
    # The next start reads the kept vectors before it serves: no thread.
    assert isinstance(Assistant.from_config(*configs, background=True).rescorer, DenseRescorer)


class _Index:
    """What BackgroundEncoding reads of a BM25Retriever: a folder, a size and
    the passages, each named after the index ("big 7")."""

    def __init__(self, folder: Path, name: str, size: int):
        folder.mkdir()
        self.index_dir, self.name, self.size = str(folder), name, size

    def passages(self):
        return (Passage(f"{self.name}{n}", f"{self.name} {n}", 0.0) for n in range(self.size))


class _Chunked:
    """A bulk encoder that encodes a chunk per permit the test gives, and
    says whose chunk it has started (the first word of its first text)."""

    def __init__(self):
        import queue

        self.permits = threading.Semaphore(0)
        self.started = queue.Queue()

    def encode(self, texts):
        self.started.put(texts[0].split()[0])
        assert self.permits.acquire(timeout=60), "the test gave no permit"
        return np.full((len(texts), len(Words.axes)), len(Words.axes) ** -0.5)


def test_a_small_upload_is_encoded_between_a_big_ones_chunks_and_says_it_waits(tmp_path):
    """The app's one encoding worker took its jobs first come, first served:
    a 1-passage upload waited for all of a 13,796-passage one (251 s, its
    notice at "0%"). Between chunks it now takes the job with the fewest
    passages left, and a job that waits says so."""
    from assistant.pipeline import BackgroundEncoding

    encoder = _Chunked()
    encoding = BackgroundEncoding(Words(), 1.0, bulk=encoder)
    big = encoding.rescorer(_Index(tmp_path / "big", "big", 3000), "X's passages")
    assert encoder.started.get(timeout=60) == "big"  # the worker is in the big job's first chunk
    assert big.notice == "Search by BM25 alone while X's passages are encoded for the rescoring (0%); it starts by itself."
    small = encoding.rescorer(_Index(tmp_path / "small", "small", 1), "your documents' passages")
    assert small.notice == ("Search by BM25 alone while your documents' passages wait their turn to be encoded "
                            "for the rescoring (queued behind 1 other source's passages); it starts by itself.")
    encoder.permits.release()  # the big job's first chunk ends: the small one goes next
    assert encoder.started.get(timeout=60) == "small"
    assert re.fullmatch(r"Search by BM25 alone while X's passages are encoded for the rescoring "
                        r"\(\d+%, paused behind 1 other source's passages\); it starts by itself\.", big.notice)
    encoder.permits.release()
    assert small.wait(60) and small.notice == ""
    assert [p.id for p in small.rescore("q", [Passage("small0", "small 0", 1.0)], 1)] == ["small0"]
    assert not big.wait(0)
    assert encoder.started.get(timeout=60) == "big"  # then the big one again, where it stopped
    encoder.permits.release(3000)
    assert big.wait(60) and big.notice == ""
    kept = np.load(tmp_path / "big" / VECTORS_FILE)
    assert list(kept["ids"]) == [f"big{n}" for n in range(3000)]  # each passage once, in order


def test_a_cancelled_job_on_the_shared_worker_ends_without_encoding_more(tmp_path):
    from assistant.pipeline import BackgroundEncoding

    encoder = _Chunked()
    encoding = BackgroundEncoding(Words(), 1.0, bulk=encoder)
    first = encoding.rescorer(_Index(tmp_path / "a", "a", 3000))
    assert encoder.started.get(timeout=60) == "a"
    queued = encoding.rescorer(_Index(tmp_path / "b", "b", 2000))
    assert "queued behind 1 other source's passages" in queued.notice
    queued.cancel()  # its session closed before its turn
    small = encoding.rescorer(_Index(tmp_path / "c", "c", 1))
    assert "queued behind 2 other sources' passages" in small.notice  # a, then b (not yet seen cancelled)
    encoder.permits.release()
    assert queued.wait(60)  # ended at the next turn, no chunk of it encoded
    assert encoder.started.get(timeout=60) == "c"
    first.cancel()  # while another job's chunk is encoded
    encoder.permits.release()
    assert small.wait(60) and small.notice == ""
    assert first.wait(60)
    for job in (first, queued):
        assert "could not be made" not in job.notice
        assert [p.id for p in job.rescore("q", HITS, 2)] == ["a", "b"]  # BM25's order
    assert encoder.started.empty()  # neither a nor b was encoded further
    assert not (tmp_path / "a" / VECTORS_FILE).exists() and not (tmp_path / "b" / VECTORS_FILE).exists()
