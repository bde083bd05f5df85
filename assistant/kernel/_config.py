"""Configuration: one frozen dataclass per stage, every default explained.

Each field can be set from the environment (``CONVQA_<FIELD>``) by
:func:`from_env` and from command-line flags by the CLIs; flags win.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path

from ._errors import ConfigError

__all__ = [
    "cache_dir",
    "default_index_dir",
    "RetrieverConfig",
    "ReaderConfig",
    "AssistantConfig",
    "from_env",
    "load_configs",
]


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


@dataclass(frozen=True)
class AssistantConfig:
    # "trained" (the committed LoRA adapter), "prompted" (few-shot SmolLM2),
    # "original" (no rewriting) or a model path/name.
    rewriter: str = "trained"
    # "sentence" (extractive, fast) or "generative" (SmolLM2 phrases the answer).
    reader: str = "sentence"
    # Earlier turns (question + answer pairs) given to the rewriter, as in CoQA's
    # "last n turns": older turns rarely carry the referent and cost decoding time.
    history_turns: int = 3
    # Longest question we accept, in characters; longer input is refused with a
    # message instead of being truncated silently.
    max_question_chars: int = 1000


def from_env(config, prefix: str = "CONVQA_"):
    """A copy of ``config`` with fields overridden by ``CONVQA_<FIELD>`` variables.

    >>> os.environ["CONVQA_K"] = "5"
    >>> from_env(RetrieverConfig()).k
    5
    >>> del os.environ["CONVQA_K"]
    """
    changes = {}
    for field in dataclasses.fields(config):
        value = os.environ.get(prefix + field.name.upper())
        if value is not None:
            kind = type(getattr(config, field.name))
            changes[field.name] = kind(value)
    return dataclasses.replace(config, **changes)


def load_configs(**overrides) -> tuple[AssistantConfig, RetrieverConfig, ReaderConfig]:
    """The three stage configs every entry point uses: defaults, then
    ``CONVQA_*`` variables, then ``overrides`` (command-line flags; a value of
    None means "flag not given"). An override that names no field is refused.

    >>> load_configs(k=5, reader=None)[1].k
    5
    """
    configs = (from_env(AssistantConfig()), from_env(RetrieverConfig()), from_env(ReaderConfig()))
    known = {f.name for config in configs for f in dataclasses.fields(config)}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise ConfigError(f"unknown setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    return tuple(
        dataclasses.replace(
            config, **{f.name: overrides[f.name] for f in dataclasses.fields(config) if overrides.get(f.name) is not None}
        )
        for config in configs
    )
