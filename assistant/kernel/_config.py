"""Configuration: one frozen dataclass per stage, every default explained.

Each field can be set from the environment (``CONVQA_<FIELD>``) by
:func:`from_env` and from command-line flags by the CLIs; flags win.
Settings are checked where they are read, the nanoGPT way: a value of the
wrong type, out of its range, or a ``CONVQA_*`` variable that names no
setting is refused with one :class:`ConfigError` line naming the setting and
what it accepts.
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from ._errors import ConfigError
from ._words import close_name

__all__ = [
    "cache_dir",
    "default_index_dir",
    "RetrieverConfig",
    "ReaderConfig",
    "AssistantConfig",
    "FairShareConfig",
    "from_env",
    "load_configs",
    "server_port",
    "check_can_listen",
    "check_environment",
    "READER_NAMES",
    "ENV_VARIABLES",
]

# The readers ``reader`` / ``CONVQA_READER`` / ``--reader`` accept.
READER_NAMES = ("sentence", "generative")

# CONVQA_* variables that are not config fields, and what reads them.
ENV_VARIABLES = {
    "CONVQA_CACHE": "indexes and converted models (cache_dir)",
    "CONVQA_LABELS": "the feedback labels file",
    "CONVQA_DATA": "the shared datasets (rewriting.data.data_dir)",
    "CONVQA_SCREENSHOTS": "where the browser tests save screenshots",
    "CONVQA_JAVA_OPTIONS": "the JVM options of the app and the chat (assistant.retrieval.use_serving_java)",
}

# Inclusive bounds of the numeric settings (None: unbounded on that side).
_BOUNDS = {
    "k": (1, None),
    "bm25_k1": (0, None),
    "bm25_b": (0, 1),
    "expansion_repeats": (0, None),
    "dense_weight": (0, 1),
    "rescore_depth": (1, None),
    "mu": (0, 1),
    "min_similarity": (-1, 1),
    "read_k": (1, None),
    "max_sentences": (1, None),
    "cache_sentences": (1, None),
    "min_sentence_chars": (0, None),
    "definition_sentences": (1, None),
    "history_turns": (0, None),
    "rewrite_candidates": (0, None),
    "max_question_chars": (1, None),
    "fair_reserve": (0, 1),
    "fair_queued": (0, None),
    "fair_held_mb": (0, None),
}


def _describe(name: str, kind: type) -> str:
    low, high = _BOUNDS.get(name, (None, None))
    what = {int: "a whole number", float: "a number", bool: "true or false", str: "text"}[kind]
    if low is not None and high is not None:
        return f"{what} from {low} to {high}"
    if low is not None:
        return f"{what} >= {low}"
    return what


def _check(config) -> None:
    """Raise ConfigError unless every field of ``config`` has its type and range."""
    for field in dataclasses.fields(config):
        value, default = getattr(config, field.name), field.default
        kind = type(default)
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            ok = True
        # NaN passes every comparison and inf every upper bound left open, so
        # "nan" or "inf" from the environment would be taken without a word.
        if ok and kind is float and not math.isfinite(value):
            ok = False
        low, high = _BOUNDS.get(field.name, (None, None))
        if ok and low is not None and value < low or ok and high is not None and value > high:
            ok = False
        if not ok:
            raise ConfigError(f"{field.name} must be {_describe(field.name, kind)}, got {value!r}{_FROM(field.name)}")
    if getattr(config, "reader", READER_NAMES[0]) not in READER_NAMES:
        # 'Sentence' or 'generativ' is a slip of the keys: the name meant is said.
        close = close_name(str(config.reader), READER_NAMES)
        hint = f"; did you mean {close!r}?" if close else ""
        raise ConfigError(f"reader must be one of {', '.join(READER_NAMES)}, got {config.reader!r}{_FROM('reader')}{hint}")
    if hasattr(config, "rewriter") and not config.rewriter.strip():
        raise ConfigError(f"rewriter must be trained, prompted, original or a model path, got ''{_FROM('rewriter')}")


def _FROM(field: str) -> str:  # noqa: N802 (reads as a phrase)
    # A value reaches a config from a command-line flag or a variable, and the
    # check cannot tell which: naming only the variable blamed it for a flag.
    return f" (from its command-line flag, or CONVQA_{field.upper()})"


def cache_dir() -> Path:
    """Where indexes and converted model weights live (``CONVQA_CACHE``)."""
    return Path(os.environ.get("CONVQA_CACHE", Path.home() / ".cache" / "convqa"))


def default_index_dir() -> Path:
    """The default collection's index: built on first start, reused after."""
    return cache_dir() / "indexes" / "wiki-vital-en"


