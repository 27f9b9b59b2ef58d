"""Writes a Triton model repository of TorchScript models into argv[1], with the
results torch itself gives for fixed inputs in expected.json (used by the tests)."""
import json
import os
import sys

from typing import Dict, List, Tuple

import torch

root = sys.argv[1]
expected = {}


def write(name, module, config):
    os.makedirs(os.path.join(root, name, "1"), exist_ok=True)
    torch.jit.script(module).save(os.path.join(root, name, "1", "model.pt"))
    with open(os.path.join(root, name, "config.pbtxt"), "w") as f:
        f.write(f'name: "{name}"\n{config}')


class AddSub(torch.nn.Module):
    def forward(self, INPUT__0: torch.Tensor, INPUT__1: torch.Tensor):
        return INPUT__0 + INPUT__1, INPUT__0 - INPUT__1


write("add_sub", AddSub(), """backend: "pytorch"
max_batch_size: 8
input [ { name: "INPUT__0" data_type: TYPE_FP32 dims: [ 4 ] }, { name: "INPUT__1" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 4 ] }, { name: "OUTPUT__1" data_type: TYPE_FP32 dims: [ 4 ] } ]
dynamic_batching { max_queue_delay_microseconds: 200000 }
""")


class Named(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor):
        return x - 2 * y


# Inputs listed in another order than forward()'s: they are matched by name.
write("named_args", Named(), """platform: "pytorch_libtorch"
input [ { name: "y" data_type: TYPE_FP32 dims: [ 3 ] }, { name: "x" data_type: TYPE_FP32 dims: [ 3 ] } ]
output [ { name: "difference" data_type: TYPE_FP32 dims: [ 3 ] } ]
""")


class Indexed(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor):
        return a * 10 + b, a


# Names that are not forward()'s: placed by their __<index>, here in reverse config order.
write("indexed", Indexed(), """backend: "pytorch"
input [ { name: "second__1" data_type: TYPE_INT32 dims: [ 2 ] }, { name: "first__0" data_type: TYPE_INT32 dims: [ 2 ] } ]
output [ { name: "copy__1" data_type: TYPE_INT32 dims: [ 2 ] }, { name: "mixed__0" data_type: TYPE_INT32 dims: [ 2 ] } ]
""")

torch.manual_seed(7)
linear = torch.nn.Sequential(torch.nn.Linear(5, 3), torch.nn.Tanh())
linear_input = torch.randn(2, 5)
write("linear", linear, """backend: "pytorch"
max_batch_size: 4
input [ { name: "INPUT__0" data_type: TYPE_FP32 dims: [ 5 ] } ]
output [ { name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 3 ] } ]
parameters: { key: "INFERENCE_MODE" value: { string_value: "false" } }
parameters: { key: "DISABLE_OPTIMIZED_EXECUTION" value: { string_value: "true" } }
""")
with torch.no_grad():
    expected["linear"] = {"input": linear_input.flatten().tolist(), "output": linear(linear_input).flatten().tolist()}


class Casts(torch.nn.Module):
    def forward(self, x: torch.Tensor):
        return x.half(), x.to(torch.bfloat16), x.round().long(), x > 0, x.double() * 3, x.to(torch.int8)


write("casts", Casts(), """backend: "pytorch"
input [ { name: "INPUT__0" data_type: TYPE_FP32 dims: [ 5 ] } ]
output [
  { name: "OUTPUT__0" data_type: TYPE_FP16 dims: [ 5 ] },
  { name: "OUTPUT__1" data_type: TYPE_BF16 dims: [ 5 ] },
  { name: "OUTPUT__2" data_type: TYPE_INT64 dims: [ 5 ] },
  { name: "OUTPUT__3" data_type: TYPE_BOOL dims: [ 5 ] },
  { name: "OUTPUT__4" data_type: TYPE_FP64 dims: [ 5 ] },
  { name: "OUTPUT__5" data_type: TYPE_INT8 dims: [ 5 ] }
]
""")
x = torch.tensor([1.5, -2.25, 0.1, 3.7, -0.6])
half, bf16, long, positive, double, int8 = Casts()(x)
expected["casts"] = {
    "input": x.tolist(),
    # 16-bit floats as their bit patterns, to compare exactly.
    "OUTPUT__0": half.view(torch.int16).to(torch.int32).bitwise_and(0xFFFF).tolist(),
    "OUTPUT__1": bf16.view(torch.int16).to(torch.int32).bitwise_and(0xFFFF).tolist(),
    "OUTPUT__2": long.tolist(),
    "OUTPUT__3": [int(v) for v in positive.tolist()],
    "OUTPUT__4": double.tolist(),
    "OUTPUT__5": int8.tolist(),
}


class Identity(torch.nn.Module):
    def forward(self, INPUT__0: torch.Tensor):
        return INPUT__0.clone()


for datatype in ["BOOL", "UINT8", "INT8", "INT16", "INT32", "INT64", "FP16", "BF16", "FP64"]:
    write(f"identity_{datatype.lower()}", Identity(), f"""backend: "pytorch"
max_batch_size: 2
input [ {{ name: "INPUT__0" data_type: TYPE_{datatype} dims: [ -1 ] }} ]
output [ {{ name: "OUTPUT__0" data_type: TYPE_{datatype} dims: [ -1 ] }} ]
""")


class Slow(torch.nn.Module):
    def forward(self, ROUNDS__0: torch.Tensor):
        x = torch.ones(384, 384)
        for _ in range(int(ROUNDS__0[0])):
            x = torch.tanh(x @ x)
        return x.sum().reshape(1)


