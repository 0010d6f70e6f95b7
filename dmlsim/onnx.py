"""``dmlsim.onnx``: ONNX models through DirectML operators and CompileGraph, lowered the way ONNX
Runtime's DirectML execution provider lowers them, off Windows.

::

    import dmlsim.onnx
    session = dmlsim.onnx.InferenceSession("model.onnx")   # or bytes, a ModelProto; = prepare
    session.get_inputs()                                   # NodeArgs: name, shape, type
    (y,) = session.run(None, {"x": x})                     # ONNX Runtime's calling convention
    print(session.describe())                              # the DML graph it became

``compare(model, feeds, half_precision=False, half_matmul=False, flush_denormals=False)``
reports, node by node, where the DML result leaves a float64 reference (``dmlsim compare
MODEL``).

Dynamic dimensions are bound when the feeds arrive: each input signature gets its own lowered,
compiled plan, kept in a bounded LRU cache (``SessionOptions.plan_cache_size``); ORT's
free-dimension overrides pin them up front.

``session.io_binding()`` and ``OrtValue.ortvalue_from_numpy(x, "dml", 0)`` keep inputs and
outputs on the device between runs (ORT's IOBinding: ``run_with_iobinding``, no upload or
readback for what is bound on 'dml').

``Backend`` implements ``onnx.backend.base.Backend`` (``prepare``, ``run_node``,
``supports_device``) for ONNX's backend test suite. ``supported_operators()`` lists the ONNX
operator types with a lowering; nodes whose inputs are all constants fold on the CPU whatever
their type. Needs the ``onnx`` package (``pip install dmlsim[onnx]``).
"""
from ._pythonic.onnx_inference import (  # noqa: F401
    GraphOptimizationLevel, ModelMetadata, NodeArg, PlanCacheInfo, SessionOptions)
from ._pythonic.onnx_compare import Report as CompareReport, compare  # noqa: F401
from ._pythonic.onnx_iobinding import IOBinding, OrtValue  # noqa: F401
from ._pythonic.onnx_model import np_dtype  # noqa: F401
from ._pythonic.onnx_session import (  # noqa: F401
    Backend, BackendRepresentation, InferenceSession, Plan, Session, prepare,
    supported_operators)
