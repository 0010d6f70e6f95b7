"""dmlsim.onnx's sessions and ONNX backend: ``prepare(model)`` lowers a model (``onnx_lower``
with the rules of ``onnx_rules*``), compiles it with IDMLDevice1::CompileGraph and returns a
Session with ONNX Runtime's calling convention, ``session.run(output_names, {name: array})``;
``Backend`` is an ``onnx.backend.base.Backend`` so that ONNX's backend test suite runs against
dmlsim. Every run goes through the faithful API (initializer with the OWNED_BY_DML weights,
binding table, dispatch, readback)."""
from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import helper
from onnx.backend.base import Backend as _Backend, BackendRep

from .._api import public as dml
from .._core import config
from onnx import numpy_helper

from .onnx_lower import Lowering, NeedsConstant, fail
from .onnx_rules import ACTIVATIONS, RULES as ELEMENTWISE
from .onnx_rules_attention import RULES as ATTENTION
from .onnx_rules_fill import RULES as FILL
from .onnx_rules_nn import RULES as NN
from .onnx_rules_quant import RULES as QUANT
from .onnx_rules_recurrent import RULES as RECURRENT
from .onnx_rules_shape import RULES as SHAPE
from .run import Prepared, device_state

RULES = {**ELEMENTWISE, **NN, **SHAPE, **QUANT, **RECURRENT, **FILL,
         **ATTENTION}


# Lowered through their ONNX function bodies (``onnx_functions``), each one's node tests
# checked in tools/onnx_conformance.py; a body needing what DML lacks (control flow, random
# numbers) fails naming the body's node.
FUNCTION_OPERATORS = ("AffineGrid", "BlackmanWindow", "CenterCropPad",
                      "GroupNormalization", "HammingWindow", "HannWindow", "Mish",
                      "NegativeLogLikelihoodLoss", "RMSNormalization", "RotaryEmbedding",
                      "SoftmaxCrossEntropyLoss", "SwiGLU", "Swish",
                      "CausalConvWithState")


def supported_operators() -> list:
    """The ONNX operator types dmlsim.onnx lowers, by a rule or through the operator's ONNX
    function body (all-constant nodes of any type fold)."""
    return sorted(set(RULES) | set(FUNCTION_OPERATORS))


def _device(feature_level):
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    old = config.settings.feature_level
    try:
        if feature_level is not None:
            dml.set_feature_level(feature_level)
        return dml.DMLCreateDevice(d3d, dml.DML_CREATE_DEVICE_FLAG_NONE)
    finally:
        config.settings.feature_level = old


class Session:
    """A lowered, compiled model: ``run(output_names or None, {input name: array})`` returns a
    list of NumPy arrays (ONNX Runtime's convention). ``lowering`` is what ``dmlsim lower``
    prints; ``compiled`` the IDMLCompiledOperator."""

    def __init__(self, model, device=None, feature_level=None, constant_inputs=None):
        self.device = device if device is not None else _device(feature_level)
        model = onnx.load(model) if isinstance(model, str) else model
        if constant_inputs:
            model = with_constant_inputs(model, constant_inputs)
        self.lowering = L = Lowering(model, self.device, RULES, ACTIVATIONS).lower()
        outs = L.outputs()
        self.output_names = [n for n, _, _ in outs]
        self._shapes = [(v.shape, v.dtype) for _, _, v in outs]
        self.compiled, self._ins, self._outs = L.graph._compile(
            dml.DML_EXECUTION_FLAG_NONE, [e for _, e, _ in outs], L.next_index)
        self.input_names = [n for n, _, _ in L.inputs]
        self._index = {n: i for n, i, _ in L.inputs}
        self._owned = dict(L.owned)
        self._prepared = Prepared(device_state(self.device), self.compiled, self._ins,
                                  self._outs, self._owned)

    def _shape_of(self, name):
        return next(v.shape for n, _, v in self.lowering.inputs if n == name)

    def get_inputs(self):
        return [(n, v.shape, v.dtype) for n, _, v in self.lowering.inputs]

    def run(self, output_names=None, feeds=None):
        feeds = feeds or {}
        arrays: list = [None] * len(self._ins)
        for name, index in self._index.items():
            if name not in feeds:
                fail(dml.E_INVALIDARG, f"run: input '{name}' is not fed")
            a = np.asarray(feeds[name])
            want = self._ins[index][2]
            if want is None:  # an input no node reads (CastLike's target: its type only)
                continue
            if a.size != math.prod(want.sizes) or (a.shape != tuple(want.sizes) and
                                                      a.shape != self._shape_of(name)):
                fail(dml.E_INVALIDARG, f"run: input '{name}' has shape {list(a.shape)}; the "
                                       f"model's is {list(self._shape_of(name))}")
            arrays[index] = a.reshape(want.sizes)
        unknown = sorted(set(feeds) - set(self._index))
        if unknown:
            fail(dml.E_INVALIDARG, f"run: '{unknown[0]}' is not an input of the model "
                                   f"(inputs: {', '.join(self._index)})")
        results = self._prepared(arrays)
        out = {}
        for name, r, (shape, dtype) in zip(self.output_names, results, self._shapes):
            out[name] = np.asarray(r).reshape(shape).astype(dtype, copy=False) \
                if dtype != np.bool_ else np.asarray(r).reshape(shape) != 0
        wanted = output_names or self.output_names
        missing = [n for n in wanted if n not in out]
        if missing:
            fail(dml.E_INVALIDARG, f"run: '{missing[0]}' is not an output of the model")
        return [out[n] for n in wanted]

    def describe(self) -> str:
        """The DML graph this model became: one line per DML node (operator type and tensor
        sizes), the ONNX node it lowers, and the inputs."""
        lines = ["inputs: " + ", ".join(f"{n} {list(v.shape)} {v.dtype}"
                                         for n, _, v in self.lowering.inputs),
                 f"OWNED_BY_DML weights: {len(self._owned)} graph inputs",
                 "constant nodes (FL 6_2, under 8 bytes): "
                 f"{sum(n.kind == 'constant' for n in self.lowering.graph.nodes)}"]
        for node in self.lowering.graph.nodes:
            if node.kind != "operator":
                continue
            name = node.op_type
            outs = ", ".join(str(o.sizes) for o in node.outputs if o is not None)
            lines.append(f"  {node.name}: {name} -> {outs}")
        lines.append("outputs: " + ", ".join(self.output_names))
        return "\n".join(lines)


