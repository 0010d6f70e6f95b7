"""ONNX Runtime's basic-level rewrites that change a model's arithmetic, done on the model before
it is lowered, as ORT does them before it assigns nodes to providers (the DML provider gets the
rewritten graph): a Conv's constant per-channel consumer folds into its weights and bias.

- **ConvBNFusion**: Conv -> BatchNormalization(scale, B, mean, var, epsilon) becomes one Conv:
  ``s = scale / sqrt(var + epsilon)``, ``W' = W * s`` per output channel, and the bias
  ``(B_conv - mean) * s + B`` (``B - mean * s`` without one).
- **ConvMulFusion**: Conv -> Mul by a scalar or a C x 1 x 1 (1 x C x 1 x 1) constant:
  ``W' = W * m``, ``B' = B_conv * m``.
- **ConvAddFusion**: Conv -> Add of a C x 1 x 1 (1 x C x 1 x 1) constant: ``B' = B_conv + a``
  (``a`` itself without a bias). A scalar is not folded.

Each step is one operation in the tensors' type, rounded to it (float32 arithmetic rounded to
FLOAT16 for FLOAT16 weights), in ORT's order (``onnxruntime/core/optimizer/conv_*_fusion.cc``
and its ``Initializer``): the folded weights are ORT's bit for bit (``test_onnx_rewrite.py``
compares them with the initializers of ORT's optimized model). The conditions are ORT's: the
Conv's output is read by that one node and is not a graph output; the weights, the bias and
the consumer's other inputs are constants (initializers that are not graph inputs, Constant
nodes, or all-constant nodes such as a Reshape of a constant, which ORT's constant folding
turns into initializers first); the constant is the consumer's second input; the types agree.
A Conv folds its consumers one after another (Conv -> BatchNormalization -> Mul -> Add is one
Conv). ``graph_optimization_level`` ORT_DISABLE_ALL keeps every node.
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

FLOATS = (np.float16, np.float32, np.float64)
FOLDED = ("Add", "Mul", "BatchNormalization")
UNFOLDABLE = {"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike",
              "Multinomial", "Bernoulli"}
CONST_LIMIT = 1 << 20  # elements of an all-constant node evaluated here


def evaluate(node, arrays, opset_import) -> list:
    """``node`` run alone by onnx's reference evaluator on ``arrays`` (None for an absent
    input); its outputs as NumPy arrays. Raises what the evaluator raises. A Constant of a
    tensor, float(s) or int(s) is read directly, as the evaluator reads it (most of a model's
    constant nodes: 506 of PaddleOCR rec's 539, 0.35 ms each through the evaluator)."""
    value = _constant(node)
    if value is not None:
        return [value]
    names = [f"in{i}" for i in range(len(node.input))]
    feeds = {n: a for n, a, name in zip(names, arrays, node.input) if name and a is not None}
    one = helper.make_node(node.op_type, [n if n in feeds else "" for n in names],
                           [f"out{i}" for i in range(len(node.output))], domain=node.domain)
    one.attribute.extend(node.attribute)
    inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
              for n, a in feeds.items()]
    outputs = [helper.make_tensor_value_info(f"out{i}", onnx.TensorProto.UNDEFINED, None)
               for i in range(len(node.output))]
    model = helper.make_model(helper.make_graph([one], "fold", inputs, outputs),
                              opset_imports=opset_import)
    return [np.asarray(r) for r in ReferenceEvaluator(model).run(None, feeds)]


_CONSTANT_ATTRS = {"value_float": lambda a: np.array(a.f, np.float32),
                   "value_floats": lambda a: np.array(list(a.floats), np.float32),
                   "value_int": lambda a: np.array(a.i, np.int64),
                   "value_ints": lambda a: np.array(list(a.ints), np.int64)}


def _constant(node):
    """A Constant node's value, or None (another node, strings, a sparse or external tensor:
    the evaluator's)."""
    if node.op_type != "Constant" or node.domain not in ("", "ai.onnx") or \
            len(node.attribute) != 1 or len(node.output) != 1:
        return None
    a = node.attribute[0]
    if a.name == "value" and a.type == onnx.AttributeProto.TENSOR and \
            a.t.data_location != onnx.TensorProto.EXTERNAL and \
            a.t.data_type != onnx.TensorProto.STRING:
        return numpy_helper.to_array(a.t)
    read = _CONSTANT_ATTRS.get(a.name)
    return read(a) if read is not None else None


