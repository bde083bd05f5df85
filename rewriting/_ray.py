"""``python -m rewriting.rewrite --ray``: the same rewrites, on a Ray cluster.

The requests become a Ray Dataset; ``map_batches`` runs them through a
fixed pool of actors, each of which loads the rewriter once (the load costs
far more than a batch). Each row carries its input position, and the rows
are put back in that order, so the output file is the single-process one:
same ids, order and text (with float32 weights, batched decoding equals
one-at-a-time decoding, so how Ray cuts the rows into batches does not
matter).

Only this module imports ray, and only ``--ray`` imports this module.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from assistant.kernel import ConfigError, Rewrite

__all__ = ["rewrite_with_ray", "import_ray"]


def import_ray():
    """The ray package, or :class:`ConfigError` saying how to get it."""
    try:
        import ray
        import ray.data
    except ImportError as error:
        raise ConfigError(f"--ray needs the ray package ({error}); pip install 'ray[data]', or run without --ray") from error
    return ray


class _RewriteActor:
    """One rewriter per actor, loaded once; called with a batch of rows."""

    def __init__(self, settings: dict):
        from rewriting import load_rewriter
        from rewriting.rewrite import configure

        self.rewriter = configure(load_rewriter(settings["model"], dtype=settings["dtype"]), settings["batch_size"], settings["draft_tokens"])

    def __call__(self, batch: dict) -> dict:
        items = [(str(q), json.loads(str(h))) for q, h in zip(batch["question"], batch["history"])]
        many = getattr(self.rewriter, "rewrite_batch", None)
        results = many(items) if many else [self.rewriter.rewrite(q, h) for q, h in items]
        return {
            "index": [int(i) for i in batch["index"]],
            "text": [r.text for r in results],
            "note": [r.note for r in results],
            "rejected": [r.rejected for r in results],
        }


def rewrite_with_ray(requests: Sequence[dict], settings: dict, address: str | None, actors: int) -> list[Rewrite]:
    """Rewrite ``requests`` (as read by :func:`rewriting.rewrite.read_requests`)
    on the cluster at ``address`` (None: ``RAY_ADDRESS`` or a new local one)
    with ``actors`` rewriter copies; one Rewrite per request, in order.

    ``settings``: model, dtype, batch_size, draft_tokens, as the command
    line gives them. The ``rewriting`` and ``assistant`` packages travel to
    the workers (``py_modules``); their Python dependencies must be installed
    there already.
    """
    ray = import_ray()
    root = Path(__file__).resolve().parent.parent
    ray.init(
        address=address,
        ignore_reinit_error=True,
        log_to_driver=False,
        runtime_env={"py_modules": [str(root / "rewriting"), str(root / "assistant")], "env_vars": {"HF_HUB_OFFLINE": "1"}},
    )
    # History as JSON text: a column of ragged lists would not survive every batch format.
    rows = [{"index": i, "question": r["question"], "history": json.dumps(r["history"], ensure_ascii=False)} for i, r in enumerate(requests)]
    dataset = ray.data.from_items(rows).map_batches(
        _RewriteActor,
        fn_constructor_kwargs={"settings": settings},
        batch_size=settings["batch_size"] * 4,  # as the single-process run's chunks
        batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=actors),
    )
    done = sorted(dataset.take_all(), key=lambda row: int(row["index"]))
    if [int(row["index"]) for row in done] != list(range(len(requests))):
        raise RuntimeError("the Ray run lost or repeated rows")  # a bug, not a user's error
    return [Rewrite(str(row["text"]), str(row["note"]), str(row["rejected"])) for row in done]
