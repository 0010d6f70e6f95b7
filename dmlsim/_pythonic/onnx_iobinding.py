"""ONNX Runtime's ``OrtValue`` and ``IOBinding`` for dmlsim.onnx sessions: inputs and outputs
kept on the device between runs, as DirectML applications run ORT's DML provider when speed
matters (a KV cache fed back each step, an image pipeline that never visits the host).

    x = OrtValue.ortvalue_from_numpy(array, "dml", 0)    # the bytes, on the device
    binding = session.io_binding()
    binding.bind_ortvalue_input("x", x)
    binding.bind_output("y", "dml")                      # left on the device
    session.run_with_iobinding(binding)
    y = binding.get_outputs()[0]                         # an OrtValue on 'dml'
    binding.copy_outputs_to_cpu()                        # NumPy arrays

Device types are ``'cpu'`` and ``'dml'`` (device id: the adapter, one per JAX device, as
``IDXGIFactory1::EnumAdapters``). A 'dml' OrtValue holds a dense tensor's bytes on the device
(``device_run.DeviceTensor``); a session binds them without a copy (``device_run.DeviceRun``).
What ORT does with raw device addresses (``bind_input``'s and ``bind_output``'s
``buffer_ptr``, ``data_ptr``) dmlsim has no counterpart for: E_NOTIMPL, naming the OrtValue
calls to use instead.
"""
from __future__ import annotations

import math

import jax
import numpy as np
from onnx import helper

from .._api import public as dml
from . import onnx_model
from .device_run import DeviceTensor
from .onnx_lower import fail

DEVICE_TYPES = ("cpu", "dml")


def _device(method, device_type, device_id):
    """The JAX device of ``device_type`` and ``device_id``, or None for 'cpu'."""
    if not isinstance(device_type, str) or device_type.lower() not in DEVICE_TYPES:
        fail(dml.E_INVALIDARG, f"{method}: device_type is {device_type!r}; dmlsim's DirectML "
                               "provider has 'cpu' and 'dml'")
    devices = jax.devices()
    if isinstance(device_id, bool) or not isinstance(device_id, (int, np.integer)) or \
            not 0 <= device_id < (1 if device_type.lower() == "cpu" else len(devices)):
        fail(dml.E_INVALIDARG, f"{method}: device_id is {device_id!r}; 0"
                               + ("" if device_type.lower() == "cpu" else
                                  f" to {len(devices) - 1} (one adapter per JAX device)"))
    return None if device_type.lower() == "cpu" else devices[int(device_id)]


def _shape(method, shape) -> None:
    if not isinstance(shape, (list, tuple)) or any(
            isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 0 for d in shape):
        fail(dml.E_INVALIDARG, f"{method}: shape is {shape!r}; a list of sizes (integers, 0 or "
                               "more)")


def _elem_type(method, dtype) -> int:
    t = onnx_model.elem_type_of(dtype)
    if not t:
        fail(dml.E_INVALIDARG, f"{method}: {dtype!r} is not an ONNX tensor element type")
    return t


