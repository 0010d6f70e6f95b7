"""float64 references, written from ONNX Runtime's definitions (``docs/ContribOperators.md``), for
the contrib operators a DirectML language model is made of, as ``onnx.reference`` operators, so
``compare`` can run a genai model's graph in float64: SimplifiedLayerNormalization (ORT's,
ONNX domain), SkipSimplifiedLayerNormalization, RotaryEmbedding (3-D or 4-D input, full or
partial rotary dimension, interleaved or not), GroupQueryAttention (packed or separate Q/K/V,
past of any length concatenated with the new keys and values, causal, grouped heads, rotary,
softcap, local window, attention_bias, smooth_softmax, head_sink) and MatMulNBits (4 and 8
bits, with or without zero points). tests/test_onnx_compare_refs.py checks each against ONNX
Runtime's CPU kernels. What they do not cover raises, and ``compare`` says so."""
from __future__ import annotations

import numpy as np
from onnx.reference.op_run import OpRun

MS = "com.microsoft"


def _rms(x, axis, eps):
    axes = tuple(range(axis % x.ndim, x.ndim))
    return 1.0 / np.sqrt(np.mean(x * x, axis=axes, keepdims=True) + eps)


class SimplifiedLayerNormalization(OpRun):
    op_domain = ""

    def _run(self, x, scale, axis=None, epsilon=None, stash_type=None):
        axis = -1 if axis is None else axis
        inv = _rms(x, axis, 1e-5 if epsilon is None else epsilon)
        return (x * inv * scale, inv)


class SkipSimplifiedLayerNormalization(OpRun):
    op_domain = MS

    def _run(self, x, skip, gamma, bias=None, epsilon=None):
        s = x + skip + (0 if bias is None else bias)
        inv = _rms(s, -1, 1e-12 if epsilon is None else epsilon)
        return (s * inv * gamma, np.mean(s, axis=-1, keepdims=True), inv, s)


def _rotate(h, cos, sin, interleaved):
    """Rotary embedding of the last axis of ``h`` ([..., rot]) by ``cos``/``sin`` ([..., rot/2],
    broadcast): pairs (i, i + rot/2), or (2i, 2i + 1) when interleaved."""
    if interleaved:
        x1, x2 = h[..., 0::2], h[..., 1::2]
        out = np.empty_like(h)
        out[..., 0::2], out[..., 1::2] = x1 * cos - x2 * sin, x1 * sin + x2 * cos
        return out
    half = h.shape[-1] // 2
    x1, x2 = h[..., :half], h[..., half:]
    return np.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)


