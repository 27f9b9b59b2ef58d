"""Tritium's implementation of Triton's `triton_python_backend_utils` module.

Python models written for Triton's Python backend import this module as
`pb_utils` and run unmodified. It needs numpy only.

Everything that has to reach the server (BLS requests, response senders, logs,
metrics, model control) goes through one internal hook: the module attribute
`_stub`, which `tritium_stub.py` sets to its Stub object. Outside the stub
`_stub` is None: tensors, responses, configs and the helpers below work as
usual, `Logger` writes to stderr, metrics are kept locally, and the calls that
need a server raise TritonModelException.

BF16: numpy has no bfloat16 dtype. A BF16 tensor keeps its raw 16-bit
patterns; `as_numpy()` returns them as an np.uint16 array (same shape), and
`triton_dtype()` still says BF16, so such a tensor passed on as an output or
a BLS input stays BF16. A model makes a BF16 tensor with
`Tensor(name, uint16_bits, "BF16")` (Triton's hidden third argument), or from
an array whose dtype is named "bfloat16" (ml_dtypes). `to_dlpack()` refuses
BF16 because numpy cannot export a bfloat16 DLPack tensor; convert the
uint16 bits instead (e.g. `torch.from_numpy(bits).view(torch.bfloat16)`).
"""

import asyncio as _asyncio
import collections as _collections
import enum as _enum
import json as _json
import struct as _struct
import sys as _sys
import threading as _threading

import numpy as np

# Set by tritium_stub.py; None when the module is imported anywhere else.
_stub = None

# --------------------------------------------------------------------------
# Constants (values as in Triton's tritonserver.h)

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


# --------------------------------------------------------------------------
# BYTES tensors

_pack_len = _struct.Struct("<I").pack
_unpack_len = _struct.Struct("<I").unpack_from


def _element_bytes(obj):
    if isinstance(obj, bytes):
        return obj
    if isinstance(obj, str):
        return obj.encode("utf-8")
    return str(obj).encode("utf-8")


def serialize_byte_tensor(input_tensor):
    """Serialize an object (or np.bytes_) array in Triton's BYTES form: per
    element, in C order, a 4-byte little-endian length then the bytes.
    Returns bytes; None when the array is not an object/bytes array. Elements
    that are not bytes are converted with str() and UTF-8 encoded. Note that
    numpy strips trailing NULs from np.bytes_ elements; use np.object_."""
    if input_tensor.dtype != np.object_ and input_tensor.dtype.kind != "S":
        return None
    if input_tensor.size == 0:
        return b""
    parts = []
    append = parts.append
    for obj in input_tensor.ravel(order="C").tolist():
        s = _element_bytes(obj)
        append(_pack_len(len(s)))
        append(s)
    return b"".join(parts)


def deserialize_bytes_tensor(encoded_tensor):
    """Inverse of serialize_byte_tensor: a 1-D np.object_ array of bytes."""
    buf = memoryview(encoded_tensor).cast("B")
    end = len(buf)
    items = []
    append = items.append
    off = 0
    while off < end:
        if off + 4 > end:
            raise TritonModelException(
                "malformed BYTES tensor: truncated length at byte %d" % off)
        n = _unpack_len(buf, off)[0]
        off += 4
        if off + n > end:
            raise TritonModelException(
                "malformed BYTES tensor: element of %d bytes at byte %d runs "
                "past the end (%d bytes)" % (n, off, end))
        append(bytes(buf[off:off + n]))
        off += n
    out = np.empty(len(items), dtype=np.object_)
    out[:] = items
    return out


# --------------------------------------------------------------------------
# Errors


class TritonError:
    """An error carried by an InferenceResponse: a message and a code."""

    UNKNOWN = 0
    INTERNAL = 1
    NOT_FOUND = 2
    INVALID_ARG = 3
    UNAVAILABLE = 4
    UNSUPPORTED = 5
    ALREADY_EXISTS = 6
    CANCELLED = 7

    __slots__ = ("_message", "_code", "_wire")

    def __init__(self, message, code=INTERNAL):
        if message is None:
            raise TypeError("TritonError message must not be None")
        if code not in _CODE_TO_WIRE:
            raise TypeError("unknown TritonError code %r" % (code,))
        self._message = str(message)
        self._code = code
        self._wire = None  # the exact wire code when it came from the server

    def message(self):
        return self._message

    def code(self):
        return self._code

    def __str__(self):
        return self._message

    def __repr__(self):
        return "TritonError(%r, %s)" % (self._message, _CODE_TO_WIRE[self._code])


