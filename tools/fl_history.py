"""The feature-level history (tools/spec/dml-feature-level-history.md, the spec's guide page),
read into its changes, each with what dmlsim does and the tests that cover it.

Three kinds of change, by the paragraph a bullet sits under:
- ``added``: "Added (support for) the following operator types" -> the operator's spec
  ``introduced`` level; tests/test_feature_level_history.py checks the page and operators.json
  agree and that CreateOperator refuses the operator one level below.
- ``extended``: "Extended data type (and dimension count) support", "The maximum number of
  supported dimensions ... increased", "Additional support for integer datatypes" -> a support
  table of the operator's page that starts at that level; test_support_tables_all checks the
  data types and dimension limits of every table at the level it starts.
- ``special``: every other bullet, matched to SPECIAL below by a phrase of its text.

gen_op_docs.py renders the list into docs/operators.md; the test fails when a bullet has no
entry here or an entry names a test that does not exist.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

PAGE = Path(__file__).resolve().parent / "spec" / "dml-feature-level-history.md"

SUPPORT_TABLES = ["tests/test_support_tables_all.py::test_support_table_data_types",
                  "tests/test_support_tables.py::test_support_table_cells"]
ADDED = ["tests/test_feature_level_history.py::test_added_operators_are_refused_one_level_below",
         "tests/test_support_tables.py::test_support_table_cells"]

# phrase of the bullet -> (what dmlsim does, covering tests)
SPECIAL = {
    "accept the **DML_PADDING_MODE_WRAP**": (
        "PADDING and PADDING1 take WRAP from 6_4; before, E_INVALIDARG",
        ["tests/test_ops_data_misuse.py::test_padding_wrap_is_accepted_from_feature_level_6_4"]),
    "to allow Steepness < 1": (
        "Steepness < 1 is E_INVALIDARG before 6_4, any positive finite value from 6_4",
        ["tests/test_ops_activation.py::test_softplus_steepness_below_1_from_feature_level_6_4"]),
    "**DML_TENSOR_DATA_TYPE_UINT4** and **DML_TENSOR_DATA_TYPE_INT4**": (
        "UINT4/INT4 tensors (two per byte) in QUANTIZE and DEQUANTIZE's 6_3 tables",
        ["tests/test_packed4.py::test_int4_is_twos_complement_in_its_nibble",
         *SUPPORT_TABLES]),
    "INT4 Dequantize + GEMM fusion": ("a driver optimization: nothing to observe", []),
    "Added Multihead Attention fusion": ("a driver optimization: nothing to observe", []),
    "Added Gemm fusion optimizations": ("a driver optimization: nothing to observe", []),
    "Fix pooling metacommand calls": ("a driver fix: nothing to observe", []),
    "Swish now produces correct output when invoked with strided": (
        "every operator reads strided and broadcast inputs, ACTIVATION_SWISH included",
        ["tests/test_operator_examples.py::test_example_reads_strided_and_broadcast_inputs"]),
    "FP16 GemmWave emulated on FP32": (
        "dmlsim's FLOAT16 GEMM accumulates in float32 at every level (a vendor fix)",
        ["tests/test_precision.py"]),
    "Made *ZeroPointTensor* optional": (
        "QUANTIZE_LINEAR and DEQUANTIZE_LINEAR take a null ZeroPointTensor from 6_2",
        ["tests/test_ops_logical_bitwise_quant.py::"
         "test_quantize_float16_scale_and_optional_zero_point_by_feature_level"]),
    "**DML_GRAPH_NODE_TYPE_CONSTANT**": (
        "constant-data graph nodes from 6_2; before, E_INVALIDARG at CompileGraph",
        ["tests/test_graph.py::test_constant_nodes_feed_operators_through_intermediate_edges",
         "tests/test_graph.py::test_size_mismatch_owned_flags_devices_and_constants",
         "tests/test_onnx_functions.py::test_scalar_constants_are_constant_nodes_from_feature_level_6_2"]),
    "Added **DML_OPERATOR_MULTIHEAD_ATTENTION**": (
        "MULTIHEAD_ATTENTION from 6_1", ADDED),
    "now supports **DML_OPERATOR_ACTIVATION_SOFTMAX**": (
        "GEMM fuses ACTIVATION_SOFTMAX and ACTIVATION_SOFTMAX1 from 6_1 (no other operator "
        "does); before, E_INVALIDARG",
        ["tests/test_feature_level_history.py::test_gemm_fuses_softmax_from_6_1"]),
    "Added UINT64 and INT64 data type support for": ("support tables from 6_0", SUPPORT_TABLES),
    "Added FLOAT16 data type support in *ScaleTensor* for": (
        "support tables from 6_0",
        ["tests/test_ops_logical_bitwise_quant.py::"
         "test_quantize_float16_scale_and_optional_zero_point_by_feature_level",
         *SUPPORT_TABLES]),
    "Added FLOAT16 data type support in *ScaleTensor* and *OutputTensor*": (
        "support tables from 6_0", SUPPORT_TABLES),
    "to the supported fused activation list": (
        "ELEMENT_WISE_CLIP fuses (into CONVOLUTION and GEMM) from 6_0; before, E_INVALIDARG",
        ["tests/test_feature_level_history.py::test_clip_fuses_from_6_0"]),
    "The range of tensor dimension has been increased to 1 to 4": (
        "MATRIX_MULTIPLY_INTEGER's BZeroPointTensor and QUANTIZED_LINEAR_CONVOLUTION's "
        "FilterScaleTensor take 1-4 dimensions from 5_2 (4 before)",
        ["tests/test_ops_quantized.py::test_one_dimensional_zero_points_from_feature_level_5_2",
         *SUPPORT_TABLES]),
    "can be null independent of each other": (
        "before 5_2 ScaleTensor and BiasTensor come together or not at all",
        ["tests/test_feature_level_history.py::test_mvn_scale_and_bias_apart_from_5_2"]),
    "maximum number of tensor dimensions has been increased from 5 to 8": (
        "the support tables' dimension limits at each level",
        ["tests/test_support_tables.py::test_support_table_cells"]),
    "The following 64-bit data types have been added": (
        "FLOAT64, UINT64 and INT64 in the tables that list them from 3_0; CheckFeatureSupport "
        "reports them",
        ["tests/test_object_model.py::test_check_feature_support_tensor_data_types_per_level",
         *SUPPORT_TABLES]),
    "**DML_TENSOR_DATA_TYPE_FLOAT64**": (
        "64-bit types in the tables that list them from 3_0; CheckFeatureSupport reports them",
        ["tests/test_object_model.py::test_check_feature_support_tensor_data_types_per_level",
         *SUPPORT_TABLES]),
    "**DML_TENSOR_DATA_TYPE_UINT64**": ("as FLOAT64", SUPPORT_TABLES),
    "**DML_TENSOR_DATA_TYPE_INT64**": ("as FLOAT64", SUPPORT_TABLES),
    "have been deprecated": (
        "deprecated, not removed: REDUCE still takes ARGMAX and ARGMIN",
        ["tests/test_dmlx.py::test_reduce_defaults_to_every_axis_and_argmax_to_uint32"]),
    "[IDMLDevice1 interface]": (
        "dmlsim is DirectML 1.15's API at every feature level: levels gate operators, data "
        "types and ranks, not interfaces",
        ["tests/test_feature_level_history.py::test_the_api_is_there_at_every_level"]),
    "Operator graph support": ("as IDMLDevice1",
                               ["tests/test_feature_level_history.py::"
                                "test_the_api_is_there_at_every_level"]),
    "Relaxed tensor shape restrictions for **DML_OPERATOR_GATHER**": (
        "GATHER's page gives only the relaxed rules and the history does not say what the "
        "earlier ones were, so the page's rules apply at every level",
        ["tests/test_operator_examples.py::test_example_through_faithful_path"]),
    "[DMLCreateDevice1 function]": (
        "DMLCreateDevice1 with its minimum feature level",
        ["tests/test_object_model.py::test_dml_create_device1_minimum_feature_level"]),
    "[DML_FEATURE_LEVEL enumeration]": (
        "the enumeration, every level settable",
        ["tests/test_first_impressions.py::test_set_feature_level_refuses_what_is_not_a_level"]),
    "Feature level queries": (
        "DML_FEATURE_FEATURE_LEVELS answers the emulated level",
        ["tests/test_object_model.py::test_check_feature_support_feature_levels_per_level"]),
    "D3D12_HEAP_TYPE_CUSTOM": (
        "CUSTOM heaps are E_NOTIMPL at CreateCommittedResource, at every level (listed in "
        "docs/binding.md)",
        ["tests/test_reliability_args.py::test_none_flags_and_heap_type_are_invalid_arguments_as_in_d3d12"]),
    "now support **UINT8** output tensors": ("the logical operators' 2_0 tables",
                                              SUPPORT_TABLES),
    "5D activation functions now support the use of strides": (
        "activations take 5-D tensors from 2_0 (their 1_0 tables stop at 4-D), strided or not",
        ["tests/test_operator_examples.py::test_example_reads_strided_and_broadcast_inputs",
         *SUPPORT_TABLES]),
}


ALIASES = {"DML_OPERATOR_SCATTER": "DML_OPERATOR_SCATTER_ELEMENTS"}
"""DirectML.h's second names for an operator type (DML_OPERATOR_SCATTER is SCATTER_ELEMENTS)."""

