#!/usr/bin/env python3
"""Generates the deterministic ONNX test models of @tritium/backend-onnx.

Run from anywhere:  python3 packages/backend-onnx/models/generate.py
Needs only `onnx` and `numpy`. Every value is fixed (no clocks, no unseeded
randomness), so a rerun rewrites byte-identical files; the outputs are committed
and the tests never need Python.

Each artifact is `models/<name>.onnx`: a file, or (external_weights.onnx) a
directory holding `model.onnx` plus its external data file, which is the form a
Triton version directory accepts for `model.onnx`.
"""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 17  # supported by onnxruntime-node and onnxruntime-web 1.30
IR_VERSION = 8

# Triton config name -> ONNX element type. BF16 is generated too, although the
# onnxruntime JavaScript bindings cannot feed or fetch bfloat16 tensors: the
# backend refuses such a model with UNSUPPORTED, and the test checks that.
IDENTITY_TYPES = {
    "bool": TensorProto.BOOL,
    "uint8": TensorProto.UINT8,
    "uint16": TensorProto.UINT16,
    "uint32": TensorProto.UINT32,
    "uint64": TensorProto.UINT64,
    "int8": TensorProto.INT8,
    "int16": TensorProto.INT16,
    "int32": TensorProto.INT32,
    "int64": TensorProto.INT64,
    "fp16": TensorProto.FLOAT16,
    "fp32": TensorProto.FLOAT,
    "fp64": TensorProto.DOUBLE,
    "bf16": TensorProto.BFLOAT16,
    "string": TensorProto.STRING,
}

# The MLP: 256 -> 1024 -> 1024 -> 256 with Relu between. Its weights (1.5 M
# floats, 6 MB) are not stored: the graph computes them from a few scalars with
# Range/Mod/Cast, all constant inputs, so onnxruntime folds them into constants
# when the session is created and the file stays a few hundred bytes. Every
# weight is an exact float (k/2003 - 0.5, scaled), so numpy reproduces them.
MLP_DIMS = [256, 1024, 1024, 256]
MLP_MOD = 2003


def model(graph: onnx.GraphProto) -> onnx.ModelProto:
    m = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="tritium-backend-onnx-generate",
        producer_version="1",
    )
    m.ir_version = IR_VERSION
    onnx.checker.check_model(m)
    return m


def save(m: onnx.ModelProto, name: str) -> None:
    path = os.path.join(HERE, f"{name}.onnx")
    with open(path, "wb") as f:
        f.write(m.SerializeToString(deterministic=True))


def fp32_graph(name: str, nodes: list, inputs: list[str], outputs: list[str], shape: list) -> onnx.GraphProto:
    """A graph whose inputs and outputs are all FP32 of one shape."""
    value = lambda tensor: helper.make_tensor_value_info(tensor, TensorProto.FLOAT, shape)
    return helper.make_graph(nodes, name, [value(t) for t in inputs], [value(t) for t in outputs])


def add_sub() -> None:
    """Triton's `simple` example: OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1."""
    g = fp32_graph(
        "add_sub",
        [
            helper.make_node("Add", ["INPUT0", "INPUT1"], ["OUTPUT0"]),
            helper.make_node("Sub", ["INPUT0", "INPUT1"], ["OUTPUT1"]),
        ],
        ["INPUT0", "INPUT1"],
        ["OUTPUT0", "OUTPUT1"],
        [None, 16],  # unnamed variable first dimension
    )
    save(model(g), "add_sub")


def identities() -> None:
    """identity_<type>: OUTPUT0 = INPUT0, shape [batch, n], both variable."""
    for name, elem in IDENTITY_TYPES.items():
        shape = ["batch", "n"]
        g = helper.make_graph(
            [helper.make_node("Identity", ["INPUT0"], ["OUTPUT0"])],
            f"identity_{name}",
            [helper.make_tensor_value_info("INPUT0", elem, shape)],
            [helper.make_tensor_value_info("OUTPUT0", elem, shape)],
        )
        save(model(g), f"identity_{name}")


