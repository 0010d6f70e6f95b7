"""BIT_SHIFT_LEFT f(a, b) = (a << b) and BIT_SHIFT_RIGHT f(a, b) = (a >> b), one row each.

Logical shifts of unsigned elements (UINT8..UINT32, UINT64 from FL 4_1) by the count in the
corresponding element of BTensor; all three tensors share one DataType. Bits shifted out
are lost and zeros are shifted in.

The page does not say what a count at or past the element's bit width does. dmlsim shifts
every bit out, so the result is 0 (UINT8 1 << 8 is 0, UINT32 x >> 32 is 0): the result of
the operation the page names, on a w-bit element. It does not mask the count to its low
bits (x86 and HLSL hardware do, giving x << (b % 32) for 32-bit elements).
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, register, same_sizes, same_type, sizes_of

A, B, OUT = "ATensor", "BTensor", "OutputTensor"


def _register(suffix, left, examples):
    def kernel(ATensor, BTensor, *, ctx):
        width = np.dtype(ATensor.dtype).itemsize * 8
        big = BTensor >= width
        safe = jnp.where(big, jnp.zeros_like(BTensor), BTensor)  # keep the shift defined
        shifted = (ATensor << safe) if left else (ATensor >> safe)
        return jnp.where(big, jnp.zeros_like(ATensor), shifted)

    def reference(ATensor, BTensor, *, ctx):
        a = np.asarray(ATensor)
        width = 8 * a.dtype.itemsize
        mask = (1 << width) - 1
        flat = [0 if int(n) >= width else ((int(x) << int(n)) & mask) if left else
                (int(x) >> int(n)) for x, n in zip(a.reshape(-1), np.asarray(BTensor).reshape(-1))]
        return np.array(flat, a.dtype).reshape(a.shape)

    register(OperatorDef(f"DML_OPERATOR_ELEMENT_WISE_BIT_SHIFT_{suffix}", kernel, reference,
                         output_sizes=sizes_of(A, OUT), rules=(same_sizes(A, B),
                                                               same_type(A, B, OUT)),
                         examples=examples, module=__name__))


def _ex(a, b, out, dtype, note=""):
    return Example({A: np.array(a, dtype), B: np.array(b, dtype)}, {OUT: np.array(out, dtype)},
                   note=note)


_register("LEFT", True, (
    _ex([1, 0b1011, 0xFF, 1, 1], [0, 2, 4, 7, 8], [1, 0b101100, 0xF0, 0x80, 0], np.uint8,
        note="high bits are lost; a count of 8 or more on UINT8 gives 0"),
    _ex([1, 0x80000000, 3], [31, 1, 32], [0x80000000, 0, 0], np.uint32,
        note="a count equal to the width gives 0, not x << 0"),
    _ex([1, 2**64 - 1], [63, 255], [2**63, 0], np.uint64),
))
_register("RIGHT", False, (
    _ex([0x80, 0xFF, 0xFF, 0xFF], [7, 4, 8, 200], [1, 0x0F, 0, 0], np.uint8,
        note="logical: zeros shift in; a count of 8 or more on UINT8 gives 0"),
    _ex([0xFFFF, 0x8000], [15, 16], [1, 0], np.uint16),
    _ex([2**64 - 1, 2**63], [1, 64], [2**63 - 1, 0], np.uint64),
))