PAGE_SILENT = {
    ("4_0", "DML_OPERATOR_ADAM_OPTIMIZER"): "its page has one table, '3_0 and above'",
    ("3_1", "DML_OPERATOR_JOIN"): "its page's tables start at 1_0, 2_1, 3_0 and 4_1",
    ("3_1", "DML_OPERATOR_ACTIVATION_RELU_GRAD"): "its page's tables start at 3_0, 4_0 and 5_1",
    ("2_1", "DML_OPERATOR_ELEMENT_WISE_IF"): "its page's tables start at 2_0, 3_0 and 5_0",
    ("2_1", "DML_OPERATOR_ACTIVATION_SHRINK"): "its page's tables start at 2_0, 3_0 and 5_1",
}
"""Extensions whose operator page has no table starting at that level: dmlsim applies the
page's tables (the history sends the reader to "each operator's structure topic")."""


@dataclass
class Change:
    level: str                 # "6_4"
    kind: str                  # "added" | "extended" | "special"
    text: str                  # the bullet, as the page writes it
    operators: list = field(default_factory=list)
    handling: str = ""
    tests: list = field(default_factory=list)


_OPS = re.compile(r"\*\*(DML_OPERATOR_[A-Z0-9_]+)\*\*")


def changes(page: Path = PAGE) -> list:
    """Every change the page lists, level by level, newest first as the page orders them. A
    paragraph that introduces a list ("Made *ZeroPointTensor* optional for the following
    operators:") is one change whose operators are the list's; a bullet's sub-list adds its
    operators to the bullet (REDUCE's functions, the integer-support list)."""
    out, level, mode = [], None, None
    for raw in page.read_text().splitlines():
        line = raw.rstrip()
        m = re.match(r"## DML_FEATURE_LEVEL_(\d_\d)", line)
        if m:
            level, mode = m.group(1), None
            continue
        if level is None or level == "1_0" or not line.strip():
            continue
        text = line.strip()
        if not text.startswith("* "):  # a paragraph
            lower = text.lower()
            if re.match(r"added (support for )?the following operator types", lower):
                mode = "added"
            elif lower.startswith(("extended data type", "the maximum number of supported")):
                mode = "extended"
            elif "documented in" not in text and ("**DML_" in text or "following operators"
                                                  in text or "following parameters" in text):
                mode = "group"
                out.append(Change(level, "special", text))
            else:
                mode = None
            continue
        bullet, indent = text[2:].strip(), len(line) - len(line.lstrip())
        ops = [ALIASES.get(o, o) for o in _OPS.findall(bullet)]
        if indent and ops and out and out[-1].level == level:
            out[-1].operators += ops
        elif indent and out and out[-1].level == level and "DML_REDUCE_FUNCTION_" in bullet:
            out[-1].text += " " + bullet  # REDUCE's functions, under the REDUCE bullet
        elif mode in ("added", "extended") and ops:
            out.append(Change(level, mode, bullet, ops))
        elif mode == "group" and ops and not indent:
            out[-1].operators += ops
        elif bullet.endswith(":") and not ops:
            continue  # a heading inside a list ("Intel:")
        elif bullet.startswith("Additional support for integer datatypes"):
            out.append(Change(level, "extended", bullet))
        else:
            out.append(Change(level, "special", bullet, ops))
    for c in out:
        if c.kind == "added":
            c.handling, c.tests = f"introduced in {c.level}", list(ADDED)
        elif c.kind == "extended":
            silent = [f"{op[13:]}: {PAGE_SILENT[(c.level, op)]}" for op in c.operators
                      if (c.level, op) in PAGE_SILENT]
            c.handling = f"the operator's '{c.level} and above' table" + (
                f" (where the page has none, its tables apply: {'; '.join(silent)})"
                if silent else "")
            c.tests = list(SUPPORT_TABLES)
        else:
            hit = [v for k, v in SPECIAL.items() if k in c.text]
            if len(hit) == 1:
                c.handling, c.tests = hit[0][0], list(hit[0][1])
    return out
