"""The kernel: what every layer above shares and nothing below it needs.

Typed values between stages, the exceptions, the configuration dataclasses,
JSONL reading, the labels-file format, the Stop signal a turn's model loops check, folders' owner marks, a long command's partial output, the word lists and tokenisers, the
one percentile, and the command lines' error ending and output-path check.
It imports nothing else of the project, so any stage (retrieval, readers, rewriting, encoders) can use it.
"""

from ._batching import MicroBatcher
from ._cli import CommandParser, Terminated, check_at_least, current_umask, output_path, run_cli, sigterm_as_ctrl_c
from ._config import (
    ENV_VARIABLES,
    READER_NAMES,
    AssistantConfig,
    FairShareConfig,
    ReaderConfig,
    RetrieverConfig,
    cache_dir,
    check_can_listen,
    check_environment,
    default_index_dir,
    from_env,
    load_configs,
    server_port,
)
from ._cpu import native_bf16, release_free_memory
from ._echo import ECHO_CHARS, echoed_question
from ._errors import (
    AssistantError,
    ConfigError,
    DataFormatError,
    DependencyError,
    IndexDamagedError,
    IndexNotFoundError,
    InvalidInputError,
    JavaNotFoundError,
    ModelNotFoundError,
)
from ._jsonl import json_lines, json_lines_with_text, utf8_text
from ._labels import LabelledRewrite, default_labels_path, read_labels, write_labels
from ._owners import OWNER_FILE, mark_owner, owner_gone, owner_mark
from ._partial import PartialOutput
from ._stats import percentile
from ._stop import NO_STOP, StopSignal, Stopped, with_stop
from ._types import Answer, Conversation, Passage, Rewrite, Turn, check_history
from ._words import (
    AUXILIARY_VERBS,
    DRIFT_STOPWORDS,
    ENGLISH_FUNCTION_WORDS,
    GENDERED_WORDS,
    KIN_BY_GENDER,
    LUCENE_STOPWORDS,
    READER_STOPWORDS,
    TOKEN_PATTERNS,
    composed_text,
    counted,
    folded_text,
    porter_stem,
    prefix_stem,
    sklearn_stopwords,
    tokens,
)

__all__ = [
    "check_at_least",
    "current_umask",
    "Terminated",
    "sigterm_as_ctrl_c",
    "server_port",
    "check_can_listen",
    "Passage",
    "Answer",
    "Rewrite",
    "Turn",
    "Conversation",
    "check_history",
    "OWNER_FILE",
    "owner_mark",
    "mark_owner",
    "owner_gone",
    "PartialOutput",
    "AssistantError",
    "JavaNotFoundError",
    "IndexNotFoundError",
    "ModelNotFoundError",
    "InvalidInputError",
    "DataFormatError",
    "DependencyError",
    "ConfigError",
    "IndexDamagedError",
    "RetrieverConfig",
    "ReaderConfig",
    "AssistantConfig",
    "from_env",
    "load_configs",
    "FairShareConfig",
    "CommandParser",
    "check_environment",
    "READER_NAMES",
    "ENV_VARIABLES",
    "native_bf16",
    "release_free_memory",
    "cache_dir",
    "default_index_dir",
    "json_lines",
    "json_lines_with_text",
    "utf8_text",
    "LabelledRewrite",
    "read_labels",
    "write_labels",
    "default_labels_path",
    "percentile",
    "MicroBatcher",
    "StopSignal",
    "Stopped",
    "NO_STOP",
    "with_stop",
    "run_cli",
    "echoed_question",
    "ECHO_CHARS",
    "output_path",
    "tokens",
    "composed_text",
    "counted",
    "folded_text",
    "TOKEN_PATTERNS",
    "READER_STOPWORDS",
    "DRIFT_STOPWORDS",
    "KIN_BY_GENDER",
    "GENDERED_WORDS",
    "ENGLISH_FUNCTION_WORDS",
    "LUCENE_STOPWORDS",
    "AUXILIARY_VERBS",
    "sklearn_stopwords",
    "porter_stem",
    "prefix_stem",
]