@dataclass(frozen=True)
class RetrieverConfig:
    # The Lucene index to search; the default collection is built here on first start.
    index_dir: str = str(default_index_dir())
    # Passages retrieved and shown as sources; 10 as QReCC's R@10.
    k: int = 10
    # Anserini's BM25 defaults (also QReCC's): k1 saturates term frequency, b normalises length.
    bm25_k1: float = 0.9
    bm25_b: float = 0.4
    # The BM25 query of a follow-up is its rewrite repeated this many times
    # plus the previous turn's rewrite's content words once, so they weigh
    # 1/N of the rewrite's (assistant.retrieval.expand_query; 0: the rewrite
    # alone). The rewrite shown and read stays as written. 3 was chosen on the
    # CAsT 2021-22 turns the rewriter trained on, and held on held-out ones
    # (BENCHMARKS.md §10).
    expansion_repeats: int = 3
    # BM25's hits are rescored as (1 - w) * minmax(BM25) + w * the MiniLM
    # cosine between the rewrite and the passage (assistant.retrieval.
    # DenseRescorer; 0: BM25 alone). 0.9 was chosen among 0.1-1.0 on the
    # CAsT 2021-22 turns the rewriter trained on, and held on held-out ones
    # (BENCHMARKS.md §10). BM25 still picks the candidates and breaks near-ties.
    dense_weight: float = 0.9
    # BM25 hits the rescoring reorders: as deep as the judged runs that chose
    # the weight; vectors are read, not computed, so depth costs little.
    rescore_depth: int = 100

    def __post_init__(self) -> None:
        _check(self)


@dataclass(frozen=True)
class ReaderConfig:
    # Weight of the reader's score against the retriever's when ranking answer
    # sentences: score = mu * reader + (1 - mu) * retrieval (QReCC interpolates
    # the two with mu = 0.7).
    mu: float = 0.7
    # Below this cosine similarity between question and best sentence we say we
    # do not know rather than answer with an unrelated sentence. The value was
    # hand-checked on a few questions the default collection cannot answer; not tuned.
    min_similarity: float = 0.35
    # Passages the reader reads, best first: every sentence of them is embedded,
    # so this bounds the reader's latency; the answer is nearly always in the top 5.
    read_k: int = 5
    # Sentences in the answer: the best one plus the next if it continues it.
    max_sentences: int = 2
    # Sentence vectors kept in memory (384 floats each, so 20k is ~30 MB): passages
    # recur across the turns of a conversation and need not be embedded again.
    cache_sentences: int = 20_000
    # Sentences shorter than this many characters (headings, "See also") are skipped.
    min_sentence_chars: int = 20
    # "Who was X?", "What is X?", "Tell me about X": answer with the first
    # sentence(s) of X's own article when a retrieved passage has X's title,
    # since an encyclopaedia defines its subject there and the best-matching
    # sentence is often a detail. On: it found more facts in the twelve
    # conversations of scripts/bench_conversations.py and changed no
    # MultiDoc2Dial answer (BENCHMARKS.md §10).
    definitions: bool = True
    # Sentences of the lead that make the definition: an encyclopaedia's
    # first sentence says what its subject is; the next one is usually detail.
    # A first sentence that only names the subject's kind ("… was an English
    # writer and journalist.") counts as half: the next one says what the
    # subject is known for (the reader's bare_lead).
    definition_sentences: int = 1
    # "When ...", "How many ...", "Who <did something>": answer with the date,
    # number or name in the best sentence (the sentence stays the evidence),
    # as CoQA's and QReCC's gold answers are short. On since the span next to
    # the question's own words is picked, and none where the sentence lacks
    # them: it gained on NQ's short answers, lost nowhere else, and kept every
    # fact of the twelve conversations (BENCHMARKS.md §10).
    short_answers: bool = True
    # A date, number or name question about a named subject, when no sentence
    # read about that subject holds the question's word, is answered "not
    # found" instead of with the best sentence ("Who did Tesla work for?" got
    # Tesla's lead). Off: on the held-out long conversations it turned a
    # found fact into "not found" ("When did he get the Nobel Prize?") and
    # helped none (BENCHMARKS.md §10, session 34).
    unsaid_not_found: bool = False

    def __post_init__(self) -> None:
        _check(self)