class _Constants:
    """The constant value of a graph value, or None: ORT's ``NodeArgIsConstant`` after its
    constant folding."""

    def __init__(self, model, base_dir):
        g = model.graph
        self.base_dir, self.opsets = base_dir, model.opset_import
        self.inits = {i.name: i for i in g.initializer}
        self.inputs = {i.name for i in g.input}
        self.producer = {o: n for n in g.node for o in n.output if o}
        self.memo: dict = {}

    def get(self, name, depth=0):
        if name not in self.memo:
            self.memo[name] = self._value(name, depth)
        return self.memo[name]

    def _value(self, name, depth):
        if name in self.inputs:
            return None  # an overridable initializer
        if name in self.inits:
            try:
                return numpy_helper.to_array(self.inits[name], self.base_dir)
            except Exception:  # noqa: BLE001 -- a broken initializer: the lowering says why
                return None
        node = self.producer.get(name)
        if node is None or depth > 16 or node.domain not in ("", "ai.onnx") or \
                node.op_type in UNFOLDABLE or \
                any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
                    for a in node.attribute):
            return None
        arrays = [self.get(i, depth + 1) if i else None for i in node.input]
        if any(a is None for a, i in zip(arrays, node.input) if i) or \
                any(a.size > CONST_LIMIT for a in arrays if a is not None):
            return None
        try:
            results = evaluate(node, arrays, self.opsets)
        except Exception:  # noqa: BLE001 -- not foldable here; the lowering says why later
            return None
        for out, r in zip(node.output, results):
            if out and out != name:
                self.memo[out] = r
        return results[list(node.output).index(name)]


def _rounded(dtype):
    """(widen, round): each of ORT's Initializer steps computes in float32 for 16-bit floats
    and in the type itself otherwise, then rounds to the type."""
    if dtype.itemsize == 2:
        return (lambda a: a.astype(np.float32)), (lambda a: np.asarray(a, np.float32).astype(dtype))
    return (lambda a: a), (lambda a: np.asarray(a, dtype))


def _per_channel(k, channels, rank):
    """``k`` as C values if its shape is C x 1 x ... (rank - 1 dims) or 1 x C x 1 x ... (rank
    dims), else None."""
    shape = k.shape
    if len(shape) == rank - 1:
        axis = 0
    elif len(shape) == rank:
        axis = 1
    else:
        return None
    if shape[axis] != channels or any(d != 1 for i, d in enumerate(shape) if i != axis):
        return None
    return k.reshape(channels)


def _fold(op, consumer, w, b, consts):
    """(W', B') for Conv(W, B) followed by ``consumer``, or None where ORT keeps the node."""
    dt = w.dtype
    widen, rnd = _rounded(dt)
    c, rank = w.shape[0], w.ndim
    scale = lambda arr, s: rnd(widen(arr) * widen(s).reshape((-1,) + (1,) * (arr.ndim - 1)))
    if op == "BatchNormalization":
        params = [consts.get(n) if n else None for n in consumer.input[1:5]]
        if len(params) != 4 or any(p is None or p.dtype != dt or p.shape != (c,)
                                   for p in params):
            return None
        if any(a.name == "training_mode" and a.i for a in consumer.attribute) or \
                sum(1 for o in consumer.output if o) != 1:
            return None
        s, bias, mean, var = params
        eps = next((a.f for a in consumer.attribute if a.name == "epsilon"), 1e-5)
        root = rnd(np.sqrt(widen(rnd(widen(var) + np.float32(eps)))))
        s = rnd(widen(s) / widen(root))
        if b is None:
            return scale(w, s), rnd(widen(bias) - widen(rnd(widen(mean) * widen(s))))
        b = rnd(widen(rnd(widen(rnd(widen(b) - widen(mean))) * widen(s))) + widen(bias))
        return scale(w, s), b
    k = consts.get(consumer.input[1])
    if k is None or k.dtype != dt:
        return None
    if op == "Mul":
        m = np.full(c, k.reshape(()), dt) if k.ndim == 0 else _per_channel(k, c, rank)
        if m is None:
            return None
        return scale(w, m), (None if b is None else rnd(widen(b) * widen(m)))
    a = _per_channel(k, c, rank)
    if a is None:
        return None
    return w, (a.copy() if b is None else rnd(widen(b) + widen(a)))


