"""``compare(..., flush_denormals=True)``: a model rewritten so that denormals are flushed to
zero at every node boundary, as a GPU driver running with flush-to-zero does.

DirectML does not say whether a driver keeps subnormal FLOAT16 and FLOAT32 values (shader
models let drivers flush FLOAT32 denormals, and many GPUs flush in fast paths), so dmlsim's
kernels keep them and this mode shows what flushing would change. It is modelled where values
cross node boundaries, with ONNX operators that DML computes exactly:

- every FLOAT or FLOAT16 graph input and initializer is read as a signed zero when it is
  subnormal (denormals-are-zero), and
- every FLOAT or FLOAT16 node output is stored as a signed zero when it is subnormal
  (flush-to-zero),

each as ``Where(Less(Abs(v), tiny), Mul(v, 0), v)`` (``tiny``: the type's smallest normal
number; ``Mul(v, 0)`` keeps the sign of zero; NaN and infinities pass). Arithmetic inside one
node (a reduction's partial sums, a softmax's exponentials) is not flushed: the mode answers
"which node's stored values lose their subnormals, and what does that do downstream". Values
inside If/Loop/Scan bodies are flushed only where they leave the body as the node's outputs.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

_TINY = {TensorProto.FLOAT: np.float32, TensorProto.FLOAT16: np.float16}


def _flush(src: str, dst: str, elem_type: int, tag: str) -> list:
    """The nodes that compute ``dst``: ``src`` with its subnormals flushed to signed zero."""
    np_type = _TINY[elem_type]
    tiny = helper.make_tensor(f"{tag}_tiny", elem_type, [],
                              [float(np.finfo(np_type).tiny)])
    zero = helper.make_tensor(f"{tag}_zero", elem_type, [], [0.0])
    return [helper.make_node("Constant", [], [f"{tag}_tiny"], value=tiny),
            helper.make_node("Constant", [], [f"{tag}_zero"], value=zero),
            helper.make_node("Abs", [src], [f"{tag}_abs"]),
            helper.make_node("Less", [f"{tag}_abs", f"{tag}_tiny"], [f"{tag}_small"]),
            helper.make_node("Mul", [src, f"{tag}_zero"], [f"{tag}_signed_zero"]),
            helper.make_node("Where", [f"{tag}_small", f"{tag}_signed_zero", src], [dst])]


def flushed(model, types: dict):
    """A copy of ``model`` with FLOAT/FLOAT16 values flushed at every node boundary.
    ``types``: {value name: TensorProto element type} (compare's shape-inferred types)."""
    out = type(model)()
    out.CopyFrom(model)
    g = out.graph
    sources = [i.name for i in g.input] + [i.name for i in g.initializer]
    read = {name: f"{name}__daz" for name in dict.fromkeys(sources)
            if types.get(name) in _TINY}
    nodes = [n for k, name in enumerate(read)
             for n in _flush(name, read[name], types[name], f"__daz{k}")]
    for k, node in enumerate(g.node):
        for j, name in enumerate(node.input):
            if name in read:
                node.input[j] = read[name]
        after = []
        for j, name in enumerate(node.output):
            if name and types.get(name) in _TINY:
                node.output[j] = f"{name}__raw"
                after += _flush(f"{name}__raw", name, types[name], f"__ftz{k}_{j}")
        nodes.append(node)
        nodes.extend(after)
    del g.node[:]
    g.node.extend(nodes)
    return out
