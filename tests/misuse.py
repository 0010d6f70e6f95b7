"""The misuse framework of tests/test_invalid_usage.py: the context the cases start
from and the registries the decorators fill (HR, VOID, RECORD, EXEC)."""
from __future__ import annotations

import numpy as np
import pytest

import dmlsim as dml

from helpers import Env, tensor

E_INVALIDARG, E_FAIL = dml.E_INVALIDARG, dml.E_FAIL
OWNED = dml.DML_TENSOR_FLAG_OWNED_BY_DML
ADD = "DML_OPERATOR_ELEMENT_WISE_ADD"


class Ctx(Env):
    """An Env plus the objects most misuses start from."""

    def add_desc(self, a=None, b=None, out=None, dtype=np.float32, sizes=(4,)):
        a, b, out = (t if t is not None else tensor(dtype, sizes) for t in (a, b, out))
        return dml.DML_OPERATOR_DESC(dml.DML_OPERATOR_ELEMENT_WISE_ADD,
                                     dml.DML_ELEMENT_WISE_ADD_OPERATOR_DESC(a, b, out))

    def add(self, flags=0, **kw):
        return self.dml.CompileOperator(self.dml.CreateOperator(self.add_desc(**kw)), flags)

    def owned_add(self):
        return self.add(b=tensor(np.float32, [4], flags=OWNED))

    def isinf(self):
        desc = dml.DML_OPERATOR_DESC(dml.DML_OPERATOR_ELEMENT_WISE_IS_INFINITY,
                                     dml.DML_ELEMENT_WISE_IS_INFINITY_OPERATOR_DESC(
                                         tensor(np.float32, [4]), tensor(np.uint8, [4]), 0))
        return self.dml.CompileOperator(self.dml.CreateOperator(desc), 0)

    def bound(self, compiled, inputs, outputs):
        """A binding table with ``inputs``/``outputs`` bound, its heap set on the list."""
        table, heap, _ = self.table(compiled)
        table.BindInputs(len(inputs), inputs)
        table.BindOutputs(len(outputs), outputs)
        self.cl.SetDescriptorHeaps(1, [heap])
        return table

    def initialized_add(self):
        """An initialized ADD, a DEFAULT buffer holding [1, 2, 3, 4] and a 16-byte output."""
        compiled = self.add()
        init, itable = self.init_table(compiled)
        self.recorder.RecordDispatch(self.cl, init, itable)
        a = self.device_buffer(np.float32([1, 2, 3, 4]))
        out = self.buffer(16)
        self.flush()
        return compiled, a, out

    def init_table(self, compiled):
        init = self.dml.CreateOperatorInitializer(1, [compiled])
        table, heap, _ = self.table(init)
        self.cl.SetDescriptorHeaps(1, [heap])
        return init, table


HR, VOID, RECORD, EXEC = [], [], [], []


def hr(code, prefix, *snippets):
    """A misuse of an HRESULT method: ``fn(c)`` must raise ``code``."""
    assert dml.FAILED(code), f"{code:#x} is not a failure HRESULT"

    def deco(fn):
        HR.append(pytest.param(fn, code, prefix, snippets, id=fn.__name__))
        return fn
    return deco


def void(method, *snippets, code=E_INVALIDARG, device="dml"):
    """A misuse of a void method: ``fn(c)`` returns the offending call as a thunk."""
    assert dml.FAILED(code), f"{code:#x} is not a failure HRESULT"

    def deco(fn):
        VOID.append(pytest.param(fn, method, snippets, code, device, id=fn.__name__))
        return fn
    return deco


def record(method, *snippets):
    """A command-list recording error: ``fn(c)`` returns the recording call as a thunk."""
    def deco(fn):
        RECORD.append(pytest.param(fn, method, snippets, id=fn.__name__))
        return fn
    return deco


def execution(*snippets):
    def deco(fn):
        EXEC.append(pytest.param(fn, snippets, id=fn.__name__))
        return fn
    return deco


