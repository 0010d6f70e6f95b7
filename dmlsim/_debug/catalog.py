"""The message catalogue of dmlsim's debug layer: every message ID it can produce.

IDs below 10000 are Direct3D 12's own (d3d12sdklayers.h values, so filters written for
Windows mean the same here). IDs from 10000 are dmlsim's: real DirectML reports almost
everything as ``#1 STRING_FROM_APPLICATION``; dmlsim gives each check its own ID so that it can
be muted, broken on and tested. 10000 is far above the last D3D12 ID (about 1400), so the two
ranges never collide. ``docs/debug_messages.md`` is generated from this table by
``tools/gen_debug_docs.py``.
"""
from __future__ import annotations

from typing import NamedTuple

# D3D12_MESSAGE_CATEGORY
CATEGORIES = ("APPLICATION_DEFINED", "MISCELLANEOUS", "INITIALIZATION", "CLEANUP", "COMPILATION",
              "STATE_CREATION", "STATE_SETTING", "STATE_GETTING", "RESOURCE_MANIPULATION",
              "EXECUTION", "SHADER")
# D3D12_MESSAGE_SEVERITY
SEVERITIES = ("CORRUPTION", "ERROR", "WARNING", "INFO", "MESSAGE")
(APPLICATION_DEFINED, MISCELLANEOUS, INITIALIZATION, CLEANUP, COMPILATION, STATE_CREATION,
 STATE_SETTING, STATE_GETTING, RESOURCE_MANIPULATION, EXECUTION, SHADER) = range(11)
CORRUPTION, ERROR, WARNING, INFO, MESSAGE = range(5)


class Entry(NamedTuple):
    id: int
    name: str          # D3D12_MESSAGE_ID_<name>
    category: int
    severity: int
    layer: str         # which switch turns it on: "D3D12", "DirectML", "either", "application"
    check: str         # what it checks (the numbering in docs/debug_messages.md)
    meaning: str
    fix: str


_D, _M, _E = "D3D12", "DirectML", "either"