@dataclass(frozen=True)
class AssistantConfig:
    # "trained" (the committed LoRA adapter), "prompted" (few-shot SmolLM2),
    # "original" (no rewriting) or a model path/name.
    rewriter: str = "trained"
    # "sentence" (extractive, fast) or "generative" (SmolLM2 phrases the answer).
    reader: str = "sentence"
    # Earlier turns (question + answer pairs) given to the rewriter. Its own
    # token budget (rewriting.TRAINED_INPUT_TOKENS) decides how much of them
    # the model reads, newest first, as in every rewriting table; this only
    # bounds the text handed over. A window of 3 turns had cut what the
    # budget keeps on about half of the turns, and rewrote them worse
    # (BENCHMARKS.md §10, session 33).
    history_turns: int = 20
    # The rewriter sees earlier turns as they were rewritten, not as asked:
    # a rewrite names what a follow-up's pronoun left open, so a later turn's
    # referent is in plain words. Better or level on every held-out group,
    # and on retrieval (BENCHMARKS.md §10, session 10).
    history_rewrites: bool = True
    # Beams of an N-best search per rewrite (0: greedy only): the rewrite is
    # then the consensus of the greedy one and the beams'. It gains on held-out
    # turns but costs a beam search per turn, past the latency budget on 2 CPU
    # cores, so it is for a faster machine (BENCHMARKS.md §10, session 15).
    rewrite_candidates: int = 0
    # A second look at a follow-up the greedy rewrite leaves as asked: a beam
    # search for that turn only (rewriting's RewriterConfig.second_look says
    # how many beams). It gains on held-out turns and leaves the median
    # rewrite's time alone; false spares those turns the search (BENCHMARKS.md
    # §10, session 23).
    rewrite_second_look: bool = True
    # With it, a second look at a changed rewrite the model was unsure of too
    # (RewriterConfig.second_look_below): their other candidates widen the
    # search, which gains on held-out judged turns. It runs on about a third
    # of follow-ups, and a crowd's batch waits for its beam search; false
    # spares a crowd most of that (BENCHMARKS.md §10, session 25).
    rewrite_second_look_unsure: bool = True
    # Longest question we accept, in characters; longer input is refused with a
    # message instead of being truncated silently.
    max_question_chars: int = 1000

    def __post_init__(self) -> None:
        _check(self)


@dataclass(frozen=True)
class FairShareConfig:
    """Fair shares of what a public server has in all (the session layer's
    ``UploadLimits.fair``; ``from_env(FairShareConfig())`` reads the
    ``CONVQA_FAIR_*`` variables, as the app does)."""

    # Once taking more would leave less than this part of the queue's line
    # (app.py's QUEUE_SIZE) or of the text held in memory (max_held_mb), a
    # network already holding its fair share (the rest of the line or the
    # text, over the networks holding some) is refused, and this part stays
    # for the networks that hold less. Each network's own share bounds one network,
    # but a crowd spread over many (a botnet, a cloud's addresses) filled
    # both first come, first served, and a visitor of a quiet network was
    # told the server is busy. A quarter: at the served line's size and
    # budget of text, room for the events of many newcomers and several
    # documents of the largest size, while the rest serves the crowd first
    # come, first served as before. 0 turns it off; 1 applies fair shares
    # from the first request.
    fair_reserve: float = 0.25
    # The fair share of the line never falls below this many events: with
    # hundreds of networks waiting, each may still have a turn in line. Not
    # two (a page's turn and its source line's tick): a floor that times the
    # networks waiting passes the line's size leaves no place for the next
    # network, and at two a crowd of networks half as many as the line's
    # places would do that.
    fair_queued: int = 1
    # The fair share of the held text never falls below this many MB: one
    # document of the largest size (UploadLimits.max_file_mb), so each
    # network may still paste one.
    fair_held_mb: float = 10.0

    def __post_init__(self) -> None:
        _check(self)


