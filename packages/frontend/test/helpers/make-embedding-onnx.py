"""Writes a tiny sentence-embedding ONNX model: token ids in, the attention-masked mean of
their rows of an embedding table out (FP32 [batch, dim]). Usage: make-embedding-onnx.py <out.onnx> <table as JSON>."""
import json
import sys

import numpy as np
from onnx import TensorProto, helper, save

path, table = sys.argv[1], np.array(json.loads(sys.argv[2]), dtype=np.float32)
nodes = [
    helper.make_node("Gather", ["table", "input_ids"], ["rows"]),
    helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
    helper.make_node("Unsqueeze", ["mask", "last_axis"], ["mask3"]),
    helper.make_node("Mul", ["rows", "mask3"], ["masked"]),
    helper.make_node("ReduceSum", ["masked", "token_axis"], ["summed"], keepdims=0),
    helper.make_node("ReduceSum", ["mask3", "token_axis"], ["count"], keepdims=0),
    helper.make_node("Div", ["summed", "count"], ["sentence_embedding"]),
]
graph = helper.make_graph(
    nodes,
    "mean_pooled_embedding",
    [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "tokens"]) for name in ("input_ids", "attention_mask")],
    [helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", table.shape[1]])],
    [
        helper.make_tensor("table", TensorProto.FLOAT, table.shape, table.flatten().tolist()),
        helper.make_tensor("last_axis", TensorProto.INT64, [1], [2]),
        helper.make_tensor("token_axis", TensorProto.INT64, [1], [1]),
    ],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 8
save(model, path)
