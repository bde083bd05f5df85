"""convqa's assistant: rewrite each turn, retrieve with BM25, read the answer.

The layers, bottom to top (see ARCHITECTURE.md); each imports only those
below it:

- :mod:`assistant.kernel`: typed values, errors, configuration, JSONL;
- the stages: :mod:`assistant.retrieval`, :mod:`assistant.readers`,
  :mod:`assistant.encoders` (and the :mod:`rewriting` package);
- :mod:`assistant.pipeline`: :class:`Assistant`, one turn through the stages;
- :mod:`assistant.session`: a browser tab's state and actions; then
  ``app.py`` and the terminal chat (``python -m assistant.chat``).

The names below are the ones most callers need. They are imported on first
use, so that ``import assistant.kernel`` (which the stages do) stays light.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "Assistant": "assistant.pipeline",
    "build_assistant": "assistant.pipeline",
    "turn_to_json": "assistant.pipeline",
    "Passage": "assistant.kernel",
    "Answer": "assistant.kernel",
    "Rewrite": "assistant.kernel",
    "Turn": "assistant.kernel",
    "Conversation": "assistant.kernel",
    "AssistantConfig": "assistant.kernel",
    "RetrieverConfig": "assistant.kernel",
    "ReaderConfig": "assistant.kernel",
    "AssistantError": "assistant.kernel",
    "BM25Retriever": "assistant.retrieval",
    "build_index": "assistant.retrieval",
    "SentenceReader": "assistant.readers",
    "build_reader": "assistant.readers",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'assistant' has no attribute {name!r}")
