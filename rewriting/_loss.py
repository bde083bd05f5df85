"""The training objective: rewrite tokens' negative log-likelihood."""

from __future__ import annotations

import torch

from ._batches import Batch, collate
from ._copy import CopyHead
from ._prompt import IGNORE_INDEX

__all__ = ["batch_loss", "dev_loss", "autocast"]


def batch_loss(model, batch: Batch, copy_head: CopyHead | None = None) -> torch.Tensor:
    """Mean negative log-likelihood of the rewrite tokens.

    Logits are computed only where a rewrite token is predicted: the LM head
    over 49k words at every prompt position would cost as much as the body.
    """
    out = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask, output_hidden_states=True, logits_to_keep=1)
    hidden = out.hidden_states[-1]
    targets = batch.labels[:, 1:]
    predicting = targets != IGNORE_INDEX  # position t predicts token t + 1
    counts = predicting.sum(dim=1)
    width = int(counts.max())
    # Gather each row's predicting positions into a (B, width) block, padded.
    order = torch.argsort((~predicting).to(torch.int8), dim=1, stable=True)[:, :width]
    valid = torch.arange(width, device=counts.device)[None, :] < counts[:, None]
    picked = torch.gather(hidden[:, :-1], 1, order[..., None].expand(-1, -1, hidden.shape[-1]))
    gold = torch.gather(targets, 1, order).masked_fill(~valid, 0)
    logits = model.get_output_embeddings()(picked)
    if copy_head is None:
        log_probs = torch.log_softmax(logits.float(), dim=-1)
    else:
        source_mask = (batch.labels == IGNORE_INDEX) & batch.attention_mask.bool()
        log_probs = copy_head.log_probs(picked, logits, copy_head.keys(hidden), batch.input_ids, source_mask)
    nll = -log_probs.gather(2, gold[..., None])[..., 0]
    return (nll * valid).sum() / valid.sum()


def autocast(config):
    """bfloat16 matmuls on ``config.device`` when ``config.bf16`` (a :class:`TrainConfig`)."""
    return torch.autocast(torch.device(config.device).type, dtype=torch.bfloat16, enabled=config.bf16)


@torch.no_grad()
def dev_loss(model, encoded, pad_id, config, copy_head=None) -> float:
    """Token-weighted mean rewrite NLL over ``encoded`` (model left in train mode after)."""
    model.eval()
    total, tokens = 0.0, 0
    for start in range(0, len(encoded), config.batch_size):
        chunk = encoded[start : start + config.batch_size]
        batch = collate(chunk, pad_id, config.device)
        count = int((batch.labels[:, 1:] != IGNORE_INDEX).sum())
        with autocast(config):
            total += float(batch_loss(model, batch, copy_head)) * count
        tokens += count
    model.train()
    return total / max(1, tokens)
