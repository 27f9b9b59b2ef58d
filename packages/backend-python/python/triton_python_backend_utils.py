"""Tritium's implementation of Triton's `triton_python_backend_utils` module.

Python models written for Triton's Python backend import this module as
`pb_utils` and run unmodified. It needs numpy only.

This module is the facade: the code lives in the package tritium_backend.pb
(one module per part of the API) and every name a model uses is re-exported
here. Everything that has to reach the server (BLS requests, response
senders, logs, metrics, model control) goes through
tritium_backend.connection, which the stub connects before it imports the
model. Outside a stub nothing is connected: tensors, responses, configs and
the helpers work as usual, `Logger` writes to stderr, metrics are kept
locally, and the calls that need a server raise TritonModelException.

BF16: numpy has no bfloat16 dtype. A BF16 tensor keeps its raw 16-bit
patterns; `as_numpy()` returns them as an np.uint16 array (same shape), and
`triton_dtype()` still says BF16, so such a tensor passed on as an output or
a BLS input stays BF16. A model makes a BF16 tensor with
`Tensor(name, uint16_bits, "BF16")` (Triton's hidden third argument), or from
an array whose dtype is named "bfloat16" (ml_dtypes). `to_dlpack()` refuses
BF16 because numpy cannot export a bfloat16 DLPack tensor; convert the
uint16 bits instead (e.g. `torch.from_numpy(bits).view(torch.bfloat16)`).
"""

import numpy as np  # noqa: F401  (pb_utils.np, as Triton's module has it)

from tritium_backend.pb.errors import TritonError, TritonModelException
from tritium_backend.pb.log import Logger, LogLevel
from tritium_backend.pb.metrics import Metric, MetricFamily, MetricKind
from tritium_backend.pb.model_config import ModelConfig
from tritium_backend.pb.model_control import is_model_ready, load_model, unload_model
from tritium_backend.pb.requests import (
    InferenceRequest,
    InferenceResponse,
    InferenceResponseSender,
    InferenceTrace,
    PreferredMemory,
    ResponseIterator,
    get_input_config_by_name,
    get_input_tensor_by_name,
    get_model_dir,
    get_output_config_by_name,
    get_output_tensor_by_name,
    using_decoupled_model_transaction_policy,
)
from tritium_backend.pb.tensor import Tensor, deserialize_bytes_tensor, serialize_byte_tensor
from tritium_backend.pb.types import (
    TRITON_STRING_TO_NUMPY,
    TRITONSERVER_MEMORY_CPU,
    TRITONSERVER_MEMORY_CPU_PINNED,
    TRITONSERVER_MEMORY_GPU,
    TRITONSERVER_REQUEST_FLAG_SEQUENCE_END,
    TRITONSERVER_REQUEST_FLAG_SEQUENCE_START,
    TRITONSERVER_REQUEST_RELEASE_ALL,
    TRITONSERVER_REQUEST_RELEASE_RESCHEDULE,
    TRITONSERVER_RESPONSE_COMPLETE_FINAL,
    numpy_to_triton_type,
    triton_string_to_numpy,
    triton_to_numpy_type,
)

# Tracebacks and reprs name the classes as models know them (as before the split).
for _cls in (InferenceRequest, InferenceResponse, InferenceResponseSender, InferenceTrace,
             LogLevel, Logger, Metric, MetricFamily, MetricKind, ModelConfig, PreferredMemory,
             ResponseIterator, Tensor, TritonError, TritonModelException):
    _cls.__module__ = __name__
del _cls

