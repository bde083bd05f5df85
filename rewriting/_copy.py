"""The Transformer++ copy mechanism (QReCC, Anantha et al. 2021).

A rewrite mostly copies words from the conversation: names from earlier
turns, the rest of the current question. The copy head scores every input
(prompt) token against the current decoder state with attention-like
query/key projections; the softmax of those scores, summed per token id, is
a copy distribution over the vocabulary. A learned sigmoid gate mixes it with
the language model's own distribution:

    p(w) = g * p_lm(w) + (1 - g) * p_copy(w)

The head reads the LM's final hidden states, so it adds only
``2 * hidden * copy_dim + hidden + 1`` parameters.
"""

from __future__ import annotations

import math

import torch
from torch import nn

__all__ = ["CopyHead", "COPY_HEAD_FILE"]

# File name of the head's weights inside an adapter directory.
COPY_HEAD_FILE = "copy_head.safetensors"


class CopyHead(nn.Module):
    """Mixes a copy distribution over source tokens into the LM's distribution."""

    def __init__(self, hidden_size: int, copy_dim: int = 128, gate_bias: float = 2.0):
        super().__init__()
        self.hidden_size = hidden_size
        self.copy_dim = copy_dim
        self.query = nn.Linear(hidden_size, copy_dim, bias=False)
        self.key = nn.Linear(hidden_size, copy_dim, bias=False)
        self.gate = nn.Linear(hidden_size, 1)
        # Start close to the pretrained LM (g = sigmoid(2) = 0.88): the head
        # must earn its share instead of disturbing a good model from step 0.
        nn.init.zeros_(self.gate.weight)
        nn.init.constant_(self.gate.bias, gate_bias)

    def keys(self, source_hidden: torch.Tensor) -> torch.Tensor:
        """Project source hidden states ``(B, S, H)`` to keys ``(B, S, D)`` (cached in decoding)."""
        return self.key(source_hidden)

    def log_probs(
        self,
        hidden: torch.Tensor,
        lm_logits: torch.Tensor,
        source_keys: torch.Tensor,
        source_ids: torch.Tensor,
        source_mask: torch.Tensor,
    ) -> torch.Tensor:
        """Log of the mixed distribution.

        ``hidden`` ``(B, T, H)`` and ``lm_logits`` ``(B, T, V)`` are the decoder
        states and LM logits at the T positions being predicted;
        ``source_keys`` ``(B, S, D)``, ``source_ids`` ``(B, S)`` and boolean
        ``source_mask`` ``(B, S)`` describe the tokens that may be copied.
        Returns ``(B, T, V)`` log-probabilities (each row sums to one in
        probability space).
        """
        query = self.query(hidden)
        scores = query @ source_keys.transpose(1, 2) / math.sqrt(self.copy_dim)
        scores = scores.masked_fill(~source_mask[:, None, :], float("-inf"))
        attention = torch.softmax(scores.float(), dim=-1)
        # A row with nothing to copy from (all masked) gives NaN; make it zero
        # and let the gate's LM share carry the whole mass below.
        has_source = source_mask.any(dim=-1)[:, None, None]
        attention = torch.where(has_source, attention, torch.zeros_like(attention))
        copy = torch.zeros(lm_logits.shape, dtype=attention.dtype, device=lm_logits.device)
        index = source_ids[:, None, :].expand(-1, hidden.shape[1], -1)
        copy = copy.scatter_add(2, index, attention)
        gate = torch.sigmoid(self.gate(hidden).float())
        gate = torch.where(has_source, gate, torch.ones_like(gate))
        lm = torch.softmax(lm_logits.float(), dim=-1)
        mixed = gate * lm + (1 - gate) * copy
        return torch.log(mixed.clamp_min(1e-12))
