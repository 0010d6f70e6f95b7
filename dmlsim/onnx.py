"""``dmlsim.onnx``: ONNX models through DirectML operators and CompileGraph, lowered the way ONNX
Runtime's DirectML execution provider lowers them, off Windows.

::

    import dmlsim.onnx
    session = dmlsim.onnx.prepare("model.onnx")            # or a ModelProto
    (y,) = session.run(None, {"x": x})                     # ONNX Runtime's calling convention
    print(session.describe())                              # the DML graph it became

``Backend`` implements ``onnx.backend.base.Backend`` (``prepare``, ``run_node``,
``supports_device``) for ONNX's backend test suite. ``supported_operators()`` lists the ONNX
operator types with a lowering; nodes whose inputs are all constants fold on the CPU whatever
their type. Needs the ``onnx`` package (``pip install dmlsim[onnx]``).
"""
from ._pythonic.onnx_session import (  # noqa: F401
    Backend, BackendRepresentation, Session, prepare, supported_operators)