def _uses(graph) -> dict:
    """{value name: number of node inputs reading it}, subgraphs' reads counted too."""
    count: dict = {}

    def walk(g):
        for node in g.node:
            for name in node.input:
                count[name] = count.get(name, 0) + 1
            for a in node.attribute:
                for sub in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                    walk(sub)
    walk(graph)
    return count


def fold_convolutions(model, base_dir="") -> onnx.ModelProto:
    """``model`` with ConvBNFusion, ConvMulFusion and ConvAddFusion applied (a copy; ``model``
    itself when nothing folds)."""
    g = model.graph
    if not any(n.op_type == "Conv" and n.domain in ("", "ai.onnx") for n in g.node):
        return model
    consts = _Constants(model, base_dir)
    uses, outputs = _uses(g), {o.name for o in g.output}
    readers: dict = {}
    for k, node in enumerate(g.node):
        for name in node.input:
            readers.setdefault(name, []).append(k)
    removed, new_inits, conv_inputs, conv_output = set(), [], {}, {}
    taken = set(consts.inits) | set(consts.producer) | consts.inputs  # names in use
    for k, conv in enumerate(g.node):
        if conv.op_type != "Conv" or conv.domain not in ("", "ai.onnx") or \
                len(conv.input) < 2 or len(conv.output) != 1:
            continue
        first = readers.get(conv.output[0], [])
        if len(first) != 1 or g.node[first[0]].op_type not in FOLDED:
            continue  # nothing to fold: the weights are not read (a large model's stay unread)
        w = consts.get(conv.input[1])
        b = consts.get(conv.input[2]) if len(conv.input) > 2 and conv.input[2] else None
        if w is None or w.dtype.type not in FLOATS or w.ndim <= 2 or \
                (len(conv.input) > 2 and conv.input[2] and
                 (b is None or b.dtype != w.dtype or b.shape != (w.shape[0],))):
            continue
        out, folded = conv.output[0], []
        while uses.get(out, 0) == 1 and out not in outputs and len(readers.get(out, [])) == 1:
            j = readers[out][0]
            nxt = g.node[j]
            if nxt.domain not in ("", "ai.onnx") or nxt.op_type not in FOLDED or \
                    list(nxt.input).index(out) != 0:
                break
            r = _fold(nxt.op_type, nxt, w, b, consts)
            if r is None:
                break
            w, b = r
            folded.append(j)
            out = nxt.output[0]
        if not folded:
            continue
        removed.update(folded)
        names = []
        for part, arr in (("W", w), ("B", b)):
            name = fresh_name(f"ConvFusion_{part}_{conv.name or k}", taken)
            new_inits.append(numpy_helper.from_array(arr, name))
            names.append(name)
        conv_inputs[k] = [conv.input[0]] + names
        conv_output[k] = out
    if not removed:
        return model
    result = onnx.ModelProto()
    result.CopyFrom(model)
    rg = result.graph
    del rg.node[:]
    for k, node in enumerate(g.node):
        if k in removed:
            continue
        copy = rg.node.add()
        copy.CopyFrom(node)
        if k in conv_inputs:
            del copy.input[:]
            copy.input.extend(conv_inputs[k])
            copy.output[0] = conv_output[k]
    rg.initializer.extend(new_inits)
    still = _uses(rg)
    keep = [i for i in rg.initializer
            if still.get(i.name) or i.name in consts.inputs or i.name in outputs]
    del rg.initializer[:]
    rg.initializer.extend(keep)
    return result


def fresh_name(base, taken: set) -> str:
    """``base``, or ``base_1``, ``base_2``, ...: the first name not in ``taken``, which it is
    added to."""
    name, n = base, 1
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name