ENTRIES = (
    Entry(0, "UNKNOWN", APPLICATION_DEFINED, MESSAGE, "application", "-",
          "No particular message (D3D12_MESSAGE_ID_UNKNOWN).", "-"),
    Entry(1, "STRING_FROM_APPLICATION", APPLICATION_DEFINED, MESSAGE, "application", "-",
          "A message the application added with ID3D12InfoQueue::AddApplicationMessage.", "-"),
    Entry(232, "DEVICE_REMOVAL_PROCESS_AT_FAULT", EXECUTION, ERROR, _E, "10 device removal",
          "The device was removed; the text names the call that removed it, the HRESULT that "
          "GetDeviceRemovedReason now returns, and the cause.",
          "Fix the cause named in the message (usually an earlier, more detailed message), "
          "then re-create the device and everything created from it."),
    Entry(255, "LIVE_OBJECT_SUMMARY", STATE_CREATION, WARNING, _D, "11 leaks",
          "ReportLiveDeviceObjects (or the final Release of the device): how many objects of "
          "the device are still alive, followed by one LIVE_* message per object.",
          "Release (or drop every Python reference to) the objects listed before releasing "
          "the device."),
    Entry(274, "LIVE_DEVICE", STATE_CREATION, WARNING, _D, "11 leaks",
          "The ID3D12Device itself is still referenced.", "Release it last."),
    Entry(519, "RESOURCE_BARRIER_INVALID_TYPE", RESOURCE_MANIPULATION, ERROR, _D, "2 states",
          "ResourceBarrier got a Type that is not a D3D12_RESOURCE_BARRIER_TYPE.",
          "Use CD3DX12_RESOURCE_BARRIER.Transition / .UAV / .Aliasing."),
    Entry(520, "RESOURCE_BARRIER_NULL_POINTER", RESOURCE_MANIPULATION, ERROR, _D, "2 states",
          "A transition barrier has no resource.", "Name the resource to transition."),
    Entry(525, "RESOURCE_BARRIER_MATCHING_STATES", RESOURCE_MANIPULATION, ERROR, _D, "2 states",
          "A transition barrier's StateBefore equals its StateAfter.",
          "Drop the barrier, or use a UAV barrier if you meant to order UAV accesses."),
    Entry(527, "RESOURCE_BARRIER_BEFORE_AFTER_MISMATCH", RESOURCE_MANIPULATION, ERROR, _D,
          "2 states",
          "When the list executed, a transition barrier's StateBefore was not the resource's "
          "state (the state after the previous barrier or promotion, or at creation).",
          "Set StateBefore to the state named in the message (track states per resource)."),
    Entry(538, "INVALID_SUBRESOURCE_STATE", EXECUTION, ERROR, _E, "2 states",
          "A resource was used in a state the operation cannot use: DirectML dispatches need "
          "UNORDERED_ACCESS (or COMMON, promoted), copies need COPY_SOURCE / COPY_DEST (or "
          "COMMON). Reported for copies with the D3D12 debug layer and for dispatches with "
          "the DirectML one.",
          "Transition the resource with ResourceBarrier before the command."),
    Entry(547, "COMMAND_LIST_CLOSED", EXECUTION, ERROR, _D, "-",
          "A command was recorded into a closed command list.",
          "Reset the list (and its allocator) before recording."),
    Entry(554, "SET_DESCRIPTOR_HEAP_INVALID", STATE_SETTING, ERROR, _D, "3 heaps",
          "SetDescriptorHeaps got two heaps of one type or a heap that is not shader visible.",
          "Create CBV_SRV_UAV heaps with D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE; set one."),
    Entry(570, "LIVE_COMMANDQUEUE", STATE_CREATION, WARNING, _D, "11 leaks",
          "A command queue is still alive.", "Release it."),
    Entry(571, "LIVE_COMMANDALLOCATOR", STATE_CREATION, WARNING, _D, "11 leaks",
          "A command allocator is still alive.", "Release it."),
    Entry(573, "LIVE_COMMANDLIST12", STATE_CREATION, WARNING, _D, "11 leaks",
          "A command list is still alive.", "Release it."),
    Entry(575, "LIVE_RESOURCE", STATE_CREATION, WARNING, _D, "11 leaks",
          "A resource (buffer) is still alive.", "Release it."),
    Entry(576, "LIVE_DESCRIPTORHEAP", STATE_CREATION, WARNING, _D, "11 leaks",
          "A descriptor heap is still alive.", "Release it."),
    Entry(580, "LIVE_MONITOREDFENCE", STATE_CREATION, WARNING, _D, "11 leaks",
          "A fence is still alive.", "Release it."),
    Entry(741, "RESOURCE_BARRIER_INVALID_HEAP", RESOURCE_MANIPULATION, ERROR, _D, "2 states",
          "A transition barrier names an UPLOAD or READBACK buffer, whose state is fixed.",
          "Drop the barrier: UPLOAD stays GENERIC_READ, READBACK stays COPY_DEST."),
    Entry(836, "EXECUTECOMMANDLISTS_COMMANDLISTMISMATCH", EXECUTION, ERROR, _D, "10 device removal",
          "ExecuteCommandLists got a list whose type the queue cannot execute.",
          "Execute DIRECT lists on DIRECT queues, COMPUTE lists on COMPUTE or DIRECT queues."),
    Entry(837, "EXECUTECOMMANDLISTS_OPENCOMMANDLIST", EXECUTION, ERROR, _D, "10 device removal",
          "ExecuteCommandLists got a list that is still open.", "Close the list first."),
    Entry(838, "EXECUTECOMMANDLISTS_FAILEDCOMMANDLIST", EXECUTION, ERROR, _D, "10 device removal",
          "ExecuteCommandLists got a list whose recording failed (Close returned E_INVALIDARG).",
          "Fix the recording error reported when the command was recorded."),
    Entry(839, "COPYBUFFERREGION_NULLDST", RESOURCE_MANIPULATION, ERROR, _D, "-",
          "A copy has no source or destination buffer.", "Pass both resources."),
    Entry(841, "COPYBUFFERREGION_DSTRANGEOUTOFBOUNDS", RESOURCE_MANIPULATION, ERROR, _D, "-",
          "A copy writes past the end of its destination.", "Fix DstOffset / NumBytes."),
    Entry(844, "COPYBUFFERREGION_SRCRANGEOUTOFBOUNDS", RESOURCE_MANIPULATION, ERROR, _D, "-",
          "A copy reads past the end of its source.", "Fix SrcOffset / NumBytes."),
    Entry(10001, "DML_MISSING_UAV_BARRIER", EXECUTION, ERROR, _M, "1 UAV barriers",
          "A dispatch reads or writes bytes that an earlier dispatch writes (or writes bytes an "
          "earlier dispatch reads) with no UAV, aliasing or transition barrier on that resource "
          "in between; the two may run concurrently. Earlier means: earlier in the same list, "
          "in an earlier list of the same ExecuteCommandLists call, or on another queue not "
          "ordered by a fence. Ranges are the tensors' bytes, exactly.",
          "ResourceBarrier(CD3DX12_RESOURCE_BARRIER.UAV(resource)) (or UAV(None)) between "
          "the two dispatches."),
    Entry(10002, "DML_DESCRIPTOR_HEAP_NOT_SET", STATE_SETTING, ERROR, _M, "3 heaps",
          "RecordDispatch: the descriptor heap the binding table points into is not the heap "
          "set on the command list (none set, or a different one). The DirectML device is "
          "removed.",
          "Call SetDescriptorHeaps on the list with the binding table's heap before "
          "RecordDispatch."),
    Entry(10003, "DML_DESCRIPTORS_CHANGED_AFTER_RECORD", EXECUTION, ERROR, _M, "4 volatile",
          "A binding table's descriptors changed between RecordDispatch and execution (Bind* "
          "or Reset after recording) but the operator was compiled without "
          "DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE: the GPU sees the new bindings, which "
          "DirectML does not allow.",
          "Bind everything before recording, use another binding table (range of the heap) per "
          "dispatch, or compile with DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE."),
    Entry(10004, "DML_ILLEGAL_ALIASING", STATE_SETTING, ERROR, _M, "5 aliasing",
          "Bindings overlap illegally: an input and an output overlapping without being "
          "identical, or identical for an operator without in-place support; two outputs "
          "overlapping; the persistent resource overlapping an output; the temporary resource "
          "overlapping anything. At RecordDispatch (the DirectML device is removed) or, for "
          "DESCRIPTORS_VOLATILE operators, at execution.",
          "Give each output and the temporary/persistent resources their own bytes."),
    Entry(10005, "READ_OF_UNWRITTEN_MEMORY", EXECUTION, WARNING, _E, "7 poison",
          "A dispatch or a copy reads bytes of a DEFAULT-heap buffer that nothing (copy, "
          "dispatch output, initializer) has written since it was created; they read as zeros. "
          "Reported once per range.",
          "Upload or compute the data first (and check offsets and sizes)."),
    Entry(10006, "DML_OPERATOR_NOT_INITIALIZED", EXECUTION, ERROR, _M, "8 initialization",
          "A compiled operator executed before an operator initializer initialized it. The "
          "device is removed.",
          "Record (and execute) an IDMLOperatorInitializer dispatch for it first."),
    Entry(10007, "DML_OPERATOR_INITIALIZED_TWICE", EXECUTION, ERROR, _M, "8 initialization",
          "An operator initializer ran for an operator that was already initialized. The "
          "device is removed.",
          "Initialize each compiled operator exactly once (Reset the initializer with other "
          "operators to reuse it)."),
    Entry(10008, "DML_PERSISTENT_RESOURCE_CHANGED", EXECUTION, ERROR, _M, "8 initialization",
          "The persistent resource bound at execution is not the bytes the initializer wrote, "
          "or those bytes were overwritten after initialization.",
          "Bind the same buffer, offset and size as at initialization, and never write it."),
    Entry(10009, "DML_INVALID_BINDING", STATE_SETTING, ERROR, _M, "9 bindings",
          "IDMLBindingTable::Bind*: a count, type, size, offset, alignment, heap or flag is "
          "wrong (e.g. an OWNED_BY_DML tensor bound at execution). The DirectML device is "
          "removed.",
          "Bind what GetBindingProperties and the tensor descs ask for; the text says which "
          "value was provided and which was expected."),
    Entry(10010, "DML_MISSING_BINDING", STATE_SETTING, ERROR, _M, "9 bindings",
          "RecordDispatch: a required binding is not set (and the operator is not "
          "DESCRIPTORS_VOLATILE). The DirectML device is removed.",
          "Bind every required input, output and persistent/temporary resource first."),
    Entry(10011, "DML_INVALID_RECORD_DISPATCH", STATE_SETTING, ERROR, _M, "9 bindings",
          "RecordDispatch: the command list is closed or of the wrong type, or the binding "
          "table belongs to another dispatchable or device. The DirectML device is removed.",
          "Record into an open DIRECT or COMPUTE list with the dispatchable's own table."),
    Entry(10012, "DML_LIVE_OBJECT", STATE_CREATION, WARNING, _D, "11 leaks",
          "A DirectML object (device, operator, compiled operator, initializer, binding table, "
          "command recorder) of the device is still alive.", "Release it."),
    Entry(10013, "DML_D3D12_DEBUG_LAYER_NOT_ENABLED", INITIALIZATION, WARNING, _M, "-",
          "DMLCreateDevice with DML_CREATE_DEVICE_FLAG_DEBUG on a device created without the "
          "D3D12 debug layer: DirectML messages go to the log only (no ID3D12InfoQueue) and "
          "the D3D12 checks are off.",
          "Call D3D12GetDebugInterface().EnableDebugLayer() before D3D12CreateDevice."),
    Entry(10014, "DML_INVALID_ARGUMENT", STATE_CREATION, ERROR, _M, "9 bindings",
          "A DirectML method that returns an HRESULT failed (CreateOperator against the "
          "operator's support table and tensor constraints, CompileOperator, "
          "CreateOperatorInitializer, CreateBindingTable, IDMLBindingTable::Reset, "
          "CheckFeatureSupport): the call raised HResultError with the same text, and the "
          "debug layer records it too, as DirectML's debug layer prints it.",
          "The text names the operator, the field and the value; fix the desc or argument."),
    Entry(10100, "INVALID_COPY", RESOURCE_MANIPULATION, ERROR, _D, "-",
          "CopyBufferRegion/CopyResource misuse other than out-of-bounds ranges: same "
          "resource, UPLOAD destination, READBACK source, differently sized resources.",
          "See the text."),
    Entry(10101, "COMMAND_LIST_RECORDING_ERROR", EXECUTION, ERROR, _D, "-",
          "Any other error while recording a command list (Close then fails with "
          "E_INVALIDARG).", "See the text."),
    Entry(10102, "CPU_ACCESS_BEFORE_GPU_COMPLETION", RESOURCE_MANIPULATION, ERROR, _D,
          "6 CPU/GPU sync",
          "Map with a non-empty read range read bytes that submitted GPU work writes, or "
          "Unmap with a non-empty written range wrote bytes that submitted GPU work reads or "
          "writes, and the CPU has not waited for that work with a fence.",
          "Signal a fence after ExecuteCommandLists and wait for it (SetEventOnCompletion + "
          "WaitForSingleObject, or GetCompletedValue) before touching the buffer."),
    Entry(10103, "FENCE_WAIT_NEVER_SIGNALED", EXECUTION, ERROR, _D, "-",
          "A CPU wait with INFINITE timeout for a fence value that nothing submitted will "
          "signal: no Signal of that value is queued, or the queues that would signal it wait "
          "on each other's fences (a cycle; real D3D12 hangs). The wait returns E_FAIL.",
          "Signal the value (from a queue or the CPU) before waiting, and break the cycle."),
    Entry(10104, "OBJECT_DELETED_WHILE_STILL_IN_USE", EXECUTION, ERROR, _D, "-",
          "ExecuteCommandLists of a list that copies, transitions or binds a resource whose "
          "last reference was released (Release returned 0): its memory is gone. The device "
          "is removed rather than read freed storage as if it were alive.",
          "Keep a reference (and the resource alive) until the GPU work that uses it has "
          "completed: wait on a fence signalled after ExecuteCommandLists, then Release."),
)

BY_NAME = {e.name: e for e in ENTRIES}
BY_ID = {e.id: e for e in ENTRIES}


def name_of(message_id: int) -> str:
    e = BY_ID.get(int(message_id))
    return e.name if e else f"MESSAGE_{int(message_id)}"