def from_env(config, prefix: str = "CONVQA_"):
    """A copy of ``config`` with fields overridden by ``CONVQA_<FIELD>`` variables.

    >>> os.environ["CONVQA_K"] = "5"
    >>> from_env(RetrieverConfig()).k
    5
    >>> del os.environ["CONVQA_K"]
    """
    return dataclasses.replace(config, **_env_changes(config, prefix))


def _env_changes(config, prefix: str = "CONVQA_", skip=frozenset()) -> dict:
    """``{field: value}`` of the ``CONVQA_<FIELD>`` variables set for
    ``config``'s fields, parsed but not yet range-checked; a field in
    ``skip`` (one a flag sets) is not read, so its variable is not checked."""
    changes = {}
    for field in dataclasses.fields(config):
        name = prefix + field.name.upper()
        value = os.environ.get(name)
        if value is not None and field.name not in skip:
            changes[field.name] = _parse(name, field.name, value, type(getattr(config, field.name)))
    return changes


_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _parse(variable: str, field: str, text: str, kind: type):
    """``text`` as a value of ``kind``; "False" is false (``bool("False")`` is not)."""
    text = text.strip()
    try:
        if kind is bool:
            if text.lower() not in _TRUE + _FALSE:
                raise ValueError
            return text.lower() in _TRUE
        return kind(text)
    except ValueError:
        raise ConfigError(f"{variable}={text!r}: {field} must be {_describe(field, kind)}") from None


def check_environment(prefix: str = "CONVQA_", environ: Mapping[str, str] | None = None) -> None:
    """Refuse a ``CONVQA_*`` variable of ``environ`` (default: the process's)
    that names no setting (a misspelling would otherwise be ignored without
    a word).

    >>> check_environment(environ={"CONVQA_KK": "5"})
    Traceback (most recent call last):
    ...
    assistant.kernel._errors.ConfigError: CONVQA_KK is not a setting (did you mean CONVQA_K?); known: CONVQA_BM25_B, CONVQA_BM25_K1, CONVQA_CACHE, CONVQA_CACHE_SENTENCES, CONVQA_DATA, CONVQA_DEFINITIONS, CONVQA_DEFINITION_SENTENCES, CONVQA_DENSE_WEIGHT, CONVQA_EXPANSION_REPEATS, CONVQA_FAIR_HELD_MB, CONVQA_FAIR_QUEUED, CONVQA_FAIR_RESERVE, CONVQA_HISTORY_REWRITES, CONVQA_HISTORY_TURNS, CONVQA_INDEX_DIR, CONVQA_JAVA_OPTIONS, CONVQA_K, CONVQA_LABELS, CONVQA_MAX_QUESTION_CHARS, CONVQA_MAX_SENTENCES, CONVQA_MIN_SENTENCE_CHARS, CONVQA_MIN_SIMILARITY, CONVQA_MU, CONVQA_READER, CONVQA_READ_K, CONVQA_RESCORE_DEPTH, CONVQA_REWRITER, CONVQA_REWRITE_CANDIDATES, CONVQA_REWRITE_SECOND_LOOK, CONVQA_REWRITE_SECOND_LOOK_UNSURE, CONVQA_SCREENSHOTS, CONVQA_SHORT_ANSWERS, CONVQA_UNSAID_NOT_FOUND
    """
    known = set(ENV_VARIABLES) | {
        prefix + f.name.upper() for config in (AssistantConfig, RetrieverConfig, ReaderConfig, FairShareConfig)
        for f in dataclasses.fields(config)
    }
    for name in sorted(os.environ if environ is None else environ):
        if name.startswith(prefix) and name not in known:
            close = close_name(name, known)
            hint = f" (did you mean {close}?)" if close else ""
            raise ConfigError(f"{name} is not a setting{hint}; known: {', '.join(sorted(known))}")


# Where the app listens when neither --port nor PORT / GRADIO_SERVER_PORT says.
DEFAULT_PORT = 7860