_CODE_TO_WIRE = {
    TritonError.UNKNOWN: "INTERNAL",  # Node has no UNKNOWN
    TritonError.INTERNAL: "INTERNAL",
    TritonError.NOT_FOUND: "NOT_FOUND",
    TritonError.INVALID_ARG: "INVALID_ARG",
    TritonError.UNAVAILABLE: "UNAVAILABLE",
    TritonError.UNSUPPORTED: "UNSUPPORTED",
    TritonError.ALREADY_EXISTS: "ALREADY_EXISTS",
    TritonError.CANCELLED: "CANCELLED",
}
# Node's codes that Triton lacks map to the nearest TritonError code; the
# exact wire code is kept so that passing the error on loses nothing.
_WIRE_TO_CODE = {
    "INTERNAL": TritonError.INTERNAL,
    "NOT_FOUND": TritonError.NOT_FOUND,
    "INVALID_ARG": TritonError.INVALID_ARG,
    "UNAVAILABLE": TritonError.UNAVAILABLE,
    "UNSUPPORTED": TritonError.UNSUPPORTED,
    "ALREADY_EXISTS": TritonError.ALREADY_EXISTS,
    "CANCELLED": TritonError.CANCELLED,
    "DEADLINE_EXCEEDED": TritonError.UNAVAILABLE,
    "RESOURCE_EXHAUSTED": TritonError.UNAVAILABLE,
}


def _error_from_wire(e):
    wire = e.get("code") or "INTERNAL"
    err = TritonError(e.get("message", ""), _WIRE_TO_CODE.get(wire, TritonError.INTERNAL))
    err._wire = wire
    return err


def _error_to_wire(err):
    return {"code": err._wire or _CODE_TO_WIRE[err._code], "message": err._message}


class TritonModelException(Exception):
    """Raised by the API on misuse; a model may raise it too."""

    def __init__(self, message="", *args):
        super().__init__(message, *args)
        self._msg = message

    def message(self):
        return self._msg

    def __str__(self):
        return str(self._msg)


def _require_stub(what):
    s = _stub
    if s is None:
        raise TritonModelException(
            "%s needs the Tritium Python stub; it is not available when "
            "triton_python_backend_utils is imported on its own" % what)
    return s


# --------------------------------------------------------------------------
# Tensors


class Tensor:
    """A named tensor whose data is a numpy array (CPU only)."""

    __slots__ = ("_name", "_np", "_dt", "_src", "__weakref__")

    def __init__(self, name, numpy_array, triton_dtype=None):
        if not isinstance(name, str):
            raise TypeError("Tensor name must be a str")
        if name == "":
            raise TritonModelException("Tensor name cannot be an empty string.")
        arr = numpy_array
        if not isinstance(arr, np.ndarray):
            arr = np.asarray(arr)
        if triton_dtype is not None:
            wire = _wire_name(triton_dtype)
            want = _WIRE_TO_NP[wire]
            if wire != "BYTES" and arr.dtype != want:
                arr = arr.view(want)
        else:
            wire = _dtype_to_wire(arr.dtype)
            if wire == "BF16":
                arr = arr.view(np.uint16)
            elif arr.dtype.byteorder not in "=|":
                arr = arr.astype(arr.dtype.newbyteorder("="))
        if not arr.flags.c_contiguous:
            arr = np.ascontiguousarray(arr)
        self._name = name
        self._np = arr
        self._dt = wire
        self._src = None

    @classmethod
    def _lazy(cls, name, wire, src):
        """A tensor whose array is made on first use from src =
        (mmap or None, offset, nbytes, shape): a zero-copy view for fixed-size
        types, a deserialized object array for BYTES."""
        t = object.__new__(cls)
        t._name = name
        t._np = None
        t._dt = wire
        t._src = src
        return t

    @classmethod
    def _wrap(cls, name, wire, arr):
        t = object.__new__(cls)
        t._name = name
        t._np = arr
        t._dt = wire
        t._src = None
        return t

    def name(self):
        return self._name

    def as_numpy(self):
        arr = self._np
        if arr is None:
            # _src is kept: two threads may get here at once (both views are fine)
            arr = self._np = _materialize(self._dt, self._src)
        return arr

    def shape(self):
        return list(self.as_numpy().shape)

    def triton_dtype(self):
        return _WIRE_TO_TYPE[self._dt]

    def is_cpu(self):
        return True

    def to_dlpack(self):
        return self.__dlpack__()

    def __dlpack__(self, stream=None, **kwargs):
        if self._dt == "BYTES":
            raise TritonModelException("DLPack does not have support for string tensors.")
        if self._dt == "BF16":
            raise TritonModelException(
                "DLPack export of BF16 tensors is not supported (numpy has no "
                "bfloat16): use as_numpy(), which gives the raw bits as uint16")
        arr = self.as_numpy()
        if kwargs:
            try:
                return arr.__dlpack__(stream=stream, **kwargs)
            except TypeError:
                pass
        return arr.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU, device 0

    @staticmethod
    def from_dlpack(name, dlpack_object):
        if name == "":
            raise TritonModelException("Tensor name cannot be an empty string.")
        obj = dlpack_object
        if not hasattr(obj, "__dlpack__"):
            obj = _CapsuleHolder(obj)
        try:
            arr = np.from_dlpack(obj)
        except (TypeError, BufferError, RuntimeError, ValueError) as e:
            raise TritonModelException(
                "cannot make a numpy array from this DLPack tensor (only CPU "
                "tensors of numpy-supported types are supported): %s" % e) from None
        if not arr.flags.c_contiguous:
            raise TritonModelException(
                "DLPack tensor is not contiguous. Only contiguous DLPack tensors "
                "that are stored in C-Order are supported.")
        return Tensor(name, arr)

    def __repr__(self):
        return "Tensor(%r, %s, %s)" % (self._name, self._dt, self.shape())


