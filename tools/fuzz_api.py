"""Fuzz the public API: generated calls with arguments of every kind (integers past UINT64,
negative, NaN/inf floats, None, strings, lists, objects of the wrong interface) to creation
methods, descs, bindings and command sequences. The property: a call returns or raises
HResultError, nothing else; a non-void call that fails leaves the device as it was (not removed).

    python tools/fuzz_api.py [--cases 100000]      # the long profile; the suite runs a short one
"""
from __future__ import annotations

import argparse

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

import dmlsim as dml


class Rig:
    """One device pair with a few objects to pass around (recreated if a case removes it)."""

    def __init__(self):
        self.d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
        self.dml = dml.DMLCreateDevice(self.d3d, 0)
        self.queue = self.d3d.CreateCommandQueue(dml.D3D12_COMMAND_QUEUE_DESC(0))
        self.alloc = self.d3d.CreateCommandAllocator(0)
        self.cl = self.d3d.CreateCommandList(0, 0, self.alloc, None)
        self.fence = self.d3d.CreateFence(0, 0)
        self.buf = self.d3d.CreateCommittedResource(
            dml.CD3DX12_HEAP_PROPERTIES(1), 0, dml.CD3DX12_RESOURCE_DESC.Buffer(64, 4),
            dml.D3D12_RESOURCE_STATE_UNORDERED_ACCESS, None)
        self.heap = self.d3d.CreateDescriptorHeap(dml.D3D12_DESCRIPTOR_HEAP_DESC(0, 8, 1))
        desc = dml.operator_desc("ELEMENT_WISE_IDENTITY", InputTensor=np.zeros(4, np.float32),
                                 OutputTensor=np.zeros(4, np.float32))
        self.op = self.dml.CreateOperator(desc)
        self.compiled = self.dml.CompileOperator(self.op, 0)
        self.table = self.dml.CreateBindingTable(dml.DML_BINDING_TABLE_DESC(
            self.compiled, self.heap.GetCPUDescriptorHandleForHeapStart(),
            self.heap.GetGPUDescriptorHandleForHeapStart(), 8))

    def objects(self):
        return [self.queue, self.alloc, self.cl, self.fence, self.buf, self.heap, self.op,
                self.compiled, self.table]


RIG: list = [None]


def rig() -> Rig:
    """The shared rig; a fresh one when a case removed the device, and every 500 cases (so that
    queues held by generated Waits do not grow without bound)."""
    RIG.append(None)  # the count of cases since the rig was made: len(RIG) - 1
    if len(RIG) > 501 or RIG[0] is None or RIG[0].d3d.GetDeviceRemovedReason() or \
            RIG[0].dml.GetDeviceRemovedReason():
        RIG[:] = [Rig()]
    return RIG[0]


OBJECT = st.integers(0, 8).map(lambda i: ("object", i))
VALUE = st.one_of(st.integers(-2**70, 2**70), st.integers(-4, 70),
                  st.floats(allow_nan=True, allow_infinity=True), st.none(),
                  st.text(max_size=3), st.lists(st.integers(-3, 9), max_size=5), OBJECT)


def _v(r, value):
    if isinstance(value, tuple) and value and value[0] == "object":
        return r.objects()[value[1]]
    return value


def _tensor(r, dt, sizes, strides, total):
    return dml.DML_TENSOR_DESC(dml.DML_TENSOR_TYPE_BUFFER, dml.DML_BUFFER_TENSOR_DESC(
        _v(r, dt), 0, None, _v(r, sizes), _v(r, strides), _v(r, total)))


