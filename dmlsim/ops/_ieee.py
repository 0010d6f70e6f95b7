"""Float helpers with HLSL/IEEE semantics that XLA backends must not optimize away:
NaN-ignoring max/min (HLSL max/min, IEEE 754-2008 maxNum/minNum) and correctly rounded
float32 division and square root, and float-to-float conversions that round once, keep
float32 denormals and give NaNs the same bits on every backend (CAST)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .._core.dtypes import UNSIGNED_OF_SIZE

from ._numeric import is_int


# NaN is tested on both operands explicitly: XLA on GPUs rewrites jnp.fmin/fmax's
# select(a < b, a, b) into a NaN-propagating min when one side is a constant, which turned
# CLIP1(NaN) into Min instead of Max on an H200.
def fmax(a, b):
    if is_int(a.dtype):
        return jnp.maximum(a, b)
    r = jnp.where(jnp.isnan(a), b, jnp.where(jnp.isnan(b), a, jnp.maximum(a, b)))
    return jnp.where((a == 0) & (b == 0), jnp.where(jnp.signbit(a), b, a), r)


def fmin(a, b):
    if is_int(a.dtype):
        return jnp.minimum(a, b)
    r = jnp.where(jnp.isnan(a), b, jnp.where(jnp.isnan(b), a, jnp.minimum(a, b)))
    return jnp.where((a == 0) & (b == 0), jnp.where(jnp.signbit(a), a, b), r)


def correctly_rounded(fn):
    """``fn`` (division, square root) correctly rounded for FLOAT32 on every backend.

    XLA on NVIDIA GPUs divides and takes square roots of float32 approximately (1 ULP off on
    an H200); computing in float64 and rounding once is exact for / and sqrt, since double
    rounding is innocuous when 53 >= 2 * 24 + 2. Needs jax_enable_x64 (dmlsim's default).

    The widening and the rounding are :func:`_f32_to_f64` and :func:`_f64_to_f32`, whose
    results are selects, not plain conversions, so the compilers cannot rewrite across them:
    LLVM folds fptrunc(f64 op(fpext a, fpext b)) back into the approximate float32 op (on an
    H200: 29% of quotients 1 ULP off), and fpext(fptrunc(v)) into v, so that a quotient by a
    float32 quotient computed just before would use its float64 value (0.5 / float32(5 / 255)
    gave 25.5 exactly, not 25.4999992 -> 25.499998). They are element-wise and fuse with
    their neighbours; optimization barriers, which did the same before, made XLA on a GPU
    run the widening, the operation and the rounding as three kernels over float64 tensors
    (MiniLM FLOAT16: 0.7 of its 2.6 ms of kernels).
    """
    def wrapped(*args):
        if args[0].dtype == jnp.float32 and jax.config.jax_enable_x64:
            return _f64_to_f32(fn(*(_f32_to_f64(a) for a in args)))
        return fn(*args)
    return wrapped


F64 = np.dtype(np.float64)


def _f64_to_f16(x):
    """FLOAT64 -> FLOAT16 rounded once: first to float32 by the bits, truncated with the
    dropped bits jammed into the last one (round to odd: no float conversion a compiler
    could merge or reorder; XLA on an H200 lost the float version's sticky bit), then one
    float32 -> float16 conversion to nearest even. Below 2^-126 the result is a signed
    zero and from 2^128 an infinity either way. NaN is the caller's (``float_to_float``)."""
    bits = lax.bitcast_convert_type(x, jnp.uint64)
    sign = (bits >> 63).astype(jnp.uint32) << 31
    e32 = ((bits >> 52) & 0x7FF).astype(jnp.int64) - (1023 - 127)
    m = bits & ((1 << 52) - 1)
    jam = ((m & ((1 << 29) - 1)) != 0).astype(jnp.uint32)
    t = sign | (jnp.clip(e32, 0, 255).astype(jnp.uint32) << 23) | (m >> 29).astype(jnp.uint32)
    t = jnp.where(e32 > 254, sign | 0x7F800000, jnp.where(e32 < 1, sign, t | jam))
    return lax.bitcast_convert_type(t, jnp.float32).astype(jnp.float16)


def _f32_to_f64(x):
    """Exact, denormals included (XLA's CPU backend flushes them in a plain convert)."""
    bits = lax.bitcast_convert_type(x, jnp.uint32)
    tiny = (bits & 0x7F800000) == 0  # zero or denormal: m * 2^-149
    m = (bits & 0x007FFFFF).astype(jnp.float64) * 2.0 ** -149
    m = jnp.where((bits >> 31) == 1, -m, m)
    return jnp.where(tiny, m, x.astype(jnp.float64))


def _f64_to_f32(x):
    """Nearest even, float32 denormals included: below 2^-126 the result is the integer
    rint(|x| * 2^149) of denormal steps (2^23 steps is the smallest normal)."""
    steps = jnp.rint(jnp.abs(x) * 2.0 ** 149).astype(jnp.uint32)
    sign = lax.bitcast_convert_type(x, jnp.uint64) >> 63
    tiny = lax.bitcast_convert_type(steps | (sign.astype(jnp.uint32) << 31), jnp.float32)
    return jnp.where(jnp.abs(x) < 2.0 ** -126, tiny, x.astype(jnp.float32))


_MANTISSA = {2: 10, 4: 23, 8: 52}


def _nan_bits(x, dt):
    """Each NaN of ``x`` as a NaN of ``dt`` by the bits, the same on every backend: the sign
    kept, the payload's top bits kept (or the payload shifted up), the quiet bit set."""
    ks, kd = x.dtype.itemsize, dt.itemsize
    ms, md = _MANTISSA[ks], _MANTISSA[kd]
    b = lax.bitcast_convert_type(x, UNSIGNED_OF_SIZE[ks]).astype(jnp.uint64)
    sign = b >> (8 * ks - 1)
    m = b & ((1 << ms) - 1)
    m = m >> (ms - md) if md < ms else m << (md - ms)
    exp = ((1 << (8 * kd - 1 - md)) - 1) << md
    out = (sign << (8 * kd - 1)) | exp | (1 << (md - 1)) | m
    return lax.bitcast_convert_type(out.astype(UNSIGNED_OF_SIZE[kd]), dt)


def float_to_float(x, dt):
    """CAST between float types: nearest even, rounded once, denormals kept, NaN bits fixed."""
    src = np.dtype(x.dtype)
    if src == F64 and dt == np.float16:
        y = _f64_to_f16(x)
    elif (src, dt) == (np.float32, F64):
        y = _f32_to_f64(x)
    elif (src, dt) == (F64, np.float32):
        y = _f64_to_f32(x)
    else:
        y = x.astype(dt)
    return jnp.where(jnp.isnan(x), _nan_bits(x, dt), y)
