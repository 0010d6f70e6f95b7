"""When MULTIHEAD_ATTENTION may run as one fused kernel: cuDNN's flash attention through
``jax.nn.dot_product_attention(..., implementation="cudnn")`` (``_attention.attend`` calls it)."""
from __future__ import annotations

import numpy as np

from ._attention import NONE, sources


def unfused_because(t, a, hq, hkv, half: bool, backend: str) -> str | None:
    """Why the fused kernel (cuDNN's flash attention through ``jax.nn.dot_product_attention``)
    does not compute this attention, or None when it does. It keeps FLOAT16 probabilities
    between its two products and never forms the scores in float32 at once, which DML allows
    only with DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION; it runs on GPUs; it has no
    MaskFilterValue (a mask there fills with -inf, not with the page's value) and no additive
    relative-position bias here; its head sizes are multiples of 8 up to 128, the same for
    Key and Value."""
    if not half:
        return "DML computes FLOAT16 in float32 without ALLOW_HALF_PRECISION_COMPUTATION"
    if backend != "gpu":
        return f"no fused kernel on the {backend} backend"
    q, k, v = sources(t, hq, hkv)
    if any(np.dtype(x.dtype) != np.float16 for x in (q, k, v)):
        return "not FLOAT16"
    if t.get("MaskTensor") is not None and a["MaskType"] != NONE:
        return "a mask (MaskFilterValue is added or set; the fused kernel masks with -inf)"
    if t.get("RelativePositionBiasTensor") is not None:
        return "a RelativePositionBiasTensor"
    if not (q.shape[-1] == k.shape[-1] == v.shape[-1] and q.shape[-1] % 8 == 0 and
            q.shape[-1] <= 128):
        return "head sizes other than one multiple of 8 up to 128"
    return None