# Runs as long as it is asked to, to see the event loop turn meanwhile.
write("slow", Slow(), """backend: "pytorch"
input [ { name: "ROUNDS__0" data_type: TYPE_INT64 dims: [ 1 ] } ]
output [ { name: "SUM__0" data_type: TYPE_FP32 dims: [ 1 ] } ]
""")


class Counter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, INPUT__0: torch.Tensor):
        self.calls += 1
        return INPUT__0 * 0 + self.calls


# Counts its calls in the module: instances that share the module share the count.
write("counter", Counter(), """backend: "pytorch"
input [ { name: "INPUT__0" data_type: TYPE_INT64 dims: [ 1 ] } ]
output [ { name: "OUTPUT__0" data_type: TYPE_INT64 dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU count: 2 } ]
parameters: { key: "ENABLE_WEIGHT_SHARING" value: { string_value: "true" } }
parameters: { key: "INTRA_OP_THREAD_COUNT" value: { string_value: "1" } }
""")


class Strings(torch.nn.Module):
    def forward(self, INPUT__0: List[str], INPUT__1: torch.Tensor) -> Tuple[List[str], torch.Tensor]:
        return [s + "!" for s in INPUT__0], INPUT__1 * len(INPUT__0)


# BYTES arrive as List[str] and a returned List[str] is BYTES, as in Triton.
write("strings", Strings(), """backend: "pytorch"
max_batch_size: 4
input [ { name: "INPUT__0" data_type: TYPE_STRING dims: [ 2 ] }, { name: "INPUT__1" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT__0" data_type: TYPE_STRING dims: [ 2 ] }, { name: "OUTPUT__1" data_type: TYPE_INT32 dims: [ 1 ] } ]
""")
words = ["tree", "caf\u00e9", "", "x y"]
exclaimed, _ = Strings()(words, torch.tensor([[1], [2]], dtype=torch.int32))
expected["strings"] = {"input": words, "output": exclaimed}

class Three(torch.nn.Module):
    def forward(self, INPUT__0: torch.Tensor):
        return INPUT__0 + 1, INPUT__0 + 2, INPUT__0 + 3


# Lists only some of forward()'s tensors: OUTPUT__2 is the third, whatever the config's length.
write("some_outputs", Three(), """backend: "pytorch"
input [ { name: "INPUT__0" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "OUTPUT__2" data_type: TYPE_FP32 dims: [ 2 ] }, { name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 2 ] } ]
""")


class NoForward(torch.nn.Module):
    @torch.jit.export
    def other(self, x: torch.Tensor):
        return x


# TorchScript without a forward() method.
write("no_forward", NoForward(), """backend: "pytorch"
input [ { name: "INPUT__0" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 2 ] } ]
""")

class Sequence(torch.nn.Module):
    def forward(self, INPUT__0: torch.Tensor, START__1: torch.Tensor):
        return INPUT__0 + 100 * START__1


# A sequence control fed to forward() as an input, placed by its __<index>.
write("sequence", Sequence(), """backend: "pytorch"
max_batch_size: 4
input [ { name: "INPUT__0" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT__0" data_type: TYPE_INT32 dims: [ 1 ] } ]
sequence_batching { control_input [ { name: "START__1" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] } ] }
""")


class Counted(torch.nn.Module):
    def forward(self, INPUT__0: torch.Tensor, COUNT__1: torch.Tensor):
        return INPUT__0 * 0 + COUNT__1.sum()


# A batch input (each request's element count) fed to forward() after the config's inputs.
write("batch_count", Counted(), """backend: "pytorch"
max_batch_size: 4
input [ { name: "INPUT__0" data_type: TYPE_INT32 dims: [ 3 ] } ]
output [ { name: "OUTPUT__0" data_type: TYPE_INT32 dims: [ 3 ] } ]
batch_input [ { kind: BATCH_ELEMENT_COUNT target_name: "COUNT__1" data_type: TYPE_INT32 source_input: "INPUT__0" } ]
""")


class DictInput(torch.nn.Module):
    def forward(self, inputs: Dict[str, torch.Tensor]):
        return inputs["minuend"] - inputs["subtrahend"]


# forward() taking one Dict[str, Tensor]: the inputs by their config names.
write("dict_input", DictInput(), """backend: "pytorch"
input [ { name: "subtrahend" data_type: TYPE_FP32 dims: [ 2 ] }, { name: "minuend" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 2 ] } ]
""")


class InPlace(torch.nn.Module):
    def forward(self, INPUT__0: torch.Tensor):
        return INPUT__0.mul_(100)


# Writes into its input: the caller's array must not change.
write("in_place", InPlace(), """backend: "pytorch"
input [ { name: "INPUT__0" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 2 ] } ]
""")


class ScalarArgument(torch.nn.Module):
    def forward(self, INPUT__0: torch.Tensor, k: int):
        return INPUT__0 * k


# An argument that is not a tensor: refused at load.
write("scalar_argument", ScalarArgument(), """backend: "pytorch"
input [ { name: "INPUT__0" data_type: TYPE_FP32 dims: [ 2 ] }, { name: "k" data_type: TYPE_INT64 dims: [ 1 ] } ]
output [ { name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 2 ] } ]
""")

# A model.pt that is not TorchScript.
os.makedirs(os.path.join(root, "corrupt", "1"), exist_ok=True)
with open(os.path.join(root, "corrupt", "1", "model.pt"), "wb") as f:
    f.write(b"PK\x03\x04 not a TorchScript archive")
with open(os.path.join(root, "corrupt", "config.pbtxt"), "w") as f:
    f.write("""name: "corrupt"
backend: "pytorch"
input [ { name: "INPUT__0" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 1 ] } ]
""")

with open(os.path.join(root, "expected.json"), "w") as f:
    json.dump(expected, f)
