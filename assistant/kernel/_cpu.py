"""What this machine offers: what its CPU computes natively (asked once
where a choice depends on it), and handing freed memory back to the system."""

from __future__ import annotations

from functools import lru_cache

__all__ = ["native_bf16", "release_free_memory"]


@lru_cache(maxsize=1)
def native_bf16() -> bool:
    """Whether the CPU multiplies bfloat16 natively, as oneDNN reports it
    (AVX512-BF16 or AMX). Elsewhere bfloat16 is emulated, and slower than
    float32."""
    import torch  # here, not at import: the kernel loads without torch

    return bool(torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported())


def release_free_memory() -> bool:
    """Hand the memory glibc's allocator keeps free back to the system
    (``malloc_trim(0)``); False where the C library is not glibc. glibc
    keeps freed blocks in its heap, so a process's resident memory stays at
    its highest: the server's after the sessions Gradio drops, the
    rewriter's after its plain weights are packed."""
    import ctypes
    import ctypes.util

    try:
        trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return False
    trim(0)
    return True
