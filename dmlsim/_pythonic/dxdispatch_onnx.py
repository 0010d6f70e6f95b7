"""DxDispatch's ONNX dispatchables (``"type": "onnx"``), as DxDispatch's parser and its
OnnxDispatchable read them (microsoft/DirectML ``DxDispatch/src/model/JsonParsers.cpp``,
``src/dxdispatch/OnnxDispatchable.cpp``, ``doc/Guide.md``), run by a ``dmlsim.onnx``
InferenceSession on the model's DML device:

- the dispatchable: ``sourcePath`` (relative to the model file), ``freeDimensionNameOverrides``
  and ``freeDimensionDenotationOverrides`` ({name: size}), ``sessionOptionsConfigEntries``
  ({key: value}), ``graphOptimizationLevel`` (ORT's numbers; default 99);
- a dispatch's bindings name ONNX inputs and outputs: a resource name, or
  ``{"name": ..., "shape": [...]}`` whose shape replaces the model's (how DxDispatch feeds
  dynamic shapes); one source per tensor, no ``elementOffset``; an unbound input with free
  dimensions is read with them fixed to 1, as DxDispatch does, and an unbound input is zeros
  (DxDispatch binds uninitialized memory there);
- an input reads the first elements of its resource's bytes as the tensor's element type; an
  output is written into its resource from byte 0 (it must fit), or, for a resource whose
  ``initialValues`` is ``"deferred"``, becomes the resource: its type, shape and values, which
  ``print`` and ``writeFile`` then show.

Bytes move through the faithful API (the runner's READBACK and UPLOAD copies)."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from .._api import public as dml
from .._core import dtypes
from .dxdispatch_parse import ModelError
from .onnx_inference import InferenceSession, SessionOptions


def _overrides(spec, field, name):
    value = spec.get(field, {})
    if not isinstance(value, dict):
        raise ModelError(f"dispatchable '{name}': '{field}': Expected a non-null JSON object.")
    return value


class OnnxDispatchable:
    def __init__(self, name, spec, base: Path, device):
        self.name = name
        if not isinstance(spec.get("sourcePath"), str):
            raise ModelError(f"dispatchable '{name}': Field 'sourcePath' is required.")
        path = base / spec["sourcePath"]
        if not path.exists() and Path(spec["sourcePath"]).exists():
            path = Path(spec["sourcePath"])  # then the working directory, as for resources
        opts = SessionOptions()
        try:
            for k, v in _overrides(spec, "freeDimensionNameOverrides", name).items():
                opts.add_free_dimension_override_by_name(k, v)
            for k, v in _overrides(spec, "freeDimensionDenotationOverrides", name).items():
                opts.add_free_dimension_override_by_denotation(k, v)
            for k, v in _overrides(spec, "sessionOptionsConfigEntries", name).items():
                opts.add_session_config_entry(k, v)
            opts.graph_optimization_level = int(spec.get("graphOptimizationLevel", 99))
            self.session = InferenceSession(path, opts, device=device)
        except dml.HResultError as e:
            raise ModelError(f"dispatchable '{name}': {e.message}") from None

    def dispatch(self, runner, command) -> None:
        bindings = command.get("bindings", {})
        s = self.session
        known = set(s.input_names) | set(s.output_names)
        for tensor in bindings:
            if tensor not in known:
                raise ModelError(f"dispatch '{self.name}': '{tensor}' is not an input or output "
                                 f"of the ONNX model (inputs: {', '.join(s.input_names)}; "
                                 f"outputs: {', '.join(s.output_names)})")
        feeds = {}
        for spec in s._inputs:
            source = self._source(bindings.get(spec.name))
            shape = [1 if d.value is None else d.value for d in spec.dims or ()]
            if source is not None and source.get("shape") is not None:
                shape = [int(v) for v in source["shape"]]
            if source is None:
                feeds[spec.name] = np.zeros(shape, spec.dtype)
                continue
            res = runner.resource(source["name"], f"dispatch '{self.name}'")
            need = math.prod(shape) * spec.dtype.itemsize
            data = res.deferred  # a resolved deferred resource holds an array already
            if data is None:
                raw = runner.download(res.name)
                if need > len(raw):
                    raise ModelError(f"dispatch '{self.name}': binding resource '{res.name}' "
                                     f"({len(raw)} bytes) to tensor '{spec.name}' of shape "
                                     f"{shape} needs {need} bytes")
                data = np.frombuffer(raw[:need], spec.dtype)
            elif data.size * data.itemsize < need:
                raise ModelError(f"dispatch '{self.name}': resource '{res.name}' holds "
                                 f"{data.size} elements; tensor '{spec.name}' of shape "
                                 f"{shape} needs {math.prod(shape)}")
            else:
                data = data.reshape(-1).view(np.uint8)[:need].view(spec.dtype)
            feeds[spec.name] = data.reshape(shape)
        try:
            results = s.run(None, feeds)
        except dml.HResultError as e:
            raise ModelError(f"dispatch '{self.name}': {e.message}") from None
        for name, value in zip(s.output_names, results):
            source = self._source(bindings.get(name))
            if source is None:
                continue
            res = runner.resource(source["name"], f"dispatch '{self.name}'")
            if res.deferred is not None or res.is_deferred:
                res.resolve(value)
                continue
            shape = source.get("shape")
            if shape is not None and list(shape) != list(value.shape):
                raise ModelError(f"dispatch '{self.name}': output '{name}' has shape "
                                 f"{list(value.shape)}; its binding says {list(shape)}")
            raw = np.ascontiguousarray(value.astype(np.uint8) if value.dtype == np.bool_
                                       else value).view(np.uint8).reshape(-1)
            if raw.size > res.size:
                raise ModelError(f"dispatch '{self.name}': output '{name}' ({raw.size} bytes) "
                                 f"does not fit resource '{res.name}' ({res.size} bytes)")
            runner.upload(res, raw)

    def _source(self, value):
        if value is None:
            return None
        if isinstance(value, list):
            if len(value) != 1:
                raise ModelError(f"dispatch '{self.name}': ONNX dispatchables' tensors must map "
                                 "to a single binding source.")
            value = value[0]
        if isinstance(value, str):
            return {"name": value}
        if int(value.get("elementOffset", 0)):
            raise ModelError(f"dispatch '{self.name}': ONNX dispatchables do not support "
                             "binding offsets.")
        return value


def deferred_type(value: np.ndarray) -> int:
    """The DML_TENSOR_DATA_TYPE of a resolved deferred resource (bool as UINT8)."""
    d = np.dtype(np.uint8) if value.dtype == np.bool_ else value.dtype
    return dtypes.dml_type_of(d)