def prepare(model, device=None, feature_level=None) -> Session:
    """Lower and compile ``model`` (a ModelProto or a path)."""
    return Session(model, device, feature_level)


def with_constant_inputs(model, values: dict):
    """``model`` with the graph inputs in ``values`` turned into initializers."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    keep = [vi for vi in out.graph.input if vi.name not in values]
    del out.graph.input[:]
    out.graph.input.extend(keep)
    out.graph.initializer.extend(numpy_helper.from_array(np.asarray(a), n)
                                 for n, a in values.items())
    return out


class BackendRepresentation(BackendRep):
    """A model for ONNX's backend runner. Lowered at the first run: graph inputs that DirectML
    needs as attributes (a Reshape's shape, Reduce axes, Slice starts, ...) are bound as
    constants with the values fed, as ONNX Runtime's provider reads such inputs on the CPU;
    the graph is lowered again when those values change."""

    def __init__(self, model):
        self.model = model
        self.names = [vi.name for vi in model.graph.input
                      if vi.name not in {i.name for i in model.graph.initializer}]
        self.constants: set = set()
        self.session = None
        self.key = None

    def run(self, inputs, **kwargs):
        if isinstance(inputs, dict):
            feeds = dict(inputs)
        else:
            inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
            feeds = dict(zip(self.names, inputs))
        while True:
            key = tuple((n, np.asarray(feeds[n]).tobytes()) for n in sorted(self.constants))
            if self.session is None or key != self.key:
                try:
                    self.session = Session(self.model, constant_inputs={
                        n: feeds[n] for n in self.constants})
                    self.key = key
                except NeedsConstant as e:
                    wanted = {n for n in (e.name, *e.inputs) if n in feeds} - self.constants
                    if wanted:
                        self.constants |= wanted
                        continue
                    raise
            rest = {n: v for n, v in feeds.items() if n not in self.constants}
            return tuple(self.session.run(None, rest))


class Backend(_Backend):
    """ONNX's backend interface over dmlsim.onnx (for ``onnx.backend.test.BackendTest``)."""

    @classmethod
    def prepare(cls, model, device="CPU", **kwargs):
        super().prepare(model, device, **kwargs)
        return BackendRepresentation(model)

    @classmethod
    def run_node(cls, node, inputs, device="CPU", outputs_info=None, **kwargs):
        super().run_node(node, inputs, device=device, outputs_info=outputs_info, **kwargs)
        names = [f"input_{i}" for i in range(len(inputs))]
        vis = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(
            np.asarray(a).dtype), np.asarray(a).shape) for n, a in zip(names, inputs)]
        renamed = helper.make_node(node.op_type, names[:len(node.input)], list(node.output),
                                   domain=node.domain)
        renamed.attribute.extend(node.attribute)
        outs = [helper.make_tensor_value_info(o, onnx.TensorProto.UNDEFINED, None)
                for o in node.output]
        model = helper.make_model(helper.make_graph([renamed], "node", vis, outs))
        return BackendRepresentation(model).run(list(inputs))

    @classmethod
    def supports_device(cls, device: str) -> bool:
        """CPU always; CUDA when JAX runs on a GPU (dmlsim's device is JAX's)."""
        if device == "CPU":
            return True
        return device == "CUDA" and dml.info()["backend"] == "gpu"


__all__ = ["Session", "prepare", "Backend", "BackendRepresentation", "supported_operators",
           "RULES"]
