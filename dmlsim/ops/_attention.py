"""Multi-head attention shared by MULTIHEAD_ATTENTION and MULTIHEAD_ATTENTION1: where Query,
Key and Value come from (separate or stacked), bias, past key/value, the masks, and the
computation, written once for JAX (float32 matrix products at ``Precision.HIGHEST``) and
once for NumPy float64 (the reference).

[Add Bias] -> Query x Key^T * Scale -> [Add RelativePositionBias] -> [Mask] -> Softmax over
the key positions -> x Value (the pages). Shapes: Query [B, S, Hq * hs], Key [B, L, Hkv *
hs], Value [B, L, Hkv * vhs] (leading 1s allowed up to 5 dimensions); stacked tensors
[B, S or L, H, 2 or 3, hs]; Bias [Hq hs + Hkv hs + Hkv vhs]; past key/value [B, Hkv, P, hs];
RelativePositionBias [B, Hq, S, P + L]; Output [B, S, Hq * vhs]; present key/value
[B, Hkv, P + L, hs], the key and value after the bias (what the next step attends to).
With Hkv < Hq (MULTIHEAD_ATTENTION1) query head h uses key/value head h // (Hq / Hkv).

Masks (MaskType): BOOLEAN, an INT32 tensor broadcast (right-aligned, sizes equal or 1) to
[B, Hq, S, P + L]: where it is 0, MaskFilterValue is added (the page); KEY_SEQUENCE_LENGTH
[1, B]: key positions at or past the length are set to MaskFilterValue; KEY_SEQUENCE_END_START
[2, B]: positions outside [start, end) are set to it (the pages say "set" for these two).
KEY_QUERY_SEQUENCE_LENGTH_START_END's layout is garbled on the page (one queryEnd and one
keyEnd for B batch entries): E_NOTIMPL.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .._schema.members import members

NONE, KEY_LENGTH, KEY_END_START, KEY_QUERY, BOOLEAN = members(
    "DML_MULTIHEAD_ATTENTION_MASK_TYPE", "NONE KEY_SEQUENCE_LENGTH KEY_SEQUENCE_END_START "
    "KEY_QUERY_SEQUENCE_LENGTH_START_END BOOLEAN")
Q, K, V, QK, KV, QKV = ("QueryTensor", "KeyTensor", "ValueTensor", "StackedQueryKeyTensor",
                        "StackedKeyValueTensor", "StackedQueryKeyValueTensor")


def squeeze_to(x, n):
    """The last ``n`` dimensions (the leading ones are 1s)."""
    return x.reshape(x.shape[x.ndim - n:])


def sources(t, hq, hkv):
    """(q [B, S, Hq, hs], k [B, L, Hkv, hs], v [B, L, Hkv, vhs]) from the tensors present."""
    if t.get(QKV) is not None:
        x = t[QKV]
        return x[..., 0, :], x[..., 1, :], x[..., 2, :]
    if t.get(QK) is not None:
        q, k = t[QK][..., 0, :], t[QK][..., 1, :]
    else:
        q = squeeze_to(t[Q], 3)
        q = q.reshape(q.shape[:2] + (hq, -1))
    if t.get(KV) is not None:
        k, v = t[KV][..., 0, :], t[KV][..., 1, :]
    else:
        if t.get(QK) is None:
            k = squeeze_to(t[K], 3)
            k = k.reshape(k.shape[:2] + (hkv, -1))
        v = squeeze_to(t[V], 3)
        v = v.reshape(v.shape[:2] + (hkv, -1))
    return q, k, v


def attend(t, a, hq, hkv, xp, cast, operand=None, fused=False):
    """(output [B, S, Hq vhs], present key [B, Hkv, P + L, hs], present value) with the
    array module ``xp`` (jnp or np) after ``cast`` (the compute type, or float64).
    ``operand`` (KernelContext.product_operand) may keep Query and Key in FLOAT16 for the
    first product when no bias is added to them: exact products, float32 accumulation.
    ``fused`` (``_attention_fused.unfused_because`` gave None): the attention itself through cuDNN's fused
    kernel."""
    q, k, v = sources(t, hq, hkv)
    keep = operand is not None and t.get("BiasTensor") is None
    q, k = (operand(x) if keep else cast(x) for x in (q, k))
    v = cast(v)
    if t.get("BiasTensor") is not None:
        bias = cast(t["BiasTensor"]).reshape(-1)
        nq, nk = hq * q.shape[-1], hkv * k.shape[-1]
        q = q + bias[:nq].reshape(hq, -1)
        k = k + bias[nq:nq + nk].reshape(hkv, -1)
        v = v + bias[nq + nk:].reshape(hkv, -1)
    q, k, v = (xp.transpose(x, (0, 2, 1, 3)) for x in (q, k, v))  # [B, heads, seq, size]
    if t.get("PastKeyTensor") is not None:
        past = squeeze_to(t["PastKeyTensor"], 4)
        k = xp.concatenate([past.astype(k.dtype) if keep else cast(past), k], 2)
    if t.get("PastValueTensor") is not None:
        v = xp.concatenate([squeeze_to(cast(t["PastValueTensor"]), 4), v], 2)
    present_k, present_v = k, v
    if fused:
        o = jax.nn.dot_product_attention(
            *(jnp.transpose(x, (0, 2, 1, 3)) for x in (q, k, v)),
            scale=float(np.float32(a["Scale"])), implementation="cudnn")
        return o.reshape(o.shape[:2] + (-1,)), present_k, present_v
    if hq != hkv:
        k, v = (xp.repeat(x, hq // hkv, axis=1) for x in (k, v))
    scale = float(np.float32(a["Scale"]))
    if xp is jnp:
        acc = v.dtype  # the compute type
        s = jnp.einsum("bhsd,bhld->bhsl", q, k, precision=lax.Precision.HIGHEST,
                       preferred_element_type=acc) * jnp.asarray(scale, acc)
    else:
        s = np.einsum("bhsd,bhld->bhsl", q, k) * scale
    if t.get("RelativePositionBiasTensor") is not None:
        s = s + squeeze_to(cast(t["RelativePositionBiasTensor"]), 4)
    s = masked(s, t.get("MaskTensor"), a, xp)
    m = s.max(axis=-1, keepdims=True)
    e = xp.exp(s - m)
    p = e / e.sum(axis=-1, keepdims=True)
    if xp is jnp:
        o = jnp.einsum("bhsl,bhld->bhsd", p, v, precision=lax.Precision.HIGHEST,
                       preferred_element_type=p.dtype)
    else:
        o = np.einsum("bhsl,bhld->bhsd", p, v)
    o = xp.transpose(o, (0, 2, 1, 3))
    return o.reshape(o.shape[:2] + (-1,)), present_k, present_v


def masked(s, mask, a, xp):
    if mask is None or a["MaskType"] == NONE:
        return s
    kind, fill = a["MaskType"], float(np.float32(a["MaskFilterValue"]))
    b, _, _, n = s.shape
    pos = xp.arange(n)[None, None, None, :]
    if kind == BOOLEAN:
        m = mask.reshape(mask.shape[max(0, mask.ndim - 4):])
        m = m.reshape((1,) * (4 - m.ndim) + m.shape)
        return s + xp.where(m == 0, fill, 0.0).astype(s.dtype)
    mk = mask.reshape(-1)
    if kind == KEY_LENGTH:
        keep = pos < mk[:b].reshape(b, 1, 1, 1)
    else:  # KEY_END_START: [2, B], end then start
        keep = (pos < mk[:b].reshape(b, 1, 1, 1)) & (pos >= mk[b:2 * b].reshape(b, 1, 1, 1))
    return xp.where(keep, s, xp.asarray(fill, s.dtype))