def _rotary(h, pos, cos_cache, sin_cache, interleaved, rot=None):
    """``h`` [b, s, n, head] rotated in its first ``rot`` dims (default: twice the caches'
    width) at positions ``pos`` [b, s]; the rest passes."""
    rot = int(rot or 2 * cos_cache.shape[1])
    cos = cos_cache[pos][:, :, None, :rot // 2]  # [b, s, 1, rot/2]
    sin = sin_cache[pos][:, :, None, :rot // 2]
    return np.concatenate([_rotate(h[..., :rot], cos, sin, interleaved), h[..., rot:]], axis=-1)


class RotaryEmbedding(OpRun):
    op_domain = MS

    def _run(self, x, position_ids, cos_cache, sin_cache, interleaved=None, is_packed_batching=None,
             num_heads=None, rotary_embedding_dim=None, scale=None):
        four = x.ndim == 4  # [b, n, s, head]; else [b, s, hidden]
        h = x.transpose(0, 2, 1, 3) if four else x
        b, s = h.shape[:2]
        if not four:
            n = int(num_heads) if num_heads else h.shape[2] // (2 * cos_cache.shape[1])
            h = h.reshape(b, s, n, -1)
        pos = position_ids if position_ids.size != 1 else \
            position_ids.reshape(-1)[0] + np.arange(s)[None, :].repeat(b, 0)
        out = _rotary(h, pos, cos_cache, sin_cache, interleaved, rotary_embedding_dim)
        return (out.transpose(0, 2, 1, 3) if four else out.reshape(x.shape),)


class GroupQueryAttention(OpRun):
    """Causal attention with grouped key/value heads, from ORT's definition: packed or separate
    Q/K/V, rotary (do_rotary: the new queries and keys at their absolute positions, or
    position_ids), softcap (softcap * tanh(logits / softcap)), a local window (a query sees
    local_window_size keys: itself and the ones before it), attention_bias added to the logits,
    smooth_softmax (an extra zero logit in the denominator) and head_sink (a per-head one)."""

    op_domain = MS

    def _run(self, query, key, value, past_key, past_value, seqlens_k, total_sequence_length,
             cos_cache=None, sin_cache=None, position_ids=None, attention_bias=None,
             head_sink=None, num_heads=None, kv_num_heads=None, scale=None,
             local_window_size=None, softcap=None, do_rotary=None, rotary_interleaved=None,
             smooth_softmax=None, qk_output=None):
        b, s, _ = query.shape
        n, kvn = int(num_heads), int(kv_num_heads)
        if key is None:  # packed: [q heads | k heads | v heads]
            hs = query.shape[2] // (n + 2 * kvn)
            query, key, value = np.split(query, [n * hs, (n + kvn) * hs], axis=2)
        hs = query.shape[2] // n
        q = query.reshape(b, s, n, hs)
        k = key.reshape(b, s, kvn, hs)
        v = value.reshape(b, s, kvn, hs).transpose(0, 2, 1, 3)
        lengths = np.asarray(seqlens_k).reshape(-1).astype(np.int64) + 1  # each batch's total
        if do_rotary:
            pos = np.asarray(position_ids, np.int64) if position_ids is not None else \
                (lengths[:, None] - s) + np.arange(s)[None, :]
            q = _rotary(q, pos, cos_cache, sin_cache, rotary_interleaved)
            k = _rotary(k, pos, cos_cache, sin_cache, rotary_interleaved)
        q, k = q.transpose(0, 2, 1, 3), k.transpose(0, 2, 1, 3)
        if past_key is not None and past_key.size:
            k = np.concatenate([past_key, k], axis=2)
            v = np.concatenate([past_value, v], axis=2)
        t = k.shape[2]
        sc = float(scale) if scale else 1.0 / np.sqrt(hs)
        group = n // kvn
        kk, vv = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
        logits = np.einsum("bnsh,bnth->bnst", q, kk) * sc
        if softcap:
            logits = float(softcap) * np.tanh(logits / float(softcap))
        if attention_bias is not None:
            logits = logits + attention_bias
        window = int(local_window_size) if local_window_size is not None else -1
        out = np.empty((b, n, s, hs))
        for i in range(b):
            total = int(lengths[i])
            qpos = total - s + np.arange(s)[:, None]  # the absolute position of each query
            kpos = np.arange(t)[None, :]
            keep = (kpos <= qpos) & (kpos < total)
            if window >= 0:  # the query and the window - 1 keys before it
                keep &= kpos > qpos - window
            z = np.where(keep, logits[i], -np.inf)
            top = z.max(axis=-1, keepdims=True)
            extra = 0.0
            if smooth_softmax:
                top = np.maximum(top, 0.0)
                extra = np.exp(-top)
            if head_sink is not None:
                sink = np.asarray(head_sink, np.float64).reshape(n, 1, 1)
                top = np.maximum(top, sink)
                extra = np.exp(sink - top)
            e = np.exp(z - top)
            out[i] = np.einsum("nst,nth->nsh", e / (e.sum(axis=-1, keepdims=True) + extra),
                               vv[i])
        return (out.transpose(0, 2, 1, 3).reshape(b, s, n * hs), k, v)


class MatMulNBits(OpRun):
    op_domain = MS

    def _run(self, a, b, scales, zero_points=None, g_idx=None, bias=None, K=None, N=None,
             bits=None, block_size=None, accuracy_level=None):
        bits, k, n, bs = int(bits or 4), int(K), int(N), int(block_size)
        blocks = (k + bs - 1) // bs
        raw = np.asarray(b, np.uint8).reshape(n, blocks, -1)
        if bits == 4:
            q = np.stack([raw & 0x0F, raw >> 4], axis=-1).reshape(n, blocks, -1)
        elif bits == 8:
            q = raw
        else:
            raise NotImplementedError(f"MatMulNBits reference: {bits} bits")
        q = q[:, :, :bs].astype(np.float64)
        if zero_points is None:
            zp = np.full((n, blocks), 1 << (bits - 1), np.float64)
        elif np.asarray(zero_points).dtype == np.uint8:
            z = np.asarray(zero_points, np.uint8).reshape(n, -1)
            zp = (np.stack([z & 0x0F, z >> 4], -1).reshape(n, -1) if bits == 4 else z)
            zp = zp[:, :blocks].astype(np.float64)
        else:
            raise NotImplementedError("MatMulNBits reference: floating-point zero points")
        w = ((q - zp[:, :, None]) * np.asarray(scales, np.float64).reshape(n, blocks)[:, :, None])
        w = w.reshape(n, -1)[:, :k]
        y = np.asarray(a, np.float64) @ w.T
        return (y + (0 if bias is None else bias),)


OPS = [SimplifiedLayerNormalization, SkipSimplifiedLayerNormalization, RotaryEmbedding,
       GroupQueryAttention, MatMulNBits]
