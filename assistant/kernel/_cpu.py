"""What this CPU computes natively, asked once where a choice depends on it."""

from __future__ import annotations

from functools import lru_cache

__all__ = ["native_bf16"]


@lru_cache(maxsize=1)
def native_bf16() -> bool:
    """Whether the CPU multiplies bfloat16 natively, as oneDNN reports it
    (AVX512-BF16 or AMX). Elsewhere bfloat16 is emulated, and slower than
    float32."""
    import torch  # here, not at import: the kernel loads without torch

    return bool(torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported())
