"""A ``Plan``: one ONNX model with static shapes, lowered onto DML operators (``onnx_lower`` with
the rules of ``onnx_rules*``), compiled with IDMLDevice1::CompileGraph and made ready to run
through the faithful API (initializer with the OWNED_BY_DML weights, binding table, dispatch,
readback). What ONNX Runtime's DML provider builds for one input signature; sessions
(``onnx_inference``) keep one per signature."""
from __future__ import annotations

import numpy as np

from .._api import public as dml
from .._core import config
from .onnx_lower import Lowering
from .onnx_rules import ACTIVATIONS, RULES as ELEMENTWISE
from .onnx_rules_attention import RULES as ATTENTION
from .onnx_rules_contrib import RULES as CONTRIB
from .onnx_rules_contrib_nn import RULES as CONTRIB_NN
from .onnx_rules_contrib_quant import RULES as CONTRIB_QUANT
from .onnx_rules_fill import RULES as FILL
from .onnx_rules_more import RULES as MORE
from .onnx_rules_nn import RULES as NN
from .onnx_rules_quant import RULES as QUANT
from .onnx_rules_recurrent import RULES as RECURRENT
from .onnx_rules_shape import RULES as SHAPE
from . import progress
from .device_run import DeviceRun, DeviceTensor, same_bytes
from .run import Prepared, device_state

RULES = {**ELEMENTWISE, **NN, **SHAPE, **QUANT, **RECURRENT, **FILL,
         **ATTENTION, **CONTRIB, **CONTRIB_NN, **CONTRIB_QUANT, **MORE}


def make_device(feature_level=None):
    """A DML device (at ``feature_level``, e.g. "5_1", or dmlsim's default) for a session."""
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    old = config.settings.feature_level
    try:
        if feature_level is not None:
            dml.set_feature_level(feature_level)
        return dml.DMLCreateDevice(d3d, dml.DML_CREATE_DEVICE_FLAG_NONE)
    finally:
        config.settings.feature_level = old


class Plan:
    """One model with static shapes, lowered and compiled: what the DML provider builds for one
    input signature. ``lowering`` is what ``dmlsim lower`` prints; ``compiled`` the
    IDMLCompiledOperator; ``run(names, {input: array})`` one inference through the faithful
    API (upload, dispatch, readback)."""

    steps = None  # one DML graph: no partitions

    def __init__(self, model, device, fuse=True, base_dir="", flags=0, lowering=None):
        self.device = device
        self.lowering = L = lowering if lowering is not None else Lowering(
            model, device, RULES, ACTIVATIONS, fuse=fuse, base_dir=base_dir).lower()
        self._counts = [0, 0, 0, 0]
        outs = L.outputs()
        self.output_names = [n for n, _, _ in outs]
        self._shapes = [(v.shape, v.dtype) for _, _, v in outs]
        self.compiled, self._ins, self._outs = L.graph._compile(
            flags, [e for _, e, _ in outs], L.next_index)
        self.input_names = [n for n, _, _ in L.inputs]
        self._index = {n: i for n, i, _ in L.inputs}
        self._owned = dict(L.owned)
        self._prepared = Prepared(device_state(self.device), self.compiled, self._ins,
                                  self._outs, self._owned)
        self._first = True
        self._device, self._first_device = None, True  # IOBinding's list (device_run.py)

    def run(self, wanted, feeds) -> list:
        arrays: list = [None] * len(self._ins)
        for name, index in self._index.items():
            want = self._ins[index][2]
            if want is None:  # an input no node reads (CastLike's target: its type only)
                continue
            arrays[index] = np.asarray(feeds[name]).reshape(want.sizes)
            self._counts[0] += 1
            self._counts[1] += arrays[index].nbytes
        if self._first:  # the first run compiles the program: on a terminal, say so
            self._first = False
            with progress.stage("first run, compiling", len(self.lowering.model.graph.node)):
                results = self._prepared(arrays)
        else:
            results = self._prepared(arrays)
        self._counts[2] += len(results)
        self._counts[3] += sum(np.asarray(r).nbytes for r in results)
        out = {}
        for name, r, (shape, dtype) in zip(self.output_names, results, self._shapes):
            out[name] = np.asarray(r).reshape(shape).astype(dtype, copy=False) \
                if dtype != np.bool_ else np.asarray(r).reshape(shape) != 0
        return [out[n] for n in wanted]

    def run_device(self, wanted, feeds) -> list:
        """As ``run``, with the inputs and outputs on the device (IOBinding): ``feeds`` holds
        NumPy arrays or DeviceTensors; returns DeviceTensors of the ONNX outputs' types."""
        if self._device is None:
            self._device = DeviceRun(self._prepared)
        values: list = [None] * len(self._ins)
        for name, index in self._index.items():
            want = self._ins[index][2]
            if want is None:
                continue
            v = feeds[name]
            values[index] = v._replace(shape=tuple(want.sizes)) \
                if isinstance(v, DeviceTensor) else np.asarray(v).reshape(want.sizes)
        if self._first_device:  # its own list: the first run compiles its program
            self._first_device = False
            with progress.stage("first device run, compiling",
                                len(self.lowering.model.graph.node)):
                results = self._device(values)
        else:
            results = self._device(values)
        out = {}
        for name, r, (shape, dtype) in zip(self.output_names, results, self._shapes):
            if same_bytes(r.dtype, dtype):
                out[name] = r._replace(shape=tuple(shape), dtype=np.dtype(dtype))
            else:  # a type DML computes in another one: converted as ``run`` converts it
                out[name] = DeviceTensor.put(r.to_numpy().reshape(shape).astype(dtype),
                                             r.words.devices().pop())
        return [out[n] for n in wanted]

    @property
    def transfers(self) -> tuple:
        """(uploads, upload bytes, readbacks, readback bytes) through the faithful API."""
        return tuple(self._counts)

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
