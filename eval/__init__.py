"""Evaluation: metrics (pure functions) and the evaluation commands.

Each command is a submodule run with ``python -m eval.<name>``: ``rewrites``
(score rewriters, validate the metrics against labels), ``qa`` (QReCC-style
question answering), ``quality`` (QuALITY multiple choice), ``coqa`` (CoQA's
official evaluation and our predictions), ``labels`` (build a label set),
``retrieval`` (rewriters scored by what they retrieve from a judged
collection, with trec_eval).
``metrics`` holds the measures they share. Importing ``eval`` loads none of
them: each command imports only what it needs.
"""

__all__ = ["metrics", "rewrites", "qa", "quality", "coqa", "labels", "retrieval"]
