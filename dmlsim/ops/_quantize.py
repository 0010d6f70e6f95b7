"""Shared steps of the linear (de)quantization operators.

The pages give the math: q = clamp(round(v) + zero_point, Min, Max) with Min/Max the
output type's range. For a float input, v = input / scale is computed as DirectML computes
FLOAT32: one correctly rounded float32 division (FLOAT16 operands widened to float32 first),
which is also ONNX QuantizeLinear's definition (0.5 / (5 / 255) is 25.5 in float32, 25.4999...
exactly: the float32 quotient rounds to 26); an INT32 input is divided in float64. v is
rounded half to even (ONNX's rule; the pages say only "round"), then saturated. Where the
page leaves a value undefined (a scale of 0) or silent (a NaN input), dmlsim's answer is:
NaN rounds to 0, so it quantizes to the zero point; +-inf (x / 0 included) saturates to
Max / Min.
"""
from __future__ import annotations

import jax.numpy as jnp
import ml_dtypes
import numpy as np

from ._ieee import correctly_rounded


def f64(x):
    return None if x is None else jnp.asarray(x).astype(np.float64)


def quotient(x, scale):
    """input / scale as float64 holding the value DirectML computes (see above; JAX)."""
    x = jnp.asarray(x)
    if jnp.issubdtype(x.dtype, jnp.floating):  # XLA's CPU backend multiplies by 1 / s
        q = correctly_rounded(lambda a, b: a / b)(x.astype(np.float32),  # for a broadcast s
                                                  jnp.asarray(scale).astype(np.float32))
        return q.astype(np.float64)
    return f64(x) / f64(scale)


def quotient_reference(x, scale):
    """:func:`quotient` in NumPy."""
    x = np.asarray(x)
    if x.dtype.kind == "f":
        return (x.astype(np.float32) / np.asarray(scale).astype(np.float32)).astype(np.float64)
    return x.astype(np.float64) / np.asarray(scale, np.float64)


def requantize(v, zero_point, out_dtype):
    """clamp(round(v) + zero_point, Min, Max) in ``out_dtype``; ``v`` is float64."""
    r = jnp.round(v)  # half to even
    r = jnp.where(jnp.isnan(r), 0.0, r)
    if zero_point is not None:
        r = r + f64(zero_point)
    info = ml_dtypes.iinfo(out_dtype)
    return jnp.clip(r, float(info.min), float(info.max)).astype(out_dtype)


def zero_point_type(out, zero_point, fallback):
    """``output_types`` of a requantizing operator: ``out`` takes ``zero_point``'s type (the
    zero point is of the output's type), or ``fallback``'s when it is absent."""
    def types(spec):
        t = spec.tensor
        return {out: (t[zero_point] if t.get(zero_point) else t[fallback]).data_type}
    return types


def same_dimension_count(*names):
    def rule(spec, check):
        t = spec.tensor
        present = [(n, t[n]) for n in names if t.get(n) is not None]
        if not present:
            return
        n0, t0 = present[0]
        for n, tn in present[1:]:
            if len(tn.sizes) != len(t0.sizes):
                check.fail(f"{n}.DimensionCount is {len(tn.sizes)} but {n0}.DimensionCount is "
                           f"{len(t0.sizes)}; they must match")
    rule.__doc__ = f"{', '.join(names)} must have the same DimensionCount."
    return rule


def single_element(target, *names):
    """Each of ``names`` holds one value ("the expected number of elements is 1"): every
    dimension has size 1 or stride 0, and its sizes broadcast to ``target``'s."""
    def rule(spec, check):
        t = spec.tensor
        if t.get(target) is None:
            return
        want = t[target].sizes
        for n in names:
            tn = t.get(n)
            if tn is None:
                continue
            for d, (s, st) in enumerate(zip(tn.sizes, tn.element_strides)):
                if s != 1 and st != 0:
                    check.fail(f"{n} must hold one element, but dimension {d} has size {s} and "
                               f"stride {st} ({tn.describe()}); use size 1 or stride 0")
                if s != 1 and s != want[d]:
                    check.fail(f"{n}.Sizes {list(tn.sizes)} does not broadcast to "
                               f"{target}.Sizes {list(want)}")
    rule.__doc__ = f"{', '.join(names)} must each hold exactly one element."
    return rule


def along(z, rank, axis, dtype=np.int32):
    """A per-tensor or per-axis tensor (every dimension 1 but ``axis``) as an array that
    broadcasts against an operand of ``rank`` dimensions: its values along ``axis`` (JAX)."""
    z = jnp.asarray(z).astype(dtype).reshape(-1)
    shape = [1] * rank
    shape[axis] = z.shape[0]
    return z.reshape(shape)


def along_reference(z, rank, axis, dtype=np.float64):
    """:func:`along` in NumPy (``object`` for exact Python integers)."""
    z = np.asarray(z).astype(dtype).reshape(-1)
    shape = [1] * rank
    shape[axis] = z.shape[0]
    return z.reshape(shape)


def per_axis(name, operand, axis, what):
    """Rule: ``name`` is per tensor (one element) or holds one value per index of
    ``operand`` along ``axis`` (negative: from the end), every other dimension 1. It has
    the operand's DimensionCount or, from FL 5_2 style 1-D forms, one dimension (the
    count along ``axis``); missing leading dimensions are 1."""
    def rule(spec, check):
        z, x = spec.tensor.get(name), spec.tensor.get(operand)
        if z is None or x is None:
            return
        rank = max(len(x.sizes), 4)
        pos = axis % len(x.sizes) + rank - len(x.sizes)
        if len(z.sizes) == 1:
            sizes = [1] * rank
            sizes[pos] = z.sizes[0]
        else:
            sizes = [1] * (rank - len(z.sizes)) + list(z.sizes)
        count = sizes[pos]
        others = [s for i, s in enumerate(sizes) if i != pos]
        if any(s != 1 for s in others) or count not in (1, x.sizes[axis]):
            check.fail(f"{name}.Sizes is {list(z.sizes)}; it must be {{1, 1, 1, 1}} (per "
                       f"tensor) or hold {x.sizes[axis]} values along {what}, every other "
                       "dimension 1")
    rule.__doc__ = f"{name}: one value, or one per {what} of {operand}."
    return rule