def _materialize(wire, src):
    mm, offset, nbytes, shape = src
    if wire == "BYTES":
        if nbytes:
            arr = deserialize_bytes_tensor(memoryview(mm)[offset:offset + nbytes])
        else:
            arr = np.empty(0, dtype=np.object_)
        return arr.reshape(shape)
    dt = _WIRE_TO_NP[wire]
    if not nbytes:
        return np.zeros(shape, dt)
    return np.frombuffer(mm, dt, nbytes // dt.itemsize, offset).reshape(shape)


class _CapsuleHolder:
    """Lets np.from_dlpack take a bare (legacy) DLPack capsule."""

    __slots__ = ("_c",)

    def __init__(self, capsule):
        self._c = capsule

    def __dlpack__(self, *args, **kwargs):
        return self._c

    def __dlpack_device__(self):
        return (1, 0)


def _wire_name(triton_dtype):
    if isinstance(triton_dtype, str):
        s = triton_dtype.upper()
        if s.startswith("TYPE_"):
            s = s[5:]
            if s == "STRING":
                s = "BYTES"
        if s in _WIRE_TO_TYPE:
            return s
    elif triton_dtype in _TYPE_TO_WIRE:
        return _TYPE_TO_WIRE[triton_dtype]
    raise TritonModelException("unknown Triton datatype %r" % (triton_dtype,))


def _dtype_to_wire(dt):
    wire = _NP_TO_WIRE.get(dt)
    if wire is not None:
        return wire
    if dt.kind == "S":
        return "BYTES"
    if dt.kind in "biuf" and dt.byteorder in "<>":
        wire = _NP_TO_WIRE.get(dt.newbyteorder("="))
        if wire is not None:
            return wire
    if dt.name == "bfloat16":
        return "BF16"
    if dt.kind == "U":
        raise TritonModelException(
            "Tensor dtype used for numpy_array is not supported by the Python "
            "backend: numpy str_ (%s) arrays are not supported, use np.object_ "
            "(elements bytes or str) for BYTES tensors" % dt)
    raise TritonModelException(
        "Tensor dtype used for numpy_array is not supported by the Python "
        "backend: %s" % dt)


def get_input_tensor_by_name(inference_request, name):
    for t in inference_request.inputs():
        if t._name == name:
            return t
    return None


def get_output_tensor_by_name(inference_response, name):
    for t in inference_response.output_tensors():
        if t._name == name:
            return t
    return None


def get_input_config_by_name(model_config, name):
    for props in model_config.get("input", ()) or ():
        if props.get("name") == name:
            return props
    return None


def get_output_config_by_name(model_config, name):
    for props in model_config.get("output", ()) or ():
        if props.get("name") == name:
            return props
    return None


def using_decoupled_model_transaction_policy(model_config):
    policy = model_config.get("model_transaction_policy")
    if policy:
        return bool(policy.get("decoupled", False))
    return False


def get_model_dir():
    """The model's version directory (where model.py is)."""
    return _require_stub("get_model_dir()").model_dir


# --------------------------------------------------------------------------
# Parameters (request and response): a dict of str -> bool | int | str,
# returned by parameters() as a JSON string, as Triton does.


def _check_parameters(parameters):
    if parameters is None:
        return {}
    if not isinstance(parameters, dict):
        raise TritonModelException("parameters must be a dictionary")
    for k, v in parameters.items():
        if not isinstance(k, str):
            raise TritonModelException(
                "Expect parameters keys to have type str, found type %s" % type(k).__name__)
        if not isinstance(v, (bool, int, str)):
            raise TritonModelException(
                "Expect parameters values to have type bool/int/str, found type %s"
                % type(v).__name__)
    return dict(parameters)


def _as_str(value, what):
    """What pybind11 makes a std::string argument of: a str (numpy.str_ too),
    or bytes (numpy.bytes_, e.g. a BYTES tensor's element) read as UTF-8."""
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8")
    raise TypeError("%s must be str or bytes, not %s" % (what, type(value).__name__))


# --------------------------------------------------------------------------
# Requests, responses, senders


class PreferredMemory:
    def __init__(self, preferred_memory_type, preferred_device_id=0):
        self.preferred_memory_type = preferred_memory_type
        self.preferred_device_id = preferred_device_id


class InferenceTrace:
    def get_context(self):
        return None


class InferenceRequest:
    """A request given to execute(), or a BLS request a model builds.

    BLS: InferenceRequest(model_name=..., inputs=[Tensor...],
    requested_output_names=[...], request_id="", correlation_id=0,
    model_version=-1, flags=0, timeout=0 (microseconds), preferred_memory,
    trace, parameters=None) then exec() / async_exec()."""

    __slots__ = (
        "_rid", "_request_id", "_correlation_id", "_inputs", "_requested",
        "_model_name", "_model_version", "_flags", "_timeout", "_priority",
        "_params", "_params_json", "_preferred_memory", "_trace",
        "_sender", "_cancelled", "_release_flags", "__weakref__",
    )

    def __init__(self, request_id="", correlation_id=0, inputs=None,
                 requested_output_names=None, model_name=None,
                 model_version=-1, flags=0, timeout=0, preferred_memory=None,
                 trace=None, parameters=None):
        if inputs is None:
            raise TypeError("InferenceRequest: 'inputs' is required")
        if requested_output_names is None:
            raise TypeError("InferenceRequest: 'requested_output_names' is required")
        if model_name is None:
            raise TypeError("InferenceRequest: 'model_name' is required")
        # A str is a sequence too, but pybind11 takes only a list of names.
        if isinstance(requested_output_names, (str, bytes, bytearray)):
            raise TypeError("requested_output_names must be a list of str, not %s"
                            % type(requested_output_names).__name__)
        if isinstance(correlation_id, bool) or not isinstance(correlation_id, (int, str)):
            raise TritonModelException("Correlation ID must be integer or string")
        if isinstance(correlation_id, int) and not 0 <= correlation_id < 1 << 64:
            raise TritonModelException("Correlation ID must be an unsigned 64-bit integer")
        inputs = list(inputs)
        for t in inputs:
            if not isinstance(t, Tensor):
                raise TypeError("InferenceRequest inputs must be pb_utils.Tensor objects, found %s"
                                % type(t).__name__)
        self._rid = None
        self._request_id = _as_str(request_id, "request_id")
        self._correlation_id = correlation_id
        self._inputs = inputs
        self._requested = [_as_str(n, "requested_output_names[]") for n in requested_output_names]
        self._model_name = _as_str(model_name, "model_name")
        self._model_version = int(model_version)
        self._flags = int(flags)
        self._timeout = int(timeout)
        self._priority = 0
        self._params = _check_parameters(parameters)
        self._params_json = None
        self._preferred_memory = preferred_memory
        self._trace = trace
        self._sender = None
        self._cancelled = False
        self._release_flags = TRITONSERVER_REQUEST_RELEASE_ALL

    @classmethod
    def _incoming(cls, rid, request_id, correlation_id, inputs, requested,
                  params, flags, timeout, priority, model_name, model_version):
        r = object.__new__(cls)
        r._rid = rid
        r._request_id = request_id
        r._correlation_id = correlation_id
        r._inputs = inputs
        r._requested = requested
        r._model_name = model_name
        r._model_version = model_version
        r._flags = flags
        r._timeout = timeout
        r._priority = priority
        r._params = params
        r._params_json = None
        r._preferred_memory = None
        r._trace = None
        r._sender = None
        r._cancelled = False
        r._release_flags = TRITONSERVER_REQUEST_RELEASE_ALL
        return r

    def inputs(self):
        return self._inputs

    def request_id(self):
        return self._request_id

    def correlation_id(self):
        return self._correlation_id

    def flags(self):
        return self._flags

    def set_flags(self, flags):
        self._flags = int(flags)

    def timeout(self):
        return self._timeout

    def priority(self):
        return self._priority

    def parameters(self):
        s = self._params_json
        if s is None:
            s = self._params_json = _json.dumps(self._params or {})
        return s

    def trace(self):
        return self._trace if self._trace is not None else InferenceTrace()

    def requested_output_names(self):
        return self._requested

    def model_name(self):
        return self._model_name

    def model_version(self):
        return self._model_version

    def get_response_sender(self):
        s = self._sender
        if s is None:
            if self._rid is None:
                raise TritonModelException(
                    "get_response_sender() is only available on requests given to execute()")
            s = self._sender = InferenceResponseSender(self)
        return s

    def is_cancelled(self):
        if not self._cancelled and self._rid is not None:
            s = _stub
            if s is not None:
                s.poll()   # handle a cancel frame that may be waiting in the pipe
        return self._cancelled

    def set_release_flags(self, flags):
        if flags == TRITONSERVER_REQUEST_RELEASE_ALL:
            self._release_flags = flags
            return
        if flags == TRITONSERVER_REQUEST_RELEASE_RESCHEDULE:
            raise TritonModelException(
                "request rescheduling (TRITONSERVER_REQUEST_RELEASE_RESCHEDULE) "
                "is not supported by Tritium")
        raise TritonModelException("unknown request release flags %r" % (flags,))

    def exec(self, decoupled=False):
        """Run this request on model_name and wait. decoupled=False: one
        InferenceResponse. decoupled=True: an iterator of InferenceResponse
        that ends after the model's final response."""
        return _require_stub("BLS exec()").bls_exec(self, bool(decoupled))

    # Triton before 23.03 called the decoupled form stream_exec()
    def stream_exec(self):
        return self.exec(decoupled=True)

    def async_exec(self, decoupled=False):
        """Awaitable form of exec(): resolves to an InferenceResponse, or with
        decoupled=True to a ResponseIterator (once the first response is in;
        iterating it waits for the rest). Call it from a coroutine (or with
        the thread's current loop set, which then must run the awaitable)."""
        try:
            loop = _asyncio.get_running_loop()
        except RuntimeError:
            loop = _asyncio.get_event_loop_policy().get_event_loop()
        return _require_stub("BLS async_exec()").bls_async_exec(self, bool(decoupled), loop)


class InferenceResponse:
    __slots__ = ("_outputs", "_error", "_params", "_params_json")

    def __init__(self, output_tensors=None, error=None, parameters=None):
        if output_tensors is None:
            output_tensors = []
        elif not isinstance(output_tensors, list):
            if isinstance(output_tensors, (tuple,)):
                output_tensors = list(output_tensors)
            else:
                raise TritonModelException('"output_tensors" must be a list.')
        for t in output_tensors:
            if not isinstance(t, Tensor):
                raise TypeError("InferenceResponse output_tensors must be pb_utils.Tensor "
                                "objects, found %s" % type(t).__name__)
        if error is not None and not isinstance(error, TritonError):
            raise TypeError("InferenceResponse error must be a pb_utils.TritonError")
        self._outputs = output_tensors
        self._error = error
        self._params = _check_parameters(parameters) if parameters else None
        self._params_json = None

    @classmethod
    def _make(cls, outputs, error, params=None):
        r = object.__new__(cls)
        r._outputs = outputs
        r._error = error
        r._params = params
        r._params_json = None
        return r

    def output_tensors(self):
        return self._outputs

    def has_error(self):
        return self._error is not None

    def error(self):
        return self._error

    def parameters(self):
        s = self._params_json
        if s is None:
            s = self._params_json = _json.dumps(self._params or {})
        return s


class InferenceResponseSender:
    """Sends responses for one request given to execute()."""

    __slots__ = ("_request", "_closed", "_sent", "_done", "_lock")

    def __init__(self, request):
        self._request = request
        self._closed = False
        self._sent = None      # default (non-decoupled) mode: the one response sent
        self._done = False     # default mode: execute() has returned for the batch
        self._lock = _threading.Lock()

    def send(self, response=None, flags=0):
        if flags != TRITONSERVER_RESPONSE_COMPLETE_FINAL and flags != 0:
            raise TritonModelException("Unable to send response. Unsupported flag provided.")
        if response is not None and not isinstance(response, InferenceResponse):
            raise TypeError("send() takes a pb_utils.InferenceResponse, found %s"
                            % type(response).__name__)
        if flags == 0 and response is None:
            raise TritonModelException(
                "Inference Response object must be provided when the response flags is "
                "set to zero.")
        with self._lock:
            if self._closed:
                raise TritonModelException(
                    "Unable to send response. Response sender has been closed.")
            final = flags == TRITONSERVER_RESPONSE_COMPLETE_FINAL
            _require_stub("InferenceResponseSender.send()").sender_send(
                self, self._request, response, final)
            if final:
                self._closed = True

    def is_cancelled(self):
        return self._request.is_cancelled()


class ResponseIterator:
    """The responses of a decoupled BLS call, ending after the final one."""

    def __init__(self, call):
        self._call = call
        self._done = False

    def __iter__(self):
        return self

    def __next__(self):
        if self._done:
            raise StopIteration
        resp = self._call.next_response()
        if resp is None:
            self._done = True
            raise StopIteration
        return resp

    def cancel(self):
        if not self._done:
            self._call.cancel()


# --------------------------------------------------------------------------
# Auto-complete config


class ModelConfig:
    """The model configuration given to auto_complete_config()."""

    def __init__(self, model_config):
        if isinstance(model_config, (str, bytes, bytearray)):
            model_config = _json.loads(model_config)
        self._model_config = model_config

    def as_dict(self):
        return self._model_config

    def _name(self):
        return str(self._model_config.get("name", ""))

    def set_max_batch_size(self, max_batch_size):
        current = self._model_config.get("max_batch_size", 0) or 0
        if current > max_batch_size:
            raise ValueError(
                "configuration specified max_batch_size %d, but in auto-complete-config "
                "function for model '%s' specified max_batch_size %d"
                % (current, self._name(), max_batch_size))
        self._model_config["max_batch_size"] = max_batch_size

    def set_dynamic_batching(self):
        for other in ("sequence_batching", "ensemble_scheduling"):
            if self._model_config.get(other) is not None:
                raise ValueError(
                    "Configuration specified scheduling_choice as '%s', but "
                    "auto-complete-config function for model '%s' tries to set "
                    "scheduling_choice as 'dynamic_batching'" % (other, self._name()))
        if self._model_config.get("dynamic_batching") is None:
            self._model_config["dynamic_batching"] = {}

    def _add_io(self, kind, io, valid):
        if not isinstance(io, dict):
            raise ValueError("%s in auto-complete-config function for model '%s' must be a dict"
                             % (kind, self._name()))
        label = io.get("name", "")
        for prop in io:
            if prop not in valid:
                raise ValueError(
                    "%s '%s' in auto-complete-config function for model '%s' contains "
                    "property other than %s." % (kind, label, self._name(),
                                                 ", ".join("'%s'" % v for v in valid)))
        if "name" not in io:
            raise ValueError("%s in auto-complete-config function for model '%s' is missing "
                             "'name' property." % (kind, self._name()))
        for required in ("data_type", "dims"):
            if required not in io:
                raise ValueError(
                    "%s '%s' in auto-complete-config function for model '%s' is missing "
                    "'%s' property." % (kind, label, self._name(), required))
        key = "input" if kind == "input" else "output"
        entries = self._model_config.get(key)
        if entries is None:
            entries = self._model_config[key] = []
        for cur in entries:
            if cur.get("name") != label:
                continue
            cur_type = cur.get("data_type", "TYPE_INVALID")
            if cur_type not in ("TYPE_INVALID", "", None) and cur_type != io["data_type"]:
                raise ValueError(
                    "unable to load model '%s', configuration expects datatype %s for %s "
                    "'%s', model provides %s" % (self._name(), cur_type, kind, label,
                                                 io["data_type"]))
            cur_dims = cur.get("dims")
            if cur_dims and list(cur_dims) != list(io["dims"]):
                raise ValueError(
                    "model '%s', tensor '%s': the model expects dims %s but the model "
                    "configuration specifies dims %s" % (self._name(), label,
                                                         list(io["dims"]), list(cur_dims)))
            if ("optional" in cur and "optional" in io
                    and bool(cur["optional"]) != bool(io["optional"])):
                raise ValueError(
                    "model '%s', tensor '%s': the model expects optional %s but the model "
                    "configuration specifies optional %s" % (self._name(), label,
                                                             io["optional"], cur["optional"]))
            cur["data_type"] = io["data_type"]
            cur["dims"] = io["dims"]
            if "optional" in io:
                cur["optional"] = io["optional"]
            return
        entries.append(io)

    def add_input(self, input):
        self._add_io("input", input, ("name", "data_type", "dims", "optional"))

    def add_output(self, output):
        self._add_io("output", output, ("name", "data_type", "dims"))

    def set_model_transaction_policy(self, transaction_policy_dict):
        for prop in transaction_policy_dict:
            if prop != "decoupled":
                raise ValueError(
                    "model transaction property in auto-complete-config function for "
                    "model '%s' contains property other than 'decoupled'." % self._name())
        policy = self._model_config.get("model_transaction_policy")
        if policy is None:
            policy = self._model_config["model_transaction_policy"] = {}
        if "decoupled" in transaction_policy_dict:
            want = transaction_policy_dict["decoupled"]
            if "decoupled" in policy and policy["decoupled"] != want:
                raise ValueError(
                    "trying to change decoupled property in auto-complete-config for "
                    "model '%s', which is already set to '%s'." % (self._name(),
                                                                  policy["decoupled"]))
            policy["decoupled"] = want


# --------------------------------------------------------------------------
# Logging


class LogLevel(_enum.IntEnum):
    INFO = 0
    WARNING = 1
    ERROR = 2
    VERBOSE = 3


_LEVEL_WIRE = {LogLevel.INFO: "INFO", LogLevel.WARNING: "WARNING",
               LogLevel.ERROR: "ERROR", LogLevel.VERBOSE: "VERBOSE"}


class Logger:
    """pb_utils.Logger: log_info/log_warn/log_error/log_verbose(msg) and
    log(msg, level=Logger.INFO). Messages go to the server's log."""

    LogLevel = LogLevel
    INFO = LogLevel.INFO
    WARNING = LogLevel.WARNING
    ERROR = LogLevel.ERROR
    VERBOSE = LogLevel.VERBOSE

    @staticmethod
    def log(message, level=LogLevel.INFO):
        try:
            wire = _LEVEL_WIRE[LogLevel(level)]
        except ValueError:
            raise TritonModelException("unknown log level %r" % (level,)) from None
        s = _stub
        if s is None:
            print("[%s] %s" % (wire, message), file=_sys.stderr)
        else:
            s.log(wire, str(message))

    @staticmethod
    def log_info(message):
        Logger.log(message, LogLevel.INFO)

    @staticmethod
    def log_warn(message):
        Logger.log(message, LogLevel.WARNING)

    @staticmethod
    def log_error(message):
        Logger.log(message, LogLevel.ERROR)

    @staticmethod
    def log_verbose(message):
        Logger.log(message, LogLevel.VERBOSE)


# --------------------------------------------------------------------------
# Custom metrics


class MetricKind(_enum.IntEnum):
    COUNTER = 0
    GAUGE = 1
    HISTOGRAM = 2


_KIND_WIRE = {MetricKind.COUNTER: "counter", MetricKind.GAUGE: "gauge",
              MetricKind.HISTOGRAM: "histogram"}
_metric_ids = iter(range(1, 1 << 62))
_dropped_metrics = _collections.deque()
_metric_lock = _threading.Lock()


def _send_metric(frame):
    s = _stub
    if s is not None:
        s.metric(frame)


class MetricFamily:
    """A named family of metrics: MetricFamily(name, description, kind) with
    kind MetricFamily.COUNTER, GAUGE or HISTOGRAM."""

    COUNTER = MetricKind.COUNTER
    GAUGE = MetricKind.GAUGE
    HISTOGRAM = MetricKind.HISTOGRAM

    def __init__(self, name, description, kind):
        if not isinstance(name, str) or not name:
            raise TritonModelException("MetricFamily name must be a non-empty str")
        if not isinstance(description, str):
            raise TritonModelException("MetricFamily description must be a str")
        if isinstance(kind, str):
            try:
                kind = MetricKind[kind.upper()]
            except KeyError:
                kind = None
        try:
            kind = MetricKind(kind)
        except (ValueError, TypeError):
            raise TritonModelException(
                "MetricFamily kind must be MetricFamily.COUNTER, GAUGE or HISTOGRAM") from None
        self._name = name
        self._description = description
        self._kind = kind
        _send_metric({"t": "metric", "op": "family", "family": name,
                      "description": description, "kind": _KIND_WIRE[kind]})

    def Metric(self, labels=None, buckets=None):
        return Metric(self, labels, buckets)


class Metric:
    """One metric of a family, for one set of labels."""

    def __init__(self, family, labels=None, buckets=None):
        if labels is None:
            labels = {}
        if not isinstance(labels, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in labels.items()):
            raise TritonModelException("Metric labels must be a dict of str to str")
        kind = family._kind
        if kind == MetricKind.HISTOGRAM:
            if buckets is None:
                raise TritonModelException("Missing required buckets for histogram metrics")
            buckets = [float(b) for b in buckets]
            if any(b2 <= b1 for b1, b2 in zip(buckets, buckets[1:])):
                raise TritonModelException("histogram buckets must be increasing")
        elif buckets is not None:
            raise TritonModelException("buckets are only allowed for histogram metrics")
        with _metric_lock:
            self._id = next(_metric_ids)
        self._family = family
        self._kind = kind
        self._labels = dict(labels)
        self._buckets = buckets
        self._value = 0.0
        self._sum = 0.0
        self._count = 0
        self._bucket_counts = [0] * (len(buckets) + 1) if buckets is not None else None
        frame = {"t": "metric", "op": "metric", "family": family._name, "id": self._id,
                 "labels": self._labels}
        if buckets is not None:
            frame["buckets"] = buckets
        _send_metric(frame)

    def increment(self, value):
        value = float(value)
        if self._kind == MetricKind.HISTOGRAM:
            raise TritonModelException("increment() is not supported for histogram metrics")
        if self._kind == MetricKind.COUNTER and value < 0:
            raise TritonModelException("counters can only be incremented by a non-negative value")
        self._value += value
        _send_metric({"t": "metric", "op": "increment", "id": self._id, "value": value})

    def set(self, value):
        value = float(value)
        if self._kind != MetricKind.GAUGE:
            raise TritonModelException("set() is only supported for gauge metrics")
        self._value = value
        _send_metric({"t": "metric", "op": "set", "id": self._id, "value": value})

    def observe(self, value):
        value = float(value)
        if self._kind != MetricKind.HISTOGRAM:
            raise TritonModelException("observe() is only supported for histogram metrics")
        self._sum += value
        self._count += 1
        i = 0
        for i, b in enumerate(self._buckets):
            if value <= b:
                break
        else:
            i = len(self._buckets)
        self._bucket_counts[i] += 1
        _send_metric({"t": "metric", "op": "observe", "id": self._id, "value": value})

    def value(self):
        if self._kind == MetricKind.HISTOGRAM:
            raise TritonModelException("value() is not supported for histogram metrics")
        return self._value

    def __del__(self):
        # __del__ may run inside a frame write (GC): only queue the id; the
        # stub sends the drop with its next frame.
        try:
            _dropped_metrics.append(self._id)
        except Exception:
            pass


# --------------------------------------------------------------------------
# Model control (the server must run in explicit model-control mode; the
# server checks that and answers with the error)


def load_model(model_name, config="", files=None):
    if files:
        raise TritonModelException(
            "load_model(files=...) (override files) is not supported by Tritium")
    _require_stub("load_model()").model_control(
        "load", _as_str(model_name, "model_name"), "", _as_str(config, "config"))


def unload_model(model_name, unload_dependents=False):
    _require_stub("unload_model()").model_control(
        "unload", _as_str(model_name, "model_name"), "", "",
        unload_dependents=bool(unload_dependents))


def is_model_ready(model_name, model_version=""):
    return bool(_require_stub("is_model_ready()").model_control(
        "ready", _as_str(model_name, "model_name"), _as_str(model_version, "model_version"), ""))
