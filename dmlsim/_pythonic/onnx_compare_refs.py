"""float64 references, written from ONNX Runtime's definitions (``docs/ContribOperators.md``), for
the contrib operators a DirectML language model is made of, as ``onnx.reference`` operators, so
``compare`` can run a genai model's graph in float64: SimplifiedLayerNormalization (ORT's,
ONNX domain), SkipSimplifiedLayerNormalization, RotaryEmbedding (3-D input, full rotary
dimension), GroupQueryAttention (separate Q/K/V, past of any length concatenated with the new
keys and values, causal, grouped heads; no rotary, local window or softcap) and MatMulNBits
(4 and 8 bits, with or without zero points). What they do not cover raises, and ``compare``
says so."""
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


class RotaryEmbedding(OpRun):
    op_domain = MS

    def _run(self, x, position_ids, cos_cache, sin_cache, interleaved=None, is_packed_batching=None,
             num_heads=None, rotary_embedding_dim=None, scale=None):
        if x.ndim != 3 or rotary_embedding_dim:
            raise NotImplementedError("RotaryEmbedding reference: 3-D input, full rotary "
                                      "dimension only")
        b, s, d = x.shape
        half = cos_cache.shape[1]
        n = d // (2 * half)
        pos = position_ids if position_ids.size != 1 else \
            position_ids.reshape(-1)[0] + np.arange(s)[None, :].repeat(b, 0)
        cos, sin = cos_cache[pos][:, :, None, :], sin_cache[pos][:, :, None, :]  # [b, s, 1, h/2]
        h = x.reshape(b, s, n, 2 * half)
        if interleaved:
            x1, x2 = h[..., 0::2], h[..., 1::2]
            out = np.empty_like(h)
            out[..., 0::2], out[..., 1::2] = x1 * cos - x2 * sin, x1 * sin + x2 * cos
        else:
            x1, x2 = h[..., :half], h[..., half:]
            out = np.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)
        return (out.reshape(b, s, d),)


class GroupQueryAttention(OpRun):
    op_domain = MS

    def _run(self, query, key, value, past_key, past_value, seqlens_k, total_sequence_length,
             cos_cache=None, sin_cache=None, position_ids=None, attention_bias=None,
             head_sink=None, num_heads=None, kv_num_heads=None, scale=None,
             local_window_size=None, softcap=None, do_rotary=None, rotary_interleaved=None,
             smooth_softmax=None, qk_output=None):
        if do_rotary or (softcap or 0) != 0 or (local_window_size or -1) != -1 or key is None:
            raise NotImplementedError("GroupQueryAttention reference: rotary, softcap, local "
                                      "window and packed QKV are not covered")
        b, s, _ = query.shape
        n, kvn = int(num_heads), int(kv_num_heads)
        hs = query.shape[2] // n
        q = query.reshape(b, s, n, hs).transpose(0, 2, 1, 3)
        k = key.reshape(b, s, kvn, hs).transpose(0, 2, 1, 3)
        v = value.reshape(b, s, kvn, hs).transpose(0, 2, 1, 3)
        if past_key is not None and past_key.size:
            k = np.concatenate([past_key, k], axis=2)
            v = np.concatenate([past_value, v], axis=2)
        t = k.shape[2]
        sc = float(scale) if scale else 1.0 / np.sqrt(hs)
        group = n // kvn
        kk, vv = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
        logits = np.einsum("bnsh,bnth->bnst", q, kk) * sc
        out = np.empty((b, n, s, hs))
        for i in range(b):
            total = int(np.asarray(seqlens_k).reshape(-1)[i]) + 1
            first = total - s  # the absolute position of the first query
            qpos = first + np.arange(s)[:, None]
            keep = (np.arange(t)[None, :] <= qpos) & (np.arange(t)[None, :] < total)
            z = np.where(keep, logits[i], -np.inf)
            z = np.exp(z - z.max(axis=-1, keepdims=True))
            out[i] = np.einsum("nst,nth->nsh", z / z.sum(axis=-1, keepdims=True), vv[i])
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
