"""The assistant: rewrite, retrieve, read. One method, no conversation state.

A server built with ``build_assistant(batching=True)`` shares its models
between the turns of different sessions: rewrites that arrive together are
decoded as one batch (:class:`rewriting.BatchingRewriter`) and the sentence
reader's encoder calls are encoded as one
(:class:`assistant.encoders.BatchingEncoder`), each on its own worker thread,
so many turns can be in flight without running many model calls at once.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import re
import threading
import time
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from rewriting import BatchingRewriter, asks_nothing, load_rewriter

from .encoders import BatchingEncoder, load_minilm, new_minilm
from .kernel import (
    NO_STOP,
    Answer,
    AssistantConfig,
    Conversation,
    InvalidInputError,
    Passage,
    ReaderConfig,
    RetrieverConfig,
    Rewrite,
    StopSignal,
    Turn,
    check_history,
    composed_text,
    load_configs,
    with_stop,
)
from .readers import Reader, SentenceReader, build_reader
from .retrieval import (
    BM25Retriever,
    DeferredRescorer,
    DenseRescorer,
    Rescorer,
    Retriever,
    ensure_index,
    expand_query,
    passage_vectors,
    stored_vectors,
)

__all__ = [
    "BATCH_SIZE", "BATCH_WINDOW_MS", "Assistant", "BackgroundEncoding", "build_assistant", "turn_to_json",
    "validate_question", "topic_rewrite",
]

# Calls merged into one model call by the batchers: the causal rewriter's own
# batch size (RewriterConfig.batch_size), one forward pass. Decoding steps
# cost about as much for 32 rows as for 8, so larger batches serve a crowd
# faster (BENCHMARKS.md §8).
BATCH_SIZE = 32
# How long the first waiting call waits for others: short next to one forward
# pass, so a lone visitor barely notices it.
BATCH_WINDOW_MS = 5.0


# Control characters (Unicode Cc) but newline and tab, with the spaces around
# them: a NUL or an escape pasted from a terminal is no part of a question, and
# the tokenisers cut the text at a NUL. Each run counts as one space, so the
# words on either side stay apart.
_CONTROLS = re.compile(r" *[\x00-\x08\x0b-\x1f\x7f-\x9f]+ *")
# A text this many times longer than the limit is refused before it is
# cleaned: cleaning looks at every character in Python, and a megabytes-long
# text sent through the app's events held the server's interpreter for
# seconds. No real question hides that many invisible characters.
_RAW_LIMIT_FACTOR = 4


def validate_question(question: str, max_chars: int) -> str:
    r"""The question as the stages take it, or InvalidInputError saying what
    is wrong with it. Control and format characters (Unicode Cc but newline
    and tab, and Cf: zero-width spaces and joiners, direction marks, soft
    hyphens) show nothing and are no part of it: a question with nothing
    visible is an empty one, and only what is visible counts towards
    ``max_chars``. Accents are composed and full-width letters and ligatures
    made plain (:func:`~assistant.kernel.composed_text`), so a question finds
    what its plainly typed twin finds. A question with no letter or digit (of
    any script) is refused too: punctuation or emoji alone ask nothing. Every entry point (the app, its API, the terminal chat,
    :meth:`Assistant.ask`) checks its questions here.

    >>> validate_question("  Who was Ada?  ", 100)
    'Who was Ada?'
    >>> validate_question("Who was Ada\u0000 Lovelace?\u200b", 100)
    'Who was Ada Lovelace?'
    >>> validate_question("Who was Kurt Go\u0308del?", 100) == "Who was Kurt G\u00f6del?"
    True
    >>> validate_question("\uff34\uff4f\uff4b\uff59\uff4f\u3000\ufb01nance", 100)
    'Tokyo finance'
    >>> validate_question("\u200b\u200b\u200b", 100)
    Traceback (most recent call last):
    ...
    assistant.kernel._errors.InvalidInputError: Please type a question.
    >>> validate_question("?!...,;", 100)
    Traceback (most recent call last):
    ...
    assistant.kernel._errors.InvalidInputError: '?!...,;' has no words in it; please type a question in words.
    """
    if question is not None and not isinstance(question, str):
        raise InvalidInputError(f"A question must be text, not {type(question).__name__}.")
    if question is not None and len(question) > _RAW_LIMIT_FACTOR * max_chars:
        raise InvalidInputError(_too_long(len(question), max_chars))
    question = "".join(c for c in _CONTROLS.sub(" ", question or "") if unicodedata.category(c) != "Cf").strip()
    try:
        question.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate: invalid UTF-8 read with errors="surrogateescape",
        # or a broken character sent through the API. No stage can take it.
        raise InvalidInputError(
            "The question contains bytes that are not valid text (invalid UTF-8); please type it again."
        ) from None
    question = composed_text(question)
    if not question:
        raise InvalidInputError("Please type a question.")
    if not any(unicodedata.category(c)[0] in "LN" for c in question):
        # Punctuation, symbols or emoji alone ask nothing: the rewriter would
        # make a question up out of the history and the search would run on it.
        # Any letter or digit, of any script, is text ("1984?", "居里夫人是谁？").
        raise InvalidInputError(
            f"{question[:20]!r} has no words in it; please type a question in words."
        )
    if len(question) > max_chars:
        raise InvalidInputError(_too_long(len(question), max_chars))
    return question


def _too_long(length: int, max_chars: int) -> str:
    return f"That message is {length:,} characters long; questions are limited to {max_chars:,}. Please ask a shorter question."


class BackgroundEncoding:
    """Makes :class:`~assistant.retrieval.DenseRescorer` values for indexes
    while the server answers: vectors kept in an index folder are read at
    once; the others are encoded on one worker thread, with one MiniLM of
    its own (the shared one serves the turns meanwhile, and a fast tokenizer
    cannot be used by two threads at once), so a crowd of uploads queues
    instead of loading a model and two cores each.

    The worker takes turns between the indexes waiting, a chunk of passages
    at a time: after each chunk it goes on with the index that has the
    fewest passages left (the first come among equals), so a small upload
    waits for one chunk of a big one, not for all of it, and a waiting
    index's notice says how many others go first. A cancelled job (its
    session closed) ends at the next turn without encoding more. A stream
    of small uploads keeps a big one waiting; its user waits minutes anyway."""

    def __init__(self, query_encoder, weight: float, bulk=None) -> None:
        self.query_encoder = query_encoder  # encodes each turn's rewrite
        self.weight = weight
        # Encodes the passages, only ever on the worker (None: a new MiniLM,
        # loaded there at the first job).
        self._bulk = bulk
        # The jobs not over, as (arrival, job), and the one the worker is on.
        self._jobs: list[tuple[int, object]] = []
        self._running: tuple[int, object] | None = None
        self._arrivals = itertools.count()
        self._changed = threading.Condition()
        # A daemon thread: it never holds the process open at exit, and an
        # encoding stopped midway keeps no file.
        threading.Thread(target=self._work, name="encode-passages", daemon=True).start()

    def rescorer(self, retriever: BM25Retriever, what: str = "the collection's passages") -> Rescorer:
        """The index's rescorer: ready when its vectors are kept, else a
        :class:`~assistant.retrieval.DeferredRescorer` queued on the worker."""
        stored = stored_vectors(retriever)
        if stored is not None:
            return DenseRescorer(self.query_encoder, *stored, self.weight)
        return DeferredRescorer(functools.partial(self._make, retriever), retriever.size, what=what,
                                start=self._start)

    def document_rescorer(self, passages: Sequence[Passage], what: str) -> Rescorer:
        """The rescorer of one document's passages (a session's pasted
        document or article), queued on the worker as an upload's index is
        (:meth:`DeferredRescorer.cancel <assistant.retrieval.DeferredRescorer.cancel>`
        when its source closes); BM25's order until they are encoded."""
        return DeferredRescorer(functools.partial(self._make_document, list(passages)), len(passages), what=what,
                                start=self._start)

    def _make_document(self, passages: list[Passage], report):
        # Encoded by the turns' encoder (no second MiniLM loaded for a
        # document), unless that is a bare model which the turns' threads
        # would use at once with this one (a batching one's worker alone
        # runs its model).
        bulk = None
        if not isinstance(self.query_encoder, BatchingEncoder):
            bulk = self._bulk = self._bulk or new_minilm()
        return DenseRescorer.document_encoding(passages, self.query_encoder, self.weight, bulk=bulk)

    def _start(self, job) -> None:
        with self._changed:
            self._jobs.append((next(self._arrivals), job))
            self._tell_waiting()
            self._changed.notify()

    @staticmethod
    def _turn(entry: tuple[int, object]) -> tuple[int, int]:
        arrival, job = entry
        return job.left, arrival

    def _tell_waiting(self) -> None:
        # Each job waiting is told how many go first: the one the worker is
        # on, then those ahead of it in turn.
        running = self._running if self._running in self._jobs else None
        ahead = 0 if running is None else 1
        for entry in sorted(self._jobs, key=self._turn):
            if entry is running:
                entry[1].behind(0)
            else:
                entry[1].behind(ahead)
                ahead += 1

    def _work(self) -> None:
        while True:
            with self._changed:
                while not self._jobs:
                    self._changed.wait()
                self._running = min(self._jobs, key=self._turn)
                self._tell_waiting()
            # One chunk of a DeferredRescorer's job: it keeps its own errors.
            if self._running[1].step():
                with self._changed:
                    self._jobs.remove(self._running)
                    self._running = None

    def _make(self, retriever: BM25Retriever, report):
        # A generator: the job encodes a chunk at each step (report is unused;
        # the job reports what each step yields).
        self._bulk = self._bulk or new_minilm()
        return DenseRescorer.encoding(retriever, self.query_encoder, self.weight, bulk=self._bulk)