class OrtValue:
    """ORT's OrtValue holding a dense tensor: a NumPy array on 'cpu', the tensor's bytes on the
    device on 'dml'. Made by ``ortvalue_from_numpy`` / ``ortvalue_from_shape_and_type``, or by
    a run (IOBinding's outputs)."""

    __slots__ = ("_value", "_where")

    def __init__(self, value, where: str = "cpu"):
        self._value, self._where = value, where  # np.ndarray or DeviceTensor

    @staticmethod
    def ortvalue_from_numpy(numpy_obj, device_type="cpu", device_id=0, vendor_id=-1):
        method = "OrtValue.ortvalue_from_numpy"
        if not isinstance(numpy_obj, np.ndarray):
            fail(dml.E_INVALIDARG, f"{method}: numpy_obj is a {type(numpy_obj).__name__}; a "
                                   "numpy.ndarray")
        device = _device(method, device_type, device_id)
        _elem_type(method, numpy_obj.dtype)
        if device is None:
            return OrtValue(numpy_obj)  # as ORT: the array's memory, not a copy
        if numpy_obj.dtype.kind in "OUS":
            fail(dml.E_INVALIDARG, f"{method}: a {numpy_obj.dtype} tensor lives on the CPU; "
                                   "DirectML has no string tensors")
        return OrtValue(DeviceTensor.put(numpy_obj, device), "dml")

    @staticmethod
    def ortvalue_from_shape_and_type(shape, element_type=np.float32, device_type="cpu",
                                     device_id=0, vendor_id=-1):
        method = "OrtValue.ortvalue_from_shape_and_type"
        _shape(method, shape)
        if isinstance(element_type, (int, np.integer)) and not isinstance(element_type, bool):
            try:
                element_type = helper.tensor_dtype_to_np_dtype(int(element_type))
            except (KeyError, TypeError, ValueError):
                fail(dml.E_INVALIDARG, f"{method}: element_type {element_type} is not an ONNX "
                                       "TensorProto type")
        _elem_type(method, element_type)
        return OrtValue.ortvalue_from_numpy(np.zeros([int(d) for d in shape], element_type),
                                            device_type, device_id)

    # ---- what ORT's OrtValue answers --------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """The values as a NumPy array (from the device: a copy, waiting for the run)."""
        v = self._value
        return v.to_numpy() if isinstance(v, DeviceTensor) else v

    def shape(self) -> list:
        return list(self._value.shape)

    def data_type(self) -> str:
        return onnx_model.type_string(self.element_type())

    def element_type(self) -> int:
        return helper.np_dtype_to_tensor_dtype(np.dtype(self._value.dtype))

    def device_name(self) -> str:
        return self._where

    def tensor_size_in_bytes(self) -> int:
        return math.prod(self._value.shape) * np.dtype(self._value.dtype).itemsize

    def is_tensor(self) -> bool:
        return True

    def has_value(self) -> bool:
        return True

    def is_sparse_tensor(self) -> bool:
        return False

    def is_tensor_sequence(self) -> bool:
        return False

    def update_inplace(self, np_arr) -> None:
        """Overwrite the values with ``np_arr`` (same shape and type)."""
        if not isinstance(np_arr, np.ndarray) or np_arr.dtype != self._value.dtype or \
                tuple(np_arr.shape) != tuple(self._value.shape):
            fail(dml.E_INVALIDARG, "OrtValue.update_inplace: np_arr must be a numpy.ndarray of "
                                   f"{self.data_type()} and shape {self.shape()}")
        if isinstance(self._value, DeviceTensor):
            self._value = DeviceTensor.put(np_arr, next(iter(self._value.words.devices())))
        else:
            np.copyto(self._value, np_arr)

    def data_ptr(self):
        fail(dml.E_NOTIMPL, "OrtValue.data_ptr: dmlsim's tensors have no device address; "
                            "pass the OrtValue itself (bind_ortvalue_input)")

    def __repr__(self):
        return f"<dmlsim.onnx.OrtValue {self.data_type()} {self.shape()} on '{self._where}'>"


