"""Linear layers with their weights laid out once for oneDNN's bfloat16 kernel.

A bfloat16 ``torch.nn.functional.linear`` on the CPU goes to oneDNN, which
re-lays the plain weight into its blocked layout on every call. For the few
rows of a decoding step or a draft check that copy costs as much as the
product itself, because the weights, not the rows, are what is read. Laid
out once at load time, each pass reads them once. The product is the same
oneDNN kernel on the same blocks, so the outputs are bitwise the same
(tested), and only the time changes (BENCHMARKS.md §8, session 9).
"""

from __future__ import annotations

import torch

from assistant.kernel import native_bf16, release_free_memory

__all__ = ["PackedLinear", "can_pack", "pack_linears"]


def can_pack(dtype: torch.dtype) -> bool:
    """Whether this torch and CPU have oneDNN's bfloat16 linear kernel for ``dtype``."""
    ops = torch.ops.mkldnn
    return dtype == torch.bfloat16 and native_bf16() and hasattr(ops, "_reorder_linear_weight") and hasattr(ops, "_linear_pointwise")


class PackedLinear(torch.nn.Module):
    """Inference-only stand-in for a bfloat16 :class:`torch.nn.Linear`.

    It keeps the weight in oneDNN's layout only; the plain weight is not kept
    (unless another module, e.g. a tied embedding, still holds it), so
    packing costs no memory for untied layers.
    """

    def __init__(self, linear: torch.nn.Linear):
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        weight = linear.weight.detach()
        self._packed = torch.ops.mkldnn._reorder_linear_weight(weight, None)
        self.bias = None if linear.bias is None else torch.nn.Parameter(linear.bias.detach(), requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.reshape(-1, self.in_features).contiguous()
        out = torch.ops.mkldnn._linear_pointwise(rows, self._packed, self.bias, "none", [], "")
        return out.reshape(*x.shape[:-1], self.out_features)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


def pack_linears(model: torch.nn.Module) -> int:
    """Replace every bfloat16 :class:`torch.nn.Linear` of ``model`` by a
    :class:`PackedLinear`; the number replaced (0 when :func:`can_pack` says no).

    For inference only: the packed layers have no trainable weight.
    """
    if not can_pack(torch.bfloat16):
        return 0
    targets = [
        (parent, name, child)
        for parent in model.modules()
        for name, child in parent.named_children()
        if type(child) is torch.nn.Linear and child.weight.dtype == torch.bfloat16 and child.weight.device.type == "cpu"
    ]
    if not targets:
        return 0
    for parent, name, child in targets:
        setattr(parent, name, PackedLinear(child))
    count = len(targets)
    del targets, parent, child  # the plain weights' last references
    # Without this the process would hold the plain weights' freed pages
    # (SmolLM2's size again) on top of the packed ones; nothing else needs them.
    release_free_memory()
    return count
