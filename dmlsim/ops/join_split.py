"""JOIN and SPLIT: concatenate tensors along an axis, and split one apart again.

- JOIN: InputTensors (InputCount > 0) are identical in every dimension but Axis; the output
  has their sizes with Axis summed. Joining one tensor copies it.
- SPLIT: OutputTensors (OutputCount > 0) are identical to InputTensor in every dimension but
  Axis, whose sizes sum to the input's. The split sizes are the desc's (a shape rule cannot
  infer them). Splitting into one tensor copies it.

All tensors share one DataType and DimensionCount; Axis is in [0, DimensionCount - 1].
Values are copied bit for bit.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, Sizes, register
from ._movement import axis_in_range, from_bits, to_bits

INS, IN, OUT, OUTS = "InputTensors", "InputTensor", "OutputTensor", "OutputTensors"


def join(InputTensors, *, Axis, ctx):
    dtype = InputTensors[0].dtype
    return from_bits(jnp.concatenate([to_bits(x) for x in InputTensors], axis=Axis), dtype)


def join_reference(InputTensors, *, Axis, ctx):
    parts = [np.asarray(x) for x in InputTensors]
    total = sum(p.shape[Axis] for p in parts)
    out = np.empty(parts[0].shape[:Axis] + (total,) + parts[0].shape[Axis + 1:], parts[0].dtype)
    at = 0
    for p in parts:  # place each input by index arithmetic
        idx = [slice(None)] * p.ndim
        idx[Axis] = slice(at, at + p.shape[Axis])
        out[tuple(idx)] = p
        at += p.shape[Axis]
    return out


def _same_but_axis(check, axis, first, name0, others):
    for name, t in others:
        if len(t.sizes) != len(first.sizes):
            check.fail(f"{name}.DimensionCount is {len(t.sizes)} but {name0}.DimensionCount is "
                       f"{len(first.sizes)}; they must match")
        if t.data_type != first.data_type:
            check.fail(f"{name}.DataType differs from {name0}.DataType; they must match")
        for d, (a, b) in enumerate(zip(t.sizes, first.sizes)):
            if d != axis and a != b:
                check.fail(f"{name}.Sizes {list(t.sizes)} differs from {name0}.Sizes "
                           f"{list(first.sizes)} in dimension {d}, which is not the axis {axis}")


def join_sizes(spec, check):
    ins, axis = spec.tensor[INS], spec.attr["Axis"]
    if not ins:
        check.fail("InputCount is 0; JOIN needs at least one input tensor")
    if not 0 <= axis < len(ins[0].sizes):
        check.fail(f"Axis is {axis}; it must be in [0, OutputTensor.DimensionCount - 1] = "
                   f"[0, {len(ins[0].sizes) - 1}]")
    _same_but_axis(check, axis, ins[0], "InputTensors[0]",
                   [(f"InputTensors[{i}]", t) for i, t in enumerate(ins)][1:] +
                   ([(OUT, spec.tensor[OUT])] if spec.tensor.get(OUT) is not None else []))
    sizes = list(ins[0].sizes)
    sizes[axis] = sum(t.sizes[axis] for t in ins)
    return {OUT: Sizes(sizes, "InputTensors")}


def split(InputTensor, *, Axis, ctx):
    x = to_bits(InputTensor)
    cuts = np.cumsum([t.sizes[Axis] for t in ctx.outputs[OUTS]])[:-1]
    return [from_bits(p, InputTensor.dtype) for p in jnp.split(x, cuts, axis=Axis)]


def split_reference(InputTensor, *, Axis, ctx):
    x, out, at = np.asarray(InputTensor), [], 0
    for t in ctx.outputs[OUTS]:
        n = t.sizes[Axis]
        out.append(np.take(x, np.arange(at, at + n), axis=Axis))
        at += n
    return out


def split_sizes(spec, check):
    outs, axis, t = spec.tensor.get(OUTS) or (), spec.attr["Axis"], spec.tensor[IN]
    if not outs:
        check.fail("OutputCount is 0, or OutputTensors is not given: the split sizes are the "
                   "desc's; give one tensor desc per output")
    _same_but_axis(check, axis, t, IN, [(f"OutputTensors[{i}]", o) for i, o in enumerate(outs)])
    total = sum(o.sizes[axis] for o in outs)
    if total != t.sizes[axis]:
        check.fail(f"the OutputTensors' sizes along Axis {axis} sum to {total} but "
                   f"InputTensor.Sizes[{axis}] is {t.sizes[axis]}")
    return {OUTS: [Sizes(o.sizes, "OutputTensors") for o in outs]}


f32 = np.float32
A, B, C = f32([[[[1, 2], [3, 4]]]]), f32([[[[5, 6], [7, 8]]]]), f32([[[[9, 10], [11, 12]]]])
SPLIT_IN = f32(np.arange(1, 13).reshape(1, 1, 6, 2))

register(OperatorDef(
    "DML_OPERATOR_JOIN", join, join_reference, output_sizes=join_sizes,
    output_types=lambda spec: {OUT: spec.tensor[INS][0].data_type}, examples=(
        Example({INS: [f32([[[[1, 2, 3], [4, 5, 6]]]]),
                       f32([[[[7, 8, 9, 10], [11, 12, 13, 14]]]])]},
                {OUT: f32([[[[1, 2, 3, 7, 8, 9, 10], [4, 5, 6, 11, 12, 13, 14]]]])},
                {"Axis": 3}, "the page's example 1"),
        Example({INS: [A, B, C]}, {OUT: np.concatenate([A, B, C], 1)}, {"Axis": 1},
                "the page's example 2, axis 1"),
        Example({INS: [A, B, C]}, {OUT: f32([[[[1, 2], [3, 4], [5, 6], [7, 8], [9, 10],
                                              [11, 12]]]])}, {"Axis": 2}, "axis 2"),
        Example({INS: [np.array([np.nan, -0.0], f32)]}, {OUT: np.array([np.nan, -0.0], f32)},
                {"Axis": 0}, "one input: a copy, bit for bit"),
    ), module=__name__))
register(OperatorDef(
    "DML_OPERATOR_SPLIT", split, split_reference, output_sizes=split_sizes,
    rules=(axis_in_range(),), examples=(
        Example({IN: SPLIT_IN},
                {OUTS: [SPLIT_IN[:, :, :2], SPLIT_IN[:, :, 2:3], SPLIT_IN[:, :, 3:]]},
                {"Axis": 2}, "the page's example 1"),
        Example({IN: SPLIT_IN}, {OUTS: [SPLIT_IN[..., :1], SPLIT_IN[..., 1:]]}, {"Axis": 3},
                "the page's example 2"),
        Example({IN: np.array([1, 2, 3], np.int64)}, {OUTS: [np.array([1, 2, 3], np.int64)]},
                {"Axis": 0}, "one output: a copy"),
    ), module=__name__))
