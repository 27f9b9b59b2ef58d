"""Tensor, BYTES (de)serialization and the dtype helpers."""

import struct as _struct

import numpy as np

from .errors import TritonModelException
from .types import _NP_TO_WIRE, _TYPE_TO_WIRE, _WIRE_TO_NP, _WIRE_TO_TYPE


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
        """A tensor around an array already made."""
        t = cls._lazy(name, wire, None)
        t._np = arr
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