@dataclass
class Assistant:
    """Answers a question in the context of a conversation the caller owns."""

    rewriter: object  # rewriting.Rewriter
    retriever: Retriever
    reader: Reader
    config: AssistantConfig = AssistantConfig()
    retriever_config: RetrieverConfig = RetrieverConfig()
    # Reorders the retriever's hits for the rewrite (None: the retriever's
    # order); from_config builds one when RetrieverConfig.dense_weight > 0.
    rescorer: Rescorer | None = None
    # Makes rescorers in the background (from_config with background=True):
    # the served index's at a first start, then those of sessions' uploads.
    encoding: BackgroundEncoding | None = None

    @classmethod
    def from_config(
        cls,
        config: AssistantConfig = AssistantConfig(),
        retriever_config: RetrieverConfig = RetrieverConfig(),
        reader_config: ReaderConfig = ReaderConfig(),
        *,
        batching: bool = False,
        background: bool = False,
    ) -> Assistant:
        """Load every stage once (index, encoders, language model).

        ``batching``: concurrent callers' rewrites and sentence encodings are
        batched (see the module docstring); for a server with many sessions.
        The generative reader's own language model is not batched.
        With ``dense_weight`` above 0, the index's passage vectors are
        encoded first when it has none (once per index, with progress);
        with ``background``, they are encoded on a worker thread while the
        assistant already answers with BM25's order
        (:class:`BackgroundEncoding`), as the app does; it then also makes
        the rescorers of sessions' uploads (:meth:`rescorer_for`).
        """

        retriever = BM25Retriever.from_index(retriever_config.index_dir, retriever_config)
        rewriter = load_rewriter(config.rewriter, candidates=config.rewrite_candidates,
                                 second_look=None if config.rewrite_second_look else 0,
                                 second_look_below=None if config.rewrite_second_look_unsure else 0.0)
        rescoring = retriever_config.dense_weight > 0
        minilm = None
        if batching:
            rewriter = BatchingRewriter(rewriter, BATCH_SIZE, BATCH_WINDOW_MS)
            if config.reader == "sentence" or rescoring:
                # One worker for every turn's MiniLM calls (the reader's
                # sentences, the rescorer's rewrite): calls that arrive
                # together are encoded as one, and the model's fast tokenizer
                # is not shared between threads ("Already borrowed",
                # huggingface/tokenizers#537).
                minilm = BatchingEncoder(load_minilm(), BATCH_SIZE, BATCH_WINDOW_MS)
        if minilm is not None and config.reader == "sentence":
            # Wrapped before the reader is built: its CachedEncoder then sends
            # only the unseen sentences to the batcher.
            reader = SentenceReader(minilm, reader_config)
        else:
            reader = build_reader(config.reader, reader_config)
        rescorer = encoding = None
        if rescoring:
            query_encoder, weight = minilm or load_minilm(), retriever_config.dense_weight
            if background:
                encoding = BackgroundEncoding(query_encoder, weight)
                rescorer = encoding.rescorer(retriever)
            else:
                rescorer = DenseRescorer(query_encoder, *passage_vectors(retriever, load_minilm()), weight)
        return cls(rewriter, retriever, reader, config, retriever_config, rescorer, encoding)

    def rescorer_for(self, retriever: BM25Retriever, what: str) -> Rescorer | None:
        """A rescorer for another index (a session's uploads; ``what`` names
        its passages in the notice), made in the background as the served
        index's was; None where this assistant makes none (BM25's order)."""
        return None if self.encoding is None else self.encoding.rescorer(retriever, what)

    def document_rescorer(self, passages: Sequence[Passage], what: str) -> Rescorer | None:
        """A rescorer of one document's BM25 hits (a
        :class:`~assistant.retrieval.ChunkRetriever` over ``passages``:
        :meth:`DenseRescorer.for_document <assistant.retrieval.DenseRescorer.for_document>`,
        as the evaluation's known context rescores), its passages encoded in
        the background (:meth:`BackgroundEncoding.document_rescorer`); None
        where this assistant makes none (BM25's order)."""
        return None if self.encoding is None else self.encoding.document_rescorer(passages, what)

    def search_notice(self) -> str:
        """"" when the search runs as configured; else what it lacks for now
        (a :class:`~assistant.retrieval.DeferredRescorer` still encoding, or failed)."""
        return self.rescorer.notice if isinstance(self.rescorer, DeferredRescorer) else ""

    def history_window(self, history: Sequence[str]) -> list[str]:
        """The last ``history_turns`` question/answer pairs of ``history``."""
        keep = 2 * self.config.history_turns
        return check_history(history)[-keep:] if keep else []

    def rewrite(self, question: str, history: Sequence[str], stop: StopSignal = NO_STOP) -> Rewrite:
        """The self-contained form of a (validated) ``question``;
        :class:`~assistant.kernel.Stopped` once ``stop`` is set: before the
        rewriter runs, within one that takes a ``stop`` (the causal LM's
        ends at its next decoding step), and after it (any other ends at
        its end)."""
        stop.check()
        rewritten = with_stop(self.rewriter.rewrite, stop)(question, self.history_window(history))
        stop.check()
        return _checked(rewritten, Rewrite, self.rewriter, "rewrite")

    def answer(self, question: str, rewrite: Rewrite, rewrite_ms: float = 0.0, previous: str = "",
               stop: StopSignal = NO_STOP) -> Turn:
        """Retrieve and read for a rewrite already decided; ``previous`` is the
        previous turn's rewrite ("" on a first turn), whose words widen the
        search (:func:`~assistant.retrieval.expand_query`), not the reading.
        :class:`~assistant.kernel.Stopped` once ``stop`` is set: at each
        stage's end (before the search, after it, after the rescoring: the
        retriever runs to its end, BM25), within a rescorer or a reader
        that takes a ``stop`` (the dense rescorer's wait for the batched
        encoder, the sentence reader's encoding, between two of its
        batches, the generative reader's decoding), and after the reading.

        The UI uses this to show the rewrite before the answer, and to re-run
        a turn with the user's corrected rewrite.
        """
        stop.check()
        timings = {"rewrite": rewrite_ms}
        mark = time.perf_counter()
        query = expand_query(rewrite.text, previous, self.retriever_config.expansion_repeats, rewrite.alternatives)
        k = self.retriever_config.k
        # A name typed without its accents, which BM25 searched as the index
        # spells it, is read so too (the rewrite shown stays as written). An
        # optional capability, as a rewriter's rewrite_batch is: a retriever
        # of one's own that spells as its index does offers it too.
        respelled = getattr(self.retriever, "respelled", None)
        reading = respelled(rewrite.text) if respelled is not None else rewrite.text
        if self.rescorer is None:
            passages = _checked_passages(self.retriever.search(query, k), self.retriever)
        else:
            hits = _checked_passages(self.retriever.search(query, max(k, self.retriever_config.rescore_depth)), self.retriever)
            stop.check()
            passages = with_stop(self.rescorer.rescore, stop)(reading, hits, k, rewrite.alternatives)
        timings["retrieve"] = _ms_since(mark)
        stop.check()
        mark = time.perf_counter()
        answer = _checked(with_stop(self.reader.read, stop)(reading, passages), Answer, self.reader, "read")
        stop.check()
        timings["read"] = _ms_since(mark)
        timings["total"] = round(rewrite_ms + timings["retrieve"] + timings["read"], 1)
        return Turn(question, rewrite, answer, tuple(passages), timings)

    def steps(self, question: str, history: Sequence[str], previous: str = "",
              stop: StopSignal = NO_STOP) -> Iterator[Rewrite | Turn]:
        """One turn as it goes: yields the :class:`Rewrite` as soon as it is
        known (a UI shows it while retrieval and reading run), then the
        finished :class:`Turn`. ``previous``: the previous turn's rewrite (see
        :meth:`answer`). Raises InvalidInputError for a bad question before
        anything runs; :class:`~assistant.kernel.Stopped` once ``stop`` is
        set (the user's Stop: see :meth:`rewrite` and :meth:`answer`), with
        nothing yielded after it."""
        question = validate_question(question, self.config.max_question_chars)
        start = time.perf_counter()
        rewrite = self.rewrite(question, history, stop)
        rewrite_ms = _ms_since(start)
        yield rewrite
        yield self.answer(question, rewrite, rewrite_ms, previous if history else "", stop)

    def ask(self, question: str, conversation: Conversation) -> Turn:
        """Answer ``question`` given the earlier turns; the caller adds the Turn."""
        if not isinstance(conversation, Conversation):
            raise TypeError(f"ask takes a Conversation (assistant.kernel), not {type(conversation).__name__}; "
                            "with a history of texts, call steps(question, history) and take its last value")
        previous = topic_rewrite([turn.rewrite for turn in conversation.turns])
        *_, turn = self.steps(question, conversation.history(self.config.history_rewrites), previous)
        return turn