def var_batch() -> None:
    """Symbolic batch and length: OUTPUT0 = 2 * INPUT0 [batch, len], OUTPUT1 = row sums [batch, 1]."""
    g = helper.make_graph(
        [
            helper.make_node("Mul", ["INPUT0", "two"], ["OUTPUT0"]),
            helper.make_node("ReduceSum", ["INPUT0", "axes"], ["OUTPUT1"], keepdims=1),
        ],
        "var_batch",
        [helper.make_tensor_value_info("INPUT0", TensorProto.FLOAT, ["batch_size", "len"])],
        [
            helper.make_tensor_value_info("OUTPUT0", TensorProto.FLOAT, ["batch_size", "len"]),
            helper.make_tensor_value_info("OUTPUT1", TensorProto.FLOAT, ["batch_size", 1]),
        ],
        initializer=[
            numpy_helper.from_array(np.array(2.0, dtype=np.float32), "two"),
            numpy_helper.from_array(np.array([1], dtype=np.int64), "axes"),
        ],
    )
    save(model(g), "var_batch")


def fixed_shape() -> None:
    """No batch dimension: OUTPUT0 [2,4] = INPUT0 [2,3] @ W [3,4] + b [4]."""
    w = (np.arange(12, dtype=np.float32).reshape(3, 4) - 5.0) / 4.0
    b = np.array([0.5, -0.5, 1.0, -1.0], dtype=np.float32)
    g = helper.make_graph(
        [
            helper.make_node("MatMul", ["INPUT0", "W"], ["xw"]),
            helper.make_node("Add", ["xw", "B"], ["OUTPUT0"]),
        ],
        "fixed_shape",
        [helper.make_tensor_value_info("INPUT0", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("OUTPUT0", TensorProto.FLOAT, [2, 4])],
        initializer=[numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")],
    )
    save(model(g), "fixed_shape")


def tiny() -> None:
    """Overhead benchmarks: OUTPUT0 = INPUT0 + 1, shape [batch, 1]."""
    g = helper.make_graph(
        [helper.make_node("Add", ["INPUT0", "one"], ["OUTPUT0"])],
        "tiny",
        [helper.make_tensor_value_info("INPUT0", TensorProto.FLOAT, ["batch", 1])],
        [helper.make_tensor_value_info("OUTPUT0", TensorProto.FLOAT, ["batch", 1])],
        initializer=[numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one")],
    )
    save(model(g), "tiny")


def mlp_weight(layer: int, rows: int, cols: int) -> np.ndarray:
    """The numpy twin of the in-graph weight construction (see mlp())."""
    k = np.arange(rows * cols, dtype=np.int64)
    mult = 7919 + 104 * layer
    v = ((k * mult + 13 * layer) % MLP_MOD).astype(np.float32)
    scale = np.float32(2.0 / np.sqrt(rows))
    return ((v / np.float32(MLP_MOD) - np.float32(0.5)) * scale).reshape(rows, cols).astype(np.float32)


def mlp_bias(layer: int, n: int) -> np.ndarray:
    k = np.arange(n, dtype=np.float32)
    return ((k % np.float32(7)) - np.float32(3)) * np.float32(0.01 * (layer + 1))


def mlp_input(batch: int) -> np.ndarray:
    """The input the tests feed (recomputed there): exact small floats."""
    i = np.arange(batch, dtype=np.int64)[:, None]
    j = np.arange(MLP_DIMS[0], dtype=np.int64)[None, :]
    return (((i * 31 + j * 17) % 13).astype(np.float32) / np.float32(13) - np.float32(0.5)).astype(np.float32)


def mlp() -> None:
    nodes = []
    inits = []
    x = "INPUT0"
    for layer in range(len(MLP_DIMS) - 1):
        rows, cols = MLP_DIMS[layer], MLP_DIMS[layer + 1]
        p = f"l{layer}_"
        mult = 7919 + 104 * layer
        scale = np.float32(2.0 / np.sqrt(rows))
        inits += [
            numpy_helper.from_array(np.array(0, dtype=np.int64), p + "start"),
            numpy_helper.from_array(np.array(rows * cols, dtype=np.int64), p + "limit"),
            numpy_helper.from_array(np.array(1, dtype=np.int64), p + "delta"),
            numpy_helper.from_array(np.array(mult, dtype=np.int64), p + "mult"),
            numpy_helper.from_array(np.array(13 * layer, dtype=np.int64), p + "offset"),
            numpy_helper.from_array(np.array(MLP_MOD, dtype=np.int64), p + "mod"),
            numpy_helper.from_array(np.array(MLP_MOD, dtype=np.float32), p + "modf"),
            numpy_helper.from_array(np.array(0.5, dtype=np.float32), p + "half"),
            numpy_helper.from_array(np.array(scale, dtype=np.float32), p + "scale"),
            numpy_helper.from_array(np.array([rows, cols], dtype=np.int64), p + "shape"),
            numpy_helper.from_array(mlp_bias(layer, cols), p + "bias"),
        ]
        nodes += [
            helper.make_node("Range", [p + "start", p + "limit", p + "delta"], [p + "k"]),
            helper.make_node("Mul", [p + "k", p + "mult"], [p + "km"]),
            helper.make_node("Add", [p + "km", p + "offset"], [p + "kmo"]),
            helper.make_node("Mod", [p + "kmo", p + "mod"], [p + "r"]),
            helper.make_node("Cast", [p + "r"], [p + "rf"], to=TensorProto.FLOAT),
            helper.make_node("Div", [p + "rf", p + "modf"], [p + "u"]),
            helper.make_node("Sub", [p + "u", p + "half"], [p + "c"]),
            helper.make_node("Mul", [p + "c", p + "scale"], [p + "wflat"]),
            helper.make_node("Reshape", [p + "wflat", p + "shape"], [p + "w"]),
        ]
        last = layer == len(MLP_DIMS) - 2
        y = "OUTPUT0" if last else p + "y"
        if last:
            nodes.append(helper.make_node("Gemm", [x, p + "w", p + "bias"], [y]))
        else:
            nodes.append(helper.make_node("Gemm", [x, p + "w", p + "bias"], [p + "g"]))
            nodes.append(helper.make_node("Relu", [p + "g"], [y]))
        x = y
    g = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("INPUT0", TensorProto.FLOAT, ["batch", MLP_DIMS[0]])],
        [helper.make_tensor_value_info("OUTPUT0", TensorProto.FLOAT, ["batch", MLP_DIMS[-1]])],
        initializer=inits,
    )
    save(model(g), "mlp")

    # Reference output for a batch of 2, computed in float64 from the exact
    # float32 weights, rounded to float32; the tests compare with a tolerance.
    h = mlp_input(2).astype(np.float64)
    for layer in range(len(MLP_DIMS) - 1):
        w = mlp_weight(layer, MLP_DIMS[layer], MLP_DIMS[layer + 1]).astype(np.float64)
        h = h @ w + mlp_bias(layer, MLP_DIMS[layer + 1]).astype(np.float64)
        if layer < len(MLP_DIMS) - 2:
            h = np.maximum(h, 0.0)
    out = [float(v) for v in h.astype(np.float32).reshape(-1)]
    with open(os.path.join(HERE, "mlp_expected.json"), "w") as f:
        json.dump({"batch": 2, "dims": MLP_DIMS, "output": [float(np.float32(v)) for v in out]}, f)
        f.write("\n")


def externalize(tensors, location: str) -> bytes:
    """Moves the tensors' bytes into one external data file, at fixed offsets; returns its content."""
    data = bytearray()
    for t in tensors:
        raw = t.raw_data if t.HasField("raw_data") else numpy_helper.to_array(t).tobytes()
        while len(data) % 64:
            data.append(0)
        offset = len(data)
        data += raw
        onnx.external_data_helper.set_external_data(t, location=location, offset=offset, length=len(raw))
        t.ClearField("raw_data")
        t.ClearField("float_data")
        t.data_location = TensorProto.EXTERNAL
    return bytes(data)


def save_directory(m: onnx.ModelProto, name: str, files: dict[str, bytes]) -> None:
    """Writes `<name>.onnx/` holding model.onnx and the given external data files."""
    d = os.path.join(HERE, f"{name}.onnx")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(m.SerializeToString(deterministic=True))
    for file, content in files.items():
        with open(os.path.join(d, file), "wb") as f:
            f.write(content)


def external_weights() -> None:
    """A model.onnx directory: model.onnx plus external_weights.bin.

    OUTPUT0 [batch, 8] = INPUT0 [batch, 8] @ W [8, 8] + B [8], W[i][j] = (i * 8 + j) / 64.
    """
    w = (np.arange(64, dtype=np.float32).reshape(8, 8) / np.float32(64)).astype(np.float32)
    b = (np.arange(8, dtype=np.float32) - np.float32(4)).astype(np.float32)
    g = helper.make_graph(
        [
            helper.make_node("MatMul", ["INPUT0", "W"], ["xw"]),
            helper.make_node("Add", ["xw", "B"], ["OUTPUT0"]),
        ],
        "external_weights",
        [helper.make_tensor_value_info("INPUT0", TensorProto.FLOAT, ["batch", 8])],
        [helper.make_tensor_value_info("OUTPUT0", TensorProto.FLOAT, ["batch", 8])],
        initializer=[numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")],
    )
    m = model(g)
    save_directory(m, "external_weights", {"external_weights.bin": externalize(m.graph.initializer, "external_weights.bin")})


def external_subgraph() -> None:
    """A model.onnx directory whose only external tensors are in If branches (subgraphs).

    OUTPUT0 [batch, 4] = INPUT0 + W with W = [1, 2, 3, 4] (the then branch; the
    condition is a constant true). The else branch subtracts its own V = [10, 20, 30, 40].
    """
    def branch(name: str, op: str, weight: str, values: list) -> onnx.GraphProto:
        return helper.make_graph(
            [helper.make_node(op, ["INPUT0", weight], [f"{name}_out"])],
            name,
            [],
            [helper.make_tensor_value_info(f"{name}_out", TensorProto.FLOAT, ["batch", 4])],
            initializer=[numpy_helper.from_array(np.array(values, dtype=np.float32), weight)],
        )

    then_branch = branch("then", "Add", "W", [1, 2, 3, 4])
    else_branch = branch("else", "Sub", "V", [10, 20, 30, 40])
    g = helper.make_graph(
        [helper.make_node("If", ["cond"], ["OUTPUT0"], then_branch=then_branch, else_branch=else_branch)],
        "external_subgraph",
        [helper.make_tensor_value_info("INPUT0", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("OUTPUT0", TensorProto.FLOAT, ["batch", 4])],
        initializer=[numpy_helper.from_array(np.array(True), "cond")],
    )
    m = model(g)
    attributes = {a.name: a.g for a in m.graph.node[0].attribute}
    data = externalize([*attributes["then_branch"].initializer, *attributes["else_branch"].initializer], "branch_weights.bin")
    save_directory(m, "external_subgraph", {"branch_weights.bin": data})


def metadata_location() -> None:
    """OUTPUT0 = INPUT0 + 1 [batch, 1], with metadata_props { key: "location" value: "Paris" }
    (a string entry that is not external data)."""
    g = helper.make_graph(
        [helper.make_node("Add", ["INPUT0", "one"], ["OUTPUT0"])],
        "metadata_location",
        [helper.make_tensor_value_info("INPUT0", TensorProto.FLOAT, ["batch", 1])],
        [helper.make_tensor_value_info("OUTPUT0", TensorProto.FLOAT, ["batch", 1])],
        initializer=[numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one")],
    )
    m = model(g)
    helper.set_model_props(m, {"location": "Paris"})
    save(m, "metadata_location")


def reduce_sum() -> None:
    """A scalar output: OUTPUT0 [] = sum of INPUT0 [n]."""
    g = helper.make_graph(
        [helper.make_node("ReduceSum", ["INPUT0"], ["OUTPUT0"], keepdims=0)],
        "reduce_sum",
        [helper.make_tensor_value_info("INPUT0", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("OUTPUT0", TensorProto.FLOAT, [])],
    )
    save(model(g), "reduce_sum")


def unsqueeze() -> None:
    """OUTPUT0 [batch, 1, n] = INPUT0 [batch, n] with a unit axis inserted."""
    g = helper.make_graph(
        [helper.make_node("Unsqueeze", ["INPUT0", "axes"], ["OUTPUT0"])],
        "unsqueeze",
        [helper.make_tensor_value_info("INPUT0", TensorProto.FLOAT, ["batch", "n"])],
        [helper.make_tensor_value_info("OUTPUT0", TensorProto.FLOAT, ["batch", 1, "n"])],
        initializer=[numpy_helper.from_array(np.array([1], dtype=np.int64), "axes")],
    )
    save(model(g), "unsqueeze")


def concat_rows() -> None:
    """An output whose first dimension is not the batch: OUTPUT0 [2 * batch, 3] = INPUT0 stacked twice."""
    g = helper.make_graph(
        [helper.make_node("Concat", ["INPUT0", "INPUT0"], ["OUTPUT0"], axis=0)],
        "concat_rows",
        [helper.make_tensor_value_info("INPUT0", TensorProto.FLOAT, ["batch", 3])],
        [helper.make_tensor_value_info("OUTPUT0", TensorProto.FLOAT, ["rows", 3])],
    )
    save(model(g), "concat_rows")


def overridable_initializer() -> None:
    """OUTPUT0 [4] = INPUT0 [4] + B [4], where B is a graph input with an initializer
    (Triton's overridable initializer; default [1, 2, 3, 4])."""
    g = helper.make_graph(
        [helper.make_node("Add", ["INPUT0", "B"], ["OUTPUT0"])],
        "overridable_initializer",
        [
            helper.make_tensor_value_info("INPUT0", TensorProto.FLOAT, [4]),
            helper.make_tensor_value_info("B", TensorProto.FLOAT, [4]),
        ],
        [helper.make_tensor_value_info("OUTPUT0", TensorProto.FLOAT, [4])],
        initializer=[numpy_helper.from_array(np.array([1, 2, 3, 4], dtype=np.float32), "B")],
    )
    save(model(g), "overridable_initializer")


def ragged() -> None:
    """Ragged batching: INPUT FP32 [n] holds the batch's requests end to end (Triton
    flattens an allow_ragged_batch input), ENDS INT32 [requests] is the batch input
    BATCH_ACCUMULATED_ELEMENT_COUNT (where each request's elements end). SUM [requests, 1]
    is each request's sum: the running sum (after a 0) at its end minus at its start.
    DOUBLED [n] = 2 * INPUT, which a batch_output scatters back with each request's shape.
    ENDS_SEEN [requests, 1] hands ENDS back, to show what the model was given."""
    i64 = lambda name, values: numpy_helper.from_array(np.array(values, dtype=np.int64), name)
    g = helper.make_graph(
        [
            helper.make_node("CumSum", ["INPUT", "axis0"], ["running"]),
            helper.make_node("Concat", ["zero_f", "running"], ["running0"], axis=0),
            helper.make_node("Slice", ["ENDS", "start0", "minus1"], ["heads"]),
            helper.make_node("Concat", ["zero_i", "heads"], ["starts"], axis=0),
            helper.make_node("Gather", ["running0", "ENDS"], ["at_end"]),
            helper.make_node("Gather", ["running0", "starts"], ["at_start"]),
            helper.make_node("Sub", ["at_end", "at_start"], ["sums"]),
            helper.make_node("Unsqueeze", ["sums", "axis1"], ["SUM"]),
            helper.make_node("Add", ["INPUT", "INPUT"], ["DOUBLED"]),
            helper.make_node("Unsqueeze", ["ENDS", "axis1"], ["ENDS_SEEN"]),
        ],
        "ragged",
        [
            helper.make_tensor_value_info("INPUT", TensorProto.FLOAT, ["n"]),
            helper.make_tensor_value_info("ENDS", TensorProto.INT32, ["requests"]),
        ],
        [
            helper.make_tensor_value_info("SUM", TensorProto.FLOAT, ["requests", 1]),
            helper.make_tensor_value_info("DOUBLED", TensorProto.FLOAT, ["n"]),
            helper.make_tensor_value_info("ENDS_SEEN", TensorProto.INT32, ["requests", 1]),
        ],
        initializer=[
            i64("axis0", 0),
            i64("axis1", [1]),
            i64("start0", [0]),
            i64("minus1", [-1]),
            numpy_helper.from_array(np.array([0], dtype=np.float32), "zero_f"),
            numpy_helper.from_array(np.array([0], dtype=np.int32), "zero_i"),
        ],
    )
    save(model(g), "ragged")


def accumulator() -> None:
    """Implicit sequence state: OUTPUT = OUTPUT_STATE = INPUT + INPUT_STATE, all FP32
    [batch, 1]; the server feeds OUTPUT_STATE back as the next INPUT_STATE."""
    g = fp32_graph(
        "accumulator",
        [
            helper.make_node("Add", ["INPUT", "INPUT_STATE"], ["OUTPUT"]),
            helper.make_node("Identity", ["OUTPUT"], ["OUTPUT_STATE"]),
        ],
        ["INPUT", "INPUT_STATE"],
        ["OUTPUT", "OUTPUT_STATE"],
        ["batch", 1],
    )
    save(model(g), "accumulator")


# ---------------------------------------------------------------------------
# Stand-ins for the models of Triton's example repository
# (server/docs/examples/model_repository), written to triton-examples/<model>.onnx.
# Same tensor names, types and shapes as the models Triton ships, and the same
# arithmetic, so Triton's client examples and their expected values work against
# them; the configs are Triton's own config.pbtxt files, which the tests read from
# ../shared/conformance. The image classifiers are tiny stand-ins with the I/O of
# densenet_onnx / inception_onnx and a generated label file each.
EXAMPLES = os.path.join(HERE, "triton-examples")


def save_example(m: onnx.ModelProto, name: str) -> None:
    os.makedirs(EXAMPLES, exist_ok=True)
    with open(os.path.join(EXAMPLES, f"{name}.onnx"), "wb") as f:
        f.write(m.SerializeToString(deterministic=True))


def to_int32(source: str, target: str, elem: int) -> onnx.NodeProto:
    """INT32 inputs pass through; INT8 and STRING are cast to INT32 for the arithmetic
    (onnxruntime's Add/Sub have no int8 kernels, and strings are parsed as numbers)."""
    if elem == TensorProto.INT32:
        return helper.make_node("Identity", [source], [target])
    return helper.make_node("Cast", [source], [target], to=TensorProto.INT32)


def example_add_sub(name: str, elem: int) -> None:
    """simple / simple_int8 / simple_string: INPUT0, INPUT1 [batch, 16] ->
    OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1, in the inputs' type
    (strings hold decimal integers and the answers are decimal strings)."""
    value = lambda tensor: helper.make_tensor_value_info(tensor, elem, [None, 16])
    g = helper.make_graph(
        [
            to_int32("INPUT0", "_INPUT0", elem),
            to_int32("INPUT1", "_INPUT1", elem),
            helper.make_node("Add", ["_INPUT0", "_INPUT1"], ["CAST0"]),
            helper.make_node("Sub", ["_INPUT0", "_INPUT1"], ["CAST1"]),
            helper.make_node("Cast", ["CAST0"], ["OUTPUT0"], to=elem),
            helper.make_node("Cast", ["CAST1"], ["OUTPUT1"], to=elem),
        ],
        name,
        [value("INPUT0"), value("INPUT1")],
        [value("OUTPUT0"), value("OUTPUT1")],
    )
    save_example(model(g), name)


def example_sequence() -> None:
    """simple_sequence: a stateless stand-in for an accumulator, as Triton's is.
    OUTPUT [batch, 1] = READY * (INPUT + START), all INT32: the first request of a
    sequence answers its value + 1, later ones their value, and a not-ready slot 0."""
    int32 = lambda tensor: helper.make_tensor_value_info(tensor, TensorProto.INT32, [None, 1])
    g = helper.make_graph(
        [
            helper.make_node("Identity", ["INPUT"], ["_INPUT"]),
            helper.make_node("Add", ["_INPUT", "START"], ["add"]),
            helper.make_node("Mul", ["READY", "add"], ["CAST"]),
            helper.make_node("Cast", ["CAST"], ["OUTPUT"], to=TensorProto.INT32),
        ],
        "simple_sequence",
        [int32("INPUT"), int32("START"), int32("READY")],
        [int32("OUTPUT")],
    )
    save_example(model(g), "simple_sequence")


def example_dyna_sequence() -> None:
    """simple_dyna_sequence: OUTPUT = READY * (INPUT + START + END * CORRID), INT32
    [batch, 1], CORRID UINT64 [batch, 1]: the last request of a sequence adds the
    sequence's correlation id, which shows that the server fed the right one."""
    int32 = lambda tensor: helper.make_tensor_value_info(tensor, TensorProto.INT32, [None, 1])
    g = helper.make_graph(
        [
            helper.make_node("Identity", ["INPUT"], ["_INPUT"]),
            helper.make_node("Cast", ["CORRID"], ["corrid"], to=TensorProto.INT32),
            helper.make_node("Add", ["_INPUT", "START"], ["add0"]),
            helper.make_node("Mul", ["END", "corrid"], ["mul0"]),
            helper.make_node("Add", ["add0", "mul0"], ["sum0"]),
            helper.make_node("Mul", ["READY", "sum0"], ["CAST"]),
            helper.make_node("Cast", ["CAST"], ["OUTPUT"], to=TensorProto.INT32),
        ],
        "simple_dyna_sequence",
        [
            int32("INPUT"),
            int32("START"),
            int32("END"),
            int32("READY"),
            helper.make_tensor_value_info("CORRID", TensorProto.UINT64, [None, 1]),
        ],
        [int32("OUTPUT")],
    )
    save_example(model(g), "simple_dyna_sequence")


def classifier_weights(classes: int) -> np.ndarray:
    """[classes, 3]: a fixed score per class and colour channel, in [-0.5, 0.5)."""
    k = np.arange(classes, dtype=np.int64)[:, None]
    c = np.arange(3, dtype=np.int64)[None, :]
    return (((k * 37 + c * 101 + 11) % 97).astype(np.float32) / 97 - 0.5).astype(np.float32)


def save_labels(name: str, classes: int) -> None:
    os.makedirs(EXAMPLES, exist_ok=True)
    with open(os.path.join(EXAMPLES, f"{name}.txt"), "w") as f:
        f.write("".join(f"CLASS_{k:04d}\n" for k in range(classes)))


def example_densenet() -> None:
    """densenet_onnx stand-in: data_0 FP32 [1, 3, 224, 224] (NCHW) -> fc6_1 FP32
    [1, 1000, 1, 1]: the mean of each colour channel, then a 1x1 convolution to 1000
    class scores (logits, as densenet's fc6_1). Labels: densenet_labels.txt."""
    w = classifier_weights(1000).reshape(1000, 3, 1, 1)
    g = helper.make_graph(
        [
            helper.make_node("GlobalAveragePool", ["data_0"], ["means"]),
            helper.make_node("Conv", ["means", "W"], ["fc6_1"]),
        ],
        "densenet_onnx",
        [helper.make_tensor_value_info("data_0", TensorProto.FLOAT, [1, 3, 224, 224])],
        [helper.make_tensor_value_info("fc6_1", TensorProto.FLOAT, [1, 1000, 1, 1])],
        initializer=[numpy_helper.from_array(w, "W")],
    )
    save_example(model(g), "densenet_onnx")
    save_labels("densenet_labels", 1000)


def example_inception() -> None:
    """inception_onnx stand-in: input:0 FP32 [1, 299, 299, 3] (NHWC) ->
    InceptionV3/Predictions/Softmax:0 FP32 [1, 1001]: channel means, a 3x1001 matrix,
    softmax. Labels: inception_labels.txt."""
    w = classifier_weights(1001).T.copy()
    g = helper.make_graph(
        [
            helper.make_node("ReduceMean", ["input:0"], ["means"], axes=[1, 2], keepdims=0),  # attribute before opset 18
            helper.make_node("MatMul", ["means", "W"], ["logits"]),
            helper.make_node("Softmax", ["logits"], ["InceptionV3/Predictions/Softmax:0"], axis=-1),
        ],
        "inception_onnx",
        [helper.make_tensor_value_info("input:0", TensorProto.FLOAT, [1, 299, 299, 3])],
        [helper.make_tensor_value_info("InceptionV3/Predictions/Softmax:0", TensorProto.FLOAT, [1, 1001])],
        initializer=[numpy_helper.from_array(w, "W")],
    )
    save_example(model(g), "inception_onnx")
    save_labels("inception_labels", 1001)


def triton_examples() -> None:
    example_add_sub("simple", TensorProto.INT32)
    example_add_sub("simple_int8", TensorProto.INT8)
    example_add_sub("simple_string", TensorProto.STRING)
    example_sequence()
    example_dyna_sequence()
    example_densenet()
    example_inception()


def main() -> None:
    add_sub()
    identities()
    var_batch()
    fixed_shape()
    tiny()
    mlp()
    external_weights()
    external_subgraph()
    metadata_location()
    reduce_sum()
    unsqueeze()
    concat_rows()
    overridable_initializer()
    ragged()
    accumulator()
    triton_examples()


if __name__ == "__main__":
    main()
