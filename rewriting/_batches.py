"""Training examples as token ids, the steps' batches, and their padding."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Sequence

import torch

from ._prompt import IGNORE_INDEX, encode_example

__all__ = ["Batch", "collate", "make_batches", "encode_examples"]


@dataclass
class Batch:
    """Right-padded tensors of one step; labels are IGNORE_INDEX except on rewrite tokens."""

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    labels: torch.Tensor


def collate(encoded: Sequence[tuple[list[int], list[int]]], pad_id: int, device: str = "cpu") -> Batch:
    width = max(len(ids) for ids, _ in encoded)
    input_ids = torch.full((len(encoded), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(encoded), width), dtype=torch.long)
    labels = torch.full((len(encoded), width), IGNORE_INDEX, dtype=torch.long)
    for row, (ids, labs) in enumerate(encoded):
        input_ids[row, : len(ids)] = torch.tensor(ids)
        mask[row, : len(ids)] = 1
        labels[row, : len(labs)] = torch.tensor(labs)
    return Batch(input_ids.to(device), mask.to(device), labels.to(device))


def make_batches(count: int, batch_size: int, steps: int, seed: int) -> list[list[int]]:
    """Example indices for each of ``steps`` steps: reshuffled every epoch, seeded.

    A pure function of its arguments, so a resumed run continues with exactly
    the batches the interrupted one would have seen.

    >>> make_batches(5, 2, 3, 0) == make_batches(5, 2, 3, 0)
    True
    >>> [len(b) for b in make_batches(5, 2, 4, 0)]
    [2, 2, 2, 2]
    """
    order: list[int] = []
    epoch = 0
    while len(order) < steps * batch_size:
        epoch_order = list(range(count))
        random.Random(seed * 1_000_003 + epoch).shuffle(epoch_order)
        order += epoch_order
        epoch += 1
    return [order[i * batch_size : (i + 1) * batch_size] for i in range(steps)]


def encode_examples(tokenizer, examples, config) -> list[tuple[list[int], list[int]]]:
    """``(input_ids, labels)`` of every example after its conversation's first
    turn (first turns are never rewritten, so never trained on); ``config``
    is a :class:`TrainConfig` (its ``titles`` and ``prompt``)."""
    return [
        encode_example(tokenizer, e.question, e.context if config.titles else e.history, e.rewrite, config.prompt)
        for e in examples
        if e.history
    ]