class IOBinding:
    """ORT's IOBinding of one session: inputs bound as NumPy arrays or OrtValues, outputs to a
    device ('cpu' or 'dml') or into an OrtValue; ``session.run_with_iobinding(binding)`` runs
    it, ``get_outputs()`` gives the OrtValues, ``copy_outputs_to_cpu()`` NumPy arrays."""

    def __init__(self, session):
        self._session = session
        self._inputs: dict = {}
        self._outputs: dict = {}  # name -> (device type, device id, dtype, shape) or OrtValue
        self._results: list = []

    def _name(self, method, name, names):
        if not isinstance(name, str) or name not in names:
            fail(dml.E_INVALIDARG, f"IOBinding.{method}: {name!r} is not one of the model's "
                                   f"{'inputs' if 'input' in method else 'outputs'}: "
                                   f"{', '.join(names)}")
        return name

    def bind_cpu_input(self, name, arr_on_cpu) -> None:
        self._name("bind_cpu_input", name, self._session.input_names)
        if not isinstance(arr_on_cpu, np.ndarray):
            fail(dml.E_INVALIDARG, f"IOBinding.bind_cpu_input: input '{name}' is a "
                                   f"{type(arr_on_cpu).__name__}; a numpy.ndarray")
        self._inputs[name] = arr_on_cpu

    def _ortvalue(self, method, name, ortvalue, names):
        self._name(method, name, names)
        if not isinstance(ortvalue, OrtValue):
            fail(dml.E_INVALIDARG, f"IOBinding.{method}: '{name}' is given a "
                                   f"{type(ortvalue).__name__}; an OrtValue")
        return ortvalue

    def bind_ortvalue_input(self, name, ortvalue) -> None:
        self._inputs[name] = self._ortvalue("bind_ortvalue_input", name, ortvalue,
                                            self._session.input_names)

    def bind_input(self, name, device_type, device_id, element_type, shape, buffer_ptr):
        fail(dml.E_NOTIMPL, "IOBinding.bind_input: a raw device address (buffer_ptr) has no "
                            "counterpart in dmlsim; bind an OrtValue (bind_ortvalue_input) or a "
                            "NumPy array (bind_cpu_input)")

    def bind_output(self, name, device_type="cpu", device_id=0, element_type=None, shape=None,
                    buffer_ptr=None) -> None:
        self._name("bind_output", name, self._session.output_names)
        if buffer_ptr is not None:
            fail(dml.E_NOTIMPL, "IOBinding.bind_output: a raw device address (buffer_ptr) has no "
                                "counterpart in dmlsim; bind an OrtValue (bind_ortvalue_output) "
                                "or a device type")
        _device("IOBinding.bind_output", device_type, device_id)
        if element_type is not None:
            _elem_type("IOBinding.bind_output", element_type)
        if shape is not None:
            _shape("IOBinding.bind_output", shape)
        self._outputs[name] = (device_type.lower(), int(device_id),
                               None if element_type is None else np.dtype(element_type),
                               None if shape is None else tuple(int(d) for d in shape))

    def bind_ortvalue_output(self, name, ortvalue) -> None:
        self._outputs[name] = self._ortvalue("bind_ortvalue_output", name, ortvalue,
                                             self._session.output_names)

    def clear_binding_inputs(self) -> None:
        self._inputs.clear()

    def clear_binding_outputs(self) -> None:
        self._outputs.clear()
        self._results = []

    def get_outputs(self) -> list:
        """The bound outputs of the last run, as OrtValues, in the order they were bound."""
        return list(self._results)

    get_outputs_as_ortvaluevector = get_outputs

    def copy_outputs_to_cpu(self) -> list:
        return [v.numpy() for v in self._results]

    def synchronize_inputs(self) -> None:
        pass  # inputs are consumed by the time run_with_iobinding returns

    def synchronize_outputs(self) -> None:
        for v in self._results:
            if isinstance(v._value, DeviceTensor):
                v._value.words.block_until_ready()

    def _store(self, results: dict) -> None:
        """Place the run's ``results`` (name -> NumPy array or DeviceTensor) as bound."""
        out = []
        for name, place in self._outputs.items():
            r = results[name]
            shape, dtype = tuple(r.shape), np.dtype(r.dtype)
            if isinstance(place, OrtValue):
                want = (tuple(place._value.shape), np.dtype(place._value.dtype))
                if want != (shape, dtype):
                    fail(dml.E_INVALIDARG, f"run_with_iobinding: output '{name}' is {dtype} "
                                           f"{list(shape)}; the OrtValue bound to it holds "
                                           f"{want[1]} {list(want[0])}")
                where = place._where
            else:
                where, device_id, want_type, want_shape = place
                if (want_type is not None and want_type != dtype) or \
                        (want_shape is not None and want_shape != shape):
                    fail(dml.E_INVALIDARG, f"run_with_iobinding: output '{name}' is {dtype} "
                                           f"{list(shape)}; bind_output said {want_type} "
                                           f"{None if want_shape is None else list(want_shape)}")
            if where == "cpu":
                value = r.to_numpy() if isinstance(r, DeviceTensor) else np.asarray(r)
            else:
                value = r if isinstance(r, DeviceTensor) else DeviceTensor.put(
                    np.asarray(r), next(iter(place._value.words.devices()))
                    if isinstance(place, OrtValue) else
                    _device("IOBinding.bind_output", "dml", place[1]))
            if isinstance(place, OrtValue):
                if where == "cpu":
                    np.copyto(place._value, value)
                else:
                    place._value = value
                out.append(place)
            else:
                out.append(OrtValue(value, where))
        self._results = out


def payload(value):
    """A feed's array: an OrtValue's NumPy array or DeviceTensor, anything else as given."""
    return value._value if isinstance(value, OrtValue) else value
