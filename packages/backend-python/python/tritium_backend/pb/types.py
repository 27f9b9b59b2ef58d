"""Constants and datatype maps (values as in Triton's tritonserver.h)."""

import numpy as np


TRITONSERVER_REQUEST_FLAG_SEQUENCE_START = 1
TRITONSERVER_REQUEST_FLAG_SEQUENCE_END = 2
TRITONSERVER_RESPONSE_COMPLETE_FINAL = 1
TRITONSERVER_REQUEST_RELEASE_ALL = 1
TRITONSERVER_REQUEST_RELEASE_RESCHEDULE = 2

TRITONSERVER_MEMORY_CPU = 0
TRITONSERVER_MEMORY_CPU_PINNED = 1
TRITONSERVER_MEMORY_GPU = 2

# TRITONSERVER_DataType
_TYPE_INVALID = 0
_TYPE_BOOL = 1
_TYPE_UINT8 = 2
_TYPE_UINT16 = 3
_TYPE_UINT32 = 4
_TYPE_UINT64 = 5
_TYPE_INT8 = 6
_TYPE_INT16 = 7
_TYPE_INT32 = 8
_TYPE_INT64 = 9
_TYPE_FP16 = 10
_TYPE_FP32 = 11
_TYPE_FP64 = 12
_TYPE_BYTES = 13
_TYPE_BF16 = 14

# wire name <-> TRITONSERVER_DataType
_WIRE_TO_TYPE = {
    "BOOL": _TYPE_BOOL, "UINT8": _TYPE_UINT8, "UINT16": _TYPE_UINT16,
    "UINT32": _TYPE_UINT32, "UINT64": _TYPE_UINT64, "INT8": _TYPE_INT8,
    "INT16": _TYPE_INT16, "INT32": _TYPE_INT32, "INT64": _TYPE_INT64,
    "FP16": _TYPE_FP16, "FP32": _TYPE_FP32, "FP64": _TYPE_FP64,
    "BYTES": _TYPE_BYTES, "BF16": _TYPE_BF16,
}
_TYPE_TO_WIRE = {v: k for k, v in _WIRE_TO_TYPE.items()}

# wire name -> numpy dtype used to view the bytes (BF16: raw uint16 bits)
_WIRE_TO_NP = {
    "BOOL": np.dtype(np.bool_), "UINT8": np.dtype(np.uint8),
    "UINT16": np.dtype(np.uint16), "UINT32": np.dtype(np.uint32),
    "UINT64": np.dtype(np.uint64), "INT8": np.dtype(np.int8),
    "INT16": np.dtype(np.int16), "INT32": np.dtype(np.int32),
    "INT64": np.dtype(np.int64), "FP16": np.dtype(np.float16),
    "FP32": np.dtype(np.float32), "FP64": np.dtype(np.float64),
    "BYTES": np.dtype(np.object_), "BF16": np.dtype(np.uint16),
}

# numpy dtype -> wire name (only native byte order; others are converted)
_NP_TO_WIRE = {
    np.dtype(np.bool_): "BOOL", np.dtype(np.uint8): "UINT8",
    np.dtype(np.uint16): "UINT16", np.dtype(np.uint32): "UINT32",
    np.dtype(np.uint64): "UINT64", np.dtype(np.int8): "INT8",
    np.dtype(np.int16): "INT16", np.dtype(np.int32): "INT32",
    np.dtype(np.int64): "INT64", np.dtype(np.float16): "FP16",
    np.dtype(np.float32): "FP32", np.dtype(np.float64): "FP64",
    np.dtype(np.object_): "BYTES",
}

TRITON_STRING_TO_NUMPY = {
    "TYPE_BOOL": bool,
    "TYPE_UINT8": np.uint8,
    "TYPE_UINT16": np.uint16,
    "TYPE_UINT32": np.uint32,
    "TYPE_UINT64": np.uint64,
    "TYPE_INT8": np.int8,
    "TYPE_INT16": np.int16,
    "TYPE_INT32": np.int32,
    "TYPE_INT64": np.int64,
    "TYPE_FP16": np.float16,
    "TYPE_FP32": np.float32,
    "TYPE_FP64": np.float64,
    "TYPE_STRING": np.object_,
}

_TYPE_TO_NUMPY = {
    _TYPE_BOOL: np.bool_, _TYPE_UINT8: np.uint8, _TYPE_UINT16: np.uint16,
    _TYPE_UINT32: np.uint32, _TYPE_UINT64: np.uint64, _TYPE_INT8: np.int8,
    _TYPE_INT16: np.int16, _TYPE_INT32: np.int32, _TYPE_INT64: np.int64,
    _TYPE_FP16: np.float16, _TYPE_FP32: np.float32, _TYPE_FP64: np.float64,
    _TYPE_BYTES: np.object_,
}


def triton_to_numpy_type(data_type):
    """TRITONSERVER_DataType integer -> numpy type (None if it has none)."""
    return _TYPE_TO_NUMPY.get(data_type)


def numpy_to_triton_type(data_type):
    """numpy type or dtype -> TRITONSERVER_DataType integer (None if none)."""
    try:
        dt = np.dtype(data_type)
    except TypeError:
        return None
    if dt.kind == "S":
        return _TYPE_BYTES
    wire = _NP_TO_WIRE.get(dt.newbyteorder("=") if dt.byteorder not in "=|" else dt)
    if wire is None:
        if dt.name == "bfloat16":
            return _TYPE_BF16
        return None
    return _WIRE_TO_TYPE[wire]


def triton_string_to_numpy(triton_type_string):
    return TRITON_STRING_TO_NUMPY[triton_type_string]
