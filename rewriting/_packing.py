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

import warnings

import torch

from assistant.kernel import native_bf16, release_free_memory

__all__ = ["Int8Linear", "PackedLinear", "can_pack", "can_quantize", "pack_linears"]


def can_pack(dtype: torch.dtype) -> bool:
    """Whether this torch and CPU have oneDNN's bfloat16 linear kernel for ``dtype``."""
    ops = torch.ops.mkldnn
    return dtype == torch.bfloat16 and native_bf16() and hasattr(ops, "_reorder_linear_weight") and hasattr(ops, "_linear_pointwise")


def can_quantize() -> bool:
    """Whether this torch has the int8 linear kernel :class:`Int8Linear` calls
    (FBGEMM's, built into x86 CPU wheels) and per-channel weights for it."""
    engines = torch.backends.quantized.supported_engines
    return (
        torch.backends.quantized.engine in {"x86", "fbgemm"}
        and not {"x86", "fbgemm"}.isdisjoint(engines)
        and hasattr(torch, "quantize_per_channel")
        and hasattr(torch.ops.quantized, "linear_prepack")
        and hasattr(torch.ops.quantized, "linear_dynamic")
    )


class Int8Linear(torch.nn.Module):
    """Inference-only stand-in for a :class:`torch.nn.Linear` whose weight is
    kept as int8, one scale per output row.

    The rows given are quantized together on each call (one scale for the
    call, from their largest value): a product reads half the bytes of a
    bfloat16 weight, and on a laptop's two cores a decoding pass is bound by
    reading them. The outputs are close to the float product, not equal:
    a row's rounding depends on the largest value among the rows of its call,
    so one call should hold one sequence's rows only, and inputs with a few
    values hundreds of times the rest lose the others to the shared scale.
    """

    def __init__(self, linear: torch.nn.Linear):
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        weight = linear.weight.detach().float()
        # A row of zeros has scale 0, which quantize_per_channel refuses.
        scales = (weight.abs().amax(1) / 127).clamp(min=torch.finfo(torch.float32).tiny).double()
        zeros = torch.zeros(self.out_features, dtype=torch.long)
        # PyTorch marks its quantized tensors deprecated (to move to torchao,
        # which needs a compiler here); until they go, :func:`can_quantize`
        # is how a torch without them falls back, and the notice at every
        # start is nothing a user can act on. That warning only.
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*quantized tensor creation functions.*deprecated", category=UserWarning)
            quantized = torch.quantize_per_channel(weight, scales, zeros, 0, torch.qint8)
        bias = None if linear.bias is None else linear.bias.detach().float()
        self._packed = torch.ops.quantized.linear_prepack(quantized, bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.reshape(-1, self.in_features).float()
        # reduce_range=False: all 8 bits for the rows; the range was halved
        # only for CPUs without VNNI, whose 16-bit sums could overflow.
        out = torch.ops.quantized.linear_dynamic(rows, self._packed, False)
        return out.to(x.dtype).reshape(*x.shape[:-1], self.out_features)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, int8"


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
