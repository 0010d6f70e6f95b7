"""dmlsim.onnx's entry points: ``prepare(model)`` (an ``InferenceSession``, which keeps one
``onnx_plan.Plan`` per input signature), ``supported_operators()``, and ``Backend``, an
``onnx.backend.base.Backend`` so that ONNX's backend test suite runs against dmlsim."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper
from onnx.backend.base import Backend as _Backend, BackendRep

from .._api import public as dml
from .onnx_inference import InferenceSession
from .onnx_plan import RULES, Plan  # noqa: F401 -- re-exported


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
    return sorted({op for op in RULES if not op.startswith("com.dmlsim.")} |
                  set(FUNCTION_OPERATORS) | {"NonZero"})  # NonZero: through com.dmlsim nodes


def prepare(model, device=None, feature_level=None, sess_options=None) -> InferenceSession:
    """An InferenceSession for ``model`` (a path, bytes or ModelProto): static models are lowered
    and compiled now, dynamic ones per input signature at run."""
    return InferenceSession(model, sess_options, device=device, feature_level=feature_level)


Session = InferenceSession  # the name dmlsim.onnx used before ORT's


class BackendRepresentation(BackendRep):
    """A model for ONNX's backend runner: an InferenceSession whose graph inputs that DirectML
    needs as attributes (a Reshape's shape, Reduce axes, Slice starts, ...) are read on the CPU
    with the values fed, as ONNX Runtime's provider reads them."""

    def __init__(self, model, sess_options=None):
        self.session = InferenceSession(model, sess_options)
        self.names = self.session.input_names

    def run(self, inputs, **kwargs):
        if isinstance(inputs, dict):
            feeds = dict(inputs)
        else:
            inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
            feeds = dict(zip(self.names, inputs))
        return tuple(self.session.run(None, feeds))


class Backend(_Backend):
    """ONNX's backend interface over dmlsim.onnx (for ``onnx.backend.test.BackendTest``)."""

    sess_options = None  # a SessionOptions for every session (a subclass may set one)

    @classmethod
    def prepare(cls, model, device="CPU", **kwargs):
        super().prepare(model, device, **kwargs)
        return BackendRepresentation(model, kwargs.get("sess_options", cls.sess_options))

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
        return BackendRepresentation(model, cls.sess_options).run(list(inputs))

    @classmethod
    def supports_device(cls, device: str) -> bool:
        """CPU always; CUDA when JAX runs on a GPU (dmlsim's device is JAX's)."""
        if device == "CPU":
            return True
        return device == "CUDA" and dml.info()["backend"] == "gpu"


__all__ = ["InferenceSession", "Session", "Plan", "prepare", "Backend", "BackendRepresentation",
           "supported_operators", "RULES"]