def topic_rewrite(rewrites: Sequence[Rewrite]) -> str:
    """The earlier rewrite whose words a follow-up's search is widened with
    (``previous`` of :meth:`Assistant.steps`; "" when there is none): the
    latest that asked something. After "ok" or "thanks", kept as asked
    (:func:`rewriting.asks_nothing`), the topic is still the turn's before.

    >>> topic_rewrite([Rewrite("Who was Ada Lovelace?"), Rewrite("ok")]), topic_rewrite([Rewrite("hmm")])
    ('Who was Ada Lovelace?', '')
    """
    return next((rewrite.text for rewrite in reversed(rewrites) if not asks_nothing(rewrite.text)), "")


def build_assistant(*, batching: bool = False, background: bool = False, **overrides) -> Assistant:
    """The assistant every entry point serves (app, terminal chat, scripts):
    configs from :func:`~assistant.kernel.load_configs` (defaults, then
    ``CONVQA_*``, then ``overrides``, i.e. flags), the index built first when
    it is the default collection's, every stage loaded once. ``batching``,
    ``background``: see :meth:`Assistant.from_config` (the app serves with
    both)."""
    config, retrieval, reading = load_configs(**overrides)
    index = ensure_index(retrieval.index_dir)
    return Assistant.from_config(
        config, dataclasses.replace(retrieval, index_dir=str(index)), reading, batching=batching, background=background
    )


