"""Frames: a 4-byte little-endian length, then UTF-8 JSON (PROTOCOL.md).
They arrive on fd 3 and leave on fd 4."""

import json as _json
import json.encoder as _json_encoder
import os
import struct


FD_IN = 3
FD_OUT = 4


def make_codec():
    """JSON encode/decode for frames. The stdlib's C encoder is built once
    (JSONEncoder.encode builds one per call) and frames are decoded with the
    scanner directly; both fall back to the plain API."""
    enc = _json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    c_make = getattr(_json_encoder, "c_make_encoder", None)
    if c_make is not None:
        # allow_nan=False: never emit NaN/Infinity, which JSON.parse refuses
        c_enc = c_make(None, enc.default, _json_encoder.encode_basestring, None,
                       ":", ",", False, False, False)

        def encode(obj):
            return "".join(c_enc(obj, 0))
    else:
        encode = enc.encode
    dec = _json.JSONDecoder()
    scan = dec.scan_once

    def decode(data):
        s = data.decode("utf-8")
        try:
            obj, end = scan(s, 0)
        except StopIteration:
            return dec.decode(s)
        if end != len(s):
            return dec.decode(s)  # trailing whitespace, or an error to report
        return obj
    return encode, decode


encode, decode = make_codec()


def write_all(data):
    view = memoryview(data)
    while view:
        n = os.write(FD_OUT, view)
        view = view[n:]


def encode_frame(obj):
    body = encode(obj).encode("utf-8")
    return struct.pack("<I", len(body)) + body
