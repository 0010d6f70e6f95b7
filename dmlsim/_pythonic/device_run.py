"""A prepared model run with its inputs and outputs resident on the device: what ONNX Runtime's
IOBinding gives a DirectML application (``dmlsim.onnx.IOBinding``).

``Prepared`` (run.py) runs a model as an application does with host arrays: write an UPLOAD
buffer, copy it into a DEFAULT buffer, dispatch, copy the outputs into READBACK buffers, wait,
read them. With IOBinding the provider binds its own D3D12 resources instead: the graph reads
the inputs where they already are and leaves its outputs on the GPU. ``DeviceRun`` records
that list once beside the Prepared one -- its own DEFAULT input buffers, the same compiled
graph, persistent and temporary resources, the dispatch and no copies -- and runs it with each
input buffer holding a device tensor's bytes (``DeviceTensor``: the bytes a DML provider's
resource holds, as a uint32 array on dmlsim's JAX device, the way dmlsim keeps every DEFAULT
buffer). No list of dmlsim writes those input buffers, so a device tensor stays valid however
often it is bound. Its output buffers are ``lent``: the program writes each into a new array
(never donating the old one), and that array is the output -- no copy. The run is queued and
not waited for, as ORT's IOBinding: reading an output, or ``synchronize_outputs``, waits.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import jax
import numpy as np

from .._api import public as dml
from .run import Prepared, _buffer, _recording


words_of = dml.buffer_words  # uint32 words of a DEFAULT buffer of that many bytes


def padded_words(a: np.ndarray) -> np.ndarray:
    """The bytes of C-contiguous ``a`` as the uint32 words of a DEFAULT buffer holding them."""
    raw = np.zeros(words_of(a.nbytes) * 4, np.uint8)
    raw[:a.nbytes] = a.reshape(-1).view(np.uint8)
    return raw.view(np.uint32)


class DeviceTensor(NamedTuple):
    """A dense tensor's bytes on the device: ``words`` (1-D uint32, the bytes padded as a
    DEFAULT buffer pads them) holding ``shape`` elements of ``dtype``, packed."""

    words: jax.Array
    shape: tuple
    dtype: np.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize

    @staticmethod
    def put(array: np.ndarray, device) -> "DeviceTensor":
        """``array``'s bytes placed on ``device`` (one host-to-device transfer)."""
        a = np.ascontiguousarray(array)
        return DeviceTensor(jax.device_put(padded_words(a), device), a.shape, a.dtype)

    def to_numpy(self) -> np.ndarray:
        """The values, on the host (waits for the work that computes them); a BOOL tensor's
        bytes read as nonzero."""
        raw = np.asarray(self.words).view(np.uint8)[:self.nbytes]
        if self.dtype == np.bool_:
            return (raw != 0).reshape(self.shape)
        return raw.view(self.dtype).reshape(self.shape).copy()


def same_bytes(a: np.dtype, b: np.dtype) -> bool:
    """Whether tensors of types ``a`` and ``b`` store the same bytes for the same values (a
    BOOL is a UINT8 0 or 1 to DirectML)."""
    return a == b or {np.dtype(a), np.dtype(b)} == {np.dtype(np.bool_), np.dtype(np.uint8)}


class DeviceRun:
    """The device-resident run of ``prepared``: ``__call__(values)`` takes per input slot a
    DeviceTensor or a NumPy array (or None where Prepared takes none) and returns per output
    slot a DeviceTensor of the slot's DML type."""

    def __init__(self, prepared: Prepared):
        st, compiled = prepared.st, prepared.compiled
        self.st, self.ins, self.outs = st, prepared.ins, prepared.outs
        d3d = st["d3d"]
        props = compiled.GetBindingProperties()
        self._heap, self._alloc, cl, table = _recording(st, compiled,
                                                        props.RequiredDescriptorCount)
        if prepared._persistent is not None:
            table.BindPersistentResource(dml.DML_BINDING_DESC(
                dml.DML_BINDING_TYPE_BUFFER, dml.DML_BUFFER_BINDING(
                    prepared._persistent, 0, props.PersistentResourceSize)))
        if props.TemporaryResourceSize:
            table.BindTemporaryResource(dml.DML_BINDING_DESC(
                dml.DML_BINDING_TYPE_BUFFER, dml.DML_BUFFER_BINDING(
                    prepared._temp, 0, props.TemporaryResourceSize)))
        self._inputs, bindings = [], []
        for _, _, t in self.ins:
            if t is None or t.owned_by_dml:
                self._inputs.append(None)
                bindings.append(dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_NONE, None))
                continue
            buf = _buffer(d3d, t.total_bytes, 1)
            self._inputs.append((buf, t, next(iter(dml.resource_array(buf).devices()))))
            bindings.append(dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER,
                                                 dml.DML_BUFFER_BINDING(buf, 0, t.total_bytes)))
        table.BindInputs(bindings)
        self._outputs, bindings = [], []
        for _, _, t in self.outs:
            buf = _buffer(d3d, t.total_bytes, 1)
            dml.lend_resource(buf)  # its arrays become the outputs: never donated
            self._outputs.append((buf, t))
            bindings.append(dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER,
                                                 dml.DML_BUFFER_BINDING(buf, 0, t.total_bytes)))
        table.BindOutputs(bindings)
        cl.ResourceBarrier([dml.CD3DX12_RESOURCE_BARRIER.UAV(None)])
        st["dml"].CreateCommandRecorder().RecordDispatch(cl, compiled, table)
        cl.ResourceBarrier([dml.CD3DX12_RESOURCE_BARRIER.UAV(None)])
        cl.SetCompileOnFirstExecution(True)
        cl.Close()
        self._cl, self._table = cl, table

    def __call__(self, values) -> list:
        values = self._placed(values)
        for entry, value in zip(self._inputs, values):
            if entry is None:
                continue
            buf, t, device = entry
            words = value.words
            if device not in words.devices():  # another adapter's: moved over
                words = jax.device_put(words, device)
            dml.set_resource_array(buf, words)  # what the graph reads: no list writes it
        st = self.st  # queued, not waited for: synchronize_outputs (or reading) waits
        st["queue"].ExecuteCommandLists([self._cl])
        st["value"] += 1
        st["queue"].Signal(st["fence"], st["value"])
        removed = st["dml"].GetDeviceRemovedReason()
        if removed:
            raise dml.HResultError(removed, st["dml"].GetDeviceRemovedMessage())
        return [DeviceTensor(dml.resource_array(buf), tuple(t.sizes), t.np_dtype)
                for buf, t in self._outputs]

    def _placed(self, values) -> list:
        """``values`` with every host array (or a device tensor of another type) placed on
        the device in the slot's DML type: one transfer call for all of them."""
        out, pending = list(values), []
        for k, (entry, value) in enumerate(zip(self._inputs, values)):
            if entry is None or (isinstance(value, DeviceTensor) and
                                 same_bytes(value.dtype, entry[1].np_dtype)):
                continue
            host = value.to_numpy() if isinstance(value, DeviceTensor) else value
            a = np.ascontiguousarray(np.asarray(host).astype(entry[1].np_dtype, copy=False))
            pending.append((k, padded_words(a), a))
        if pending:
            device = self._inputs[pending[0][0]][2]
            placed = jax.device_put([w for _, w, _ in pending], device)
            for (k, _, a), words in zip(pending, placed):
                out[k] = DeviceTensor(words, a.shape, a.dtype)
        return out
