"""DML_OPERATOR_CAST for every ordered pair of the 11 data types of its 6_4 table.

Each source type gets the values where conversions differ: signed zeros, halfway cases,
the limits of every narrower type and one past them, infinities, NaNs of both signs and
(for floats) denormals. The expected result is written here from the rules in
``dmlsim/ops/cast.py``'s docstring, with NumPy doing only what NumPy does exactly:
- float -> float: nearest even (NumPy converts FLOAT64 -> FLOAT16 directly, rounding once);
  NaN stays NaN with its sign; the payload is compared in the payload test.
- integer -> float: nearest even (NumPy's C conversions).
- float -> integer: truncated toward zero, NaN -> 0, saturated to the type's limits.
- integer -> integer: the low bits (two's complement).
Every other element is compared bit for bit.
"""
from __future__ import annotations

import numpy as np
import pytest

import dmlsim as dml

from helpers import assert_bits_equal

TYPES = [np.dtype(t) for t in ("float64", "float32", "float16", "int64", "int32", "int16",
                               "int8", "uint64", "uint32", "uint16", "uint8")]
FLOAT_VALUES = [0.0, -0.0, 1.5, -1.5, 2.5, -2.5, 0.49999997, 1.0 + 2.0 ** -11 + 2.0 ** -40,
                np.nan, -np.nan, np.inf, -np.inf, 1e-8, 6e-8, 3e-5, 1e-40, 1e-310, 127.9,
                128.5, -128.5, -129.0, 255.9, 256.0, 32767.5, 32768.0, 65504.0, 65519.99,
                65520.0, 2.0 ** 24 + 1, 2.0 ** 31, -2.0 ** 31 - 1, 2.0 ** 32, 2.0 ** 63,
                -2.0 ** 63, 2.0 ** 64, 1e30, 3.5e38, 1e300, -1e300]
INT_VALUES = [0, 1, -1, 2, 127, 128, -128, -129, 255, 256, 32767, 32768, -32769, 65535, 65536,
              2 ** 24 + 1, 2 ** 31 - 1, 2 ** 31, -2 ** 31 - 1, 2 ** 32 + 7, 2 ** 53 + 1,
              2 ** 63 - 1, -2 ** 63, 2 ** 64 - 1, 12345678901]


def source_values(src: np.dtype) -> np.ndarray:
    if src.kind == "f":
        with np.errstate(over="ignore"):
            return np.array(FLOAT_VALUES, np.float64).astype(src)
    bits = 8 * src.itemsize
    wrapped = [v % (1 << bits) for v in INT_VALUES]
    return np.array(wrapped, np.uint64).astype(f"u{src.itemsize}").view(src)


def expected(x: np.ndarray, dst: np.dtype) -> np.ndarray:
    if dst.kind in "iu" and x.dtype.kind == "f":
        info = np.iinfo(dst)
        t = np.trunc(x.astype(np.float64))
        lo, hi = float(info.min), float(info.max) + 1.0  # hi: a power of two, exact
        inside = np.where((t >= lo) & (t < hi), t, 0.0)
        out = inside.astype(dst)
        out[t >= hi] = info.max
        out[t < lo] = info.min
        out[np.isnan(t)] = 0
        return out
    if dst.kind in "iu":  # integer -> integer: the low bits
        bits = 8 * dst.itemsize
        low = [int(v) % (1 << bits) for v in x.reshape(-1)]
        return np.array(low, np.uint64).astype(f"u{dst.itemsize}").view(dst)
    with np.errstate(over="ignore", invalid="ignore"):
        return x.astype(dst)


PAIRS = [(s, d) for s in TYPES for d in TYPES]


@pytest.mark.parametrize("src,dst", PAIRS, ids=[f"{s.name}-{d.name}" for s, d in PAIRS])
def test_cast_pair(src, dst):
    x = source_values(src)
    desc = dml.operator_desc("CAST", InputTensor=x, OutputTensor=np.zeros(x.shape, dst))
    got = np.asarray(dml.run(desc, x))
    want = expected(x, dst)
    assert got.dtype == dst
    if dst.kind == "f":
        nan = np.isnan(want)
        assert (np.isnan(got) == nan).all(), f"{src}->{dst}: NaN positions {x[np.isnan(got)]}"
        assert (np.signbit(got[nan]) == np.signbit(want[nan])).all(), f"{src}->{dst}: NaN sign"
        assert_bits_equal(got[~nan], want[~nan], f"CAST {src} -> {dst}")
    else:
        assert_bits_equal(got, want, f"CAST {src} -> {dst}")


def test_cast_pairs_cover_the_6_4_table():
    from dmlsim._schema.operators_generated import OPERATORS
    block = max(OPERATORS["DML_OPERATOR_CAST"]["support"], key=lambda b: b["feature_level"])
    listed = {t.lower() for t in block["tensors"][0]["types"]}
    assert listed == {t.name for t in TYPES}


def test_nan_payloads_and_hand_checked_values():
    """A reader can check these by hand: the sign and the payload's top bits are kept, the
    quiet bit is set (cast.py's docstring), on every backend."""
    x = np.array([0x7FC00001, 0xFFC00000, 0x7FA00000], np.uint32).view(np.float32)
    desc = dml.operator_desc("CAST", InputTensor=x, OutputTensor=np.zeros(3, np.float16))
    got = np.asarray(dml.run(desc, x)).view(np.uint16)
    # payload 1 is below FLOAT16's 10 bits; -qNaN; signalling payload 0x200000 -> 0x100, quieted
    assert [hex(v) for v in got] == ["0x7e00", "0xfe00", "0x7f00"]
    h = np.array([0x7D00, 0xFC01], np.uint16).view(np.float16)
    desc = dml.operator_desc("CAST", InputTensor=h, OutputTensor=np.zeros(2, np.float64))
    wide = np.asarray(dml.run(desc, h)).view(np.uint64)
    assert [hex(v) for v in wide] == ["0x7ffc000000000000", "0xfff8040000000000"]
    y = np.array([3e9, -3e9, 255.5], np.float32)
    desc = dml.operator_desc("CAST", InputTensor=y, OutputTensor=np.zeros(3, np.int32))
    assert dml.run(desc, y).tolist() == [2 ** 31 - 1, -2 ** 31, 255]
