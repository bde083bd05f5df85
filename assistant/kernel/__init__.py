"""The kernel: what every layer above shares and nothing below it needs.

Typed values between stages, the exceptions, the configuration dataclasses,
JSONL reading and the labels-file format. It imports nothing else of the
project, so any stage (retrieval, readers, rewriting, encoders) can use it.
"""

from ._config import (
    AssistantConfig,
    ReaderConfig,
    RetrieverConfig,
    cache_dir,
    default_index_dir,
    from_env,
)
from ._errors import (
    AssistantError,
    DataFormatError,
    IndexNotFoundError,
    InvalidInputError,
    JavaNotFoundError,
    ModelNotFoundError,
)
from ._jsonl import json_lines
from ._labels import LabelledRewrite, default_labels_path, read_labels, write_labels
from ._types import Answer, Conversation, Passage, Rewrite, Turn

__all__ = [
    "Passage",
    "Answer",
    "Rewrite",
    "Turn",
    "Conversation",
    "AssistantError",
    "JavaNotFoundError",
    "IndexNotFoundError",
    "ModelNotFoundError",
    "InvalidInputError",
    "DataFormatError",
    "RetrieverConfig",
    "ReaderConfig",
    "AssistantConfig",
    "from_env",
    "cache_dir",
    "default_index_dir",
    "json_lines",
    "LabelledRewrite",
    "read_labels",
    "write_labels",
    "default_labels_path",
]