def server_port(flag: str | None = None, environ: Mapping[str, str] | None = None) -> int:
    """The app's port: ``--port`` (``flag``), else ``PORT``, else
    ``GRADIO_SERVER_PORT`` (as Gradio reads it), else 7860. Checked here,
    before any model loads, and refused with a :class:`ConfigError` naming
    where the value came from: otherwise a typo surfaced as a traceback, or
    as bind()'s OverflowError after a minute of loading.

    >>> server_port("8080"), server_port(None, {"GRADIO_SERVER_PORT": "9000"}), server_port(None, {})
    (8080, 9000, 7860)
    >>> server_port(None, {"PORT": "abc"})
    Traceback (most recent call last):
    ...
    assistant.kernel._errors.ConfigError: PORT='abc': the port must be a whole number from 1 to 65535
    """
    environ = os.environ if environ is None else environ
    for name, text in (("--port", flag), ("PORT", environ.get("PORT")),
                       ("GRADIO_SERVER_PORT", environ.get("GRADIO_SERVER_PORT"))):
        if text:  # an empty variable is unset, as before
            break
    else:
        return DEFAULT_PORT
    try:
        port = int(text.strip())
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise ConfigError(f"{name}={text!r}: the port must be a whole number from 1 to 65535")
    return port


def check_can_listen(host: str, port: int) -> None:
    """Refuse, with a :class:`ConfigError` saying what to do, a ``host`` and
    ``port`` the server could not listen on: checked before any model loads,
    as a port taken by another server (a second ``make run``, say) or a
    mistyped ``--host`` surfaced as Gradio's traceback after a minute of
    loading, one that said "Cannot find empty port" even for the host.

    Each probe binds as Gradio's own check and uvicorn do (SO_REUSEADDR, so
    a port left in TIME_WAIT by a server just stopped counts as free) and
    lets go at once; like Gradio's, it tries 127.0.0.1 too, whatever the host.
    """
    import errno
    import socket

    try:
        found = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as error:
        raise ConfigError(f"--host {host!r} is no address of this machine ({error}); use 127.0.0.1 (this machine "
                          "only) or 0.0.0.0 (every interface), or set GRADIO_SERVER_NAME") from None
    family, kind, proto, _, address = found[0]
    for family, address in dict.fromkeys([(family, address), (socket.AF_INET, ("127.0.0.1", port))]):
        probe = socket.socket(family, kind, proto)
        try:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
        except OSError as error:
            where = f"port {port} on {address[0]}"
            if error.errno == errno.EADDRINUSE:
                raise ConfigError(f"{where} is already in use (another server, or this app started before); "
                                  "stop it, or pick another port with --port N") from None
            if error.errno in (errno.EACCES, errno.EPERM):
                raise ConfigError(f"{where}: permission denied (ports below 1024 need root); "
                                  "pick another with --port N") from None
            raise ConfigError(f"cannot listen on {where} ({error.strerror}); use --host 127.0.0.1 (this machine "
                              "only), 0.0.0.0 (every interface) or an address of this machine") from None
        finally:
            probe.close()


def load_configs(**overrides) -> tuple[AssistantConfig, RetrieverConfig, ReaderConfig]:
    """The three stage configs every entry point uses: defaults, then
    ``CONVQA_*`` variables, then ``overrides`` (command-line flags; a value of
    None means "flag not given"). An override that names no field is refused.
    A flag wins over its variable, which is then not read at all: a bad
    ``CONVQA_K`` does not stop ``-k 3``; a bad one that no flag replaces is
    refused with its message.

    >>> load_configs(k=5, reader=None)[1].k
    5
    """
    check_environment()
    defaults = (AssistantConfig(), RetrieverConfig(), ReaderConfig())
    known = {f.name for config in defaults for f in dataclasses.fields(config)}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise ConfigError(f"unknown setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    flags = {name: value for name, value in overrides.items() if value is not None}
    # Each config is made once from defaults, variables and flags together,
    # and checked then (in __post_init__): replacing the variables first
    # would check a value that a flag is about to replace.
    return tuple(
        dataclasses.replace(
            config,
            **_env_changes(config, skip=flags.keys()),
            **{f.name: flags[f.name] for f in dataclasses.fields(config) if f.name in flags},
        )
        for config in defaults
    )