# A stage plugged in by a library user that returns the wrong kind of value
# failed turns later, far from the mistake (a reader's str in
# Conversation.history, a retriever's dicts in turn_to_json): named here.
def _checked(value, kind: type, stage: object, method: str):
    if not isinstance(value, kind):
        raise TypeError(f"{type(stage).__name__}.{method} returned {type(value).__name__} instead of assistant.kernel.{kind.__name__}")
    return value


def _checked_passages(passages, retriever: object) -> list:
    if not isinstance(passages, Sequence) or not all(isinstance(p, Passage) for p in passages):
        # A str is a Sequence too: it was "a str of str".
        held = type(passages).__name__ if not isinstance(passages, Sequence) or isinstance(passages, (str, bytes)) \
            else f"a {type(passages).__name__} of {', '.join(sorted({type(p).__name__ for p in passages}))}"
        raise TypeError(f"{type(retriever).__name__}.search returned {held} instead of a list of assistant.kernel.Passage")
    return passages


def _ms_since(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 1)


def turn_to_json(turn: Turn) -> dict:
    """A turn in the terminal chat's JSON layout (``"alternatives"``, the
    other candidates the search also used, only when there are some; a
    source's ``"description"``, its collection's short description, only
    when it has one)."""
    found = {
        "question": turn.question,
        "rewrite": turn.rewrite.text,
        "answer": turn.answer.text,
        "sources": [_source_json(p) for p in turn.sources],
        "timings_ms": turn.timings_ms,
    }
    if turn.rewrite.alternatives:
        found["alternatives"] = list(turn.rewrite.alternatives)
    return found


def _source_json(passage: Passage) -> dict:
    found = {"id": passage.id, "title": passage.title, "score": round(passage.score, 4), "text": passage.text}
    if passage.description:
        found["description"] = passage.description
    return found