CALLS = {  # name -> (number of generated arguments, call(rig, values), void)
    "CreateCommittedResource": (3, lambda r, a, b, c: r.d3d.CreateCommittedResource(
        dml.CD3DX12_HEAP_PROPERTIES(_v(r, a)), 0, dml.CD3DX12_RESOURCE_DESC.Buffer(
            _v(r, b), _v(r, c)), 0, None), False),
    "CreateDescriptorHeap": (3, lambda r, a, b, c: r.d3d.CreateDescriptorHeap(
        dml.D3D12_DESCRIPTOR_HEAP_DESC(_v(r, a), _v(r, b), _v(r, c))), False),
    "CreateOperator(IDENTITY)": (4, lambda r, a, b, c, d: r.dml.CreateOperator(
        dml.DML_OPERATOR_DESC(dml.DML_OPERATOR_ELEMENT_WISE_IDENTITY,
                              dml.DML_ELEMENT_WISE_IDENTITY_OPERATOR_DESC(
                                  _tensor(r, a, b, c, d), _tensor(r, 1, [4], None, 16)))),
                                 False),
    "CreateOperator(CLIP1)": (3, lambda r, a, b, c: r.dml.CreateOperator(
        dml.DML_OPERATOR_DESC(dml.DML_OPERATOR_ELEMENT_WISE_CLIP1,
                              dml.DML_ELEMENT_WISE_CLIP1_OPERATOR_DESC(
                                  _tensor(r, 1, [4], None, 16), _tensor(r, 1, [4], None, 16),
                                  _v(r, a), _v(r, b), _v(r, c)))), False),
    "CreateOperator(REDUCE)": (2, lambda r, a, b: r.dml.CreateOperator(
        dml.DML_OPERATOR_DESC(dml.DML_OPERATOR_REDUCE, dml.DML_REDUCE_OPERATOR_DESC(
            _v(r, a), _tensor(r, 1, [2, 2], None, 16), _tensor(r, 1, [1, 2], None, 8),
            None, _v(r, b)))), False),
    "CreateOperator(type)": (2, lambda r, a, b: r.dml.CreateOperator(
        dml.DML_OPERATOR_DESC(_v(r, a), _v(r, b))), False),
    "CompileOperator": (2, lambda r, a, b: r.dml.CompileOperator(_v(r, a), _v(r, b)), False),
    "BindInputs": (3, lambda r, a, b, c: r.table.BindInputs([dml.DML_BINDING_DESC(
        dml.DML_BINDING_TYPE_BUFFER, dml.DML_BUFFER_BINDING(_v(r, a), _v(r, b), _v(r, c)))]),
                   True),
    "BindOutputs": (2, lambda r, a, b: r.table.BindOutputs(_v(r, a), _v(r, b)), True),
    "CopyBufferRegion": (4, lambda r, a, b, c, d: r.cl.CopyBufferRegion(
        _v(r, a), _v(r, b), r.buf, _v(r, c), _v(r, d)), True),
    "ResourceBarrier": (1, lambda r, a: r.cl.ResourceBarrier([_v(r, a)]), True),
    "SetDescriptorHeaps": (1, lambda r, a: r.cl.SetDescriptorHeaps(_v(r, a)), True),
    "ExecuteCommandLists": (1, lambda r, a: r.queue.ExecuteCommandLists([_v(r, a)]), True),
    "Signal": (2, lambda r, a, b: r.queue.Signal(_v(r, a), _v(r, b)), False),
    "Wait": (2, lambda r, a, b: r.queue.Wait(_v(r, a), _v(r, b)), False),
    "Fence.Signal": (1, lambda r, a: r.fence.Signal(_v(r, a)), False),
    "SetEventOnCompletion": (2, lambda r, a, b: r.fence.SetEventOnCompletion(_v(r, a),
                                                                             _v(r, b)), False),
    "Map": (2, lambda r, a, b: r.buf.Map(_v(r, a), _v(r, b)), False),
    "DMLCalcBufferTensorSize": (4, lambda r, a, b, c, d: dml.DMLCalcBufferTensorSize(
        _v(r, a), _v(r, b), _v(r, c), _v(r, d)), False),
    "RecordDispatch": (3, lambda r, a, b, c: r.dml.CreateCommandRecorder().RecordDispatch(
        _v(r, a), _v(r, b), _v(r, c)), True),
}

CASE = st.sampled_from(sorted(CALLS)).flatmap(
    lambda name: st.tuples(st.just(name), st.lists(VALUE, min_size=CALLS[name][0],
                                                   max_size=CALLS[name][0])))


def check(case) -> str | None:
    """Run one case; None if it behaved, else what went wrong."""
    name, values = case
    n, call, void = CALLS[name]
    r = rig()
    if r.cl._core.open is False:
        r.alloc.Reset()
        r.cl.Reset(r.alloc, None)
    try:
        result = call(r, *values)
    except dml.HResultError as e:
        if void:
            return f"{name}{tuple(values)}: a void method raised {e} outside strict mode"
        removed = r.d3d.GetDeviceRemovedReason() or r.dml.GetDeviceRemovedReason()
        if removed and e.hresult != dml.DXGI_ERROR_DEVICE_REMOVED:
            return f"{name}{tuple(values)}: failed ({e}) and also removed the device"
        return None
    except Exception as e:  # noqa: BLE001 -- the property under test
        return f"{name}{tuple(values)}: {type(e).__name__}: {e}"
    del result
    return None


def run(cases: int, progress: bool = True) -> dict:
    tally = {"cases": 0, "bad": []}
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=cases, unit="case")

    @settings(max_examples=cases, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(CASE)
    def one(case):
        tally["cases"] += 1
        problem = check(case)
        if problem:
            tally["bad"].append(problem)
        if bar:
            bar.update()

    one()
    if bar:
        bar.close()
    return tally


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=100_000)
    a = p.parse_args()
    t = run(a.cases)
    print(f"{t['cases']} cases: {len(t['bad'])} calls raised something other than HResultError "
          "or failed and changed the device")
    for b in t["bad"][:20]:
        print("  ", b)
    raise SystemExit(1 if t["bad"] else 0)
