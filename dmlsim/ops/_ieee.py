"""Float helpers with HLSL/IEEE semantics that XLA backends must not optimize away:
NaN-ignoring max/min (HLSL max/min, IEEE 754-2008 maxNum/minNum) and correctly rounded
float32 division and square root."""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

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
    """
    def wrapped(*args):
        if args[0].dtype == jnp.float32 and jax.config.jax_enable_x64:
            # The barrier keeps LLVM from folding fptrunc(f64 op) back into the approximate
            # float32 op (measured on an H200: 29% of quotients 1 ULP off without it).
            wide = lax.optimization_barrier(fn(*(a.astype(jnp.float64) for a in args)))
            return wide.astype(jnp.float32)
        return fn(*args)
    return wrapped
